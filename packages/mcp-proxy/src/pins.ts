/**
 * Tool pinning as the proxy applies it: the platform keeps, per registered server, the hash of each tool's name,
 * description and input schema as accepted (pinned on the first list after registration); the proxy reports every whole
 * tool list it reads from the upstream and holds each tool whose listed hash is not its accepted one, so a server that
 * changes a tool's instructions after it was trusted (the "rug pull") cannot reach the agent with them. A held tool is
 * left out of `tools/list`, and its calls are refused with a tool error and recorded as an intervention.
 * Source: docs/mcp-proxy.md (Tool pinning).
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { McpSeenTool, McpToolPinState } from '@agp/contracts';
import { mcpToolPinHash } from '@agp/sdk/common';

/** The decision's `rule` of a call held by tool pinning (in `_meta['agp/governance']` and the intervention). */
export const TOOL_PIN_RULE = 'tool_pin';

/** What the proxy asks of the pins (the hosted proxy's: the platform's registry; see {@link GovernedProxyOptions.pins}). */
export interface ToolPinGuard {
  /** The upstream answered `tools/list` with this whole list (every page): record it; resolves once the pins are current. */
  listed(tools: Tool[]): Promise<void>;
  /** Why calls of `tool` are held (a text naming the pending change and how to accept it), or null when they may go on. */
  held(tool: string): Promise<string | null>;
  /** The upstream said its tool list changed (`notifications/tools/list_changed`): read it again at the next call. */
  stale?(): void;
}

/** A listed tool as the platform records it (`{name, description, input_schema}`; an absent description is ''). */
export const seenTool = (t: Tool): McpSeenTool => ({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema as Record<string, unknown> });

/** The hash of each listed tool, by name ({@link mcpToolPinHash}). */
export function listedHashes(tools: Tool[]): Map<string, string> {
  return new Map(tools.map((t) => [t.name, mcpToolPinHash({ name: t.name, description: t.description, inputSchema: t.inputSchema })]));
}

/**
 * Why `tool` is held, given the hashes the upstream lists now and the pins (null: it may be called).
 * - listed with its accepted hash: not held;
 * - listed with another hash: `changed`; listed but never accepted: `new`;
 * - not listed by the upstream: held (a tool must be listed, and so pinned, before it is called).
 */
export function heldReason(server: string, tool: string, listed: ReadonlyMap<string, string>, pins: ReadonlyMap<string, McpToolPinState>): string | null {
  const hash = listed.get(tool);
  const accept = `accept it with POST /api/v1/mcp/servers/${server}/tools/${encodeURIComponent(tool)}/accept (or in the console)`;
  if (hash === undefined) return `tool ${tool} is not in the tool list of MCP server ${server}; only listed, pinned tools are called`;
  const pin = pins.get(tool);
  if (!pin || pin.pinned_hash === null) return `tool ${tool} of MCP server ${server} is new since its tools were pinned (hash ${hash.slice(0, 12)}…) and is held until someone accepts it: ${accept}`;
  if (pin.pinned_hash !== hash) return `tool ${tool} of MCP server ${server} changed its description or input schema since it was pinned (pinned ${pin.pinned_hash.slice(0, 12)}…, now ${hash.slice(0, 12)}…) and is held until someone accepts the change: ${accept}`;
  return null;
}

/** How long a tool list read from the upstream is trusted before a call reads it again, ms (either form of the proxy). */
export const TOOL_LIST_TTL_MS = 5_000;

/** Records a whole tool list on the platform and answers the pins of the listed tools (`POST /api/v1/mcp/servers/{name}/tools`). */
export type RecordTools = (tools: McpSeenTool[]) => Promise<McpToolPinState[]>;

/** What {@link ToolPins} is built with. */
export interface ToolPinsOptions {
  /** The server's name, in the hold texts. */
  server: string;
  /** Read the upstream's whole tool list (every page). */
  listAll: () => Promise<Tool[]>;
  /**
   * Record every list read, even one equal to the pins known (the local proxy learns accepts from the answer); else
   * only a list that differs (the hosted proxy, which gets newer pins with the registration). @default false
   */
  alwaysRecord?: boolean;
  /** Where a list that could not be recorded is told (its changed and new tools stay held). */
  onError: (message: string) => void;
}

/**
 * The tool pinning state of one upstream, shared by every exchange through it: the hash of each tool it listed last
 * (null before the first list) and when, the pins (answered when a list was recorded, or offered with a newer
 * registration) and when, and the list being read. {@link guard} makes the {@link ToolPinGuard} of one exchange,
 * whose lists are recorded with that exchange's credentials. Source: docs/mcp-proxy.md (Tool pinning).
 */
export class ToolPins {
  private listedHashes: Map<string, string> | null = null;
  private listedAt = 0;
  private pins = new Map<string, McpToolPinState>();
  private pinsAt = 0;
  private reading: Promise<void> | null = null;

  constructor(private readonly o: ToolPinsOptions) {}

  /** The upstream said its tool list changed: the next call reads it again. */
  stale(): void {
    this.listedAt = 0;
  }

  /** Pins known from elsewhere (the registration, opened at `at`, epoch ms): used when newer than those held. */
  offer(pins: McpToolPinState[], at: number): void {
    if (at < this.pinsAt) return;
    this.pins = new Map(pins.map((p) => [p.tool, p]));
    this.pinsAt = at;
  }

  /** The guard of one exchange: its lists are recorded with `record`. */
  guard(record: RecordTools): ToolPinGuard {
    return { listed: (tools) => this.listed(tools, record), held: (tool) => this.held(tool, record), stale: () => this.stale() };
  }

  /** A whole list was read: keep its hashes and record it when it differs from the pins (or always, with `alwaysRecord`). */
  private async listed(tools: Tool[], record: RecordTools): Promise<void> {
    const hashes = listedHashes(tools);
    this.listedHashes = hashes;
    this.listedAt = Date.now();
    const same = this.pinsAt > 0 && this.pins.size === hashes.size && [...hashes].every(([tool, hash]) => this.pins.get(tool)?.hash === hash);
    if (same && !this.o.alwaysRecord) return;
    try {
      const asked = Date.now();
      const pins = await record(tools.map(seenTool));
      this.offer(pins, asked);
    } catch (err) {
      this.o.onError(`the tool list of MCP server ${this.o.server} could not be recorded (its changed and new tools stay held): ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Why `tool` is held, after reading the list again when it is older than {@link TOOL_LIST_TTL_MS}. */
  private async held(tool: string, record: RecordTools): Promise<string | null> {
    if (this.listedHashes === null || Date.now() - this.listedAt >= TOOL_LIST_TTL_MS) {
      this.reading ??= this.o
        .listAll()
        .then((tools) => this.listed(tools, record))
        .finally(() => {
          this.reading = null;
        });
      await this.reading;
    }
    return heldReason(this.o.server, tool, this.listedHashes ?? new Map(), this.pins);
  }
}

/** Every page of the upstream's `tools/list`, each request bound by `timeoutMs`. */
export async function listAllTools(client: { listTools(params?: { cursor?: string }, options?: { timeout?: number }): Promise<{ tools: Tool[]; nextCursor?: string }> }, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}
