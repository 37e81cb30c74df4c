/**
 * `@agp/bus`: request/reply between services (NATS with a subject prefix, or in-process when embedded)
 * and the durable ingest log (JetStream, or a SQL table when embedded). Source: architecture §1, §2, §4.
 */
export * from './types.js';
export * from './subjects.js';
export * from './nats-transport.js';
export * from './nats-connection.js';
export * from './in-process.js';
export * from './rpc.js';
export * from './factory.js';
export * from './jetstream-log.js';
export * from './sql-log.js';
export * from './service-process.js';
export * from './ingest-consumer.js';
export * from './ingest-dead-letters.js';
export * from './wire.js';
export * from './event-sourced.js';
export * from './service-deps.js';
export * from './tracing.js';
