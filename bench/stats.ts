/**
 * `pnpm bench stats`: the stats benchmark (not a test; docs/performance.md (`pnpm bench stats`)). Starts distributed mode, seeds the event store
 * with BENCH_LEDGER_ROWS ActionRecorded events (default 1M; ~10 actions per run, 50 agents, 20 action names, spread
 * over 60 days, estimated and actual costs) plus RunStarted / RunEnded per run, and BENCH_INTERVENTIONS
 * InterventionRecorded events (default 1M), straight into `agp_events` with `INSERT ... SELECT generate_series`
 * (under the append lock, so global order stays gap-free). The real projections then build the read models: their
 * catch-up time is a figure. Then, each beside a baseline measured in the same run:
 *
 *   (a) GET /api/v1/stats/, /stats/daily, /stats/estimation-accuracy, /interventions/stats at 10 connections
 *       (autocannon, BENCH_DURATION s each): req/s, p50, p99
 *       vs a bare node:http server answering the same bytes at 10 connections, and the service's own SQL
 *       (the same query functions) timed directly against PostgreSQL, sequentially.
 *   (b) GET /api/v1/ledger/export?format=jsonl of every row: time, rows, bytes, and RSS of the gateway and stats
 *       processes (sampled every 100 ms during the export, and VmHWM) vs their RSS before the export.
 *
 * Needs DATABASE_URL and NATS_URL (defaults: the local ones). Knobs: BENCH_LEDGER_ROWS, BENCH_INTERVENTIONS,
 * BENCH_DURATION (seconds per endpoint, default 10), BENCH_ANSWER_CACHE (AGP_ANSWER_CACHE_ENTRIES of the services;
 * `0` measures every request as a cache miss, i.e. the read-model SQL behind the hops; default: the platform default). Targets: each p99 < 25 ms; export of 1M rows < 60 s, flat memory.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import { createPgSql } from '@agp/eventstore';
import { startDistributed, type DistributedRun } from '../test/support/distributed.js';
import { estimationAccuracy, statsDaily, statsSummary } from '../services/stats/src/queries.js';
import { interventionStats } from '../services/interventions/src/queries.js';
import { setTimeout as sleep } from 'node:timers/promises';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const LEDGER_ROWS = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
const INTERVENTIONS = Number(process.env.BENCH_INTERVENTIONS ?? 1_000_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const RUNS = Math.max(1, Math.round(LEDGER_ROWS / 10));
const ORG = 'bench';
const WRITE_KEY = 'agp_bench_write_key_000000000001';
const READ_KEY = 'agp_bench_read_key_0000000000001';
/** The event store's append lock (packages/eventstore/src/event-store.ts). */
const APPEND_LOCK = 0x41475045;
const SEED_CHUNK = 100_000;

/** A latency in ms; autocannon reports whole milliseconds, so 0 means under one. */
const ms = (v: number) => (v === 0 ? '<1 ms' : `${v.toFixed(1)} ms`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const META = `jsonb_build_object('organization_id', '${ORG}', 'actor', 'bench', 'schema_version', 1)`;
const ISO = (expr: string) => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** Run r's start: r % 60 days ago, minus r % 3600 s, at ms precision. */
const RUN_START = (r: string) => `date_trunc('milliseconds', now() - make_interval(days => (${r}) % 60, secs => (${r}) % 3600))`;

/** Insert events for `lo..hi-1` with `select` (columns event_id, stream_id, stream_version, event_type, data) under the append lock. */
async function seedChunk(db: pg.Client, select: string, lo: number, hi: number): Promise<void> {
  await db.query('BEGIN');
  await db.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
  await db.query(
    `INSERT INTO agp_events (event_id, stream_id, stream_version, event_type, data, metadata, organization_id)
     SELECT event_id, stream_id, stream_version, event_type, data, ${META}, '${ORG}' FROM (${select}) s`,
    [lo, hi - 1],
  );
  await db.query('COMMIT');
}

async function seed(db: pg.Client): Promise<void> {
  const chunks = async (total: number, select: string) => {
    for (let lo = 0; lo < total; lo += SEED_CHUNK) await seedChunk(db, select, lo, Math.min(total, lo + SEED_CHUNK));
  };
  await chunks(
    RUNS,
    `SELECT 'bench-rs-' || r AS event_id, 'run-bench-' || r AS stream_id, 1 AS stream_version, 'RunStarted' AS event_type,
            jsonb_build_object('run_id', 'bench-run-' || r, 'agent_id', 'agent-' || (r % 50), 'started_at', ${ISO(RUN_START('r'))}, 'ingest_event_id', 'bench-rs-' || r) AS data
       FROM generate_series($1::int, $2::int) r`,
  );
  await chunks(
    LEDGER_ROWS,
    `SELECT 'bench-a-' || i AS event_id, 'run-bench-' || (i % ${RUNS}) AS stream_id, 2 + i / ${RUNS} AS stream_version, 'ActionRecorded' AS event_type,
            jsonb_build_object('id', gen_random_uuid()::text, 'run_id', 'bench-run-' || (i % ${RUNS}), 'agent_id', 'agent-' || ((i % ${RUNS}) % 50),
              'action_name', 'action-' || (i % 20), 'status', CASE WHEN i % 10 = 0 THEN 'error' ELSE 'success' END,
              'cost_usd', ((i % 100) + 1) / 1000.0, 'actual_cost_usd', round((((i % 100) + 1) / 1000.0 * (0.5 + (i % 37) / 20.0))::numeric, 6),
              'duration_ms', (i % 500) + 10, 'inputs', jsonb_build_object('q', 'bench query ' || i),
              'timestamp', ${ISO(`${RUN_START(`i % ${RUNS}`)} + make_interval(secs => i / ${RUNS})`)}, 'ingest_event_id', 'bench-a-' || i) AS data
       FROM generate_series($1::int, $2::int) i`,
  );
  await chunks(
    RUNS,
    `SELECT 'bench-re-' || r AS event_id, 'run-bench-' || r AS stream_id, 1000000000 AS stream_version, 'RunEnded' AS event_type,
            jsonb_build_object('run_id', 'bench-run-' || r, 'agent_id', 'agent-' || (r % 50), 'status', CASE WHEN r % 7 = 0 THEN 'failed' ELSE 'completed' END,
              'ended_at', ${ISO(`${RUN_START('r')} + interval '1 hour'`)}, 'ingest_event_id', 'bench-re-' || r) AS data
       FROM generate_series($1::int, $2::int) r WHERE r % 10 <> 0`,
  );
  await chunks(
    INTERVENTIONS,
    `SELECT 'bench-i-' || i AS event_id, 'intervention-bench-' || i AS stream_id, 1 AS stream_version, 'InterventionRecorded' AS event_type,
            jsonb_build_object('id', 'bench-' || i, 'type', (ARRAY['hard_block','approval_required','rate_limited','budget_exceeded','downgrade','warning'])[1 + i % 6],
              'outcome', (ARRAY['blocked','approved_after_review','blocked','blocked','modified','warned'])[1 + i % 6], 'action_name', 'action-' || (i % 20),
              'agent_id', 'agent-' || (i % 50), 'run_id', 'bench-run-' || (i % ${RUNS}), 'policy_id', 'policy-' || (i % 10),
              'risk_level', (ARRAY['critical','high','medium','low','minimal'])[1 + i % 5], 'estimated_cost_usd', ((i % 100) + 1) / 100.0,
              'cost_prevented_usd', CASE WHEN i % 6 IN (0, 2, 3) THEN ((i % 100) + 1) / 100.0 ELSE 0 END,
              'timestamp', ${ISO(`date_trunc('milliseconds', now() - make_interval(days => i % 60, secs => i % 3600))`)},
              'created_at', ${ISO('now()')}, 'source', 'ingest') AS data
       FROM generate_series($1::int, $2::int) i`,
  );
}

/** Wait until both read-model projections have applied every stored event; returns the time taken (ms) and the event count. */
async function catchUp(db: pg.Client, from: number): Promise<{ ms: number; events: number }> {
  const { rows } = await db.query<{ max: string; n: string }>('SELECT max(global_position)::text AS max, count(*) AS n FROM agp_events');
  const target = BigInt(rows[0].max);
  for (;;) {
    const { rows: cp } = await db.query<{ name: string; position: string }>(`SELECT name, position::text AS position FROM agp_checkpoints WHERE name IN ('stats-read-model', 'interventions-read-model')`);
    if (cp.length === 2 && cp.every((c) => BigInt(c.position) >= target)) return { ms: performance.now() - from, events: Number(rows[0].n) };
    await sleep(500);
  }
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}
async function cannon(url: string, headers: Record<string, string> = {}): Promise<Load> {
  const r = await autocannon({ url, connections: 10, duration: DURATION, headers });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/** A bare node:http server answering `bytes` at 10 connections: the HTTP ceiling of this machine for that body. */
async function bare(bytes: Buffer): Promise<Load> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    return await cannon(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
  } finally {
    server.close();
  }
}

/** The service's own SQL, called directly (no bus, no HTTP): p50 / p99 over 200 sequential calls, in ms. */
async function rawSql(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 20; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  xs.sort((a, b) => a - b);
  return { p50: xs[100], p99: xs[197] };
}

/** Stream the whole jsonl export, counting rows and bytes, while sampling the RSS of the gateway and the stats service. */
async function exportAll(p: DistributedRun): Promise<{ ms: number; rows: number; bytes: number; rss: Record<string, { before: number; peak: number; hwm: number }> }> {
  const pids = { gateway: p.pids.gateway, stats: p.pids.stats };
  const rss = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, { before: procStatus(pid, 'VmRSS'), peak: 0, hwm: 0 }]));
  const timer = setInterval(() => {
    for (const [k, pid] of Object.entries(pids)) rss[k].peak = Math.max(rss[k].peak, procStatus(pid, 'VmRSS'));
  }, 100);
  const t = performance.now();
  const res = await fetch(`${p.url}/api/v1/ledger/export?format=jsonl`, { headers: { authorization: `Bearer ${READ_KEY}` } });
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`);
  let rows = 0;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) rows++;
  }
  const elapsed = performance.now() - t;
  clearInterval(timer);
  for (const [k, pid] of Object.entries(pids)) rss[k].hwm = procStatus(pid, 'VmHWM');
  return { ms: elapsed, rows, bytes, rss };
}

/** `pnpm bench stats`. */
export async function statsBench(): Promise<void> {
  console.log(`AGP stats benchmark: ${fmt(LEDGER_ROWS)} ledger entries in ${fmt(RUNS)} runs, ${fmt(INTERVENTIONS)} interventions, ${DURATION} s per endpoint at 10 connections, answer cache ${process.env.BENCH_ANSWER_CACHE === '0' ? 'OFF (every request a miss)' : 'on (default)'}, node ${process.version}, ${new Date().toISOString()}`);
  const p = await startDistributed({ adminDatabaseUrl: DATABASE_URL, natsUrl: NATS_URL, dbPrefix: 'agp_bench', build: false, env: { AGP_INIT_ORG: ORG, AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn', ...(process.env.BENCH_ANSWER_CACHE ? { AGP_ANSWER_CACHE_ENTRIES: process.env.BENCH_ANSWER_CACHE } : {}) } });
  const db = new pg.Client({ connectionString: p.databaseUrl });
  await db.connect();
  const sql = createPgSql(p.databaseUrl);
  try {
    console.log('seeding the event store ...');
    let t = performance.now();
    await seed(db);
    const seedMs = performance.now() - t;
    console.log(`seeded in ${(seedMs / 1000).toFixed(1)} s; waiting for the projections ...`);
    t = performance.now();
    const { ms: catchUpMs, events } = await catchUp(db, t);
    console.log(`projections caught up in ${(catchUpMs / 1000).toFixed(1)} s`);
    await db.query('ANALYZE');

    const auth = { authorization: `Bearer ${READ_KEY}` };
    const now = () => new Date();
    const endpoints: Array<{ path: string; raw: () => Promise<unknown> }> = [
      { path: '/api/v1/stats/', raw: () => statsSummary(sql, ORG, undefined, now(), ['production']) },
      { path: '/api/v1/stats/daily', raw: () => statsDaily(sql, ORG, now(), ['production']) },
      { path: '/api/v1/stats/estimation-accuracy', raw: () => estimationAccuracy(sql, ORG, ['production']) },
      { path: '/api/v1/interventions/stats', raw: () => interventionStats(sql, ORG, { purpose: ['production'] }, now()) },
    ];
    const rows: string[][] = [];
    for (const e of endpoints) {
      const sample = await fetch(p.url + e.path, { headers: auth });
      const bytes = Buffer.from(await sample.arrayBuffer());
      if (sample.status !== 200) throw new Error(`${e.path} answered ${sample.status}: ${bytes}`);
      await autocannon({ url: p.url + e.path, connections: 10, duration: 2, headers: auth });
      const agp = await cannon(p.url + e.path, auth);
      const base = await bare(bytes);
      const raw = await rawSql(e.raw);
      rows.push([
        `GET ${e.path} (${bytes.length} B)`,
        `${fmt(agp.rps)} req/s, p50 ${ms(agp.p50)}, p99 ${ms(agp.p99)}${agp.errors ? `, ${agp.errors} errors` : ''}`,
        `bare http ${fmt(base.rps)} req/s, p99 ${ms(base.p99)}; SQL alone p50 ${ms(raw.p50)}, p99 ${ms(raw.p99)}`,
        agp.p99 < 25 && agp.errors === 0 ? 'met' : 'NOT met',
      ]);
    }
    console.log('exporting the whole ledger (jsonl) ...');
    const ex = await exportAll(p);
    const rssText = (k: string) => `${k} RSS ${ex.rss[k].before.toFixed(0)} MB before, peak ${ex.rss[k].peak.toFixed(0)} MB during (VmHWM ${ex.rss[k].hwm.toFixed(0)} MB, incl. catch-up)`;
    rows.push([
      `GET /api/v1/ledger/export?format=jsonl`,
      `${fmt(ex.rows)} rows, ${(ex.bytes / 1024 ** 2).toFixed(0)} MiB in ${(ex.ms / 1000).toFixed(1)} s (${fmt((ex.rows / ex.ms) * 1000)} rows/s)`,
      `${rssText('gateway')}; ${rssText('stats')}`,
      ex.rows === LEDGER_ROWS && ex.ms < 60_000 ? 'met' : 'NOT met',
    ]);
    rows.push(['projection catch-up', `${fmt(events)} events in ${(catchUpMs / 1000).toFixed(1)} s`, `seed (INSERT ... SELECT generate_series) ${(seedMs / 1000).toFixed(1)} s`, '-']);
    console.log('\n| measure | AGP | baseline (same run) | target |');
    console.log('|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log('\ntargets: each stats p99 < 25 ms at 10 connections; export of all rows < 60 s with flat memory');
  } finally {
    await db.end();
    await sql.close();
    await p.stop();
  }
}
