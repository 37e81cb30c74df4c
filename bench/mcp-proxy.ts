/**
 * `pnpm bench mcp-proxy`: what the governed MCP proxy adds to a `tools/call` (not a test; docs/performance.md,
 * `pnpm bench mcp-proxy`). In one run, the official MCP client (`@modelcontextprotocol/client`, this process) calls
 * the `echo` tool of `@modelcontextprotocol/server-everything`:
 *   (a) direct: the client spawns the server (stdio);
 *   (b) through the local proxy: the client spawns the built `agp mcp proxy` (its agent governed by 10 policies of the
 *       embedded platform, which this bench starts), which spawns the server; every call is decided and reported;
 *   (c) direct HTTP: the client reaches the server in its Streamable HTTP mode (loopback);
 *   (d) through the hosted proxy: the client reaches the platform's `/api/v1/mcp/proxy/everything` (Streamable HTTP),
 *       registered in front of (c)'s server, its agent governed by the same 10 policies.
 * Rows, interleaved a, b, c, d … for BENCH_MCP_ROUNDS rounds of BENCH_MCP_CALLS sequential calls each: p50 / p99 ms
 * per call, calls/s one at a time, and CPU µs per call of each process (client, proxy, upstream, platform; from
 * /proc). Then BENCH_MCP_CONCURRENCY calls in flight for BENCH_MCP_SECONDS s: calls/s.
 *   (e) with BENCH_MCP_DISTRIBUTED=1: (d) on the distributed platform (each service its own process, the local NATS
 *       and PostgreSQL), the CPU of its gateway process counted.
 * BENCH_PROFILE=<dir> writes a `--cpu-prof` profile of the proxy process. Targets: the local proxy adds ≤ 0.5 ms p50
 * and ≤ 2 ms p99 over (a); the hosted proxy adds ≤ 1 ms p50 and ≤ 3 ms p99 over (c), and makes ≥ 1,500 governed calls/s.
 * Needs the built platform and CLI (`node scripts/build.mjs`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cpuMsOf } from './proc.js';
import { READ_KEY, WRITE_KEY, startEmbeddedPlatform, type Platform } from './embedded-platform.js';
import { startDistributed, type DistributedRun } from '../test/support/distributed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = join(ROOT, 'node_modules/.bin/mcp-server-everything');
const CLI = join(ROOT, 'packages/cli/dist/cli.js');
const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 2000);
/** BENCH_MCP_DISTRIBUTED=1 adds (e): the hosted proxy of the distributed platform (the local NATS and PostgreSQL). */
const DISTRIBUTED = process.env.BENCH_MCP_DISTRIBUTED === '1';
let distributed: DistributedRun | undefined;
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_MCP_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_MCP_SECONDS ?? 5);

/** One way of reaching the tool: a connected client and the pids whose CPU it costs. */
interface Path {
  name: string;
  client: Client;
  pids: () => Record<string, number>;
}

/** The pids of a process's children (Linux, /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The deepest descendant of `pid` (npm/npx shims put a shell or node between a spawn and the server). */
function leafOf(pid: number): number {
  const kids = childrenOf(pid);
  return kids.length === 0 ? pid : leafOf(kids[kids.length - 1]);
}

async function connect(name: string, command: string, args: string[], env: Record<string, string> = {}): Promise<Path & { transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore' });
  const client = new Client({ name: 'bench-mcp', version: '1.0.0' });
  await client.connect(transport, { timeout: 60_000 });
  const pid = transport.pid!;
  const pids =
    name === 'direct'
      ? () => ({ upstream: leafOf(pid) })
      : () => ({ proxy: pid, upstream: leafOf(childrenOf(pid)[0] ?? pid) });
  return { name, client, pids, transport };
}

/** An MCP client over Streamable HTTP to `url` with `headers`; `pids` names the processes its calls cost. */
async function connectHttp(name: string, url: string, headers: Record<string, string>, pids: () => Record<string, number>): Promise<Path> {
  // The 2025 handshake on both HTTP paths: server-everything does not speak 2026-07-28.
  const client = new Client({ name: 'bench-mcp', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }), { timeout: 60_000 });
  return { name, client, pids };
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor((q / 100) * sorted.length))];

/** `n` sequential calls: latencies (ms) and CPU ms per process. */
async function sequential(path: Path, n: number, platform: Platform): Promise<{ ms: number[]; wallMs: number; cpu: Record<string, number> }> {
  const pids = { ...path.pids(), ...(platform.child?.pid ? { platform: platform.child.pid } : {}) };
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMsOf(pid)]));
  const self0 = process.cpuUsage();
  const ms: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const r = await path.client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    ms.push(performance.now() - s);
    if (r.isError) throw new Error(`${path.name}: echo failed: ${JSON.stringify(r.content)}`);
  }
  const wallMs = performance.now() - t0;
  const self = process.cpuUsage(self0);
  const cpu: Record<string, number> = { client: (self.user + self.system) / 1000 };
  for (const [k, pid] of Object.entries(pids)) cpu[k] = cpuMsOf(pid) - before[k];
  return { ms, wallMs, cpu };
}

/** `CONCURRENCY` calls in flight for `SECONDS` s: calls/s. */
async function concurrent(path: Path): Promise<number> {
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, k) => {
      for (let i = 0; performance.now() < end; i++) {
        await path.client.callTool({ name: 'echo', arguments: { message: `c${k}-${i}` } });
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - t0);
}

/** Run the benchmark and print its table. */
export async function mcpProxyBench(): Promise<void> {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  console.log(`AGP MCP proxy benchmark: node ${process.version}, ${availableParallelism()} CPUs (${cpuModel}), ${new Date().toISOString()}, commit ${commit}`);
  console.log(`load average at start: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  const platform = await startEmbeddedPlatform(undefined, { AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' });
  const agentId = `bench-mcp-${Date.now().toString(36)}`;
  const paths: Path[] = [];
  // server-everything in its Streamable HTTP mode, for (c) and, registered in the platform, (d).
  const httpPort = 19000 + Math.floor(Math.random() * 1000);
  const httpServer = spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(httpPort) }, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await new Promise<void>((ok, fail) => {
      httpServer.stderr!.on('data', (d) => String(d).includes('listening') && ok());
      httpServer.on('exit', (code) => fail(new Error(`server-everything (HTTP) exited ${code}`)));
    });
    const upstreamUrl = `http://127.0.0.1:${httpPort}/mcp`;
    const registered = await platform.call('POST', '/api/v1/mcp/servers', { name: 'everything', url: upstreamUrl, action_prefix: 'everything.' });
    if (registered.status !== 201) throw new Error(`POST /api/v1/mcp/servers answered ${registered.status}: ${JSON.stringify(registered.body)}`);
    for (let i = 0; i < 10; i++) {
      const r = await platform.call('POST', '/api/v1/policies', { name: `${agentId} policy ${i}`, agent_ids: [agentId], denied_actions: [`everything.drop_${i}`], approval_required_actions: [`everything.wire_${i}`] });
      if (r.status !== 201) throw new Error(`POST /api/v1/policies answered ${r.status}`);
    }
    paths.push(await connect('direct', EVERYTHING, []));
    const prof = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`, '--cpu-prof-name=mcp-proxy.cpuprofile'] : [];
    paths.push(await connect('local proxy', process.execPath, [...prof, CLI, 'mcp', 'proxy', '--server', 'everything', '--url', platform.url, '--agent', agentId, '--', EVERYTHING], { AGP_KEY: WRITE_KEY }));
    const httpPid = () => ({ upstream: leafOf(httpServer.pid!) });
    paths.push(await connectHttp('direct HTTP', upstreamUrl, {}, httpPid));
    paths.push(await connectHttp('hosted proxy', `${platform.url}/api/v1/mcp/proxy/everything`, { authorization: `Bearer ${WRITE_KEY}`, 'AGP-Agent-Id': agentId, 'AGP-Run-Id': `${agentId}-hosted` }, httpPid));
    if (DISTRIBUTED) {
      // (e) the same hosted endpoint on the distributed platform: the gateway its own process, PostgreSQL and NATS.
      distributed = await startDistributed({
        adminDatabaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
        natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
        dbPrefix: 'agp_bench',
        build: false,
        echo: false,
        env: { AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn', AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', AGP_SECRETS_KEY: randomBytes(32).toString('base64') },
      });
      const d = distributed;
      const api = async (method: string, path: string, body: unknown) => (await fetch(d.url + path, { method, headers: { authorization: `Bearer ${WRITE_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).status;
      if ((await api('POST', '/api/v1/mcp/servers', { name: 'everything', url: upstreamUrl, action_prefix: 'everything.' })) !== 201) throw new Error('registering the upstream on the distributed platform failed');
      for (let i = 0; i < 10; i++) await api('POST', '/api/v1/policies', { name: `${agentId} policy ${i}`, agent_ids: [agentId], denied_actions: [`everything.drop_${i}`], approval_required_actions: [`everything.wire_${i}`] });
      paths.push(await connectHttp('hosted proxy, distributed', `${d.url}/api/v1/mcp/proxy/everything`, { authorization: `Bearer ${WRITE_KEY}`, 'AGP-Agent-Id': agentId, 'AGP-Run-Id': `${agentId}-hosted-d` }, () => ({ ...httpPid(), gateway: d.pids.gateway })));
    }
    for (const p of paths) await sequential(p, 200, platform); // warm-up
    const results = new Map<string, { ms: number[]; wallMs: number; cpu: Record<string, number>; calls: number }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const p of paths) {
        const r = await sequential(p, CALLS, platform);
        const acc = results.get(p.name) ?? { ms: [], wallMs: 0, cpu: {}, calls: 0 };
        acc.ms.push(...r.ms);
        acc.wallMs += r.wallMs;
        acc.calls += CALLS;
        for (const [k, v] of Object.entries(r.cpu)) acc.cpu[k] = (acc.cpu[k] ?? 0) + v;
        results.set(p.name, acc);
      }
    }
    const rates = new Map<string, number>();
    for (const p of paths) rates.set(p.name, await concurrent(p));
    console.log(`load average at end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
    console.log(`| path | p50 / p99 ms per call (${ROUNDS} × ${CALLS} sequential) | calls/s one at a time | calls/s, ${CONCURRENCY} in flight | CPU µs per call |`);
    console.log('|---|---|---|---|---|');
    const summary = new Map<string, { p50: number; p99: number }>();
    for (const p of paths) {
      const r = results.get(p.name)!;
      const sorted = [...r.ms].sort((a, b) => a - b);
      const p50 = percentile(sorted, 50);
      const p99 = percentile(sorted, 99);
      summary.set(p.name, { p50, p99 });
      const cpu = Object.entries(r.cpu).map(([k, v]) => `${k} ${Math.round((v * 1000) / r.calls)}`).join(', ');
      console.log(`| ${p.name} | ${p50.toFixed(3)} / ${p99.toFixed(3)} | ${Math.round((r.calls * 1000) / r.wallMs)} | ${Math.round(rates.get(p.name)!)} | ${cpu} |`);
    }
    const d = summary.get('direct')!;
    const l = summary.get('local proxy')!;
    const addP50 = l.p50 - d.p50;
    const addP99 = l.p99 - d.p99;
    console.log(`\nthe local proxy adds ${addP50.toFixed(3)} ms p50 (target ≤ 0.5: ${addP50 <= 0.5 ? 'PASS' : 'FAIL'}) and ${addP99.toFixed(3)} ms p99 (target ≤ 2: ${addP99 <= 2 ? 'PASS' : 'FAIL'})`);
    const dh = summary.get('direct HTTP')!;
    for (const name of ['hosted proxy', 'hosted proxy, distributed']) {
      const h = summary.get(name);
      if (!h) continue;
      const add50 = h.p50 - dh.p50;
      const add99 = h.p99 - dh.p99;
      const rate = rates.get(name)!;
      console.log(
        `the ${name} adds ${add50.toFixed(3)} ms p50 (target ≤ 1: ${add50 <= 1 ? 'PASS' : 'FAIL'}) and ${add99.toFixed(3)} ms p99 (target ≤ 3: ${add99 <= 3 ? 'PASS' : 'FAIL'}) over direct HTTP; ${Math.round(rate)} governed calls/s with ${CONCURRENCY} in flight (target ≥ 1,500: ${rate >= 1500 ? 'PASS' : 'FAIL'})`,
      );
    }
  } finally {
    await Promise.all(paths.map((p) => p.client.close().catch(() => {})));
    platform.child?.kill('SIGTERM');
    await distributed?.stop();
    httpServer.kill('SIGTERM');
  }
}
