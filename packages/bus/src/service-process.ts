import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { closeEventStoreAndDb, createPgSql, eventStoreReadiness, openEventStore, type EventStore, type Sql } from '@agp/eventstore';
import { baseEnvSchema, createLogger, exitOnFatal, exitOnSignals, loadEnv, orderedShutdown, readinessOf, startOpsServer, type Logger } from '@agp/runtime';
import { JetStreamIngestLog } from './jetstream-log.js';
import { PrefixedNatsClient, PrefixedNatsServer } from './nats-transport.js';
import { ingestSubjects } from './subjects.js';

/** The environment of a service process: the base settings plus NATS_URL and DATABASE_URL (required) and OPS_PORT. */
export type ServiceProcessEnv = z.infer<typeof baseEnvSchema> & { NATS_URL: string; DATABASE_URL: string; OPS_PORT: number };

/** What a service process is built from: its settings, logger, event store, read-model database, ingest log and a bus client. */
export interface ServiceProcessParts {
  env: ServiceProcessEnv;
  logger: Logger;
  /** The event store AGP_EVENT_STORE selects (PostgreSQL: the same database as `db`; or KurrentDB). */
  store: EventStore;
  /** The read-model PostgreSQL (DATABASE_URL). */
  db: Sql;
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
 * listed), connects PostgreSQL (read models; the event store unless AGP_EVENT_STORE=kurrentdb), the event store, JetStream (ingest log) and a NATS client, builds and starts the service,
 * serves its patterns on NATS in its queue group, exposes `/healthz`, `/readyz` (503 naming the dependency while
 * PostgreSQL, or KurrentDB when it holds the events, does not answer or a NATS connection is down) and `/metrics` on
 * OPS_PORT, and on SIGTERM / SIGINT stops
 * everything in reverse order and exits 0. The NATS connections reconnect for ever (NATS_RECONNECT_OPTIONS); one
 * that closes for good anyway exits the process with code 1 (exitOnFatal), so an orchestrator restarts it.
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
  // Steps are filled in as the parts start; a fatal close before that stops what exists.
  const steps: Array<{ name: string; run: () => unknown }> = [];
  const shutdown = orderedShutdown(steps, logger);
  const fatal = exitOnFatal(shutdown, logger);
  const onClosed = (role: string) => (err: Error | undefined) => fatal(`NATS ${role} connection closed for good`, err);
  const sql = createPgSql(env.DATABASE_URL, { applicationName: `agp-${opts.name}`, logger });
  const store = await openEventStore(sql, env);
  const ingestLog = await JetStreamIngestLog.create({ servers: env.NATS_URL, streamName: env.AGP_INGEST_STREAM, subjects: [ingestSubjects(env.AGP_SUBJECT_PREFIX)], logger, onClosed: onClosed('ingest log') });
  const bus = new PrefixedNatsClient({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, name: `agp-${opts.name}`, logger, onClosed: onClosed('bus client') });
  await bus.connect();
  const { service, module } = opts.build({ env, logger, store, db: sql, ingestLog, bus });
  await service.start();
  const server = new PrefixedNatsServer({ servers: env.NATS_URL, prefix: env.AGP_SUBJECT_PREFIX, queue: opts.queue, name: `agp-${opts.name}-rpc`, logger, onClosed: onClosed('rpc server') });
  const app = await NestFactory.createMicroservice(module, { strategy: server, logger: false });
  await app.listen();
  // Not ready while PostgreSQL (or KurrentDB, when it holds the events) does not answer or either NATS connection is
  // down; ready again when they are back.
  const readiness = readinessOf([
    { name: 'postgres', check: async () => void (await sql.query('SELECT 1')) },
    ...eventStoreReadiness(store),
    { name: 'nats', check: () => (server.health.check(), bus.health.check(), ingestLog.health?.check()) },
  ]);
  const ops = await startOpsServer({ port: env.OPS_PORT, host: env.OPS_HOST, service: opts.name, readiness });
  logger.info({ ops_port: ops.port }, `${opts.name} service ready`);

  steps.push(
    { name: 'rpc server', run: () => app.close() },
    { name: opts.name, run: () => service.stop() },
    { name: 'nats client', run: () => bus.close() },
    { name: 'ingest log', run: () => ingestLog.close() },
    { name: 'event store', run: () => closeEventStoreAndDb(store, sql) },
    { name: 'ops server', run: () => ops.close() },
  );
  exitOnSignals(shutdown, logger);
}
