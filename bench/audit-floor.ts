/**
 * The audit trail's floor per governance event, beside what its projection costs now, in one run (docs/performance.md,
 * "The cost of the audit trail"): on a scratch database, EVENTS records shaped like `pnpm bench ingest`'s
 * interventions (`ingestEvents`: the 450-character pad in `original_inputs`), in batches of 1,000 (the projection's
 * batch size), each batch in one transaction with `synchronous_commit = off` as the projection's is. Rows:
 *   floor       the least any such log does per event: the record's RFC 8785 text (`canonicalJson`), its SHA-256 leaf
 *               hash, and one durable row per event (leaf index and hash, primary key only), one INSERT per batch
 *   projection  `applyAuditTrailEvents` itself (the policies service's handler): version 2 leaves with salted
 *               commitments, the leaf rows, salts and subtree hashes, into the audit trail's own tables
 * Prints, per event, the CPU of this process (the policies process's share) and of the PostgreSQL backend (from /proc,
 * 10 ms ticks), each row run ROUNDS times alternately. Run: `node --import tsx bench/run.ts audit-floor`; env
 * DATABASE_URL, BENCH_EVENTS (default 20000), BENCH_AUDIT_FLOOR_ROUNDS (default 2).
 */
import { canonicalJson, InterventionEvents } from '@agp/contracts';
import { migrateSchema, type SqlExecutor, type StoredEvent } from '@agp/eventstore';
import { leafHash } from '@agp/tlog';
import pg from 'pg';
import { createDatabase } from '../test/support/db.js';
import { applyAuditTrailEvents, leafRecord } from '../services/policies/src/tlog/leaves.js';
import { TLOG_DDL } from '../services/policies/src/tlog/schema.js';
import { ingestEvents } from './ingest-events.js';
import { cpuMsOf } from './proc.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_AUDIT_FLOOR_ROUNDS ?? 2);
const BATCH = 1000;

/** `n` stored `InterventionRecorded` events of organisation `org`, their data the bench's intervention bodies plus the record's fields. */
function events(org: string, n: number, tag: string): StoredEvent[] {
  const out: StoredEvent[] = [];
  for (let b = 0; out.length < n; b++) {
    for (const e of ingestEvents(`floor-${tag}`, b)) {
      if (out.length >= n) break;
      const id = `${tag}-${out.length}`;
      out.push({
        event_id: id,
        type: InterventionEvents.Recorded,
        stream_id: `intervention-${id}`,
        stream_version: 1,
        global_position: BigInt(out.length + 1),
        recorded_at: e.timestamp,
        data: { id, organization_id: org, ...e.body, status: e.body.outcome === 'escalated' ? 'pending' : 'resolved', created_at: e.timestamp, client_event_id: e.id },
        metadata: { organization_id: org, actor: 'key:bench', correlation_id: e.id, schema_version: 1 },
      });
    }
  }
  return out;
}

/** Run `work` over `list` in batches of {@link BATCH}, each in a transaction of `c`; the CPU µs per event of this process and of the backend. */
async function measure(c: pg.Client, backend: number, list: StoredEvent[], work: (batch: StoredEvent[], tx: SqlExecutor) => Promise<unknown>): Promise<{ node: number; pg: number }> {
  const tx: SqlExecutor = { query: (text: string, params?: unknown[]) => c.query(text, params as unknown[]) } as unknown as SqlExecutor;
  const pg0 = cpuMsOf(backend);
  const cpu0 = process.cpuUsage();
  for (let at = 0; at < list.length; at += BATCH) {
    await c.query('BEGIN');
    await c.query('SET LOCAL synchronous_commit = off');
    await work(list.slice(at, at + BATCH), tx);
    await c.query('COMMIT');
  }
  const cpu = process.cpuUsage(cpu0);
  return { node: (cpu.user + cpu.system) / list.length, pg: ((cpuMsOf(backend) - pg0) * 1000) / list.length };
}

/** The floor: canonical text, leaf hash, one row (index, hash) per event. */
async function floor(batch: StoredEvent[], tx: SqlExecutor, next: { i: number }): Promise<void> {
  const rows = batch.map((e) => ({ i: next.i++, h: Buffer.from(leafHash(canonicalJson(leafRecord(e)))).toString('hex') }));
  await tx.query(`INSERT INTO floor_leaves (leaf_index, leaf_hash) SELECT x.i, x.h FROM jsonb_to_recordset($1::jsonb) AS x(i bigint, h text)`, [JSON.stringify(rows)]);
}

/** Print the floor's and the projection's CPU per event, ROUNDS times each, alternately. */
export async function auditFloorBench(): Promise<void> {
  const db = await createDatabase(DATABASE_URL, 'agp_auditfloor');
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const sql = { query: (t: string, p?: unknown[]) => c.query(t, p as unknown[]), transaction: async <T>(fn: (tx: SqlExecutor) => Promise<T>) => fn({ query: (t: string, p?: unknown[]) => c.query(t, p as unknown[]) } as unknown as SqlExecutor) };
    await migrateSchema(sql as never, TLOG_DDL);
    await c.query('CREATE TABLE floor_leaves (leaf_index bigint PRIMARY KEY, leaf_hash text NOT NULL)');
    const backend = (await c.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0].p;
    console.log(`audit trail floor: ${EVENTS} events per row, batches of ${BATCH}, ${ROUNDS} rounds, node ${process.version}, ${new Date().toISOString()}`);
    const next = { i: 0 };
    const rows: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const f = await measure(c, backend, events('floor', EVENTS, `f${round}`), (b, tx) => floor(b, tx, next));
      rows.push(`| floor | ${round} | ${f.node.toFixed(1)} | ${f.pg.toFixed(1)} | ${(f.node + f.pg).toFixed(1)} |`);
      const p = await measure(c, backend, events('proj', EVENTS, `p${round}`), (b, tx) => applyAuditTrailEvents(b, tx));
      rows.push(`| projection | ${round} | ${p.node.toFixed(1)} | ${p.pg.toFixed(1)} | ${(p.node + p.pg).toFixed(1)} |`);
      console.log(rows.at(-2));
      console.log(rows.at(-1));
    }
    console.log('\n| row | round | this process, CPU µs per event | PostgreSQL backend, CPU µs per event | both |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    await c.end();
    await db.drop();
  }
}
