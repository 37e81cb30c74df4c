/**
 * Connecting the proxy to its upstream MCP server with the official client (`@modelcontextprotocol/client`): a
 * command run over stdio, or a Streamable HTTP URL with its own headers. The client negotiates the upstream's
 * revision itself (`versionNegotiation: auto`: 2026-07-28 when the server speaks it, else the 2025 `initialize`
 * handshake). The agent's AGP key is never among the upstream's headers. Source: docs/mcp-proxy.md.
 */
import { Client, StreamableHTTPClientTransport, type ClientCapabilities, type FetchLike } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { PROXY_INFO, PROXY_PROTOCOL_VERSIONS } from './proxy.js';

/**
 * Where the upstream is: a command spoken to over stdio, or a Streamable HTTP endpoint (with the `fetch` its requests
 * go through, when not the global one: the hosted proxy's, which connects only to the addresses it checked).
 */
export type UpstreamTarget =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string; headers?: Record<string, string>; fetch?: FetchLike };

/**
 * How long a stdio upstream's start and handshake may take at least, ms: a process that starts a runtime (`npx …`,
 * `node …`) can take seconds on a busy machine, which is not a slow request. An HTTP upstream's handshake is one
 * request, bound by `timeoutMs` alone.
 */
export const STDIO_UPSTREAM_START_MS = 30_000;

/** What the proxy declares to its upstream by default: it relays sampling and form elicitation to the agent's client. */
export const UPSTREAM_CAPABILITIES: ClientCapabilities = { sampling: {}, elicitation: { form: {} } };

/**
 * Start (stdio) or reach (HTTP) the upstream and complete the MCP handshake.
 * The proxy declares sampling and elicitation to the upstream so it can relay them (the agent's client answers them,
 * or refuses when it does not support them); a proxy that knows its agent's client before it connects (a hosted
 * session) declares only what that client declared, so the upstream does not ask for what cannot be answered.
 * @param timeoutMs how long the handshake may take, ms (a stdio upstream's at least {@link STDIO_UPSTREAM_START_MS}).
 * @param capabilities what is declared to the upstream. @default `{ sampling: {}, elicitation: { form: {} } }`
 * @throws Error naming the server when it cannot be started or reached, or the handshake fails.
 */
export async function connectUpstream(server: string, target: UpstreamTarget, timeoutMs: number, capabilities: ClientCapabilities = UPSTREAM_CAPABILITIES): Promise<Client> {
  const client = new Client({ name: PROXY_INFO.name, version: PROXY_INFO.version }, { capabilities, versionNegotiation: { mode: 'auto' }, supportedProtocolVersions: PROXY_PROTOCOL_VERSIONS });
  const transport =
    'command' in target
      ? new StdioClientTransport({ command: target.command, args: target.args ?? [], env: { ...getDefaultEnvironment(), ...target.env }, cwd: target.cwd, stderr: 'inherit' })
      : new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers ?? {} }, ...(target.fetch ? { fetch: target.fetch } : {}) });
  try {
    await client.connect(transport, { timeout: 'command' in target ? Math.max(timeoutMs, STDIO_UPSTREAM_START_MS) : timeoutMs });
  } catch (err) {
    await client.close().catch(() => {});
    throw new Error(`upstream MCP server ${server} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
  }
  return client;
}
