import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createPgliteSql, migrateSchema, type Sql, type StoredEvent } from '@agp/eventstore';
import { SecretBox } from '@agp/runtime';
import { consistencyProof, inclusionProof, leafHash, openCheckpoint, rootOf, verifyConsistency, verifyInclusion } from '@agp/tlog';
import { applyAuditTrailEvents } from '../src/tlog/leaves.js';
import { loadAuditSigner } from '../src/tlog/keys.js';
import { listAuditKeys } from '../src/tlog/keys-query.js';
import { TLOG_DDL } from '../src/tlog/schema.js';
import { AuditTrail } from '../src/tlog/trail.js';

/**
 * The audit trail's storage on PGlite, below the HTTP API: leaves appended in batches of uneven sizes (a replayed
 * batch appends nothing) give, from the stored nodes, exactly the roots and proofs of the tree of all the leaves; the
 * interval signs one checkpoint per organisation that grew; a generated key is kept sealed and found again at the next
 * start, and configuring a key rotates (the old one stays listed, retired).
 */
const logger = { warn: () => {}, error: () => {}, info: () => {}, debug: () => {}, child: () => logger } as never;
let sql: Sql;

const event = (org: string, n: number): StoredEvent => ({
  event_id: `${org}-ev-${n}`,
  type: 'PolicyUpdated',
  stream_id: `policy-${org}`,
  stream_version: n + 1,
  global_position: BigInt(n),
  recorded_at: new Date(Date.UTC(2026, 10, 29, 10, 0, n)).toISOString(),
  data: { id: `pol-${org}`, changes: { run_budget: { from: n, to: n + 1 } }, sealed_headers: 'never in a leaf' },
  metadata: { organization_id: org, actor: 'key:k1', correlation_id: `c${n}`, schema_version: 1 },
});

beforeAll(async () => {
  sql = await createPgliteSql();
  await migrateSchema(sql, TLOG_DDL);
});
afterAll(async () => {
  await sql?.close();
});

describe('audit trail storage (PGlite)', () => {
  const secrets = new SecretBox(randomBytes(32));
  let trail: AuditTrail;

  it('appends batches per organisation; roots and proofs from the stored nodes equal the whole tree’s', async () => {
    const acme = Array.from({ length: 23 }, (_, n) => event('acme', n));
    const globex = Array.from({ length: 5 }, (_, n) => event('globex', n));
    // Interleaved batches of uneven sizes, then one replayed: it appends nothing.
    const all = acme.flatMap((e, n) => (n < globex.length ? [e, globex[n]] : [e]));
    for (let at = 0, size = 1; at < all.length; at += size, size += 2) await sql.transaction((tx) => applyAuditTrailEvents(all.slice(at, at + size), tx));
    await sql.transaction((tx) => applyAuditTrailEvents(all.slice(0, 7), tx));
    const signer = await loadAuditSigner(sql, secrets, { AGP_AUDIT_LOG_NAME: 'agp-audit' }, logger);
    trail = new AuditTrail({ db: sql, signer, logName: 'agp-audit', intervalMs: 0, now: () => new Date('2026-11-29T11:00:00Z'), logger, readEvents: async () => [] });
    expect(await trail.size('acme')).toBe(23);
    expect(await trail.size('globex')).toBe(5);
    const rows = await sql.query<{ leaf: string }>(`SELECT leaf FROM agp_tlog_leaves WHERE organization_id = 'acme' ORDER BY leaf_index`);
    expect(rows.rows.map((r) => JSON.parse(r.leaf).id)).toEqual(acme.map((e) => e.event_id));
    expect(rows.rows.every((r) => !r.leaf.includes('never in a leaf'))).toBe(true);
    const hashes = rows.rows.map((r) => leafHash(new TextEncoder().encode(r.leaf)));
    const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
    for (const size of [1, 2, 7, 16, 23]) {
      const proof = await trail.inclusion('acme', { record: 'acme-ev-0', tree_size: size });
      expect(proof.root_hash).toBe(b64(rootOf(hashes.slice(0, size))));
      expect(proof.proof).toEqual(inclusionProof(hashes.slice(0, size), 0).map(b64));
      const c = await trail.consistency('acme', { from: 5, to: size < 5 ? 5 : size });
      expect(c.proof).toEqual(consistencyProof(hashes.slice(0, Math.max(size, 5)), 5).map(b64));
    }
    const last = await trail.inclusion('acme', { record: 'acme-ev-22' });
    expect(verifyInclusion(hashes[22], 22, 23, last.proof.map((p) => new Uint8Array(Buffer.from(p, 'base64'))), rootOf(hashes))).toBe(true);
    await expect(trail.inclusion('globex', { record: 'acme-ev-0' })).rejects.toMatchObject({ status: 404 });
  });

  it('signs one checkpoint per organisation that grew; the notes verify with the listed key and are consistent', async () => {
    await trail.checkpointAll();
    await trail.checkpointAll();
    const acme = await trail.list('acme', { skip: 0, limit: 50 });
    const globex = await trail.list('globex', { skip: 0, limit: 50 });
    expect([acme.total, globex.total]).toEqual([1, 1]);
    const keys = (await listAuditKeys(sql)).keys;
    expect(keys).toHaveLength(1);
    const first = openCheckpoint(acme.latest!.note, [keys[0].verifier_key]);
    expect(first).toMatchObject({ origin: 'agp-audit/acme', size: 23, extensions: ['time 2026-11-29T11:00:00Z'] });
    await sql.transaction((tx) => applyAuditTrailEvents([event('acme', 23), event('acme', 24)], tx));
    await trail.checkpointAll();
    const after = await trail.list('acme', { skip: 0, limit: 50 });
    expect(after.checkpoints.map((c) => c.tree_size)).toEqual([25, 23]);
    expect((await trail.list('globex', { skip: 0, limit: 50 })).total).toBe(1);
    const second = openCheckpoint(after.latest!.note, [keys[0].verifier_key]);
    const c = await trail.consistency('acme', { from: 23, to: 25 });
    expect(verifyConsistency(23, 25, c.proof.map((p) => new Uint8Array(Buffer.from(p, 'base64'))), first.root, second.root)).toBe(true);
  });

  it('signs on its own at the interval once started, and stops', async () => {
    const signer = await loadAuditSigner(sql, secrets, { AGP_AUDIT_LOG_NAME: 'agp-audit' }, logger);
    const timed = new AuditTrail({ db: sql, signer, logName: 'agp-audit', intervalMs: 50, now: () => new Date(), logger, readEvents: async () => [] });
    await sql.transaction((tx) => applyAuditTrailEvents([event('globex', 5)], tx));
    timed.start();
    const deadline = Date.now() + 10_000;
    while ((await timed.list('globex', { skip: 0, limit: 1 })).latest?.tree_size !== 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await timed.stop();
    expect((await timed.list('globex', { skip: 0, limit: 1 })).latest?.tree_size).toBe(6);
  });

  it('keeps a generated key sealed and finds it again; a configured key rotates, the old one stays listed', async () => {
    const again = await loadAuditSigner(sql, secrets, { AGP_AUDIT_LOG_NAME: 'agp-audit' }, logger);
    const [stored] = (await sql.query<{ sealed_private_key: string }>('SELECT sealed_private_key FROM agp_tlog_keys')).rows;
    expect(stored.sealed_private_key).toMatch(/^agp1\./);
    expect(again!.keyId).toBe((await listAuditKeys(sql)).keys[0].key_id);
    // Without a secrets key the stored key does not open: no signer, and a checkpoint request is a 503.
    expect(await loadAuditSigner(sql, new SecretBox(null), { AGP_AUDIT_LOG_NAME: 'agp-audit' }, logger)).toBeNull();
    const configured = await loadAuditSigner(sql, secrets, { AGP_AUDIT_LOG_NAME: 'agp-audit', AGP_AUDIT_SIGNING_KEY: randomBytes(32).toString('base64') }, logger);
    const keys = (await listAuditKeys(sql)).keys;
    expect(keys.map((k) => k.key_id)).toEqual([configured!.keyId, again!.keyId]);
    expect(keys[0].retired_at).toBeNull();
    expect(keys[1].retired_at).not.toBeNull();
    await expect(new AuditTrail({ db: sql, signer: null, logName: 'agp-audit', intervalMs: 0, now: () => new Date(), logger, readEvents: async () => [] }).checkpoint('acme')).rejects.toMatchObject({ status: 503 });
  });
});
