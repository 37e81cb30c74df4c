import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { closeEventStoreAndDb, createPgSql, eventStoreReadiness, openEventStore, type EventStore, type Sql } from '@agp/eventstore';
import { createLogger, databaseEnv, eventStoreEnv, exitOnFatal, exitOnSignals, ingestStreamEnv, loadEnv, logEnv, natsEnv, opsEnv, orderedShutdown, readinessOf, startOpsServer, type EnvOf, type Logger } from '@agp/runtime';
import { JetStreamIngestLog } from './jetstream-log.js';
import { PrefixedNatsClient, PrefixedNatsServer } from './nats-transport.js';
import { ingestSubjects } from './subjects.js';

/**
 * The settings every service process of distributed mode reads ({@link runServiceProcess}): LOG_LEVEL, NATS_URL and
 * AGP_SUBJECT_PREFIX, AGP_INGEST_STREAM, DATABASE_URL, the event store's, and OPS_HOST / OPS_PORT. A service's
 * `src/env.ts` spreads this beside its own settings.
 * @param defaultOpsPort the service's OPS_PORT when unset (9461 interventions, 9462 ingest, 9463 policies, …)
 */
export function serviceProcessEnv(defaultOpsPort: number) {
  return { ...logEnv, ...natsEnv, ...ingestStreamEnv, ...databaseEnv, ...eventStoreEnv, ...opsEnv(defaultOpsPort) };
}

/** The parsed settings of {@link serviceProcessEnv}. */
export type ServiceProcessEnv = EnvOf<ReturnType<typeof serviceProcessEnv>>;

/** What a service process is built from: its settings, logger, event store, read-model database, ingest log and a bus client. */
export interface ServiceProcessParts<E extends ServiceProcessEnv = ServiceProcessEnv> {
  /** The process's settings, parsed by its own schema. */
  env: E;
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
export interface ServiceProcessOptions<S extends { start(): Promise<void>; stop(): Promise<void> }, E extends ServiceProcessEnv> {
  /** Service name: the logger's name, `application_name` in PostgreSQL, the ops server's service label. */
  name: string;
  /** NATS queue group, so replicas share the service's requests (`QueueGroups.<service>`). */
  queue: string;
  /** The process's settings schema (the service's `src/env.ts`: {@link serviceProcessEnv} and its own settings). */
  env: z.ZodType<E>;
  /** Build the service and its Nest module from the shared parts. */
  build(parts: ServiceProcessParts<E>): { service: S; module: DynamicModule };
}

/**
 * Distributed mode: run one service as its own process. Parses the environment with the service's own schema (exits with
 * every bad variable listed), connects PostgreSQL (read models; the event store unless AGP_EVENT_STORE=kurrentdb), the event store, JetStream (ingest log) and a NATS client, builds and starts the service,
 * serves its patterns on NATS in its queue group, exposes `/healthz`, `/readyz` (503 naming the dependency while
 * PostgreSQL, or KurrentDB when it holds the events, does not answer or a NATS connection is down) and `/metrics` on
 * OPS_PORT, and on SIGTERM / SIGINT stops
 * everything in reverse order and exits 0. The NATS connections reconnect for ever (NATS_RECONNECT_OPTIONS); one
 * that closes for good anyway exits the process with code 1 (exitOnFatal), so an orchestrator restarts it.
 * Source: architecture §1 (Framework), §2 (Distributed), §5 (operations).
 * @throws Error when the environment is invalid or a dependency cannot be reached at start (the process exits).
 */
export async function runServiceProcess<S extends { start(): Promise<void>; stop(): Promise<void> }, E extends ServiceProcessEnv>(opts: ServiceProcessOptions<S, E>): Promise<void> {
  const env = loadEnv(opts.env);
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
