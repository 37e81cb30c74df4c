import { describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, type RequestContext } from '@agp/runtime';
import { checkpointPosition, createEventStore, createPgliteSql, projectionDeadLetterPage, recordRefusedEvents, type SqlExecutor, type StoredEvent } from '@agp/eventstore';
import { ingestSubject, SqlIngestLog, startEventSourcedService, type ServicePart } from '../src/index.js';
import { QuietLogger, sleep } from './ingest-log-contract.js';

const meta = { organization_id: 'acme', actor: 'test', correlation_id: 'c1', schema_version: 1 };

/** A part that records when it starts and stops, in `log`. */
const part = (name: string, log: string[], fail = false): ServicePart => ({
  start: async () => {
    if (fail) throw new Error(`${name} cannot start`);
    log.push(`start ${name}`);
  },
  stop: async () => void log.push(`stop ${name}`),
});

// One start-up for every event-sourced service, on a real (PGlite) event store and SQL ingest log.
describe('startEventSourcedService on PGlite with the SQL ingest log', () => {
  it('migrates, builds its read model from the projection, consumes its ingest subject, and stops once in reverse order', async () => {
    const sql = await createPgliteSql();
    const store = createEventStore(sql);
    const log = await SqlIngestLog.create(sql, { logger: new QuietLogger() });
    const order: string[] = [];
    const ingested: unknown[] = [];
    try {
      const running = await startEventSourcedService<{ n: number }>({
        name: 'demo',
        store,
        db: sql,
        logger: new QuietLogger(),
        migrate: async (s) => void (await s.query('CREATE TABLE IF NOT EXISTS demo_counts (n int)')),
        projections: [{ name: 'demo-read-model', eventTypes: ['Counted'], handler: async (events, tx) => void (await tx.query('INSERT INTO demo_counts SELECT 1 FROM generate_series(1, $1)', [events.length])) }],
        ingest: {
          log,
          prefix: 'agp',
          target: 'demo',
          durable: 'demo-ingest',
          handle: async (batch) => {
            for (const m of batch) {
              ingested.push(m.payload);
              await m.ack();
            }
          },
        },
        parts: [part('sweeper', order), part('worker', order)],
      });
      expect(order).toEqual(['start sweeper', 'start worker']);

      await store.append([{ stream_id: 'demo-1', expected_version: 'no_stream', events: [1, 2, 3].map((i) => ({ event_id: `e${i}`, type: 'Counted', data: { i }, metadata: meta })) }]);
      await log.publish({ subject: ingestSubject('agp', 'acme', 'demo'), msg_id: 'm1', payload: { n: 7 } });
      for (let i = 0; i < 100 && (ingested.length === 0 || running.subscriptions.get('demo-read-model')!.position() < 3n); i++) await sleep(50);
      expect(ingested).toEqual([{ n: 7 }]);
      const { rows } = await sql.query<{ c: string }>('SELECT count(*)::text AS c FROM demo_counts');
      expect(rows[0].c).toBe('3');

      await Promise.all([running.stop(), running.stop()]);
      await running.stop();
      expect(order).toEqual(['start sweeper', 'start worker', 'stop worker', 'stop sweeper']);
    } finally {
      await log.close();
      await sql.close();
    }
  });

  it('stops what had started when a part fails to start, and throws its error', async () => {
    const sql = await createPgliteSql();
    const store = createEventStore(sql);
    const order: string[] = [];
    try {
      await expect(
        startEventSourcedService({ name: 'demo', store, db: sql, logger: new QuietLogger(), migrate: async () => {}, projections: [], parts: [part('sweeper', order), part('worker', order, true)] }),
      ).rejects.toThrow('worker cannot start');
      expect(order).toEqual(['start sweeper', 'stop sweeper']);
    } finally {
      await sql.close();
    }
  });

  it('retries a projection dead letter through its projection: the checkpoint stays, refused again it is kept and counted, applied it is removed', async () => {
    const sql = await createPgliteSql();
    const store = createEventStore(sql);
    const name = 'demo-nums';
    // A data-quality rule that depends on the read model (only allowed numbers are applied), and a data error for a
    // number that is not one (PostgreSQL's 22P02 on the cast): the first can be fixed, the second never.
    const handler = async (events: StoredEvent[], tx: SqlExecutor) => {
      for (const e of events) {
        const { rows } = await tx.query('SELECT 1 FROM demo_allowed WHERE n = $1::integer', [e.data.n]);
        if (rows.length === 0) await recordRefusedEvents(tx, name, [{ event: e, reason: `${String(e.data.n)} is not allowed` }]);
        else await tx.query('INSERT INTO demo_nums (n) VALUES ($1::integer)', [e.data.n]);
      }
    };
    const ctx = (organization_id: string, scope: RequestContext['scope'] = 'admin'): RequestContext => ({ organization_id, scope, key_id: 'k1', correlation_id: 'c1' });
    try {
      const running = await startEventSourcedService({
        name: 'demo',
        store,
        db: sql,
        logger: new QuietLogger(),
        migrate: async (s) => s.exec('CREATE TABLE IF NOT EXISTS demo_nums (n integer NOT NULL); CREATE TABLE IF NOT EXISTS demo_allowed (n integer PRIMARY KEY); INSERT INTO demo_allowed VALUES (1), (3)'),
        projections: [{ name, eventTypes: ['Num'], handler }],
      });
      const [r] = await store.append([{ stream_id: 'nums-1', expected_version: 'no_stream', events: [1, 5, 'two', 3].map((n, i) => ({ event_id: `n${i}`, type: 'Num', data: { n }, metadata: meta })) }]);
      const [, five, two, last] = r.appended;
      await running.subscriptions.get(name)!.waitFor(last.global_position, 10_000);
      const checkpoint = await checkpointPosition(sql, name);
      expect(checkpoint).toBe(last.global_position);
      const letters = async () => (await projectionDeadLetterPage(sql, 'acme', { skip: 0, limit: 10, subscription: name })).rows.map((d) => ({ event_id: d.event_id, attempts: d.attempts, error: d.error }));
      expect(await letters()).toEqual(expect.arrayContaining([
        { event_id: 'n1', attempts: 1, error: 'refused: 5 is not allowed' },
        { event_id: 'n2', attempts: 1, error: expect.stringMatching(/integer/) },
      ]));
      const retry = (org: string, e: StoredEvent, projection = name) => running.retryProjectionDeadLetter(ctx(org), { projection, global_position: String(e.global_position) });

      // Still not allowed: refused again, 422 with the reason, the letter kept and counted, nothing applied.
      const refused = await retry('acme', five).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).errors).toEqual([{ path: 'event', message: 'refused: 5 is not allowed' }]);
      // Never a number: the data error rolls the attempt back, the letter is kept with the error and counted.
      const failed = await retry('acme', two).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(ValidationError);
      expect((failed as ValidationError).message).toMatch(/attempt 2\b.*integer/);
      expect(await letters()).toEqual(expect.arrayContaining([
        { event_id: 'n1', attempts: 2, error: 'refused: 5 is not allowed' },
        { event_id: 'n2', attempts: 2, error: expect.stringMatching(/integer/) },
      ]));

      // A write key may not; another organisation has no such letter; this service runs no such projection.
      await expect(running.retryProjectionDeadLetter(ctx('acme', 'write'), { projection: name, global_position: String(five.global_position) })).rejects.toBeInstanceOf(ForbiddenError);
      await expect(retry('other-org', five)).rejects.toBeInstanceOf(NotFoundError);
      await expect(retry('acme', five, 'other-read-model')).rejects.toBeInstanceOf(NotFoundError);

      // The cause fixed: the one event is applied, the letter removed, the checkpoint where it was.
      await sql.query('INSERT INTO demo_allowed VALUES (5)');
      expect(await retry('acme', five)).toEqual({ name, event_id: 'n1', global_position: String(five.global_position) });
      expect((await sql.query<{ n: number }>('SELECT n FROM demo_nums ORDER BY n')).rows.map((x) => x.n)).toEqual([1, 3, 5]);
      expect((await letters()).map((d) => d.event_id)).toEqual(['n2']);
      expect(await checkpointPosition(sql, name)).toBe(checkpoint);
      await expect(retry('acme', five)).rejects.toBeInstanceOf(NotFoundError);

      // A checkpoint before the event (a replay under way): the subscription applies it itself, so the retry does not.
      await running.stop();
      await store.resetCheckpoint(name, two.global_position - 1n);
      await expect(retry('acme', two)).rejects.toBeInstanceOf(ConflictError);
      expect(await checkpointPosition(sql, name)).toBe(two.global_position - 1n);
      expect(await letters()).toEqual([{ event_id: 'n2', attempts: 2, error: expect.stringMatching(/integer/) }]);
    } finally {
      await sql.close();
    }
  });
});
