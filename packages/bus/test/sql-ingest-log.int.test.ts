import { createPgliteSql, createPgSql } from '@agp/eventstore';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { SqlIngestLog } from '../src/index.js';
import { ingestLogContract, QuietLogger, sleep } from './ingest-log-contract.js';

describe('SqlIngestLog on PGlite (in memory)', () => {
  ingestLogContract(async () => {
    const sql = await createPgliteSql();
    const log = await SqlIngestLog.create(sql, { logger: new QuietLogger() });
    return { log, prefix: 'agp', cleanup: () => sql.close() };
  });

  it('forgets an acked msg_id once the dedupe window has passed', async () => {
    const sql = await createPgliteSql();
    try {
      const log = await SqlIngestLog.create(sql, { dedupeWindowMs: 200, logger: new QuietLogger() });
      const msg = { subject: 'agp.ingested.acme.interventions', msg_id: 'once', payload: { n: 1 } };
      await log.publish(msg);
      const got: number[] = [];
      const c = await log.consume<{ n: number }>({
        durable: 'test',
        subjectFilter: 'agp.ingested.*.interventions',
        handler: async (batch) => {
          for (const m of batch) got.push(m.payload.n);
          await Promise.all(batch.map((m) => m.ack()));
        },
      });
      while (got.length < 1) await sleep(20);
      await c.stop();
      await expect(log.publish(msg)).resolves.toEqual({ duplicate: true });
      await sleep(300);
      await log.purgeAcked();
      await expect(log.publish(msg)).resolves.toEqual({ duplicate: false });
      await log.close();
    } finally {
      await sql.close();
    }
  });

  it('redelivers a message whose consumer never settled it once the ack wait has passed', async () => {
    const sql = await createPgliteSql();
    try {
      const log = await SqlIngestLog.create(sql, { ackWaitMs: 300, logger: new QuietLogger() });
      await log.publish({ subject: 'agp.ingested.acme.interventions', msg_id: 'lost', payload: { n: 1 } });
      const attempts: number[] = [];
      const c = await log.consume({
        durable: 'test',
        subjectFilter: 'agp.ingested.>',
        handler: async (batch) => {
          for (const m of batch) {
            attempts.push(m.attempt);
            if (m.attempt > 1) await m.ack(); // the first delivery is "lost": neither acked nor nak-ed
          }
        },
      });
      while (attempts.length < 2) await sleep(20);
      await c.stop();
      expect(attempts).toEqual([1, 2]);
      await log.close();
    } finally {
      await sql.close();
    }
  });
});

describe.skipIf(skipIntegration('postgres'))('SqlIngestLog on PostgreSQL', () => {
  ingestLogContract(async () => {
    const db = await createTestDatabase('agp_bus');
    const sql = createPgSql(db.url);
    const log = await SqlIngestLog.create(sql, { logger: new QuietLogger() });
    return {
      log,
      prefix: 'agp',
      cleanup: async () => {
        await sql.close();
        await db.drop();
      },
    };
  });
});
