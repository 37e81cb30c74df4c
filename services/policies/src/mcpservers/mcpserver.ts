/**
 * The registry of upstream MCP servers: one stream per organisation and name (`mcp-server-<deterministicId(org, name)>`),
 * McpServerRegistered, McpServerUpdated and McpServerDeleted. Each registration or update carries the whole settings,
 * the header names and the headers sealed as one value (SecretBox of @agp/runtime, bound to the organisation and the
 * name), never a header value in the clear. Pure: sealing is the caller's. Source: docs/mcp-proxy.md (The registry).
 */
import {
  McpServerEvents,
  type McpServer,
  type McpServerChangedData,
  type McpServerDeletedData,
  type McpServerPatch,
  type McpServerRegistration,
  type McpUpstreamSettings,
} from '@agp/contracts';
import { ConflictError, NotFoundError, deterministicId } from '@agp/runtime';
import type { StoredEvent } from '@agp/eventstore';

/** The parts of a stored event that folding needs. */
export type McpServerEvent = Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'stream_version'>;

/** A registered server as the read model keeps it: the API's record, its organisation and its sealed headers (null when none). */
export interface StoredMcpServer {
  organization_id: string;
  server: McpServer;
  sealed_headers: string | null;
}

/** A server's stream folded: the record (null before registration and after deletion) and the stream's version (0: no stream). */
export interface McpServerState {
  record: StoredMcpServer | null;
  version: number;
}

/** The empty state: no stream. */
export const NO_MCP_SERVER: McpServerState = { record: null, version: 0 };

/** Stream id of a registered server, by a deterministic UUID of (organisation, name): organisations never share one. */
export const mcpServerStream = (organizationId: string, name: string) => `mcp-server-${deterministicId(organizationId, `mcp-server:${name}`)}`;

/** The context (additional authenticated data) a server's headers are sealed under: they open for this organisation and name only. */
export const mcpHeadersContext = (organizationId: string, name: string) => `mcp-server-headers\0${organizationId}\0${name}`;

/** The settings of a stored record (the record without header names, times and version). */
export function settingsOfServer(s: McpServer): McpUpstreamSettings {
  const { name, url, action_prefix, tool_costs_usd, hide_denied_tools, timeout_ms, approval } = s;
  return { name, url, action_prefix, tool_costs_usd, hide_denied_tools, timeout_ms, approval };
}

/** A registration's settings with its defaults applied (`action_prefix`: `<name>.`). */
export function registrationSettings(body: McpServerRegistration): McpUpstreamSettings {
  const { headers: _headers, ...rest } = body;
  return { ...rest, action_prefix: body.action_prefix ?? `${body.name}.` };
}

/** Fold one event of a server's stream. Registered and Updated set the whole record; Deleted clears it. */
export function evolveMcpServer(state: McpServerState, event: McpServerEvent): McpServerState {
  switch (event.type) {
    case McpServerEvents.Registered:
    case McpServerEvents.Updated: {
      const { at, header_names, sealed_headers, ...settings } = event.data as unknown as McpServerChangedData;
      const created_at = event.type === McpServerEvents.Registered || !state.record ? at : state.record.server.created_at;
      return {
        version: event.stream_version,
        record: { organization_id: event.metadata.organization_id, sealed_headers, server: { ...settings, header_names, created_at, updated_at: at, version: event.stream_version } },
      };
    }
    case McpServerEvents.Deleted:
      return { record: null, version: event.stream_version };
    default:
      return { ...state, version: event.stream_version };
  }
}

/** Fold a whole stream. */
export function foldMcpServer(events: McpServerEvent[]): McpServerState {
  return events.reduce(evolveMcpServer, NO_MCP_SERVER);
}

/** The headers part of a decision: their names, and the sealed value (null when none). */
export interface SealedHeaders {
  header_names: string[];
  sealed_headers: string | null;
}

/**
 * Register: McpServerRegistered with the settings (defaults applied) and the sealed headers.
 * @param now current time, ISO 8601 UTC.
 * @throws ConflictError (409) when the name is registered in the organisation.
 */
export function decideRegisterMcpServer(state: McpServerState, body: McpServerRegistration, headers: SealedHeaders, now: string): { type: string; data: McpServerChangedData } {
  if (state.record) throw new ConflictError(`an MCP server named ${body.name} is already registered; change it with PATCH /api/v1/mcp/servers/${body.name}`);
  return { type: McpServerEvents.Registered, data: { ...registrationSettings(body), ...headers, at: now } };
}

/**
 * Update: McpServerUpdated with the whole settings after the patch; `headers` (when the patch has them) replace the
 * whole set. A patch that changes no setting and has no headers appends nothing (null).
 * @param ifMatch the expected version, or null for any.
 * @throws NotFoundError (404) for a server not registered; ConflictError (409) when `ifMatch` is not the current version.
 */
export function decideUpdateMcpServer(state: McpServerState, name: string, patch: McpServerPatch, ifMatch: number | null, headers: SealedHeaders | null, now: string): { type: string; data: McpServerChangedData } | null {
  const record = state.record;
  if (!record) throw new NotFoundError(`MCP server ${name} not found`);
  if (ifMatch !== null && ifMatch !== record.server.version) throw new ConflictError(`If-Match version ${ifMatch} does not match the current version ${record.server.version}`);
  const { headers: _h, ...changes } = patch;
  const before = settingsOfServer(record.server);
  const after: McpUpstreamSettings = { ...before, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
  if (!headers && JSON.stringify(after) === JSON.stringify(before)) return null;
  const kept: SealedHeaders = headers ?? { header_names: record.server.header_names, sealed_headers: record.sealed_headers };
  return { type: McpServerEvents.Updated, data: { ...after, ...kept, at: now } };
}

/** Delete: McpServerDeleted. @throws NotFoundError (404) for a server not registered. */
export function decideDeleteMcpServer(state: McpServerState, name: string, now: string): { type: string; data: McpServerDeletedData } {
  if (!state.record) throw new NotFoundError(`MCP server ${name} not found`);
  return { type: McpServerEvents.Deleted, data: { name, at: now } };
}
