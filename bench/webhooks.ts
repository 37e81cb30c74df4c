/**
 * `pnpm bench webhooks` (docs/performance.md, `pnpm bench webhooks`): webhook delivery on the embedded platform
 * (in-memory data), to a loopback receiver in this process that verifies nothing (the cost measured is the platform's),
 * everything in one run:
 *
 *   (a) ingest throughput with no subscription: BENCH_WEBHOOK_EVENTS intervention.create events (default 20000) over
 *       HTTP in batches of 100, 8 requests in flight, accepted durably (207)            -> baseline of (b)
 *   (b) the same with 10 subscriptions to `intervention.created` active                   vs (a)
 *       and the deliveries per second of (b): 10 × the events, from the first event sent to the last delivery received
 *   (c) event → delivery at 100 events/s (10 events every 100 ms) for BENCH_WEBHOOK_SECONDS (default 20) to one
 *       subscription: from sending the event to the receiver getting its delivery, p50/p99, beside the same events'
 *       ingest answer time (until the event is durable: the part of (c) that is not webhooks)
 *
 * Targets (docs/notifications.md): (c) p99 ≤ 1 s at 100 events/s; (b) within 5 % of (a).
 *
 * BENCH_WEBHOOKS_MODE: `embedded` (default: one process, in-memory PGlite), `distributed` (each service its own process
 * on the local NATS and PostgreSQL, DATABASE_URL / NATS_URL) or `both` (one table each). BENCH_PROFILE=<dir>: a
 * `--cpu-prof` profile of the embedded process, or of the policies process (distributed), written when it stops; in
 * distributed mode also the 15 statements of the platform's database with the most execution time
 * (pg_stat_statements, reset when (a) starts). Needs the built platform (`node scripts/build.mjs`, which `pnpm bench`
 * runs first).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPgSql } from '@agp/eventstore';
import { startDistributed } from '../test/support/distributed.js';
import { READ_KEY, startEmbeddedPlatform, WRITE_KEY } from './embedded-platform.js';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 20);
const ADMIN_KEY = 'agp_bench_admin_key_000000000001';
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

/** The platform under test: its URL, what to print about its database when profiling, and how to stop it. */
interface Target {
  url: string;
  /** Reset the statement statistics of its database (distributed mode; no-op otherwise). */
  resetStatements(): Promise<void>;
  /** The statements with the most execution time since the reset, as table rows (distributed mode; else none). */
  topStatements(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Start the platform of `mode` with the settings the bench needs (loopback receiver allowed, the admin key). */
async function startTarget(mode: 'embedded' | 'distributed'): Promise<Target> {
  const profile = process.env.BENCH_PROFILE;
  const prof = (name: string): string[] => (profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  const env = { AGP_INIT_ADMIN_KEY: ADMIN_KEY, AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', AGP_WEBHOOK_POLL_MS: '50' };
  if (mode === 'embedded') {
    const p = await startEmbeddedPlatform(undefined, env, prof('embedded'));
    return {
      url: p.url,
      resetStatements: async () => undefined,
      topStatements: async () => [],
      stop: async () => {
        const exited = new Promise((r) => p.child?.once('exit', r));
        p.child?.kill('SIGTERM');
        await exited;
      },
    };
  }
  const run = await startDistributed({
    adminDatabaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    dbPrefix: 'agp_bench',
    build: false,
    echo: false,
    env: { AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn', AGP_SECRETS_KEY: randomBytes(32).toString('base64'), ...env },
    serviceNodeArgs: { policies: prof('policies') },
  });
  const sql = createPgSql(run.databaseUrl);
  const dbName = new URL(run.databaseUrl).pathname.slice(1);
  return {
    url: run.url,
    resetStatements: async () => {
      if (profile) await sql.query('SELECT pg_stat_statements_reset()').catch(() => undefined);
    },
    topStatements: async () => {
      if (!profile) return [];
      const { rows } = await sql
        .query<{ query: string; calls: string; total: number; mean: number }>(
          `SELECT s.query, s.calls::text AS calls, s.total_exec_time AS total, s.mean_exec_time AS mean FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
            WHERE d.datname = $1 ORDER BY s.total_exec_time DESC LIMIT 15`,
          [dbName],
        )
        .catch(() => ({ rows: [] as Array<{ query: string; calls: string; total: number; mean: number }> }));
      return rows.map((r) => `| ${fmt(r.total)} | ${r.calls} | ${r.mean.toFixed(2)} | ${r.query.replace(/\s+/g, ' ').slice(0, 160)} |`);
    },
    stop: async () => {
      await sql.close();
      await run.stop();
    },
  };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Events of one ingest batch: intervention.create, action names `<tag>-<n>` so a delivery names its event. */
function batch(tag: string, from: number, n: number) {
  const now = new Date().toISOString();
  const pad = randomBytes(150).toString('hex');
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${from + i}`,
    type: 'intervention.create',
    timestamp: now,
    body: { type: 'hard_block', outcome: 'blocked', action_name: `${tag}-${from + i}`, agent_id: `agent-${(from + i) % 23}`, risk_level: 'medium', reason: 'benchmark event', original_inputs: { pad } },
  }));
}

/** The webhooks benchmark: one table per mode of BENCH_WEBHOOKS_MODE. @throws Error naming the allowed modes for another. */
export async function webhooksBench(): Promise<void> {
  const spec = process.env.BENCH_WEBHOOKS_MODE ?? 'embedded';
  const modes: Array<'embedded' | 'distributed'> | null = spec === 'both' ? ['embedded', 'distributed'] : spec === 'embedded' || spec === 'distributed' ? [spec] : null;
  if (!modes) throw new Error(`BENCH_WEBHOOKS_MODE: unknown mode ${spec}; allowed: embedded, distributed, both`);
  for (const mode of modes) await webhooksRun(mode);
}

/** One run of (a), (b) and (c) against a fresh platform of `mode`; prints its table. */
async function webhooksRun(mode: 'embedded' | 'distributed'): Promise<void> {
  const loadStart = load();
  // The receiver: each delivery's action name, and when it arrived.
  const got = new Map<string, number[]>();
  let lastAt = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      lastAt = at;
      try {
        const name = JSON.parse(Buffer.concat(chunks).toString('utf8')).data?.intervention?.action_name as string | undefined;
        if (name) (got.get(name) ?? got.set(name, []).get(name)!).push(at);
      } catch {
        /* not ours */
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const receiver = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const platform = await startTarget(mode);
  const post = async (path: string, body: unknown, key = WRITE_KEY) => {
    const res = await fetch(platform.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const ingest = async (tag: string): Promise<number> => {
    let next = 0;
    const t0 = performance.now();
    const lane = async () => {
      while (next < EVENTS) {
        const from = next;
        next += 100;
        await post('/api/v1/ingest/', { batch: batch(tag, from, Math.min(100, EVENTS - from)) });
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    return EVENTS / ((performance.now() - t0) / 1000);
  };
  const subscriptions: string[] = [];
  const subscribe = async (path: string) => subscriptions.push((await post('/api/v1/webhooks', { url: `${receiver}${path}`, events: ['intervention.created'] }, ADMIN_KEY)).id);
  const disableAll = async () => {
    for (const id of subscriptions.splice(0)) await fetch(`${platform.url}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  };

  try {
    // Warm up: the first requests compile and fill caches.
    await post('/api/v1/ingest/', { batch: batch('warm', 0, 100) });
    await sleep(1000);

    await platform.resetStatements();
    const base = await ingest('a');
    await sleep(2000); // the projections of (a) catch up before (b) starts

    for (let i = 0; i < 10; i++) await subscribe(`/b${i}`);
    const sentB = performance.now();
    const withSubs = await ingest('b');
    const expected = EVENTS * 10;
    const deadline = Date.now() + 600_000;
    while ([...got.entries()].filter(([k]) => k.startsWith('b-')).reduce((n, [, v]) => n + v.length, 0) < expected && Date.now() < deadline) await sleep(200);
    const deliveredB = [...got.entries()].filter(([k]) => k.startsWith('b-')).reduce((n, [, v]) => n + v.length, 0);
    const perSecond = deliveredB / ((lastAt - sentB) / 1000);
    await disableAll();
    await sleep(2000);

    // (c) 100 events/s (a request of 10 events every 100 ms), to one subscription.
    await subscribe('/c');
    const sent = new Map<string, number>();
    const acked: number[] = [];
    const inFlight: Array<Promise<void>> = [];
    const total = SECONDS * 100;
    const t0 = performance.now();
    for (let n = 0; n < total; n += 10) {
      const wait = t0 + n * 10 - performance.now();
      if (wait > 0) await sleep(wait);
      const start = performance.now();
      for (let i = n; i < n + 10; i++) sent.set(`c-${i}`, start);
      inFlight.push(post('/api/v1/ingest/', { batch: batch('c', n, 10) }).then(() => void acked.push(performance.now() - start)));
    }
    await Promise.all(inFlight);
    const rate = total / ((performance.now() - t0) / 1000);
    const end = Date.now() + 60_000;
    while ([...sent.keys()].some((k) => !got.has(k)) && Date.now() < end) await sleep(100);
    const lat = [...sent].flatMap(([k, t]) => (got.has(k) ? [got.get(k)![0] - t] : []));
    const lost = total - lat.length;

    console.log(`\npnpm bench webhooks (${mode}) — ${new Date().toISOString()} — ${EVENTS} events for (a)/(b), ${total} for (c); load average at start ${loadStart}, at end ${load()}\n`);
    console.log('| Measure | AGP | Baseline | Ratio |');
    console.log('|---|---|---|---|');
    console.log(`| (b) ingest, 10 subscriptions active, events/s vs (a) none | ${fmt(withSubs)} | ${fmt(base)} | ${(withSubs / base).toFixed(3)}× (target ≥ 0.95) |`);
    console.log(`| (b) deliveries/s to the loopback receiver (${fmt(deliveredB)} of ${fmt(expected)}) | ${fmt(perSecond)} | — | — |`);
    console.log(`| (c) event → delivery at ${rate.toFixed(0)} events/s, p50 ms vs the event's ingest answer | ${pct(lat, 50).toFixed(1)} | ${pct(acked, 50).toFixed(1)} | — |`);
    console.log(`| (c) event → delivery, p99 ms (target ≤ 1000) vs the event's ingest answer | ${pct(lat, 99).toFixed(1)} | ${pct(acked, 99).toFixed(1)} | — |`);
    console.log(`| (c) deliveries missing after 60 s | ${lost} | — | — |`);
    const top = await platform.topStatements();
    if (top.length) {
      console.log('\nStatements of the platform database by total execution time (pg_stat_statements, from (a) on):\n');
      console.log('| total ms | calls | mean ms | statement |');
      console.log('|---|---|---|---|');
      for (const r of top) console.log(r);
    }
  } finally {
    server.closeAllConnections();
    server.close();
    await platform.stop();
  }
}
