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
