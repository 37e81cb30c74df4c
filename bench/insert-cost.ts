/**
 * PostgreSQL backend CPU per row of the write path's two big inserts, alone, on a scratch database (not a test;
 * docs/performance.md, the consuming side; docs/decisions.md, Event store): 100-row statements of records shaped like
 * `pnpm bench ingest`'s, each in its own transaction, the backend's CPU from /proc (10 ms ticks). Variants by letter,
 * run in the order ORDER gives (e.g. `ORDER=a,c,a,c` interleaves two):
 *   a  events, `jsonb_to_recordset` into jsonb columns                         b  `json_to_recordset` into jsonb columns
 *   c  events, `json_to_recordset` into json columns (the event store's)       l  events' recordset read alone (no insert)
 *   e  list rows as the read model's (six indexes, ON CONFLICT DO NOTHING)     n  list rows without ON CONFLICT
 *   m  list rows' recordset read alone (no insert)                             f  list rows, primary key only
 *   p  events, `COPY … FROM STDIN` (text format) into json columns, nothing returned
 *   q  events, `COPY` as p, then the positions read back by event_id (what the append returns)
 *   r  list rows, `COPY` straight into the table (six indexes; no ON CONFLICT possible)
 *   s  list rows, `COPY` into a temp staging table (ON COMMIT DELETE ROWS), then `INSERT … SELECT … ON CONFLICT DO NOTHING`
 *   u  list rows, `COPY` into an unlogged staging table, then one `WITH d AS (DELETE … RETURNING *) INSERT … SELECT
 *      … ON CONFLICT DO NOTHING`
 * Each printed line also gives the client CPU of building the statement's input (process.cpuUsage around the build:
 * JSON.stringify of the recordset, or the COPY text), in µs per row.
 * Run: `ORDER=a,c,a,c,e,n,e,n ROUNDS=200 node --import tsx bench/insert-cost.ts`. Env: DATABASE_URL, ROUNDS (default 150).
 */
import { readFileSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createDatabase } from '../test/support/db.js';
import { EVENT_STORE_DDL } from '../packages/eventstore/src/event-store.js';
import { READ_MODEL_DDL } from '../services/interventions/src/projections/schema.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.ROUNDS ?? 150);
/** CPU ms (user + system) of process `pid` so far, from /proc. */
const cpuOf = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return ((Number(f[11]) + Number(f[12])) * 1000) / 100; };
const db = await createDatabase(DATABASE_URL, 'agp_sqlexp');
const c = new pg.Client({ connectionString: db.url });
await c.connect();
const pid = (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
/** 100 records: each an event row and its list row. */
function batch() {
  const pad = randomBytes(225).toString('hex');
  const now = new Date().toISOString();
  return Array.from({ length: 100 }, (_, i) => {
    const id = randomUUID();
    const data = { type: 'hard_block', outcome: 'blocked', action_name: `action_${i % 17}`, agent_id: `agent-${i % 23}`, run_id: 'run-x', policy_id: `policy-${i % 5}`, risk_level: 'low', estimated_cost_usd: i + 0.25, reason: 'benchmark event', original_inputs: { pad }, id, timestamp: now, created_at: now, cost_prevented_usd: 1, source: 'ingest', ingest_event_id: `e-${id}` };
    const doc = { id, type: 'hard_block', outcome: 'blocked', action_name: data.action_name, description: null, agent_id: data.agent_id, run_id: 'run-x', policy_id: data.policy_id, policy_name: null, risk_level: 'low', estimated_cost_usd: i + 0.25, actual_cost_usd: null, cost_prevented_usd: 1, blast_radius: null, reason: 'benchmark event', agent_intent: null, original_inputs: { pad }, modified_inputs: null, timestamp: now, organization_id: 'org-1', created_at: now, remediation_payload: { suggested_rewrite: null }, purpose: 'production' };
    return { ev: { event_id: `ev-${id}`, stream_id: `intervention-${id}`, stream_version: 1, event_type: 'InterventionRecorded', data, metadata: { organization_id: 'org-1', actor: 'key:k1', correlation_id: randomUUID(), schema_version: 1 }, organization_id: 'org-1' }, list: { id, organization_id: 'org-1', type: doc.type, outcome: doc.outcome, action_name: doc.action_name, agent_id: doc.agent_id, run_id: doc.run_id, policy_id: doc.policy_id, risk_level: doc.risk_level, ts: now, doc, enrichment: null, purpose: 'production' } };
  });
}
type Batch = ReturnType<typeof batch>;
/** A statement's input built from a batch (timed on the client), and the work that sends it (inside BEGIN … COMMIT). */
interface Work<T> { build: (b: Batch) => T; run: (input: T) => Promise<unknown> }
/** One parameterised statement with `pick`'s parameters. */
const stmtWork = (stmt: string, pick: (b: Batch) => unknown[]): Work<unknown[]> => ({ build: pick, run: (params) => c.query(stmt, params) });
/** COPY input: the rows in COPY's text format, and the batch's keys (event ids) for a read-back. */
interface CopyInput { text: string; keys: string[] }
/** `COPY … FROM STDIN` of the text `build` makes, then each of `after` (given the batch's keys) in order. */
const copyWork = (copy: string, build: (b: Batch) => CopyInput, after: Array<(keys: string[]) => Promise<unknown>> = []): Work<CopyInput> => ({
  build,
  run: async (input) => { await pipeline(Readable.from([input.text]), c.query(copyFrom(copy))); for (const a of after) await a(input.keys); },
});
/**
 * Run `setup`, then the work ROUNDS times (20 first, unmeasured), each on a fresh batch in its own transaction; print
 * the backend's CPU, the wall time and the client's CPU of building the input, all in µs per row.
 */
async function measure<T>(name: string, setup: string, work: Work<T>) {
  await c.query(setup);
  const bs = Array.from({ length: ROUNDS + 20 }, batch);
  const once = async (b: Batch) => { const input = work.build(b); await c.query('BEGIN'); await work.run(input); await c.query('COMMIT'); };
  for (let i = 0; i < 20; i++) await once(bs[i]);
  let buildUs = 0;
  const c0 = cpuOf(pid); const t0 = performance.now();
  for (let i = 20; i < bs.length; i++) {
    const u0 = process.cpuUsage(); const input = work.build(bs[i]); const u = process.cpuUsage(u0); buildUs += u.user + u.system;
    await c.query('BEGIN'); await work.run(input); await c.query('COMMIT');
  }
  const ms = cpuOf(pid) - c0; const wall = performance.now() - t0; const rows = ROUNDS * 100;
  console.log(`${name.padEnd(50)} backend CPU ${((ms * 1000) / rows).toFixed(1)} µs/row, wall ${((wall * 1000) / rows).toFixed(1)} µs/row, client build ${(buildUs / rows).toFixed(2)} µs/row`);
}
/** A value in COPY's text format: `\N` for null, objects as JSON, and backslash, tab, newline and CR escaped. */
const copyField = (v: unknown) => {
  if (v === null || v === undefined) return '\\N';
  const s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v);
  return s.replace(/[\\\t\n\r]/g, (ch) => (ch === '\\' ? '\\\\' : ch === '\t' ? '\\t' : ch === '\n' ? '\\n' : '\\r'));
};
/** Rows in COPY's text format, the columns in `cols` order. */
const copyText = (rows: Array<Record<string, unknown>>, cols: readonly string[]) => {
  let out = '';
  for (const r of rows) out += cols.map((k) => copyField(r[k])).join('\t') + '\n';
  return out;
};
const evCols = 'event_id, stream_id, stream_version, event_type, data, metadata, organization_id';
const evIns = (fn: string, cast: string, t: string) => `INSERT INTO agp_events (${evCols}) SELECT x.event_id, x.stream_id, x.stream_version, x.event_type, x.data, x.metadata, x.organization_id FROM ${fn}($1::${cast}) AS x(event_id text, stream_id text, stream_version integer, event_type text, data ${t}, metadata ${t}, organization_id text) RETURNING global_position::text AS global_position, event_id, floor(extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms`;
const evs = (b: Batch) => [JSON.stringify(b.map((x) => x.ev))];
const fresh = (extra = '') => `DROP TABLE IF EXISTS agp_events; ${EVENT_STORE_DDL}; ${extra}`;
const jsonbCols = 'ALTER TABLE agp_events ALTER data TYPE jsonb, ALTER metadata TYPE jsonb';
const order = (process.env.ORDER ?? 'a,c,e,n').split(',');
const listIns = `INSERT INTO agp_interventions (id, organization_id, type, outcome, action_name, agent_id, run_id, policy_id, risk_level, ts, doc, enrichment, purpose)
       SELECT * FROM json_to_recordset($1::json) AS x(id text, organization_id text, type text, outcome text, action_name text, agent_id text, run_id text, policy_id text, risk_level text, ts timestamptz, doc json, enrichment text, purpose text)
       ON CONFLICT (id) DO NOTHING`;
const lists = (b: Batch) => [JSON.stringify(b.map((x) => x.list))];
const freshList = (extra = '') => `DROP TABLE IF EXISTS agp_interventions CASCADE; ${READ_MODEL_DDL.split('CREATE TABLE IF NOT EXISTS agp_intervention_stats_daily')[0]}; ${extra}`;
const evColList = evCols.split(', ');
const listColList = ['id', 'organization_id', 'type', 'outcome', 'action_name', 'agent_id', 'run_id', 'policy_id', 'risk_level', 'ts', 'doc', 'enrichment', 'purpose'];
const evCopy = (b: Batch): CopyInput => ({ text: copyText(b.map((x) => x.ev), evColList), keys: [] });
const evCopyKeys = (b: Batch): CopyInput => ({ text: copyText(b.map((x) => x.ev), evColList), keys: b.map((x) => x.ev.event_id) });
const listCopy = (b: Batch): CopyInput => ({ text: copyText(b.map((x) => x.list), listColList), keys: [] });
const readBack = (keys: string[]) => c.query('SELECT global_position::text AS global_position, event_id, floor(extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms FROM agp_events WHERE event_id = ANY($1::text[])', [keys]);
const listCols = listColList.join(', ');
const fromStage = (stage: string) => `INSERT INTO agp_interventions (${listCols}) SELECT ${listCols} FROM ${stage} ON CONFLICT (id) DO NOTHING`;
const exps: Record<string, () => Promise<void>> = {
  a: () => measure('events: jsonb_to_recordset -> jsonb cols', fresh(jsonbCols), stmtWork(evIns('jsonb_to_recordset', 'jsonb', 'jsonb'), evs)),
  b: () => measure('events: json_to_recordset -> jsonb cols', fresh(jsonbCols), stmtWork(evIns('json_to_recordset', 'json', 'jsonb'), evs)),
  c: () => measure('events: json_to_recordset -> json cols', fresh(), stmtWork(evIns('json_to_recordset', 'json', 'json'), evs)),
  e: () => measure('list: now (6 indexes)', freshList(), stmtWork(listIns, lists)),
  f: () => measure('list: pkey only', freshList('DROP INDEX agp_interventions_org_ts, agp_interventions_org_agent_ts, agp_interventions_org_run_ts, agp_interventions_org_policy_ts, agp_interventions_org_action_ts'), stmtWork(listIns, lists)),
  l: () => measure('events: recordset read only (no insert)', fresh(), stmtWork('SELECT count(*) FROM json_to_recordset($1::json) AS x(event_id text, stream_id text, stream_version integer, event_type text, data json, metadata json, organization_id text)', evs)),
  m: () => measure('list: recordset read only (no insert)', freshList(), stmtWork('SELECT count(*) FROM json_to_recordset($1::json) AS x(id text, organization_id text, type text, outcome text, action_name text, agent_id text, run_id text, policy_id text, risk_level text, ts timestamptz, doc json, enrichment text, purpose text)', lists)),
  n: () => measure('list: no ON CONFLICT', freshList(), stmtWork(listIns.replace('ON CONFLICT (id) DO NOTHING', ''), lists)),
  p: () => measure('events: COPY text -> json cols', fresh(), copyWork(`COPY agp_events (${evCols}) FROM STDIN`, evCopy)),
  q: () => measure('events: COPY text + positions read back', fresh(), copyWork(`COPY agp_events (${evCols}) FROM STDIN`, evCopyKeys, [readBack])),
  r: () => measure('list: COPY straight in (6 indexes)', freshList(), copyWork(`COPY agp_interventions (${listCols}) FROM STDIN`, listCopy)),
  s: () => measure('list: COPY temp stage + INSERT ON CONFLICT', freshList('DROP TABLE IF EXISTS pg_temp.agp_stage; CREATE TEMP TABLE agp_stage (LIKE agp_interventions INCLUDING DEFAULTS) ON COMMIT DELETE ROWS'),
    copyWork(`COPY agp_stage (${listCols}) FROM STDIN`, listCopy, [() => c.query(fromStage('agp_stage'))])),
  u: () => measure('list: COPY unlogged stage + DELETE/INSERT', freshList('DROP TABLE IF EXISTS agp_stage_u; CREATE UNLOGGED TABLE agp_stage_u (LIKE agp_interventions INCLUDING DEFAULTS)'),
    copyWork(`COPY agp_stage_u (${listCols}) FROM STDIN`, listCopy, [() => c.query(`WITH d AS (DELETE FROM agp_stage_u RETURNING *) INSERT INTO agp_interventions (${listCols}) SELECT ${listCols} FROM d ON CONFLICT (id) DO NOTHING`)])),
};
try {
  for (const k of order) {
    if (!exps[k]) throw new Error(`ORDER: unknown variant ${k}; known: ${Object.keys(exps).join(', ')}`);
    await exps[k]();
  }
} finally {
  await c.end();
  await db.drop();
}
