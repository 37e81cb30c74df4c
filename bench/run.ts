/**
 * `pnpm bench ingest`: the ingest benchmark (not a test; docs/performance.md (`pnpm bench ingest`)). Everything is measured in one run on
 * this machine, each AGP figure beside a baseline measured moments before:
 *
 *   (a) raw JetStream async publish, 800 B messages, msgID each, 1000 in flight  -> baseline of (c)
 *   (b) raw PostgreSQL batched insert (multi-row INSERT, 500 rows per transaction, 800 B jsonb) -> baseline of (d)
 *   (c) AGP ingest accepted durably over HTTP (batches of 100 events of ~800 B)   vs (a)
 *   (d) AGP ingest -> queryable (events visible via GET), then projection lag p50/p99 at half that load  vs (b)
 *   (e) GET /api/v1/interventions at 50 connections over 100k interventions, vs a bare node:http server
 *       answering the same bytes (the HTTP ceiling of this machine), after `VACUUM ANALYZE` (the steady state, as
 *       `pnpm bench list` measures it: steadyState)
 *   (f) embedded process idle RSS, vs a bare `node` process
 *
 * Needs DATABASE_URL (a server where it may create a database) and NATS_URL; defaults to the local ones.
 * Knobs: BENCH_EVENTS (events for c/d, default 100000), BENCH_CONCURRENCY (HTTP requests in flight, default 16),
 * BENCH_PROFILE=<dir> (`--cpu-prof` of the gateway, ingest, interventions and policies processes, the policies one
 * named `policies-trail-<on|off>` under BENCH_AUDIT_TRAIL; stops after c/d), BENCH_ONLY=cd
 * (stop after c/d without profiling, for A/B runs of a setting),
 * BENCH_INTERVENTIONS_NODE_ARGS (extra node flags for the interventions process, e.g. `--max-semi-space-size=64`),
 * BENCH_TRACING=off|on|sampled|all or a comma list (the cost of tracing: (c)/(d) only, on a fresh distributed platform
 * per mode, in the order given, BENCH_TRACING_ROUNDS times (default 1); `all` is off,on,sampled. `on` exports every span
 * over OTLP/HTTP to a loopback receiver in this process (test/support/otlp-receiver.ts); `sampled` the same with
 * OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.01; `off` sets no endpoint. One table, a row
 * per platform started, with the spans the receiver got).
 * BENCH_AUDIT_TRAIL=1: the audit trail's cost on the write path: (c)/(d) only, on a fresh distributed platform per
 * setting, AGP_AUDIT_TRAIL=off then on (the events are interventions, each of which the trail appends as a leaf), each
 * BENCH_AUDIT_TRAIL_ROUNDS times (default 2); with `on` the work ends when the trail holds every event. One row per
 * platform, then the CPU per event the trail adds (the platform's processes and this database's PostgreSQL backends).
 * Prints the CPU µs per 100-event batch of every process over c/d (from /proc), to show where the time goes; `postgres`
 * is every PostgreSQL process of the server, `postgres: this db` the backends connected to the platform's database (on
 * a server shared with other work, the platform's own share).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, request, Agent } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import { createDatabase, runSuffix } from '../test/support/db.js';
import { startDistributed, type DistributedRun } from '../test/support/distributed.js';
import { startOtlpReceiver } from '../test/support/otlp-receiver.js';
import { EMBEDDED_NODE_FLAGS } from '../services/embedded/src/memory.js';
import { ingestEvents } from './ingest-events.js';
import { cpuMsOf, pidsNamed, postgresBackendsOf } from './proc.js';
import { setTimeout as sleep } from 'node:timers/promises';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WRITE_KEY = 'agp_bench_write_key_000000000001';
const READ_KEY = 'agp_bench_read_key_0000000000001';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Run `total` tasks keeping `inFlight` running; returns elapsed ms. */
async function pump(total: number, inFlight: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, lane));
  return performance.now() - started;
}

/** (a) Raw JetStream publish rate, msg/s. */
async function rawJetStream(): Promise<number> {
  const nc = await connect({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const suffix = runSuffix();
  const name = `BENCH_RAW_${suffix}`;
  const subject = `bench${suffix}.raw`;
  await jsm.streams.add({ name, subjects: [subject], storage: StorageType.File, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old, max_bytes: 2 * 1024 ** 3, duplicate_window: nanos(120_000) });
  const js = jetstream(nc);
  const data = randomBytes(400).toString('hex');
  try {
    await pump(5_000, 1000, (i) => js.publish(subject, data, { msgID: `w${i}` }));
    const total = 60_000;
    const ms = await pump(total, 1000, (i) => js.publish(subject, data, { msgID: `m${i}` }));
    return (total / ms) * 1000;
  } finally {
    await jsm.streams.delete(name);
    await nc.close();
  }
}

/**
 * (b) Raw PostgreSQL batched insert rate, rows/s: the architecture §6 operation — multi-row
 * `INSERT ... VALUES` of 800 B jsonb rows, 500 rows per transaction, one client.
 */
async function rawPostgres(): Promise<number> {
  const db = await createDatabase(DATABASE_URL, 'agp_bench_raw');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query('CREATE TABLE raw_insert (id text PRIMARY KEY, org text NOT NULL, ts timestamptz NOT NULL, data jsonb NOT NULL)');
    const doc = JSON.stringify({ action_name: 'send_email', agent_id: 'agent-1', pad: randomBytes(360).toString('hex') });
    const values = Array.from({ length: 500 }, (_, i) => `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4})`).join(', ');
    const sql = `INSERT INTO raw_insert (id, org, ts, data) VALUES ${values}`;
    const now = new Date().toISOString();
    const params = (b: number) => Array.from({ length: 500 }, (_, i) => [`r${b}-${i}`, 'acme', now, doc]).flat();
    const tx = async (b: number) => {
      await client.query('BEGIN');
      await client.query(sql, params(b));
      await client.query('COMMIT');
    };
    for (let b = 0; b < 10; b++) await tx(-1 - b);
    const batches = 200;
    const ms = await pump(batches, 1, tx);
    return ((batches * 500) / ms) * 1000;
  } finally {
    await client.end();
    await db.drop();
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** POST a body; resolves with status and parsed JSON. */
function post(url: string, path: string, body: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, url);
    const req = request(
      { agent, hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${WRITE_KEY}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function getJson(url: string, path: string): Promise<any> {
  const res = await fetch(new URL(path, url), { headers: { authorization: `Bearer ${READ_KEY}` } });
  return res.json();
}

/** A batch of 100 ingest events of ~800 B each, as a JSON string. */
function ingestBody(run: string, b: number): string {
  return JSON.stringify({ batch: ingestEvents(run, b) });
}

async function countRun(url: string, run: string): Promise<number> {
  return (await getJson(url, `/api/v1/interventions?run_id=${run}&limit=1`)).total as number;
}

/** 100-event batches sent (and waited for) before (c) is timed. */
const WARM_BATCHES = 20;

/** (c) + (d): accepted events/s, then time until all are visible. */
async function agpIngest(p: DistributedRun, accepted: () => void = () => undefined): Promise<{ accepted: number; queryable: number; bytesPerEvent: number }> {
  const run = `bench-${runSuffix()}`;
  const batches = Math.ceil(EVENTS / 100);
  const bodies = Array.from({ length: batches }, (_, b) => ingestBody(run, b));
  const bytesPerEvent = Buffer.byteLength(bodies[0]) / 100;
  // Warm-up (JIT, connections), not counted.
  const warm = `warm-${runSuffix()}`;
  await pump(WARM_BATCHES, CONCURRENCY, (b) => post(p.url, '/api/v1/ingest/', ingestBody(warm, b)));
  while ((await countRun(p.url, warm)) < WARM_BATCHES * 100) await sleep(100);
  let rejected = 0;
  const started = performance.now();
  const ms = await pump(batches, CONCURRENCY, async (b) => {
    const r = await post(p.url, '/api/v1/ingest/', bodies[b]);
    if (r.status !== 207 || r.json.errors.length > 0) rejected += r.status === 207 ? r.json.errors.length : 100;
  });
  accepted();
  if (rejected) console.warn(`  warning: ${rejected} events were not accepted`);
  while ((await countRun(p.url, run)) < batches * 100 - rejected) await sleep(20);
  const visibleMs = performance.now() - started;
  return { accepted: ((batches * 100) / ms) * 1000, queryable: ((batches * 100 - rejected) / visibleMs) * 1000, bytesPerEvent };
}

/** (d, second part): send at `rate` events/s for `seconds`; lag = visible time - accepted time, per batch. */
async function projectionLag(p: DistributedRun, rate: number, seconds: number): Promise<{ p50: number; p99: number; max: number; batches: number }> {
  const run = `lag-${runSuffix()}`;
  const batches = Math.max(10, Math.round((rate * seconds) / 100));
  const intervalMs = (100 / rate) * 1000;
  const acked: Array<{ cumulative: number; at: number }> = [];
  const visible: number[] = [];
  let done = false;
  let sent = 0;
  const poller = (async () => {
    let idx = 0;
    while (!done || idx < acked.length) {
      const n = await countRun(p.url, run);
      const now = performance.now();
      while (idx < acked.length && n >= acked[idx].cumulative) visible[idx++] = now;
      await sleep(10);
    }
  })();
  const t0 = performance.now();
  const inflight: Promise<void>[] = [];
  for (let b = 0; b < batches; b++) {
    const due = t0 + b * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const body = ingestBody(run, b);
    inflight.push(
      post(p.url, '/api/v1/ingest/', body).then(() => {
        sent += 100;
        acked.push({ cumulative: sent, at: performance.now() });
      }),
    );
  }
  await Promise.all(inflight);
  done = true;
  await poller;
  const lags = acked.map((a, i) => Math.max(0, visible[i] - a.at));
  return { p50: pct(lags, 50), p99: pct(lags, 99), max: Math.max(...lags), batches };
}

/** Fill the organisation up to `target` interventions (as fast as ingest allows). */
async function fill(p: DistributedRun, target: number): Promise<void> {
  const have = (await getJson(p.url, '/api/v1/interventions?limit=1')).total as number;
  const run = `fill-${runSuffix()}`;
  const batches = Math.ceil(Math.max(0, target - have) / 100);
  await pump(batches, CONCURRENCY, (b) => post(p.url, '/api/v1/ingest/', ingestBody(run, b)));
  while (((await getJson(p.url, '/api/v1/interventions?limit=1')).total as number) < target) await sleep(200);
}

async function cannon(url: string, headers: Record<string, string> = {}, varySkip = false): Promise<{ rps: number; p50: number; p99: number; errors: number; requests: number }> {
  const base = new URL(url);
  const r = await autocannon({
    url,
    connections: 50,
    duration: 10,
    headers,
    // Distinct pages (skip 0..999): every request misses the service's position-tagged page cache.
    ...(varySkip ? { requests: [{ setupRequest: (req: any) => ({ ...req, path: `${base.pathname}?skip=${Math.floor(Math.random() * 1000)}` }) }] } : {}),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx, requests: r.requests.total };
}

/**
 * Bring the platform's database to the steady state a long-running server is in before a read row is measured:
 * `VACUUM ANALYZE` of every table. Autovacuum vacuums and analyzes a freshly filled table within about a minute, but
 * a server may run with it off (this machine's does), and until then PostgreSQL has no statistics (a prepared page
 * query may be planned as a sort of the whole organisation) and no visibility map (the deferred join's index-only
 * scan fetches every heap row). Both benches' read rows ({@link listLoad}) start with it, so `bench list` and
 * `bench ingest` measure the read path the same way whatever came before. Returns the ms it took.
 */
async function steadyState(p: DistributedRun): Promise<number> {
  const started = performance.now();
  const c = new pg.Client({ connectionString: p.databaseUrl });
  await c.connect();
  try {
    await c.query('VACUUM ANALYZE');
  } finally {
    await c.end();
  }
  return performance.now() - started;
}

/**
 * (e) GET list at 50 connections, and a bare node:http server returning the same bytes; the database brought to its
 * steady state first ({@link steadyState}). The read rows of both `bench ingest` and `bench list`.
 */
async function listLoad(p: DistributedRun): Promise<{ agp: Awaited<ReturnType<typeof cannon>>; uncached: Awaited<ReturnType<typeof cannon>>; bare: Awaited<ReturnType<typeof cannon>>; bareProcess: Awaited<ReturnType<typeof cannon>>; total: number; bytes: Buffer; cpu: { same: string; distinct: string } }> {
  const vacuumMs = await steadyState(p);
  console.log(`steady state: VACUUM ANALYZE of the platform database took ${fmt(vacuumMs)} ms`);
  const path = '/api/v1/interventions';
  const sample = await fetch(new URL(path, p.url), { headers: { authorization: `Bearer ${READ_KEY}` } });
  const bytes = Buffer.from(await sample.arrayBuffer());
  const total = JSON.parse(bytes.toString()).total as number;
  await autocannon({ url: p.url + path, connections: 10, duration: 2, headers: { authorization: `Bearer ${READ_KEY}` } });
  const same = await withCpu(p, () => cannon(p.url + path, { authorization: `Bearer ${READ_KEY}` }));
  const distinct = await withCpu(p, () => cannon(p.url + path, { authorization: `Bearer ${READ_KEY}` }, true));
  const bare = await bareServer(bytes, (url) => cannon(url));
  const bareProcess = await bareServerProcess(bytes, (url) => cannon(url));
  const cpu = { same: same.perRequest(same.result.requests), distinct: distinct.perRequest(distinct.result.requests) };
  return { agp: same.result, uncached: distinct.result, bare, bareProcess, total, bytes, cpu };
}

/**
 * Run `load` against a bare node:http server in its own process (as the gateway is), answering every request with
 * `bytes`. The in-process server of {@link bareServer} shares this process's one thread with the load generator, and
 * measured anywhere from 3,300 to 12,700 req/s between runs; this one is the machine's stable HTTP ceiling.
 */
async function bareServerProcess<T>(bytes: Buffer, load: (url: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'agp-bare-'));
  const file = join(dir, 'body');
  writeFileSync(file, bytes);
  const code = `const b=require('fs').readFileSync(${JSON.stringify(file)});const s=require('http').createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json','content-length':b.length});r.end(b)});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      child.once('exit', (c) => reject(new Error(`bare server exited ${c}`)));
    });
    return await load(`http://127.0.0.1:${port}/api/v1/interventions`);
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Run `load` against a bare node:http server on loopback, in this process, that answers every request with `bytes`. */
async function bareServer<T>(bytes: Buffer, load: (url: string) => Promise<T>): Promise<T> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    return await load(`http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1/interventions`);
  } finally {
    server.close();
  }
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * (f) RSS of the embedded platform, started as `npm start` starts it ({@link EMBEDDED_NODE_FLAGS}) with a fresh
 * AGP_DATA_DIR: at idle (after /readyz and 5 s), and after a simulate-like load (`agp simulate --agents 8 --rate 200
 * --duration 10` with the first-run write key, then 5 s idle); beside a bare node process.
 */
async function embeddedRss(): Promise<{ agp: number; afterLoad: number; bare: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'agp-bench-'));
  const port = 18000 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, [...EMBEDDED_NODE_FLAGS, 'services/embedded/dist/main.js'], { env: { ...process.env, PORT: String(port), AGP_DATA_DIR: dir, DATABASE_URL: '', NATS_URL: '', LOG_LEVEL: 'warn' }, stdio: 'ignore' });
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
      } catch {
        /* starting */
      }
      await sleep(200);
    }
    await sleep(5000);
    const agp = rssOf(child.pid!);
    const { write } = JSON.parse(readFileSync(join(dir, 'first-run-keys.json'), 'utf8')) as { write: string };
    const sim = spawnSync(process.execPath, ['packages/cli/dist/cli.js', 'simulate', '--url', `http://127.0.0.1:${port}`, '--key', write, '--agents', '8', '--rate', '200', '--duration', '10', '--quiet'], { stdio: 'ignore' });
    if (sim.status !== 0) throw new Error(`agp simulate against the embedded platform exited ${sim.status}`);
    await sleep(5000);
    return { agp, afterLoad: rssOf(child.pid!), bare: rssOf(bare.pid!) };
  } finally {
    child.kill('SIGTERM');
    bare.kill('SIGTERM');
    await sleep(1000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Start distributed mode for (c)/(d) (gateway, ingest, interventions… as separate processes), with the bench's keys,
 * BENCH_PROFILE and BENCH_INTERVENTIONS_NODE_ARGS applied, and `env` set on every process last.
 */
function startIngestPlatform(env: Record<string, string> = {}): Promise<DistributedRun> {
  const profile = process.env.BENCH_PROFILE;
  const prof = (name: string): string[] => (profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  return startDistributed({
    adminDatabaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    dbPrefix: 'agp_bench',
    build: false,
    env: { AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn', ...env },
    serviceNodeArgs: {
      gateway: prof('gateway'),
      ingest: prof('ingest'),
      interventions: [...prof('interventions'), ...(process.env.BENCH_INTERVENTIONS_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
      // The policies process runs the audit trail's projection: one profile per AGP_AUDIT_TRAIL setting.
      policies: prof(env.AGP_AUDIT_TRAIL ? `policies-trail-${env.AGP_AUDIT_TRAIL}` : 'policies'),
    },
  });
}

/** The OTEL_* settings of each BENCH_TRACING mode, given the receiver's endpoint (runtime/src/tracing.ts reads them). */
const TRACING_MODES: Record<string, (endpoint: string) => Record<string, string>> = {
  off: () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }),
  on: (endpoint) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_always_on', OTEL_TRACES_SAMPLER_ARG: '' }),
  sampled: (endpoint) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }),
};

/**
 * The cost of tracing (BENCH_TRACING, see the module docs): (c) and (d) on a fresh distributed platform per mode, with
 * the CPU per 100-event batch of each process and the spans the loopback receiver got; one row per platform started.
 * @throws Error naming the allowed values for an unknown mode.
 */
async function tracingBench(spec: string, js: number, pgRate: number): Promise<void> {
  const modes = spec === 'all' ? ['off', 'on', 'sampled'] : spec.split(',').map((m) => m.trim());
  const unknown = modes.filter((m) => !(m in TRACING_MODES));
  if (unknown.length) throw new Error(`BENCH_TRACING: unknown mode(s) ${unknown.join(', ')}; allowed: off, on, sampled, all, or a comma list of them`);
  const rounds = Number(process.env.BENCH_TRACING_ROUNDS ?? 1);
  const receiver = await startOtlpReceiver();
  const rows: string[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const mode of modes) {
        console.log(`tracing ${mode} (round ${round}): starting distributed mode ...`);
        receiver.spans.length = 0;
        const p = await startIngestPlatform(TRACING_MODES[mode](receiver.endpoint));
        let row: string;
        try {
          const { result: ing, perRequest } = await withCpu(p, () => agpIngest(p));
          row = `| ${mode} | ${round} | ${fmt(ing.accepted)} events/s | ${fmt(ing.queryable)} events/s | ${perRequest(Math.ceil(EVENTS / 100) + WARM_BATCHES)} |`;
        } finally {
          // Stopping flushes each process's buffered spans to the receiver.
          await p.stop();
        }
        rows.push(`${row} ${fmt(receiver.spans.length)} |`);
        console.log(rows.at(-1));
      }
    }
  } finally {
    await receiver.close();
    agent.destroy();
  }
  console.log(`\n(a) raw JetStream ${fmt(js)} msg/s; (b) raw PostgreSQL ${fmt(pgRate)} rows/s\n`);
  console.log('| tracing | round | (c) accepted | (d) queryable | CPU per 100-event batch (µs), (c)+(d) | spans exported |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

/** Wait until the audit trails of the platform's database hold at least `leaves` leaves in all (60 s at most). */
async function trailHolds(p: DistributedRun, leaves: number): Promise<number> {
  const client = new pg.Client({ connectionString: p.databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await client.query<{ n: string }>('SELECT COALESCE(sum(size), 0)::text AS n FROM agp_tlog_trees');
      const n = Number(rows[0].n);
      if (n >= leaves || Date.now() > deadline) return n;
      await sleep(50);
    }
  } finally {
    await client.end();
  }
}

/**
 * The audit trail's cost on the write path (BENCH_AUDIT_TRAIL, see the module docs): (c) and (d) on a fresh
 * distributed platform with AGP_AUDIT_TRAIL=off, then on, BENCH_AUDIT_TRAIL_ROUNDS times; with it on, the work ends
 * only when the trail holds every event sent (warm-up included), so the projection's whole cost is inside the
 * measurement. Prints a row per platform and the median CPU per event each way, and what the trail adds.
 */
async function auditTrailBench(js: number, pgRate: number): Promise<void> {
  const rounds = Number(process.env.BENCH_AUDIT_TRAIL_ROUNDS ?? 2);
  const batchesRun = Math.ceil(EVENTS / 100) + WARM_BATCHES;
  const rows: string[] = [];
  const perEvent: Record<'off' | 'on', number[]> = { off: [], on: [] };
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ['off', 'on'] as const) {
        console.log(`audit trail ${mode} (round ${round}): starting distributed mode ...`);
        const p = await startIngestPlatform({ AGP_AUDIT_TRAIL: mode });
        try {
          let leaves = 0;
          const { result: ing, perRequest, platformPerRequest } = await withCpu(p, async () => {
            const r = await agpIngest(p);
            leaves = mode === 'on' ? await trailHolds(p, batchesRun * 100) : await trailHolds(p, 0);
            return r;
          });
          if (mode === 'on' && leaves < batchesRun * 100) throw new Error(`the audit trail holds ${leaves} leaves after 60 s, not ${batchesRun * 100}`);
          if (mode === 'off' && leaves !== 0) throw new Error(`AGP_AUDIT_TRAIL=off, yet the trail holds ${leaves} leaves`);
          const total = platformPerRequest(batchesRun);
          perEvent[mode].push(total / 100);
          rows.push(`| ${mode} | ${round} | ${fmt(ing.accepted)} events/s | ${fmt(ing.queryable)} events/s | ${fmt(leaves)} | ${fmt(total)} | ${perRequest(batchesRun)} |`);
          console.log(rows.at(-1));
        } finally {
          await p.stop();
        }
      }
    }
  } finally {
    agent.destroy();
  }
  const median = (xs: number[]) => pct(xs, 50);
  const off = median(perEvent.off);
  const on = median(perEvent.on);
  console.log(`\n${fmt(EVENTS)} events (+${WARM_BATCHES * 100} warm-up) per platform, every one an intervention (a governance record: one leaf each); (a) raw JetStream ${fmt(js)} msg/s; (b) raw PostgreSQL ${fmt(pgRate)} rows/s\n`);
  console.log('| audit trail | round | (c) accepted | (d) queryable | leaves appended | CPU per 100-event batch (µs), platform + its PostgreSQL backends | per process (µs per batch) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(`\nCPU per event, median of ${rounds}: trail off ${off.toFixed(1)} µs, on ${on.toFixed(1)} µs: the trail adds ${(on - off).toFixed(1)} µs per governance event = ${(((on - off) / off) * 100).toFixed(1)} % (target <= 5 %)`);
}

async function ingestBench(): Promise<void> {
  console.log(`AGP ingest benchmark: ${EVENTS} events, ${CONCURRENCY} HTTP requests in flight, node ${process.version}, ${new Date().toISOString()}`);
  console.log('measuring baselines ...');
  const js = await rawJetStream();
  const pgRate = await rawPostgres();
  const tracing = process.env.BENCH_TRACING;
  if (tracing) return tracingBench(tracing, js, pgRate);
  if (process.env.BENCH_AUDIT_TRAIL) return auditTrailBench(js, pgRate);
  console.log('starting distributed mode (gateway, ingest, interventions as separate processes) ...');
  const profile = process.env.BENCH_PROFILE;
  const p = await startIngestPlatform();
  try {
    const { result: ing, perRequest: ingestCpu, perRequestAtMark: acceptCpu, acceptingAtMark } = await withCpu(p, (mark) => agpIngest(p, mark));
    // CPU per 100-event HTTP batch over (c) and (d) together (accepting, then storing and projecting every event); the
    // warm-up batches ran inside the measured work too, so they count. The first line stops when the last batch is
    // accepted (the consumers may still be behind); the second includes the wait until every event is queryable,
    // whose GET polling adds to the gateway's share.
    const batchesRun = Math.ceil(EVENTS / 100) + WARM_BATCHES;
    console.log(`CPU per 100-event batch (µs), until (c) accepted: ${acceptCpu(batchesRun)}`);
    console.log(`CPU per 100-event batch (µs), (c)+(d): ${ingestCpu(batchesRun)}`);
    // (c) runs while the consumers store and project the events (they compete for the same cores): their share is
    // printed apart, with the accepting side's own CPU per event and the rate that CPU alone would allow per core.
    const a = acceptingAtMark();
    const perEvent = (a.acceptingMs * 1000) / (batchesRun * 100);
    console.log(
      `until (c) accepted: accepting side (gateway, ingest, NATS, load generator) ${(a.acceptingMs / a.wallMs).toFixed(2)} cores, consumers and other platform processes (PostgreSQL: this database's backends) ${(a.othersMs / a.wallMs).toFixed(2)} cores; accepting side ${perEvent.toFixed(1)} µs CPU per event = ${fmt(1e6 / perEvent)} events/s per core`,
    );
    if (profile || process.env.BENCH_ONLY === 'cd') {
      console.log(`(c) ${fmt(ing.accepted)} events/s vs (a) ${fmt(js)} msg/s; (d) ${fmt(ing.queryable)} events/s vs (b) ${fmt(pgRate)} rows/s; ${profile ? `profiles in ${profile} ` : ''}(the rest is skipped)`);
      return;
    }
    const half = ing.queryable / 2;
    const lag = await projectionLag(p, half, 20);
    await fill(p, 100_000);
    const list = await listLoad(p);
    const rss = await embeddedRss();
    const rows: Array<[string, string, string, string, string]> = [
      ['(c) ingest accepted durably (HTTP, 100-event batches)', `${fmt(ing.accepted)} events/s`, '(a) raw JetStream publish, 800 B', `${fmt(js)} msg/s`, ratio(ing.accepted, js)],
      ['(d) ingest -> queryable via GET', `${fmt(ing.queryable)} events/s`, '(b) raw PostgreSQL batched insert', `${fmt(pgRate)} rows/s`, ratio(ing.queryable, pgRate)],
      [`    projection lag at half load (${fmt(half)} events/s, ${lag.batches} batches)`, `p50 ${fmt(lag.p50)} ms, p99 ${fmt(lag.p99)} ms`, '', '', `max ${fmt(lag.max)} ms`],
      [`(e) GET list, 50 connections, ${fmt(list.total)} interventions, same page`, `${fmt(list.agp.rps)} req/s, p50 ${list.agp.p50} ms, p99 ${list.agp.p99} ms`, 'bare node:http, same bytes', `${fmt(list.bare.rps)} req/s, p99 ${list.bare.p99} ms`, ratio(list.agp.rps, list.bare.rps)],
      [`    GET list, distinct pages (skip 0..999, cache misses)`, `${fmt(list.uncached.rps)} req/s, p50 ${list.uncached.p50} ms, p99 ${list.uncached.p99} ms`, 'bare node:http, same bytes', `${fmt(list.bare.rps)} req/s`, ratio(list.uncached.rps, list.bare.rps)],
      ['(f) embedded idle RSS', `${rss.agp.toFixed(0)} MB`, 'bare node process', `${rss.bare.toFixed(0)} MB`, ratio(rss.agp, rss.bare)],
      ['    embedded RSS after agp simulate (8 agents, 200 events/s, 10 s)', `${rss.afterLoad.toFixed(0)} MB`, 'bare node process', `${rss.bare.toFixed(0)} MB`, ratio(rss.afterLoad, rss.bare)],
    ];
    console.log(`\nevent size on the wire: ${ing.bytesPerEvent.toFixed(0)} B; list errors: ${list.agp.errors}\n`);
    console.log('| AGP | figure | baseline | baseline figure | ratio |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log('\ntargets (docs/performance.md): (c) >= 1.0x (a); (d) >= 0.35x (b) with lag p99 < 500 ms at half that load; (e) same page >= 0.25x, distinct pages >= 0.12x (pnpm bench list also has the 500 req/s row); (f) < 250 MB');
  } finally {
    await p.stop();
    agent.destroy();
  }
}

/**
 * Where the CPU went while `work` ran: ms of CPU per service process, PostgreSQL (all backends and server processes,
 * and `postgres: this db`, the backends connected to the platform's database), nats-server and
 * this process (the load generator). `shares` is each as a share of the wall time (1.00 = one core busy);
 * `perRequest(n)` is each in µs per request when the work answered `n` requests; `platformPerRequest(n)` the platform's
 * own processes and this database's PostgreSQL backends together, µs per request (no NATS, no load generator); `acceptingAtMark()` the CPU ms of the
 * accepting side (gateway, ingest, nats-server, load generator) and of the other platform processes (PostgreSQL: the
 * backends of the platform's database) until the mark, with the wall ms until it. Profiling aid (docs/performance.md (`pnpm bench ingest`)).
 */
async function withCpu<T>(
  p: DistributedRun,
  work: (mark: () => void) => Promise<T>,
): Promise<{ result: T; shares: string; perRequest(n: number): string; perRequestAtMark(n: number): string; platformPerRequest(n: number): number; acceptingAtMark(): { acceptingMs: number; othersMs: number; wallMs: number } }> {
  const db = new URL(p.databaseUrl).pathname.slice(1);
  const groups = (): Record<string, number[]> => ({ ...Object.fromEntries(Object.entries(p.pids).map(([k, v]) => [k, [v]])), postgres: pidsNamed('postgres'), 'postgres: this db': postgresBackendsOf(db), nats: pidsNamed('nats-server'), 'load generator': [process.pid] });
  const t0 = new Map(Object.values(groups()).flat().map((pid) => [pid, cpuMsOf(pid)]));
  // A process that started during the work (a new PostgreSQL backend) counts from 0.
  const usage = () => Object.entries(groups()).map(([k, ps]) => [k, ps.reduce((sum, pid) => sum + cpuMsOf(pid) - (t0.get(pid) ?? 0), 0)] as const);
  let marked: ReturnType<typeof usage> = [];
  let markedWall = 0;
  const started = performance.now();
  const result = await work(() => {
    marked = usage();
    markedWall = performance.now() - started;
  });
  const wall = performance.now() - started;
  const used = usage();
  const list = (of: typeof used, f: (ms: number) => number, digits: number, min: number) =>
    of
      .filter(([, ms]) => f(ms) >= min)
      .map(([k, ms]) => `${k} ${f(ms).toFixed(digits)}`)
      .join(', ');
  return {
    result,
    shares: list(used, (ms) => ms / wall, 2, 0.01),
    perRequest: (n) => list(used, (ms) => (ms * 1000) / n, 0, 10),
    perRequestAtMark: (n) => list(marked, (ms) => (ms * 1000) / n, 0, 10),
    platformPerRequest: (n) => (used.filter(([k]) => k in p.pids || k === 'postgres: this db').reduce((a, [, ms]) => a + ms, 0) * 1000) / n,
    acceptingAtMark: () => {
      const accepting = new Set(['gateway', 'ingest', 'nats', 'load generator']);
      const sum = (pick: (k: string) => boolean) => marked.filter(([k]) => pick(k)).reduce((a, [, ms]) => a + ms, 0);
      // PostgreSQL: the backends of the platform's database only (the server may serve other work too).
      return { acceptingMs: sum((k) => accepting.has(k)), othersMs: sum((k) => !accepting.has(k) && k !== 'postgres'), wallMs: markedWall };
    },
  };
}

/**
 * (e) at a fixed offered load: distinct pages (skip 0..999) at `rate` req/s for `seconds`, as a true open loop —
 * request i is due at t0 + i/rate whether or not earlier ones have answered (autocannon's `overallRate` releases each
 * second's quota in a burst, which measured p99 85–140 ms against a bare server at 500 req/s) — and each latency is
 * counted from when the request was due, not when it was sent, so a stalled server cannot hide its queue
 * (no coordinated omission, as wrk2 measures). Keep-alive sockets, at most 256.
 */
async function openLoop(url: string, rate: number, headers: Record<string, string> = { authorization: `Bearer ${READ_KEY}` }, seconds = 10): Promise<{ requests: number; rps: number; p50: number; p99: number; errors: number }> {
  const base = new URL(url);
  const pool = new Agent({ keepAlive: true, maxSockets: 256 });
  const total = rate * seconds;
  const latencies: number[] = [];
  let errors = 0;
  const one = (due: number) =>
    new Promise<void>((resolve) => {
      const req = request({ agent: pool, hostname: base.hostname, port: base.port, path: `${base.pathname}?skip=${Math.floor(Math.random() * 1000)}`, headers }, (res) => {
        res.on('data', () => {});
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - due);
          if (process.env.BENCH_DEBUG_OPEN) timeline.push([Math.floor((due - t0) / 1000), performance.now() - due]);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const inflight: Promise<void>[] = [];
  const timeline: Array<[number, number]> = [];
  const t0 = performance.now() + 50;
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    while (sent < total && t0 + (sent * 1000) / rate <= now) inflight.push(one(t0 + (sent++ * 1000) / rate));
    await sleep(1); // timer resolution ~1 ms: a request goes out at most ~1 ms after it is due, and that counts against AGP
  }
  await Promise.all(inflight);
  const wall = performance.now() - t0;
  for (let sec = 0; sec < seconds && process.env.BENCH_DEBUG_OPEN; sec++) {
    const xs = timeline.filter(([s]) => s === sec).map(([, l]) => l);
    console.error(`  open loop second ${sec}: p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`);
  }
  pool.destroy();
  return { requests: latencies.length, rps: (latencies.length / wall) * 1000, p50: Math.round(pct(latencies, 50) * 10) / 10, p99: Math.round(pct(latencies, 99) * 10) / 10, errors };
}

/**
 * `pnpm bench list`: only the read path (e), on distributed mode with BENCH_INTERVENTIONS (default 100000)
 * interventions: same page and distinct pages at 50 connections, distinct pages at a fixed 500 req/s, beside a bare
 * node:http server answering the same bytes. BENCH_PROFILE=<dir> runs the gateway and the interventions service with
 * `--cpu-prof` into that folder (profiles are written when they stop). BENCH_DEBUG_OPEN=1 prints the open loop's p50/p99
 * per second (to tell a warm-up or a stall from steady latency). Source: docs/performance.md (`pnpm bench ingest`).
 */
async function listBench(): Promise<void> {
  const target = Number(process.env.BENCH_INTERVENTIONS ?? 100_000);
  const profile = process.env.BENCH_PROFILE;
  const prof = (name: string): string[] => (profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  console.log(`AGP list benchmark: ${target} interventions, node ${process.version}, ${new Date().toISOString()}${profile ? `, CPU profiles in ${profile}` : ''}`);
  const p = await startDistributed({
    adminDatabaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    dbPrefix: 'agp_bench',
    build: false,
    env: { AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn', ...(process.env.AGP_ANSWER_CACHE_ENTRIES ? { AGP_ANSWER_CACHE_ENTRIES: process.env.AGP_ANSWER_CACHE_ENTRIES } : {}) },
    serviceNodeArgs: { gateway: prof('gateway'), interventions: prof('interventions') },
  });
  try {
    await fill(p, target);
    const list = await listLoad(p);
    // Warm-up at the same rate, not counted: the first second opens the load generator's sockets (measured p99 ~400 ms
    // in that second alone, then 20-60 ms).
    await openLoop(`${p.url}/api/v1/interventions`, 500, undefined, 2);
    const { result: open, perRequest: openCpu } = await withCpu(p, () => openLoop(`${p.url}/api/v1/interventions`, 500));
    const bareOpen = await bareServerProcess(list.bytes, async (url) => (await openLoop(url, 500, {}, 2), openLoop(url, 500, {})));
    console.log('| AGP | figure | baseline | baseline figure | ratio |');
    console.log('|---|---|---|---|---|');
    console.log(`| (e) GET list, 50 connections, ${fmt(list.total)} interventions, same page | ${fmt(list.agp.rps)} req/s, p50 ${list.agp.p50} ms, p99 ${list.agp.p99} ms | bare node:http, same bytes | ${fmt(list.bare.rps)} req/s, p99 ${list.bare.p99} ms | ${ratio(list.agp.rps, list.bare.rps)} |`);
    console.log(`| (e) GET list, distinct pages (skip 0..999) | ${fmt(list.uncached.rps)} req/s, p50 ${list.uncached.p50} ms, p99 ${list.uncached.p99} ms | same | | ${ratio(list.uncached.rps, list.bare.rps)} |`);
    console.log(`|     same two rows against bare node:http in its own process | same page ${ratio(list.agp.rps, list.bareProcess.rps)}, distinct pages ${ratio(list.uncached.rps, list.bareProcess.rps)} | bare node:http, own process | ${fmt(list.bareProcess.rps)} req/s, p99 ${list.bareProcess.p99} ms | |`);
    console.log(`| (e) GET list, distinct pages, fixed 500 req/s offered | ${fmt(open.rps)} req/s, p50 ${open.p50} ms, p99 ${open.p99} ms | bare node:http (own process), same bytes, 500 req/s | p50 ${bareOpen.p50} ms, p99 ${bareOpen.p99} ms | target p99 < 15 ms |`);
    console.log(`\nerrors: same page ${list.agp.errors}, distinct ${list.uncached.errors}, open loop ${open.errors}`);
    console.log(`CPU per request (µs): same page: ${list.cpu.same}`);
    console.log(`CPU per request (µs): distinct pages: ${list.cpu.distinct}`);
    console.log(`CPU per request (µs): open loop: ${openCpu(open.requests)}`);
  } finally {
    await p.stop();
    agent.destroy();
  }
}

const which = process.argv[2] ?? 'ingest';
if (which === 'stats') await (await import('./stats.js')).statsBench();
else if (which === 'ingest') await ingestBench();
else if (which === 'list') await listBench();
else if (which === 'mcp') await (await import('./mcp.js')).mcpBench();
else if (which === 'policy') await (await import('./policy.js')).policyBench();
else if (which === 'sdk') await (await import('./sdk.js')).sdkBench();
else if (which === 'quotas') await (await import('./quotas.js')).quotasBench();
else if (which === 'mcp-proxy') await (await import('./mcp-proxy.js')).mcpProxyBench();
else if (which === 'webhooks') await (await import('./webhooks.js')).webhooksBench();
else if (which === 'audit-proofs') await (await import('./audit-proofs.js')).auditProofsBench();
else if (which === 'audit-verify') await (await import('./audit-verify.js')).auditVerifyBench();
else if (which === 'audit-floor') await (await import('./audit-floor.js')).auditFloorBench();
else {
  console.error(`unknown benchmark ${which}; available: ingest, list, stats, mcp, policy, sdk, quotas, mcp-proxy, webhooks, audit-proofs, audit-verify, audit-floor`);
  process.exit(2);
}
