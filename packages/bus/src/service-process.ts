import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { createEventStore, createPgSql, type EventStore } from '@agp/eventstore';
import { baseEnvSchema, createLogger, exitOnSignals, loadEnv, orderedShutdown, startOpsServer, type Logger } from '@agp/runtime';
import { JetStreamIngestLog } from './jetstream-log.js';
import { PrefixedNatsClient, PrefixedNatsServer } from './nats-transport.js';
import { ingestSubjects } from './subjects.js';

/** The environment of a service process: the base settings plus NATS_URL and DATABASE_URL (required) and OPS_PORT. */
export type ServiceProcessEnv = z.infer<typeof baseEnvSchema> & { NATS_URL: string; DATABASE_URL: string; OPS_PORT: number };

/** What a service process is built from: its settings, logger, event store, ingest log and a bus client. */
export interface ServiceProcessParts {
  env: ServiceProcessEnv;
  logger: Logger;
  store: EventStore;
  ingestLog: JetStreamIngestLog;
  /** A NATS client for requests to other services (connected before `build`). */
  bus: PrefixedNatsClient;
}

/** Options of {@link runServiceProcess}. */
export interface ServiceProcessOptions<S extends { start(): Promise<void>; stop(): Promise<void> }> {
  /** Service name: the logger's name, `application_name` in PostgreSQL, the ops server's service label. */
  name: string;
  /** NATS queue group, so replicas share the service's requests (`QueueGroups.<service>`). */
  queue: string;
  /** OPS_PORT when the environment does not set one (9461 interventions, 9463 policies, 9464 stats). */
  defaultOpsPort: number;
  /** Build the service and its Nest module from the shared parts. */
  build(parts: ServiceProcessParts): { service: S; module: DynamicModule };
}

/**
 * Distributed mode: run one service as its own process. Parses the environment (exits with every bad variable
 * listed), connects PostgreSQL (event store), JetStream (ingest log) and a NATS client, builds and starts the service,
 * serves its patterns on NATS in its queue group, exposes `/healthz`, `/readyz` (PostgreSQL answers) and `/metrics`
 * on OPS_PORT, and on SIGTERM / SIGINT stops everything in reverse order and exits 0.
 * Source: architecture §1 (Framework), §2 (Distributed), §5 (operations).
 * @throws Error when the environment is invalid or a dependency cannot be reached at start (the process exits).
 */
export async function runServiceProcess<S extends { start(): Promise<void>; stop(): Promise<void> }>(opts: ServiceProcessOptions<S>): Promise<void> {
  const env = loadEnv(
    baseEnvSchema.extend({
      NATS_URL: z.string().min(1),
      DATABASE_URL: z.string().min(1),
      /** Port of this process's /healthz, /readyz and /metrics. */
      OPS_PORT: z.coerce.number().int().min(0).max(65535).default(opts.defaultOpsPort),
    }),
  );
  const logger = createLogger(opts.name, env.LOG_LEVEL);
  const sql = createPgSql(env.DATABASE_URL, { applicationName: `agp-${opts.name}` });
  const store = createEventStore(sql);
  const ingestLog = await JetStreamIngestLog.create({ servers: env.NATS_URL, streamName: env.AGP_INGEST_STREAM, subjects: [ingestSubjects(env.AGP_SUBJECT_PREFIX)], logger });
  const bus = new PrefixedNatsClient({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, name: `agp-${opts.name}` });
  await bus.connect();
  const { service, module } = opts.build({ env, logger, store, ingestLog, bus });
  await service.start();
  const app = await NestFactory.createMicroservice(module, {
    strategy: new PrefixedNatsServer({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, queue: opts.queue }),
    logger: false,
  });
  await app.listen();
  const ops = await startOpsServer({ port: env.OPS_PORT, host: env.OPS_HOST, service: opts.name, readiness: async () => void (await sql.query('SELECT 1')) });
  logger.info({ ops_port: ops.port }, `${opts.name} service ready`);

  exitOnSignals(
    orderedShutdown(
      [
        { name: 'rpc server', run: () => app.close() },
        { name: opts.name, run: () => service.stop() },
        { name: 'nats client', run: () => bus.close() },
        { name: 'ingest log', run: () => ingestLog.close() },
        { name: 'event store', run: () => store.close() },
        { name: 'ops server', run: () => ops.close() },
      ],
      logger,
    ),
    logger,
  );
}
