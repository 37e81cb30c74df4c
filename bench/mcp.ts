/**
 * `pnpm bench mcp`: the tool gateway benchmark (not a test; docs/performance.md (`pnpm bench mcp`)). Starts distributed mode on the local NATS
 * and PostgreSQL, seeds BENCH_MCP_RUNS runs (10 actions each) through ingest, then measures with autocannon at
 * BENCH_CONNECTIONS connections for BENCH_DURATION seconds each, all in one run:
 *
 *   baseline  GET /healthz of the same gateway (no key, no bus hop: the HTTP ceiling of this gateway process)
 *   REST      GET /api/v1/mcp/tools                     (the registry's list: auth, one bus hop, ETag)
 *   REST      POST /api/v1/mcp/call list_runs {limit: 10} (auth, a hop to the mcp service, a hop to stats, SQL)
 *   MCP       POST /api/v1/mcp tools/list               (2026-07-28: the same, through the SDK's per-request server)
 *   MCP       POST /api/v1/mcp tools/call list_runs     (2026-07-28)
 *
 * Prints req/s, p50 and p99 of each, with its ratio to the baseline. Knobs: BENCH_DURATION (default 10),
 * BENCH_CONNECTIONS (default 10), BENCH_MCP_RUNS (default 200).
 */
import autocannon from 'autocannon';
import { startDistributed } from '../test/support/distributed.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const RUNS = Number(process.env.BENCH_MCP_RUNS ?? 200);
const WRITE_KEY = 'agp_bench_write_key_000000000001';
const READ_KEY = 'agp_bench_read_key_0000000000001';

/** The `_meta` a 2026-07-28 client sends on every request (what `@modelcontextprotocol/client` sends, captured). */
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'agp-bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** One figure of the table. */
interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** Drive one request shape for DURATION seconds; fails when any answer is not 2xx or its body is wrong. */
async function measure(name: string, url: string, opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; expect: (body: string) => boolean }): Promise<Row> {
  // One request first, to check the answer is what the row claims to measure.
  const probe = await fetch(url, { method: opts.method ?? 'GET', headers: opts.headers, body: opts.body });
  const text = await probe.text();
  if (!probe.ok || !opts.expect(text)) throw new Error(`${name}: unexpected answer ${probe.status} ${text.slice(0, 300)}`);
  const r = await autocannon({ url, method: opts.method ?? 'GET', headers: opts.headers, body: opts.body, connections: CONNECTIONS, duration: DURATION });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

/** Run the benchmark and print its table. */
export async function mcpBench(): Promise<void> {
  const p = await startDistributed({
    adminDatabaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    env: { AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn' },
  });
  try {
    const now = Date.now();
    const batch = [];
    for (let i = 0; i < RUNS; i++) {
      const run = `bench-run-${i}`;
      const t = (s: number) => new Date(now - (RUNS - i) * 60_000 + s * 1000).toISOString();
      batch.push({ id: `${run}-start`, type: 'run.start', timestamp: t(0), body: { run_id: run, agent_id: `agent-${i % 10}`, started_at: t(0) } });
      for (let a = 0; a < 10; a++) {
        batch.push({ id: `${run}-a${a}`, type: 'action.record', timestamp: t(a + 1), body: { run_id: run, agent_id: `agent-${i % 10}`, action_name: `action_${a % 5}`, status: 'success', timestamp: t(a + 1), cost_usd: 0.01 * (a + 1), duration_ms: 100 } });
      }
      batch.push({ id: `${run}-end`, type: 'run.end', timestamp: t(20), body: { run_id: run, agent_id: `agent-${i % 10}`, status: 'completed', ended_at: t(20) } });
    }
    for (let i = 0; i < batch.length; i += 1000) {
      const res = await fetch(`${p.url}/api/v1/ingest/`, { method: 'POST', headers: { authorization: `Bearer ${WRITE_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ batch: batch.slice(i, i + 1000) }) });
      if (res.status !== 207) throw new Error(`ingest answered ${res.status}`);
      await res.arrayBuffer();
    }
    // Wait until the runs are queryable.
    for (let i = 0; ; i++) {
      const page = (await (await fetch(`${p.url}/api/v1/runs?limit=1`, { headers: { authorization: `Bearer ${READ_KEY}` } })).json()) as { total: number };
      if (page.total >= RUNS) break;
      if (i > 600) throw new Error(`only ${page.total} of ${RUNS} runs became queryable`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const auth = { authorization: `Bearer ${READ_KEY}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const mcp = (method: string, name?: string) => ({ ...json, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });
    const rows: Row[] = [];
    rows.push(await measure('GET /healthz (baseline)', `${p.url}/healthz`, { expect: (b) => b.includes('"ok"') }));
    rows.push(await measure('REST GET /api/v1/mcp/tools', `${p.url}/api/v1/mcp/tools`, { headers: auth, expect: (b) => b.includes('"create_policy"') }));
    rows.push(
      await measure('REST POST /api/v1/mcp/call list_runs', `${p.url}/api/v1/mcp/call`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ tool_name: 'list_runs', arguments: { limit: 10 } }),
        expect: (b) => b.includes('"success":true') && b.includes('bench-run-'),
      }),
    );
    rows.push(
      await measure('MCP tools/list (2026-07-28)', `${p.url}/api/v1/mcp`, {
        method: 'POST',
        headers: mcp('tools/list'),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } }),
        expect: (b) => b.includes('"create_policy"'),
      }),
    );
    rows.push(
      await measure('MCP tools/call list_runs (2026-07-28)', `${p.url}/api/v1/mcp`, {
        method: 'POST',
        headers: mcp('tools/call', 'list_runs'),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_runs', arguments: { limit: 10 }, _meta: META } }),
        expect: (b) => b.includes('bench-run-') && !b.includes('"isError":true'),
      }),
    );
    const base = rows[0].rps;
    console.log(`\nTool gateway, distributed mode, ${CONNECTIONS} connections, ${DURATION} s each, ${RUNS} runs seeded\n`);
    console.log('| request | req/s | p50 ms | p99 ms | vs /healthz | non-2xx |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.name} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p50} | ${r.p99} | ${(r.rps / base).toFixed(2)}x | ${r.non2xx} |`);
  } finally {
    await p.stop();
  }
}
