import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { QueueGroups } from '@agp/contracts';
import { JetStreamIngestLog, PrefixedNatsClient, PrefixedNatsServer, ingestSubjects } from '@agp/bus';
import { createEventStore, createPgSql } from '@agp/eventstore';
import { baseEnvSchema, createLogger, loadEnv, startOpsServer } from '@agp/runtime';
import { StatsModule } from './module.js';
import { StatsService } from './service.js';

/** Distributed mode: the stats service as its own process (NATS + PostgreSQL). */
const env = loadEnv(
  baseEnvSchema.extend({
    NATS_URL: z.string().min(1),
    DATABASE_URL: z.string().min(1),
    /** Port of this process's /healthz, /readyz and /metrics. @default 9464 */
    OPS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  }),
);
const logger = createLogger('stats', env.LOG_LEVEL);
const sql = createPgSql(env.DATABASE_URL, { applicationName: 'agp-stats' });
const store = createEventStore(sql);
const ingestLog = await JetStreamIngestLog.create({ servers: env.NATS_URL, streamName: env.AGP_INGEST_STREAM, subjects: [ingestSubjects(env.AGP_SUBJECT_PREFIX)], logger });
const bus = new PrefixedNatsClient({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, name: 'agp-stats' });
await bus.connect();
const service = new StatsService({ store, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus, logger, env });
await service.start();
const app = await NestFactory.createMicroservice(StatsModule.register(service, logger), {
  strategy: new PrefixedNatsServer({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, queue: QueueGroups.stats }),
  logger: false,
});
await app.listen();
const ops = await startOpsServer({ port: env.OPS_PORT, service: 'stats', readiness: async () => void (await sql.query('SELECT 1')) });
logger.info({ ops_port: ops.port }, 'stats service ready');

const shutdown = async () => {
  logger.info('stopping');
  await app.close();
  await service.stop();
  await bus.close();
  await ingestLog.close();
  await store.close();
  await ops.close();
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
