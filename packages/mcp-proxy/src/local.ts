/**
 * The local proxy (`agp mcp proxy`): beside the agent, speaking stdio to it, so it drops into any `mcpServers`
 * config. It starts or reaches the upstream, governs each `tools/call` with `@agp/sdk` (decisions local, policies live
 * over the push channel, approvals waited for, reports through the spool, fleet-wide leases drawn) and forwards the
 * rest. Nothing but the protocol goes to stdout; its own messages go to stderr. Source: docs/mcp-proxy.md (Local).
 */
import { randomUUID } from 'node:crypto';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Governor } from '@agp/sdk';
import type { Client } from '@modelcontextprotocol/client';
import type { McpToolPinState } from '@agp/contracts';
import { createGovernedProxy } from './proxy.js';
import { ToolPins, listAllTools, seenTool, type RecordTools, type ToolPinGuard } from './pins.js';
import type { UpstreamSettings } from './settings.js';
import { guardStdin } from './stdio-guard.js';
import { connectUpstream, type UpstreamTarget } from './upstream.js';

/** What {@link runLocalProxy} runs. */
export interface LocalProxyOptions {
  /** The platform: its base URL and an API key with write scope (`AGP_URL`, `AGP_KEY`). */
  platform: { url: string; key: string };
  /** The agent the calls are governed as; absent: the MCP client's `clientInfo.name` (else `mcp-client`). */
  agentId?: string;
  /** The run id of this session; absent: a random UUID. */
  runId?: string;
  settings: UpstreamSettings;
  upstream: UpstreamTarget;
  /** A folder for the durable report spool (reports survive a crash of the proxy). @default in memory */
  spoolDir?: string;
  /** How often a call waiting for an approval sends `notifications/progress`, ms. @default 5000 */
  progressIntervalMs?: number;
  /** Where the proxy's own messages go. @default stderr */
  log?: (message: string) => void;
  /** With `settings.approval` `client`: who approves in the client (an e-mail); absent: the approval form asks. */
  approverEmail?: string;
  /**
   * Pin the upstream's tools with the server registered on the platform under `settings.name` (docs/mcp-proxy.md, Tool
   * pinning): each list read is recorded (`POST /api/v1/mcp/servers/{name}/tools`) and its answer holds the pins; a
   * changed or new tool is held until accepted. The registration must exist. @default false
   */
  pinTools?: boolean;
}

/**
 * The tool pinning of the local proxy: lists recorded on the platform with the proxy's key, the first before the agent
 * is served, then every time one is read (the answer also brings accepts made since).
 * @throws Error when the server is not registered on the platform (404), or the platform refuses to record the list
 *   (a read key, or a key bound to an agent: 403).
 */
async function localToolPins(o: LocalProxyOptions, upstream: Client, log: (m: string) => void): Promise<ToolPinGuard> {
  const url = new URL(`api/v1/mcp/servers/${encodeURIComponent(o.settings.name)}/tools`, o.platform.url.endsWith('/') ? o.platform.url : `${o.platform.url}/`);
  const headers = { authorization: `Bearer ${o.platform.key}`, 'content-type': 'application/json' };
  const probe = await fetch(url, { headers });
  if (probe.status === 404) throw new Error(`--pin-tools: no MCP server named ${o.settings.name} is registered on the platform (POST /api/v1/mcp/servers); its tools cannot be pinned`);
  if (!probe.ok) throw new Error(`--pin-tools: the platform answered ${probe.status} to GET ${url.pathname}`);
  const record: RecordTools = async (tools) => {
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ tools }) });
    if (!r.ok) throw new Error(`the platform answered ${r.status} to POST ${url.pathname}: ${(await r.text()).slice(0, 500)}`);
    return ((await r.json()) as { pins: McpToolPinState[] }).pins;
  };
  const pins = new ToolPins({ server: o.settings.name, listAll: () => listAllTools(upstream, o.settings.timeout_ms), alwaysRecord: true, onError: log });
  // The first list is recorded before the agent is served, so a key the platform refuses (a read key, an agent-bound
  // key) stops the proxy at start instead of holding every tool.
  const asked = Date.now();
  pins.offer(await record((await listAllTools(upstream, o.settings.timeout_ms)).map(seenTool)).catch((err: Error) => Promise.reject(new Error(`--pin-tools: ${err.message}`))), asked);
  return pins.guard(record);
}

/**
 * Run the proxy until the agent closes stdin (or the process is signalled): then end the run, close the governor
 * (delivering pending reports) and stop the upstream.
 * @returns when everything is closed.
 * @throws Error when the upstream cannot be started or reached, or the platform refuses the key.
 */
export async function runLocalProxy(o: LocalProxyOptions): Promise<void> {
  const log = o.log ?? ((m: string) => process.stderr.write(`agp mcp proxy: ${m}\n`));
  const upstream = await connectUpstream(o.settings.name, o.upstream, o.settings.timeout_ms);
  let pins: ToolPinGuard | undefined;
  try {
    pins = o.pinTools ? await localToolPins(o, upstream, log) : undefined;
  } catch (err) {
    await upstream.close().catch(() => {});
    throw err;
  }
  // Made on first need (closures assign them): the governor, and the session's run.
  const held: { governor: Promise<Governor> | null; run: ReturnType<Governor['startRun']> | null } = { governor: null, run: null };
  const governorOf = (clientName?: string) =>
    (held.governor ??= Governor.connect({
      url: o.platform.url,
      key: o.platform.key,
      agentId: o.agentId ?? clientName ?? 'mcp-client',
      agent: { framework: 'mcp', metadata: { mcp_server: o.settings.name } },
      onBlocked: 'return',
      ...(o.spoolDir ? { spoolDir: o.spoolDir } : {}),
      onReportError: (m) => log(m),
    }));
  // With the agent id known, the governor (and its snapshot) is ready before the first call.
  const ready = o.agentId ? await governorOf() : null;
  const proxy = () => createGovernedProxy({
    upstream,
    settings: o.settings,
    run: async (client) => (held.run ??= (await governorOf(client.name)).startRun({ runId: o.runId ?? randomUUID(), name: `mcp:${o.settings.name}`, metadata: { mcp_server: o.settings.name } })),
    deniedByName: (action) => ready?.deniedByName(action) ?? false,
    progressIntervalMs: o.progressIntervalMs,
    onError: log,
    ...(pins ? { pins } : {}),
    ...(o.settings.approval === 'client'
      ? { clientApproval: { decide: async (id, verdict, body) => (await governorOf()).decideApproval(id, verdict, body), ...(o.approverEmail ? { approverEmail: o.approverEmail } : {}) } }
      : {}),
  });
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  upstream.onclose = () => log(`the upstream MCP server ${o.settings.name} closed; its tools fail until the proxy is restarted`);
  // The opening exchange picks the era (2026-07-28 `server/discover`, or the 2025 `initialize`); one proxy serves it.
  // Every line that is not a message is answered (-32700, -32600) before the SDK's transport reads the rest.
  const input = process.stdin.pipe(guardStdin({ output: process.stdout, onRefused: (why) => log(`stdio: refused a line: ${why}`) }));
  const served = serveStdio(proxy, { transport: new StdioServerTransport(input, process.stdout), onerror: (err) => log(`stdio: ${err.message}`) });
  log(`governing ${o.settings.name} as ${o.agentId ?? 'the client'}'s actions ${o.settings.action_prefix}*`);
  await closed;
  await held.run?.end({ status: 'completed' }).catch((err: unknown) => log(`the run could not be ended: ${String(err)}`));
  if (held.governor) await (await held.governor).close({ timeoutMs: 10_000 }).catch((err: unknown) => log(String(err)));
  await upstream.close().catch(() => {});
  await served.close().catch(() => {});
  // Let go of stdin (the pipe into the guard would keep the process alive).
  process.stdin.unpipe(input);
  process.stdin.pause();
  input.destroy();
}
