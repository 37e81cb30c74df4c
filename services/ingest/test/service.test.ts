import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_CREATED, INGEST_DUPLICATE, INGEST_SCHEMA_VERSION, type IngestResponse } from '@agp/contracts';
import { JetStreamIngestLog, SqlIngestLog, ingestSubjects } from '@agp/bus';
import { createEventStore, createPgSql, createPgliteSql, type EventStore, type Sql } from '@agp/eventstore';
import { createTestDatabase, infra, runSuffix, skipIntegration } from '../../../test/support/infra.js';
import { createLogger, deterministicId, type RequestContext } from '@agp/runtime';
import { IngestService, storeIngestedIds } from '../src/index.js';

/**
 * The ingest service's answers (docs/ingest.md, Ingest answers) on real parts: the SQL ingest log and the event store on an
 * in-memory PGlite, and `storeIngestedIds` over it. No consumer runs, so what is published stays in the log and
 * nothing is stored unless a test appends it to the event store itself (as a consumer would, under
 * `deterministicId(org, 'ingest', id)`).
 */
describe('IngestService: created and duplicate answers', () => {
  let sql: Sql;
  let store: EventStore;
  let log: SqlIngestLog;
  let svc: IngestService;
  const logger = createLogger('ingest-test', 'silent');
  const ctx = (org = 'acme'): RequestContext => ({ organization_id: org, scope: 'write', key_id: 'k1', correlation_id: 'c1' });
  let n = 0;
  const uid = () => `ev-${Date.now().toString(36)}-${++n}`;
  const ev = (id: string, type: 'intervention.create' | 'run.start' = 'intervention.create') =>
    type === 'run.start'
      ? { id, type, timestamp: '2026-01-02T03:04:05Z', body: { run_id: `run-${id}`, agent_id: 'a1' } }
      : { id, type, timestamp: '2026-01-02T03:04:05Z', body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: 'a1' } };
  const logRows = async () => Number((await sql.query<{ n: string }>('SELECT count(*)::text AS n FROM agp_ingest_log')).rows[0].n);
  /** Append the events of `ids` to the event store as the consumers do. */
  const store_ = async (org: string, ids: string[]) =>
    store.append(ids.map((id) => ({ stream_id: `test-${id}`, expected_version: 'any' as const, events: [{ event_id: deterministicId(org, 'ingest', id), type: 'Test', data: {}, metadata: { organization_id: org, actor: 'test', schema_version: 1 } }] })));
  const accept = (events: unknown[], org = 'acme', offset = 0): Promise<IngestResponse> => svc.accept(ctx(org), { events, offset });

  beforeAll(async () => {
    sql = await createPgliteSql();
    store = createEventStore(sql);
    await store.migrate();
    log = await SqlIngestLog.create(sql);
    svc = new IngestService({ log, ingested: storeIngestedIds(store), subjectPrefix: 'test', logger });
  });
  afterAll(async () => {
    await log?.close();
    await store?.close();
  });

  it('answers new events 201 created, in batch order, and publishes them', async () => {
    const ids = [uid(), uid(), uid()];
    const before = await logRows();
    const r = await accept([ev(ids[0]), ev(ids[1], 'run.start'), ev(ids[2])]);
    expect(r).toEqual({ successes: ids.map((id) => ({ id, ...INGEST_CREATED })), errors: [] });
    expect(await logRows()).toBe(before + 2); // one message per target service
  });

  it('answers 200 duplicate for ids already stored, without publishing them; the new ones of the chunk are created', async () => {
    const [old1, old2, fresh] = [uid(), uid(), uid()];
    await store_('acme', [old1, old2]);
    const before = await logRows();
    const r = await accept([ev(old1), ev(fresh), ev(old2, 'run.start')]);
    expect(r.successes).toEqual([
      { id: old1, ...INGEST_DUPLICATE },
      { id: fresh, ...INGEST_CREATED },
      { id: old2, ...INGEST_DUPLICATE },
    ]);
    expect(await logRows()).toBe(before + 1);
    // All stored: nothing is published at all.
    const again = await accept([ev(old1), ev(old2, 'run.start')]);
    expect(again.successes.map((s) => s.result)).toEqual(['duplicate', 'duplicate']);
    expect(await logRows()).toBe(before + 1);
  });

  it('scopes stored ids by organisation', async () => {
    const id = uid();
    await store_('acme', [id]);
    expect((await accept([ev(id)], 'globex')).successes).toEqual([{ id, ...INGEST_CREATED }]);
  });

  it('answers a retried request still in flight duplicate (the identical log message), and once stored from the event store', async () => {
    const ids = [uid(), uid()];
    const batch = [ev(ids[0]), ev(ids[1])];
    const before = await logRows();
    expect((await accept(batch)).successes.map((s) => s.result)).toEqual(['created', 'created']);
    // Not yet stored: the log holds the identical message and says so.
    expect((await accept(batch)).successes.map((s) => s.result)).toEqual(['duplicate', 'duplicate']);
    expect(await logRows()).toBe(before + 1);
    // The consumer appends every delivered copy under the same event ids: stored once.
    await store_('acme', ids);
    await store_('acme', ids);
    expect((await store.readAll(0n, 10_000, ['Test'])).filter((e) => ids.some((id) => e.event_id === deterministicId('acme', 'ingest', id)))).toHaveLength(2);
    expect((await accept(batch)).successes).toEqual(ids.map((id) => ({ id, ...INGEST_DUPLICATE })));
    expect(await logRows()).toBe(before + 1);
  });

  it('parses a whole body sent as text once: 400 when malformed, 422 for the envelope, per-event answers otherwise', async () => {
    const [a, b] = [uid(), uid()];
    await expect(svc.acceptRaw(ctx(), Buffer.from('{"batch": ['))).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^malformed JSON: /) });
    await expect(svc.acceptRaw(ctx(), Buffer.from('{"events": []}'))).rejects.toMatchObject({ status: 422 });
    await expect(svc.acceptRaw(ctx(), Buffer.from('null'))).rejects.toMatchObject({ status: 422 });
    const bad = { id: b, type: 'run.start', timestamp: '2026-01-02T03:04:05Z', body: { run_id: 'r', agent_id: 7, extra: 1 } };
    const nul = { ...ev(uid()), body: { ...ev('x').body, reason: 'bad\u0000' } };
    const r = await svc.acceptRaw(ctx(), Buffer.from(JSON.stringify({ batch: [ev(a), bad, nul, { id: 'c', type: 'no.such', timestamp: 'x', body: {} }] })));
    expect(r.successes).toEqual([{ id: a, ...INGEST_CREATED }]);
    expect(r.errors).toEqual([
      { id: b, status: 422, message: 'batch[1].body.agent_id: Invalid input: expected string, received number; batch[1].body.extra: unknown field' },
      { id: nul.id, status: 422, message: expect.stringMatching(/^batch\[2\]\.body\.reason: NUL/) },
      { id: 'c', status: 422, message: expect.stringMatching(/^batch\[3\]\.type: invalid value; allowed: intervention\.create, /) },
    ]);
  });

  it('answers the second occurrence of an id within a chunk duplicate and publishes it once', async () => {
    const [a, b] = [uid(), uid()];
    const before = await logRows();
    const r = await accept([ev(a), ev(b), ev(a), { id: a, type: 'intervention.create', timestamp: 'nope', body: {} }, ev(a, 'run.start')], 'acme', 10);
    expect(r.successes).toEqual([
      { id: a, ...INGEST_CREATED },
      { id: b, ...INGEST_CREATED },
      { id: a, ...INGEST_DUPLICATE },
      { id: a, ...INGEST_DUPLICATE },
    ]);
    expect(r.errors).toEqual([{ id: a, status: 422, message: expect.stringContaining('batch[13].timestamp') }]);
    expect(await logRows()).toBe(before + 1); // only the interventions message: the run.start repeat is not published
    const { rows } = await sql.query<{ payload: { events: Array<{ id: string }> } }>('SELECT payload FROM agp_ingest_log ORDER BY seq DESC LIMIT 1');
    expect(rows[0].payload.events.map((e) => e.id)).toEqual([a, b]);
  });

  it('answers the empty set before the event store has its table, and every event as new when it cannot be asked', async () => {
    const other = createEventStore(await createPgliteSql());
    expect(await storeIngestedIds(other).stored('acme', ['x', 'y'])).toEqual(new Set());
    await other.close();
    const blind = new IngestService({ log, ingested: storeIngestedIds(other), subjectPrefix: 'test', logger });
    const id = uid();
    await store_('acme', [id]);
    expect((await blind.accept(ctx(), { events: [ev(id)], offset: 0 })).successes).toEqual([{ id, ...INGEST_CREATED }]);
  });
});

/**
 * The answer's duplicates do not depend on JetStream's dedupe window: on a stream whose `duplicate_window` is 200 ms,
 * an event stored long after that window (as a consumer stores it) is still answered `duplicate` — from the event
 * store's ids — and not published again; a message carries the schema version its consumer checks (`Agp-Schema`).
 * Real JetStream and PostgreSQL.
 */
describe.skipIf(skipIntegration())('IngestService on JetStream with a tiny dedupe window', () => {
  it('answers an id stored after the dedupe window duplicate, and publishes it once, with its schema version', async () => {
    const suffix = runSuffix();
    const prefix = `ing${suffix}`;
    const db = await createTestDatabase();
    const sql = createPgSql(db.url);
    const store = createEventStore(sql);
    await store.migrate();
    const log = await JetStreamIngestLog.create({
      servers: infra().natsUrl,
      streamName: `INGEST_WINDOW_${suffix}`,
      subjects: [ingestSubjects(prefix)],
      duplicateWindowMs: 200,
      durables: [{ durable: 'test', subjectFilter: `${prefix}.ingested.*.interventions` }],
      logger: createLogger('ingest-test', 'silent'),
    });
    const delivered: Array<{ schema?: number; ids: string[] }> = [];
    const consumer = await log.consume<{ events: Array<{ id: string }> }>({
      durable: 'test',
      subjectFilter: `${prefix}.ingested.*.interventions`,
      handler: async (batch) => {
        for (const m of batch) delivered.push({ schema: m.schema, ids: m.payload.events.map((e) => e.id) });
        await Promise.all(batch.map((m) => m.ack()));
      },
    });
    try {
      const svc = new IngestService({ log, ingested: storeIngestedIds(store), subjectPrefix: prefix, logger: createLogger('ingest-test', 'silent') });
      const c: RequestContext = { organization_id: 'acme', scope: 'write', key_id: 'k1', correlation_id: 'c1' };
      const id = `ev-${suffix}`;
      const event = { id, type: 'intervention.create', timestamp: '2026-01-02T03:04:05Z', body: { type: 'hard_block', outcome: 'blocked', action_name: 'x', agent_id: 'a1' } };
      expect((await svc.acceptRaw(c, Buffer.from(JSON.stringify({ batch: [event] })))).successes).toEqual([{ id, ...INGEST_CREATED }]);
      await new Promise((r) => setTimeout(r, 600)); // three dedupe windows later
      await store.append([{ stream_id: `test-${id}`, expected_version: 'any', events: [{ event_id: deterministicId('acme', 'ingest', id), type: 'Test', data: {}, metadata: { organization_id: 'acme', actor: 'test', schema_version: 1 } }] }]);
      expect((await svc.acceptRaw(c, Buffer.from(JSON.stringify({ batch: [event, event] })))).successes).toEqual([
        { id, ...INGEST_DUPLICATE },
        { id, ...INGEST_DUPLICATE },
      ]);
      for (let i = 0; i < 50 && delivered.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
      expect(delivered).toEqual([{ schema: INGEST_SCHEMA_VERSION, ids: [id] }]);
    } finally {
      await consumer.stop();
      await log.deleteStream();
      await log.close();
      await store.close();
      await db.drop();
    }
  });
});
