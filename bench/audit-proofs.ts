/**
 * `pnpm bench audit-proofs`: the audit trail's inclusion proofs at 10^6 and 10^7 leaves (docs/performance.md,
 * `pnpm bench audit-proofs`): the proof's size (hashes, bytes) and the latency of answering it from the stored nodes
 * in PostgreSQL, beside a baseline measured in the same run on the same records: the primary-key read of the record's
 * leaf row alone (the first query of every answer).
 *
 * Appending 10^7 leaves through the projection is far too slow here, so the tables are filled directly, in a database
 * of their own (dropped afterwards): leaves of compact canonical records (RFC 8785, `canonicalJson`), hashed and
 * folded into the stored nodes with `@agp/tlog` (`leafHash`, `appendLeaves` over the tree's right frontier, exactly as
 * the projection does), written with `INSERT … SELECT FROM unnest(…)` of 65,536 leaves at a time into `agp_tlog_nodes`
 * and `agp_tlog_trees` as `TLOG_DDL` creates them (UNLOGGED: no WAL, reads are the same; the nodes' primary key built
 * after the rows). `agp_tlog_leaves` holds the rows of the records asked about only (the answer reads the asked
 * record's row by its unique record id, then only stored nodes; every leaf's hash is a level-0 node). Each proof is answered by `AuditTrail.inclusion`, the code behind
 * `GET /api/v1/audit/proofs/inclusion` (without HTTP and the bus hop), and checked with `verifyInclusion`.
 *
 * Needs DATABASE_URL (a server where it may create a database); defaults to the local one.
 * Knobs: BENCH_PROOF_SIZES (comma list of leaf counts, ascending; default 1000000,10000000), BENCH_PROOFS (proofs timed
 * per size, default 2000).
 */
import pg from 'pg';
import { canonicalJson } from '@agp/contracts';
import { createPgSql } from '@agp/eventstore';
import { appendLeaves, frontier, leafHash, verifyInclusion, type Hash } from '@agp/tlog';
import { AuditTrail } from '../services/policies/src/tlog/trail.js';
import { TLOG_DDL } from '../services/policies/src/tlog/schema.js';
import { createDatabase } from '../test/support/db.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = (process.env.BENCH_PROOF_SIZES ?? '1000000,10000000').split(',').map(Number);
const PROOFS = Number(process.env.BENCH_PROOFS ?? 2000);
const ORG = 'bench';
const CHUNK = 65_536;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');
const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** The record id of leaf `i`. */
const recordId = (i: number) => `rec-${i.toString().padStart(9, '0')}`;

/** The record of leaf `i`: a compact version-1 record. */
function leafRecord(i: number) {
  return {
    v: 1,
    id: recordId(i),
    organization_id: ORG,
    at: new Date(Date.UTC(2026, 10, 29) + i).toISOString(),
    type: 'InterventionRecorded',
    stream: `intervention-${i}`,
    stream_version: 1,
    actor: 'system',
    actor_name: null,
    data: { id: `i-${i}`, outcome: 'blocked' },
  };
}

/**
 * The leaf text of leaf `i`: `canonicalJson(leafRecord(i))`, written out (keys already in RFC 8785 order) because 10^7
 * of them are made; {@link auditProofsBench} checks the two agree.
 */
function leafText(i: number): string {
  const r = leafRecord(i);
  return `{"actor":"system","actor_name":null,"at":"${r.at}","data":{"id":"${r.data.id}","outcome":"blocked"},"id":"${r.id}","organization_id":"${ORG}","stream":"${r.stream}","stream_version":1,"type":"InterventionRecorded","v":1}`;
}

/** A deterministic pseudo-random sequence (xorshift32), for the leaves asked about. */
function sampler(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

/**
 * Append leaves `from..to-1` to the stored tree (whose frontier nodes are in `front`), `CHUNK` at a time: their level-0
 * nodes and every node they complete, and the tree's size; the next chunk is hashed while the last one is written.
 * `front` is left holding the frontier of the tree of `to` leaves. Returns the ms it took.
 */
async function fill(client: pg.Client, from: number, to: number, front: Map<string, Hash>): Promise<number> {
  const started = performance.now();
  let writing: Promise<unknown> = Promise.resolve();
  for (let at = from; at < to; at += CHUNK) {
    const end = Math.min(to, at + CHUNK);
    const hashes = Array.from({ length: end - at }, (_, k) => leafHash(new TextEncoder().encode(leafText(at + k))));
    const made = appendLeaves(at, hashes, (level, index) => {
      const h = front.get(`${level}/${index}`);
      if (!h) throw new Error(`frontier node ${level}/${index} missing at ${at}`);
      return h;
    });
    const params = [ORG, made.map((n) => n.level), made.map((n) => n.index), made.map((n) => hex(n.hash))];
    await writing;
    writing = client.query(
      `WITH n AS (INSERT INTO agp_tlog_nodes (organization_id, level, node_index, hash) SELECT $1, x.l, x.i, x.h FROM unnest($2::int[], $3::bigint[], $4::text[]) AS x(l, i, h))
       INSERT INTO agp_tlog_trees (organization_id, size) VALUES ($1, ${end}) ON CONFLICT (organization_id) DO UPDATE SET size = excluded.size`,
      params,
    );
    const all = new Map(front);
    for (const n of made) all.set(`${n.level}/${n.index}`, n.hash);
    front.clear();
    for (const n of frontier(end)) front.set(`${n.level}/${n.index}`, all.get(`${n.level}/${n.index}`)!);
    if (((at - from) / CHUNK) % 32 === 31) console.log(`  ${fmt(end)} leaves (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await writing;
  return performance.now() - started;
}

/** Store the leaf rows of leaves `indices` (the records the benchmark asks about). */
async function storeLeaves(client: pg.Client, indices: number[]): Promise<void> {
  const texts = indices.map(leafText);
  await client.query(
    `INSERT INTO agp_tlog_leaves (organization_id, leaf_index, record_id, leaf_hash, leaf)
     SELECT $1, x.i, x.r, x.h, x.t FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS x(i, r, h, t) ON CONFLICT DO NOTHING`,
    [ORG, indices, indices.map(recordId), texts.map((t) => hex(leafHash(new TextEncoder().encode(t)))), texts],
  );
}

/** Timings in ms of `task` over `ids`, one at a time. */
async function timed(ids: string[], task: (id: string) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const t = performance.now();
    await task(id);
    out.push(performance.now() - t);
  }
  return out;
}

/** Runs the benchmark and prints one table row per size. */
export async function auditProofsBench(): Promise<void> {
  console.log(`AGP audit-proofs benchmark: sizes ${SIZES.map(fmt).join(', ')}, ${fmt(PROOFS)} proofs each, node ${process.version}, ${new Date().toISOString()}`);
  const db = await createDatabase(DATABASE_URL, 'agp_bench_tlog');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const sql = createPgSql(db.url, { max: 2 });
  const quiet = { warn: () => {}, error: () => {}, info: () => {}, debug: () => {}, child: () => quiet } as never;
  const trail = new AuditTrail({ db: sql, signer: null, logName: 'agp-audit', intervalMs: 0, now: () => new Date(), logger: quiet, readEvents: async () => [] });
  const rows: string[] = [];
  try {
    for (const i of [0, 1, 999_999, 9_999_999]) if (leafText(i) !== canonicalJson(leafRecord(i))) throw new Error(`leafText(${i}) is not the record's RFC 8785 text`);
    await client.query(TLOG_DDL);
    for (const t of ['agp_tlog_leaves', 'agp_tlog_nodes', 'agp_tlog_trees']) await client.query(`ALTER TABLE ${t} SET UNLOGGED`);
    const front = new Map<string, Hash>();
    let size = 0;
    for (const target of SIZES) {
      console.log(`filling to ${fmt(target)} leaves ...`);
      // The nodes' primary key is built once the rows are in (faster than keeping it up to date row by row).
      await client.query('ALTER TABLE agp_tlog_nodes DROP CONSTRAINT IF EXISTS agp_tlog_nodes_pkey');
      const fillMs = await fill(client, size, target, front);
      const indexStarted = performance.now();
      await client.query('ALTER TABLE agp_tlog_nodes ADD PRIMARY KEY (organization_id, level, node_index)');
      const indexMs = performance.now() - indexStarted;
      size = target;
      const { rows: bytes } = await client.query<{ leaves: string; nodes: string }>(`SELECT pg_total_relation_size('agp_tlog_leaves')::text AS leaves, pg_total_relation_size('agp_tlog_nodes')::text AS nodes`);
      const next = sampler(size);
      const indices = Array.from({ length: PROOFS }, () => next(size));
      await storeLeaves(client, indices);
      await client.query('VACUUM ANALYZE agp_tlog_leaves, agp_tlog_nodes, agp_tlog_trees');
      const ids = indices.map(recordId);
      // Warm-up (JIT, connections, the pages the first reads touch), not counted.
      for (const id of ids.slice(0, 200)) await trail.inclusion(ORG, { record: id });
      const baseline = await timed(ids, (id) => sql.query(`SELECT leaf_index::text AS leaf_index, leaf_hash, leaf FROM agp_tlog_leaves WHERE organization_id = $1 AND record_id = $2`, [ORG, id]));
      const hashes: number[] = [];
      const answerBytes: number[] = [];
      let bad = 0;
      const proofs = await timed(ids, async (id) => {
        const p = await trail.inclusion(ORG, { record: id });
        hashes.push(p.proof.length);
        answerBytes.push(Buffer.byteLength(JSON.stringify(p)));
        if (!verifyInclusion(unb64(p.leaf_hash), p.leaf_index, p.tree_size, p.proof.map(unb64), unb64(p.root_hash)) || p.tree_size !== size) bad++;
      });
      if (bad) throw new Error(`${bad} proofs did not verify at ${size} leaves`);
      const avg = hashes.reduce((a, b) => a + b, 0) / hashes.length;
      const row = `| ${fmt(size)} | ${Math.min(...hashes)}–${Math.max(...hashes)} (avg ${avg.toFixed(1)}) | ${fmt(avg * 32)} B raw, ${fmt(pct(answerBytes, 50))} B JSON answer | p50 ${pct(proofs, 50).toFixed(2)} ms, p99 ${pct(proofs, 99).toFixed(2)} ms | p50 ${pct(baseline, 50).toFixed(2)} ms, p99 ${pct(baseline, 99).toFixed(2)} ms | ${((fillMs + indexMs) / 1000).toFixed(0)} s; leaf rows ${fmt(Number(bytes[0].leaves) / 2 ** 20)} MB, nodes ${fmt(Number(bytes[0].nodes) / 2 ** 20)} MB |`;
      rows.push(row);
      console.log(row);
    }
  } finally {
    await sql.close();
    await client.end();
    await db.drop();
  }
  console.log(`\nEvery proof verified (verifyInclusion against the tree head the answer names); ${fmt(PROOFS)} proofs per size, random leaves, one at a time.\n`);
  console.log('| leaves | hashes in the proof | proof size | inclusion proof from the stored nodes (AuditTrail.inclusion) | baseline: the leaf row by record id alone | fill and index (this run); table sizes |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}
