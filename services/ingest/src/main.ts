import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { QueueGroups } from '@agp/contracts';
import { JetStreamIngestLog, PrefixedNatsServer, ingestSubjects } from '@agp/bus';
import { closeEventStoreAndDb, createPgSql, openEventStore } from '@agp/eventstore';
import { createLogger, exitOnFatal, exitOnSignals, loadEnv, orderedShutdown, readinessOf, startOpsServer } from '@agp/runtime';
import { ingestEnvSchema } from './env.js';
import { storeIngestedIds } from './ingested-ids.js';
import { IngestModule } from './module.js';
import { IngestService } from './service.js';

/**
 * Distributed mode: the ingest service as its own process (NATS request/reply in, JetStream out). It asks the event
 * store (AGP_EVENT_STORE: PostgreSQL at DATABASE_URL, or KurrentDB with its id table in that PostgreSQL) only to tell
 * already-stored events from new ones; readiness does not depend on it, since ingest answers every event as new when
 * the store cannot be asked.
 */
const env = loadEnv(ingestEnvSchema);
const logger = createLogger('ingest', env.LOG_LEVEL);
const steps: Array<{ name: string; run: () => unknown }> = [];
const shutdown = orderedShutdown(steps, logger);
const fatal = exitOnFatal(shutdown, logger);
const log = await JetStreamIngestLog.create({ servers: env.NATS_URL, streamName: env.AGP_INGEST_STREAM, subjects: [ingestSubjects(env.AGP_SUBJECT_PREFIX)], logger, onClosed: (err) => fatal('NATS ingest log connection closed for good', err) });
// A small pool: one indexed read per chunk.
const sql = createPgSql(env.DATABASE_URL, { applicationName: 'agp-ingest', max: 4, logger });
const store = await openEventStore(sql, env);
const service = new IngestService({ log, ingested: storeIngestedIds(store), subjectPrefix: env.AGP_SUBJECT_PREFIX, logger });
const server = new PrefixedNatsServer({
  servers: env.NATS_URL,
  prefix: env.AGP_SUBJECT_PREFIX,
  queue: QueueGroups.ingest,
  name: 'agp-ingest-rpc',
  logger,
  onClosed: (err) => fatal('NATS rpc server connection closed for good', err),
});
const app = await NestFactory.createMicroservice(IngestModule.register(service, logger), { strategy: server, logger: false });
await app.listen();
// Ready while its NATS connections (request/reply and the ingest log) are up; PostgreSQL is not needed to accept events.
const ops = await startOpsServer({
  port: env.OPS_PORT,
  host: env.OPS_HOST,
  service: 'ingest',
  readiness: readinessOf([{ name: 'nats', check: () => (server.health.check(), log.health?.check()) }]),
});
logger.info({ ops_port: ops.port }, 'ingest service ready');

steps.push(
  { name: 'rpc server', run: () => app.close() },
  { name: 'ingest log', run: () => log.close() },
  { name: 'event store', run: () => closeEventStoreAndDb(store, sql) },
  { name: 'ops server', run: () => ops.close() },
);
exitOnSignals(shutdown, logger);
