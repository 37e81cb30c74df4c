import { describe, expect, it } from 'vitest';
import { createEventStore, createPgliteSql } from '@agp/eventstore';
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
        startEventSourcedService({ name: 'demo', store, logger: new QuietLogger(), migrate: async () => {}, projections: [], parts: [part('sweeper', order), part('worker', order, true)] }),
      ).rejects.toThrow('worker cannot start');
      expect(order).toEqual(['start sweeper', 'stop sweeper']);
    } finally {
      await sql.close();
    }
  });
});
