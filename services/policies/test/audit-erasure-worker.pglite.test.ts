import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventStore, createPgliteSql, migrateSchema, type EventStore, type Sql } from '@agp/eventstore';
import { migrateAuditLog } from '../src/audit/schema.js';
import { AuditErasures } from '../src/tlog/erasure.js';
import { applyAuditTrailEvents, saltsOf } from '../src/tlog/leaves.js';
import { TLOG_DDL, migrateTlog } from '../src/tlog/schema.js';

/**
 * The erasure of a deleted intervention on PGlite, below the HTTP API: the audit-trail projection queues it with the
 * `InterventionDeleted` leaf; the worker erases the intervention's committed fields and salts, appends one
 * `AuditRecordsErased` record (scope `intervention`, the deleting actor) and empties the queue; a second run of the
 * same queued erasure (a crash before the row was deleted) erases nothing, fails nothing and writes no second record;
 * a row leased by another replica is left alone. A database made when salts were stored one row per field has them
 * moved into one row per record at start. Source: docs/audit.md (Erasure).
 */
const logger = { warn: () => {}, error: () => {}, info: () => {}, debug: () => {}, child: () => logger } as never;
let sql: Sql;
let store: EventStore;

beforeAll(async () => {
  sql = await createPgliteSql();
  store = createEventStore(sql);
  await store.migrate();
  await migrateAuditLog(sql);
  await migrateSchema(sql, TLOG_DDL);
});
afterAll(async () => {
  await sql?.close();
});

describe('erasure of deleted interventions (PGlite)', () => {
  const meta = { organization_id: 'acme', actor: 'key:k1', actor_name: 'ops', correlation_id: 'c-del', schema_version: 1 };
  /** The erasure records, read through the event store's port. */
  const erasureEvents = () => store.readAll(0n, 100, ['AuditRecordsErased']);

  it('queues the erasure with the deletion’s leaf; the worker erases once, at least once', async () => {
    await store.append([
      {
        stream_id: 'intervention-i1',
        expected_version: 'no_stream',
        events: [
          { event_id: 'e-rec', type: 'InterventionRecorded', data: { id: 'i1', agent_id: 'a1', reason: 'SECRET reason', description: 'SECRET desc' }, metadata: meta },
          { event_id: 'e-del', type: 'InterventionDeleted', data: { id: 'i1' }, metadata: meta },
        ],
      },
    ]);
    const events = await store.readStream('intervention-i1');
    expect(await sql.transaction((tx) => applyAuditTrailEvents(events, tx))).toBe(1);
    // A replayed batch queues nothing twice.
    expect(await sql.transaction((tx) => applyAuditTrailEvents(events, tx))).toBe(0);
    const queued = (await sql.query<{ record_id: string; intervention_id: string; erasure_id: string; actor: string }>(`SELECT * FROM agp_tlog_pending_erasures`)).rows;
    expect(queued).toMatchObject([{ record_id: 'e-del', intervention_id: 'i1', actor: 'key:k1' }]);
    // One row for the record, holding the salts of its two committed fields present.
    expect((await sql.query(`SELECT p FROM agp_tlog_record_salts, jsonb_object_keys(salts) AS p WHERE record_id = 'e-rec'`)).rows).toHaveLength(2);

    const erasures = new AuditErasures({ db: sql, store, now: () => new Date(), logger, retentionIntervalMs: 0 });
    expect(await erasures.erasePending()).toBe(1);
    expect(JSON.stringify((await store.readStream('intervention-i1')).map((e) => e.data))).not.toContain('SECRET');
    expect((await sql.query(`SELECT 1 FROM agp_tlog_record_salts WHERE record_id = 'e-rec'`)).rows).toHaveLength(0);
    expect((await sql.query(`SELECT 1 FROM agp_tlog_pending_erasures`)).rows).toHaveLength(0);
    const [erased] = await erasureEvents();
    expect(erased.data).toMatchObject({ id: queued[0].erasure_id, scope: 'intervention', intervention_ids: ['i1'], records: 1, fields: 2 });
    expect(erased.metadata).toMatchObject({ actor: 'key:k1', actor_name: 'ops', correlation_id: 'c-del', causation_id: 'e-del' });

    // The row again, as after a crash before it was deleted: nothing left to erase, no failure, no second record.
    await sql.query(`INSERT INTO agp_tlog_pending_erasures (record_id, organization_id, intervention_id, erasure_id, actor) VALUES ('e-del', 'acme', 'i1', $1, 'key:k1')`, [queued[0].erasure_id]);
    expect(await erasures.erasePending()).toBe(1);
    expect(await erasureEvents()).toHaveLength(1);
    expect((await sql.query(`SELECT 1 FROM agp_tlog_pending_erasures`)).rows).toHaveLength(0);

    // A row another replica holds the lease of is left to it.
    await sql.query(`INSERT INTO agp_tlog_pending_erasures (record_id, organization_id, intervention_id, erasure_id, actor, lease_until) VALUES ('e-x', 'acme', 'i2', 'er-x', 'system', now() + interval '1 minute')`);
    expect(await erasures.erasePending()).toBe(0);
    await erasures.stop();
  });

  it('a database with one salt row per field has them moved into one row per record, the salts and times kept', async () => {
    const old = await createPgliteSql();
    try {
      await old.query(`CREATE TABLE agp_tlog_salts (organization_id text NOT NULL, record_id text NOT NULL, pointer text NOT NULL, salt text NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (record_id, pointer))`);
      const a = Buffer.alloc(32, 1).toString('base64');
      const b = Buffer.alloc(32, 2).toString('base64');
      await old.query(
        `INSERT INTO agp_tlog_salts VALUES ('acme', 'r1', '/data/reason', $1, '2026-11-01T00:00:00Z'), ('acme', 'r1', '/data/description', $2, '2026-11-01T00:00:00Z'), ('globex', 'r2', '/data/reason', $2, '2026-11-02T00:00:00Z')`,
        [a, b],
      );
      await migrateTlog(old);
      await migrateTlog(old); // a second start finds nothing to move
      expect((await old.query(`SELECT to_regclass('agp_tlog_salts')::text AS t`)).rows[0]).toEqual({ t: null });
      const rows = (await old.query<{ organization_id: string; record_id: string; at: string }>(`SELECT organization_id, record_id, at::text AS at FROM agp_tlog_record_salts ORDER BY record_id`)).rows;
      expect(rows).toEqual([
        { organization_id: 'acme', record_id: 'r1', at: '2026-11-01 00:00:00+00' },
        { organization_id: 'globex', record_id: 'r2', at: '2026-11-02 00:00:00+00' },
      ]);
      const salts = await saltsOf(old, 'acme', ['r1', 'r2']);
      expect([...salts.keys()]).toEqual(['r1']);
      expect(Object.fromEntries([...salts.get('r1')!].map(([k, v]) => [k, Buffer.from(v).toString('base64')]))).toEqual({ '/data/reason': a, '/data/description': b });
    } finally {
      await old.close();
    }
  });
});
