/**
 * What a service is built with, in parts its `*Deps` interface composes: every service has a logger and a clock; an
 * event-sourced one its event store and read-model database; one that consumes ingested events its ingest log; one that
 * asks other services a bus client. The process (distributed `main.ts`, or the embedded platform) supplies them.
 * Source: architecture §1 (Framework), §3 (Event store).
 */
import type { EventStore, Sql } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';
import type { IngestLogConsumer } from './types.js';
import type { Sender } from './wire.js';

/** What every service is built with. */
export interface ServiceDeps {
  logger: Logger;
  /** Clock; injectable for tests. @default the system clock */
  now?: () => Date;
}

/** What an event-sourced service is built with besides {@link ServiceDeps}. */
export interface EventSourcedDeps extends ServiceDeps {
  /** The event store (no SQL in it). */
  store: EventStore;
  /** This service's read-model database: its own tables, and the projections' checkpoints (architecture §3). */
  db: Sql;
  /** How long a synchronous write waits for the service's read model to catch up, in ms. @default 3000 */
  readYourWritesMs?: number;
}

/** What a service that consumes ingested events is built with. */
export interface IngestConsumerDeps {
  /** Where accepted ingest batches come from (JetStream, or the embedded SQL log). */
  ingestLog: IngestLogConsumer;
  /** Subject prefix (AGP_SUBJECT_PREFIX), for the ingest consumer's filter. */
  subjectPrefix: string;
  /** Most events appended per transaction by the ingest consumer. @default the service's own */
  ingestAppendChunk?: number;
}

/** What a service that asks other services is built with. */
export interface BusCallerDeps {
  /** Bus client (NATS, or in-process when embedded). */
  bus: Sender;
}
