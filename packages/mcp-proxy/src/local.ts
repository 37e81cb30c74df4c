/**
 * The local proxy (`agp mcp proxy`): beside the agent, speaking stdio to it, so it drops into any `mcpServers`
 * config. It starts or reaches the upstream, governs each `tools/call` with `@agp/sdk` (decisions local, policies live
 * over the push channel, approvals waited for, reports through the spool, fleet-wide leases drawn) and forwards the
 * rest. Nothing but the protocol goes to stdout; its own messages go to stderr. Source: docs/mcp-proxy.md (Local).
 */
import { randomUUID } from 'node:crypto';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Governor } from '@agp/sdk';
import { createGovernedProxy } from './proxy.js';
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
