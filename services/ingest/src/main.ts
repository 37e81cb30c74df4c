import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { QueueGroups } from '@agp/contracts';
import { JetStreamIngestLog, PrefixedNatsServer, ingestSubjects } from '@agp/bus';
import { baseEnvSchema, createLogger, loadEnv, startOpsServer } from '@agp/runtime';
import { IngestModule } from './module.js';
import { IngestService } from './service.js';

/** Distributed mode: the ingest service as its own process (NATS request/reply in, JetStream out). */
const env = loadEnv(
  baseEnvSchema.extend({
    NATS_URL: z.string().min(1),
    /** Port of this process's /healthz, /readyz and /metrics. @default 9462 */
    OPS_PORT: z.coerce.number().int().min(0).max(65535).default(9462),
  }),
);
const logger = createLogger('ingest', env.LOG_LEVEL);
const log = await JetStreamIngestLog.create({ servers: env.NATS_URL, streamName: env.AGP_INGEST_STREAM, subjects: [ingestSubjects(env.AGP_SUBJECT_PREFIX)], logger });
const service = new IngestService({ log, subjectPrefix: env.AGP_SUBJECT_PREFIX, logger });
const app = await NestFactory.createMicroservice(IngestModule.register(service, logger), {
  strategy: new PrefixedNatsServer({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, queue: QueueGroups.ingest }),
  logger: false,
});
await app.listen();
const ops = await startOpsServer({ port: env.OPS_PORT, service: 'ingest', readiness: async () => {} });
logger.info({ ops_port: ops.port }, 'ingest service ready');

const shutdown = async () => {
  logger.info('stopping');
  await app.close();
  await log.close();
  await ops.close();
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
