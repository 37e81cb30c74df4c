/**
 * The interventions consumer's write in isolation (not a test; docs/performance.md, `pnpm bench ingest`, the consuming
 * side): `InterventionsService.recordIngested` of 100-event deliveries shaped like `pnpm bench ingest`'s (the decider,
 * the event rows, the inline list/stats/approvals projections) on a scratch PostgreSQL database, one delivery at a time.
 * Prints the CPU µs per event of this process (`process.cpuUsage`) and of the PostgreSQL backends serving it (/proc,
 * 10 ms ticks), the wall µs per event of each statement (its round trip included), the tables' sizes, and how many
 * updates were HOT.
 * Run: `node --import tsx bench/consumer-write.ts` (add `--cpu-prof` for a profile of the consumer alone).
 * Env: DATABASE_URL; ROUNDS (deliveries measured, default 200); WARM (deliveries first, default 30); EXPLAIN=1 (also
 * print the plan of the append's duplicates-and-versions statement); KEEP=1 (keep the database and print its URL).
 */
import { readFileSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { SqlIngestLog, type IngestDelivery } from '@agp/bus';
import type { IngestEnvelope } from '@agp/contracts';
import { createEventStore, createPgSql, type Sql, type SqlExecutor } from '@agp/eventstore';
import { createLogger } from '@agp/runtime';
import { InterventionsService } from '../services/interventions/src/service.js';
import { createDatabase } from '../test/support/db.js';
import { ingestEvents } from './ingest-events.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.ROUNDS ?? 200);
const WARM = Number(process.env.WARM ?? 30);

/** Batch `b` of `run` as the ingest consumer hands it over: one message of 100 events with their assigned ids. */
function delivery(run: string, b: number): IngestDelivery<IngestEnvelope> {
  const now = new Date().toISOString();
  const events = ingestEvents(run, b).map((e) => ({ ...e, assigned_id: randomUUID() }));
  const payload = { organization_id: 'org-bench', actor: 'key:k1', correlation_id: randomUUID(), received_at: now, events } as unknown as IngestEnvelope;
  return { subject: 'x.ingest', msg_id: randomUUID(), payload, attempt: 1, ack: async () => {}, nak: async () => {} };
}

/** Per statement (its first 70 characters): wall ms, round trip included, and how many ran. */
const statements = new Map<string, { ms: number; n: number }>();
/** `sql` with every query's wall time added to {@link statements} (a measuring wrapper for this script only). */
function timed(sql: Sql): Sql {
  const wrap = (ex: SqlExecutor): SqlExecutor => ({
    query: async (text, params, opts) => {
      const t = performance.now();
      try {
        return await ex.query(text, params, opts);
      } finally {
        const k = text.replace(/\s+/g, ' ').trim().slice(0, 70);
        const s = statements.get(k) ?? { ms: 0, n: 0 };
        s.ms += performance.now() - t;
        s.n++;
        statements.set(k, s);
      }
    },
  }) as SqlExecutor;
  return { ...sql, kind: sql.kind, query: wrap(sql).query, transaction: (fn) => sql.transaction((tx) => fn(wrap(tx))), exec: (t) => sql.exec(t), close: () => sql.close() };
}

/** CPU ms (user + system) of process `pid` so far, from /proc (10 ms ticks). */
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

const db = await createDatabase(DATABASE_URL, 'agp_intv_append');
const raw = createPgSql(db.url, { max: 2 });
const sql = timed(raw);
const store = createEventStore(sql);
await store.migrate();
const log = await SqlIngestLog.create(raw);
const logger = createLogger('bench', 'warn');
const svc = new InterventionsService({ store, db: sql, ingestLog: log, subjectPrefix: 'bench', logger });
await svc.start();
const admin = new pg.Client({ connectionString: db.url });
await admin.connect();
try {
  const run = `r${randomBytes(3).toString('hex')}`;
  for (let b = 0; b < WARM; b++) await svc.recordIngested([delivery(run, b)]);
  const batches = Array.from({ length: ROUNDS }, (_, b) => delivery(run, WARM + b));
  statements.clear();
  const pids = async () => (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);
  const before = new Map((await pids()).map((p) => [p, cpuOf(p)]));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const d of batches) await svc.recordIngested([d]);
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  let pgMs = 0;
  for (const p of await pids()) pgMs += cpuOf(p) - (before.get(p) ?? 0);
  const events = ROUNDS * 100;
  const per = (ms: number) => ((ms * 1000) / events).toFixed(1);
  console.log(`events ${events}; wall ${per(wall)} µs/event; node CPU ${per((c.user + c.system) / 1000)} µs/event; PostgreSQL backends CPU ${per(pgMs)} µs/event (10 ms ticks)`);
  for (const [k, s] of [...statements].sort((a, b) => b[1].ms - a[1].ms)) console.log(`  ${per(s.ms).padStart(7)} µs/event  x${s.n}  ${k}`);
  const sizes = await admin.query(
    `SELECT relname, pg_total_relation_size(oid) / 1024 AS kb FROM pg_class WHERE relname LIKE 'agp_%' AND relkind IN ('r','i') ORDER BY 2 DESC LIMIT 20`,
  );
  for (const r of sizes.rows) console.log(`  ${String(r.kb).padStart(8)} kB  ${r.relname}`);
  const upd = await admin.query(`SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE n_tup_upd > 0 ORDER BY relname`);
  for (const r of upd.rows) console.log(`  ${r.relname}: inserted ${r.n_tup_ins}, updated ${r.n_tup_upd}, HOT ${r.n_tup_hot_upd}`);
  if (process.env.EXPLAIN) {
    // The duplicates-and-versions statement of an append, as the store runs it, for ids that are not stored yet.
    const ids = Array.from({ length: 100 }, () => randomUUID());
    const plan = await admin.query(
      `EXPLAIN (ANALYZE, BUFFERS) SELECT event_id AS id, NULL::integer AS version FROM agp_events WHERE event_id = ANY($1::text[])
       UNION ALL SELECT stream_id, max(stream_version) FROM agp_events WHERE stream_id = ANY($2::text[]) GROUP BY stream_id`,
      [ids, ids.map((i) => `intervention-${i}`)],
    );
    for (const r of plan.rows) console.log(`  ${r['QUERY PLAN']}`);
  }
} finally {
  await admin.end();
  await svc.stop();
  await log.close();
  await store.close();
  if (process.env.KEEP) console.log(`kept ${db.url}`);
  else await db.drop();
}
