import { describe, expect, it } from 'vitest';
import { createEventStore, createPgliteSql, createPgSql, isDataError, type Sql } from '@agp/eventstore';
import { createTestDatabase, infra, runSuffix, skipIntegration } from '../../../test/support/infra.js';
import { JetStreamIngestLog, SqlIngestLog, ingestDeadLetterPage, ingestSubjects, settleIsolated, type IngestLog, type IngestDelivery } from '../src/index.js';
import { QuietLogger, sleep } from './ingest-log-contract.js';

/**
 * A poison message (data PostgreSQL can never store) is settled alone and dead-lettered; its batch-mates are stored;
 * a transient failure is redelivered instead. Real SQL errors, through a real ingest log: JetStream carries a NUL
 * character that PostgreSQL's jsonb refuses (the distributed path; the embedded SQL log refuses it at publish, so
 * only the transient case runs there).
 */
function deadLetterSuite(makeSql: () => Promise<{ sql: Sql; log: IngestLog; prefix: string; cleanup: () => Promise<void> }>, opts: { poison: boolean }) {
  const run = async (payloads: Array<{ text: string }>, failFirstCall = false) => {
    const { sql, log, prefix, cleanup } = await makeSql();
    const store = createEventStore(sql);
    await store.migrate();
    let calls = 0;
    const handle = async (b: IngestDelivery<{ text: string }>[]) => {
      calls++;
      if (failFirstCall && calls === 1) throw new Error('connection reset');
      await store.append(b.map((m) => ({ stream_id: `t-${m.msg_id}`, expected_version: 'any' as const, events: [{ event_id: m.msg_id, type: 'T', data: m.payload, metadata: { organization_id: 'o', actor: 'test', schema_version: 1 } }] })));
      await Promise.all(b.map((m) => m.ack()));
    };
    for (const [i, payload] of payloads.entries()) await log.publish({ subject: `${prefix}.ingested.o.t`, msg_id: `m${i}`, payload });
    const consumer = await log.consume<{ text: string }>({ durable: 'test', subjectFilter: `${prefix}.ingested.*.t`, batchSize: 10, handler: (batch) => settleIsolated(batch, handle, { consumer: 'test', sql, logger: new QuietLogger() }) });
    const stored = async () => (await store.readAll(0n, 1000, ['T'])).length;
    const deadCount = async () => (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'agp_ingest_dead_letters'")).rows[0].n
      ? (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM agp_ingest_dead_letters')).rows[0].n
      : 0;
    const deadline = Date.now() + 10_000;
    const goodCount = payloads.filter((p) => !p.text.includes('\u0000')).length;
    while (Date.now() < deadline && ((await stored()) < goodCount || (await deadCount()) < payloads.length - goodCount)) await sleep(50);
    await sleep(1500); // longer than a nak's redelivery delay: nothing may come back
    const callsAfterSettling = calls;
    await sleep(300);
    const dead = (await deadCount()) ? (await sql.query<{ msg_id: string; payload: string; error: string; consumer: string }>('SELECT msg_id, payload, error, consumer FROM agp_ingest_dead_letters')).rows : [];
    const result = { stored: await stored(), dead, calls, quiet: calls === callsAfterSettling };
    await consumer.stop();
    await cleanup();
    return result;
  };

  if (opts.poison) it('stores the good messages of a batch, dead-letters the poison one with its error, and redelivers nothing', async () => {
    const r = await run([{ text: 'ok-1' }, { text: 'bad\u0000' }, { text: 'ok-3' }]);
    expect(r.stored).toBe(2);
    expect(r.dead).toEqual([{ msg_id: 'm1', consumer: 'test', payload: '{"text":"bad\\u0000"}', error: expect.any(String) }]);
    expect(r.calls).toBe(4); // the batch once, then each message alone
    expect(r.quiet).toBe(true);
  });

  it('redelivers a batch that failed for a reason other than its data, and dead-letters nothing', async () => {
    const r = await run([{ text: 'ok-1' }, { text: 'ok-2' }], true);
    expect(r.stored).toBe(2);
    expect(r.dead).toEqual([]);
    // The failed call, then the redelivery: JetStream may hand the two redelivered messages back in one pull or in two
    // (seen on a loaded machine: 3 calls), so at least one more call and never a per-message isolation pass (4+).
    expect(r.calls).toBeGreaterThanOrEqual(2);
    expect(r.calls).toBeLessThanOrEqual(3);
    expect(r.quiet).toBe(true);
  });
}

describe('settleIsolated', () => {
  it('tells data exceptions (SQLSTATE class 22) from other failures', () => {
    expect(isDataError({ code: '22P05' })).toBe(true);
    expect(isDataError({ code: '22021' })).toBe(true);
    expect(isDataError({ code: '08006' })).toBe(false);
    expect(isDataError(new Error('timeout'))).toBe(false);
    expect(isDataError(null)).toBe(false);
  });
  it('keeps a dead letter with its organisation; the same message failing again updates last_seen and attempts; no table yet reads as an empty page', async () => {
    const sql = await createPgliteSql();
    try {
      expect(await ingestDeadLetterPage(sql, 'acme', { skip: 0, limit: 10 })).toEqual({ rows: [], total: 0 });
      const message = { subject: 'agp.ingest.acme.stats', msg_id: 'm-1', payload: { organization_id: 'acme', events: [{ id: 'e1', text: 'bad\u0000' }] }, attempt: 1, ack: async () => {}, nak: async () => {} };
      const refuse = () => Promise.reject(Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' }));
      await settleIsolated([message], refuse, { consumer: 'stats-ingest', sql, logger: new QuietLogger() });
      const first = await ingestDeadLetterPage(sql, 'acme', { skip: 0, limit: 10 });
      expect(first.rows).toMatchObject([{ consumer: 'stats-ingest', msg_id: 'm-1', attempts: 1, error: 'unsupported Unicode escape sequence' }]);
      expect(JSON.parse(first.rows[0].payload)).toEqual(message.payload);
      await sleep(20);
      await settleIsolated([message], refuse, { consumer: 'stats-ingest', sql, logger: new QuietLogger() });
      const again = await ingestDeadLetterPage(sql, 'acme', { skip: 0, limit: 10 });
      expect(again.total).toBe(1);
      expect(again.rows[0]).toMatchObject({ id: first.rows[0].id, attempts: 2 });
      expect(new Date(again.rows[0].last_seen).getTime()).toBeGreaterThan(new Date(first.rows[0].last_seen).getTime());
      expect((await ingestDeadLetterPage(sql, 'globex', { skip: 0, limit: 10 })).total).toBe(0);
    } finally {
      await sql.close();
    }
  });
  describe('on PGlite with the SQL ingest log (embedded)', () =>
    deadLetterSuite(async () => {
      const sql = await createPgliteSql();
      const log = await SqlIngestLog.create(sql, { logger: new QuietLogger() });
      return { sql, log, prefix: 'agp', cleanup: async () => { await log.close(); await sql.close(); } };
    }, { poison: false }));
  describe.skipIf(skipIntegration())('on PostgreSQL with JetStream (distributed)', () =>
    deadLetterSuite(async () => {
      const db = await createTestDatabase('agp_deadletter');
      const sql = createPgSql(db.url);
      const suffix = runSuffix();
      const log = await JetStreamIngestLog.create({ servers: infra().natsUrl, streamName: `DEADLETTER_T${suffix}`, subjects: [ingestSubjects(`t${suffix}`)], maxBytes: 8 * 1024 * 1024, durables: [{ durable: 'test', subjectFilter: `t${suffix}.ingested.*.t` }], logger: new QuietLogger() });
      return {
        sql, log, prefix: `t${suffix}`,
        cleanup: async () => { await log.deleteStream(); await log.close(); await sql.close(); await db.drop(); },
      };
    }, { poison: true }));
});
