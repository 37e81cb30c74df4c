/**
 * Tool pinning of a registered upstream MCP server, in the server's own stream: McpServerToolsSeen (the whole tool
 * list the hosted proxy read from the upstream, each tool with its hash) and McpServerToolAccepted (a tool's current
 * description and input schema accepted). The first list seen after registration is pinned as it is (trust on first
 * use); after it, a tool whose hash differs from its accepted one is `changed`, and a tool never accepted is `new`:
 * both are held by the proxy until accepted. Registration and deletion start the pins afresh. Pure: the caller appends.
 * Source: docs/mcp-proxy.md (Tool pinning).
 */
import {
  McpServerEvents,
  McpServerPinEvents,
  type McpServerToolAcceptedData,
  type McpServerToolsSeenData,
  type McpSeenTool,
  type McpToolPin,
  type McpToolPinList,
  type McpToolPinState,
  type McpToolPinStatus,
} from '@agp/contracts';
import { mcpToolPinHash, standingByName, type NamedPolicy } from '@agp/policy-engine';
import { ConflictError, NotFoundError } from '@agp/runtime';
import type { McpServerEvent } from './mcpserver.js';

/** One tool's pin as folded: what the upstream listed last and what was accepted (null fields: never accepted). */
interface Pin {
  tool: string;
  hash: string;
  description: string;
  input_schema: Record<string, unknown>;
  listed: boolean;
  seen_at: string;
  pinned_hash: string | null;
  pinned_description: string | null;
  pinned_input_schema: Record<string, unknown> | null;
  accepted_at: string | null;
}

/** A server's pins folded from its stream: by tool name, and when its upstream's list was last seen (null: never since registration). */
export interface McpPinsState {
  pins: Map<string, Pin>;
  seen_at: string | null;
}

/** No pins: before the first list after registration. */
export const noPins = (): McpPinsState => ({ pins: new Map(), seen_at: null });

/** A tool's status: pinned (as accepted), changed (differs from the accepted hash) or new (never accepted). */
const statusOf = (p: Pin): McpToolPinStatus => (p.pinned_hash === null ? 'new' : p.pinned_hash === p.hash ? 'pinned' : 'changed');

/** Fold one event of a server's stream into its pins (other event types leave them as they are). */
export function evolveMcpPins(state: McpPinsState, event: McpServerEvent): McpPinsState {
  switch (event.type) {
    case McpServerEvents.Registered:
    case McpServerEvents.Deleted:
      return noPins();
    case McpServerPinEvents.ToolsSeen: {
      const data = event.data as unknown as McpServerToolsSeenData;
      // Trust on first use: the first list after registration is accepted as it is.
      const trust = state.seen_at === null;
      const pins = new Map([...state.pins].map(([k, p]) => [k, { ...p, listed: false }]));
      for (const t of data.tools) {
        const before = pins.get(t.name);
        const seen_at = before && before.hash === t.hash ? before.seen_at : data.at;
        const seen = { tool: t.name, hash: t.hash, description: t.description, input_schema: t.input_schema, listed: true, seen_at };
        pins.set(t.name, trust ? { ...seen, pinned_hash: t.hash, pinned_description: t.description, pinned_input_schema: t.input_schema, accepted_at: data.at } : { pinned_hash: null, pinned_description: null, pinned_input_schema: null, accepted_at: null, ...before, ...seen });
      }
      return { pins, seen_at: data.at };
    }
    case McpServerPinEvents.ToolAccepted: {
      const data = event.data as unknown as McpServerToolAcceptedData;
      const p = state.pins.get(data.tool);
      if (!p) return state;
      const pins = new Map(state.pins);
      pins.set(data.tool, { ...p, pinned_hash: data.hash, pinned_description: p.description, pinned_input_schema: p.input_schema, accepted_at: data.at });
      return { ...state, pins };
    }
    default:
      return state;
  }
}

/** Fold a whole stream's pins. */
export function foldMcpPins(events: McpServerEvent[]): McpPinsState {
  return events.reduce(evolveMcpPins, noPins());
}

/** A pin as the API answers it. */
function pinRecord(p: Pin): McpToolPin {
  return { ...p, status: statusOf(p) };
}

/** `GET /api/v1/mcp/servers/{name}/tools`: the pins by tool name, how many listed tools await acceptance. */
export function pinList(server: string, state: McpPinsState): McpToolPinList {
  const tools = [...state.pins.values()].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)).map(pinRecord);
  return { server, tools, awaiting_acceptance: tools.filter((t) => t.listed && t.status !== 'pinned').length, seen_at: state.seen_at };
}

/**
 * `GET /api/v1/mcp/servers/{name}/tools?agent_id=`: the pin list with each tool's standing for `agentId`: what
 * `policies` (the enabled policies applying to the agent) decide of `actionPrefix` + the tool's name by name alone
 * ({@link standingByName}, the check `hide_denied_tools` makes), and whether its pin holds its calls (changed or new, or no
 * longer listed: the proxy holds a tool the upstream does not list). Pure.
 */
export function withStanding(list: McpToolPinList, agentId: string, actionPrefix: string, policies: readonly NamedPolicy[]): McpToolPinList {
  const tools = list.tools.map((t) => {
    const action = actionPrefix + t.tool;
    const { decision, policy } = standingByName(policies, action);
    return { ...t, standing: { agent_id: agentId, action, decision, policy, held: !t.listed || t.status !== 'pinned' } };
  });
  return { ...list, tools };
}

/** The pins as the hosted proxy needs them: `{tool, hash, pinned_hash}` of every listed tool. */
export function pinStates(state: McpPinsState): McpToolPinState[] {
  return [...state.pins.values()].filter((p) => p.listed).map((p) => ({ tool: p.tool, hash: p.hash, pinned_hash: p.pinned_hash }));
}

/**
 * Record a tool list the upstream answered: McpServerToolsSeen with each tool's hash, or null when the list is what
 * the pins already hold (the same tools listed, each with the same hash). A name listed twice counts once (the last).
 * @param now current time, ISO 8601 UTC.
 */
export function decideToolsSeen(state: McpPinsState, server: string, tools: McpSeenTool[], now: string): { type: string; data: McpServerToolsSeenData } | null {
  const byName = new Map(tools.map((t) => [t.name, { ...t, hash: mcpToolPinHash({ name: t.name, description: t.description, inputSchema: t.input_schema }) }]));
  const listedBefore = [...state.pins.values()].filter((p) => p.listed);
  const same = state.seen_at !== null && listedBefore.length === byName.size && listedBefore.every((p) => byName.get(p.tool)?.hash === p.hash);
  if (same) return null;
  return { type: McpServerPinEvents.ToolsSeen, data: { name: server, tools: [...byName.values()], at: now } };
}

/**
 * Accept a tool's description and input schema as last listed: McpServerToolAccepted, or null when it is pinned as
 * listed already (accepting again changes nothing).
 * @param hash the hash the reviewer saw, when given.
 * @throws NotFoundError (404) for a tool the upstream never listed (or no longer lists); ConflictError (409) when
 *   `hash` is not the hash listed now.
 */
export function decideAcceptTool(state: McpPinsState, server: string, tool: string, hash: string | undefined, now: string): { type: string; data: McpServerToolAcceptedData } | null {
  const p = state.pins.get(tool);
  if (!p || !p.listed) throw new NotFoundError(`tool ${tool} is not listed by MCP server ${server}${state.seen_at === null ? ' (the platform has not read its tool list yet)' : ''}`);
  if (hash !== undefined && hash !== p.hash) throw new ConflictError(`tool ${tool} of MCP server ${server} is listed with hash ${p.hash}, not ${hash}: it changed again; review it and accept that hash`);
  if (p.pinned_hash === p.hash) return null;
  return { type: McpServerPinEvents.ToolAccepted, data: { name: server, tool, hash: p.hash, at: now } };
}

/** The pin of `tool` as the API answers it (after {@link decideAcceptTool}'s event is folded). */
export function pinOf(state: McpPinsState, tool: string): McpToolPin {
  return pinRecord(state.pins.get(tool)!);
}
