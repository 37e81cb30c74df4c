import { describe, expect, it } from 'vitest';
import { INGEST_SCHEMA_VERSION } from '@agp/contracts';
import { createPgliteSql } from '@agp/eventstore';
import { NEWER_SCHEMA_RETRY_MS, SqlIngestLog, admitBySchema, type IngestDelivery } from '../src/index.js';
import { sleep, until } from './ingest-log-contract.js';

/** A logger that keeps what it was told (the messages a consumer logs are part of the contract here). */
class KeptLogger {
  readonly lines: Array<{ obj: object; msg?: string }> = [];
  error(obj: object, msg?: string) {
    this.lines.push({ obj, msg });
  }
  warn(obj: object, msg?: string) {
    this.lines.push({ obj, msg });
  }
}

type Env = { organization_id: string; events: Array<{ id: string; type: string; body: Record<string, unknown> }> };

/**
 * Consumers trust what the log carries by its schema version (docs/decisions.md, Consumers trust what the log
 * carries): the current version as it is, an unversioned message validated in full (bad events left out, logged), a
 * newer version nak'd for an upgraded consumer, with a clear log line. Through the real SQL ingest log on PGlite.
 */
describe('admitBySchema', () => {
  it('admits the current version as it is, validates an unversioned message, and naks a newer version with a clear log', async () => {
    const sql = await createPgliteSql();
    const log = await SqlIngestLog.create(sql);
    const logger = new KeptLogger();
    const action = (id: string, body: Record<string, unknown>) => ({ id, type: 'action.record', body });
    const good = { run_id: 'r1', agent_id: 'a1', action_name: 'x', status: 'success' };
    await log.publish<Env>({ subject: 'agp.ingested.o.stats', msg_id: 'current', schema: INGEST_SCHEMA_VERSION, payload: { organization_id: 'o', events: [action('e1', good)] } });
    await log.publish<Env>({ subject: 'agp.ingested.o.stats', msg_id: 'legacy', payload: { organization_id: 'o', events: [action('e2', good), action('e3', { ...good, status: 'exploded' })] } });
    await log.publish<Env>({ subject: 'agp.ingested.o.stats', msg_id: 'newer', schema: INGEST_SCHEMA_VERSION + 1, payload: { organization_id: 'o', events: [action('e4', { shape: 'unknown to this consumer' })] } });
    const admitted: IngestDelivery<Env>[] = [];
    let seen = 0;
    const consumer = await log.consume<Env>({
      durable: 'stats-ingest',
      subjectFilter: 'agp.ingested.*.stats',
      batchSize: 10,
      handler: async (batch) => {
        seen += batch.length;
        const ok = await admitBySchema(batch, { consumer: 'stats-ingest', logger });
        admitted.push(...ok);
        await Promise.all(ok.map((m) => m.ack()));
      },
    });
    try {
      await until(() => seen >= 3, 10_000, 'three deliveries');
      await sleep(300);
      expect(admitted.map((m) => [m.msg_id, m.schema, m.payload.events.map((e) => e.id)])).toEqual([
        ['current', INGEST_SCHEMA_VERSION, ['e1']],
        ['legacy', undefined, ['e2']],
      ]);
      expect(logger.lines.map((l) => l.msg)).toEqual([
        'dropping invalid ingested event',
        `ingest message of schema version ${INGEST_SCHEMA_VERSION + 1} is not one this consumer understands (${INGEST_SCHEMA_VERSION}); left for an upgraded consumer, offered again in ${NEWER_SCHEMA_RETRY_MS / 1000} s`,
      ]);
      expect(logger.lines[0].obj).toMatchObject({ event_id: 'e3', type: 'action.record' });
      // The newer message stays in the log, not acked, offered again later.
      const { rows } = await sql.query<{ msg_id: string; acked: boolean; later: boolean }>(
        "SELECT msg_id, acked_at IS NOT NULL AS acked, (acked_at IS NULL AND visible_at > now() + interval '10 seconds') AS later FROM agp_ingest_log ORDER BY seq",
      );
      expect(rows).toEqual([
        { msg_id: 'current', acked: true, later: false },
        { msg_id: 'legacy', acked: true, later: false },
        { msg_id: 'newer', acked: false, later: true },
      ]);
    } finally {
      await consumer.stop();
      await log.close();
      await sql.close();
    }
  });
});
