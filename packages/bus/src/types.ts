/**
 * The durable ingest log port: where the ingest service puts accepted batches and where consumers pull
 * them from. JetStream in distributed mode; a PostgreSQL/PGlite table in embedded mode.
 * Source: architecture §1, §4 (Ingest).
 */

/** One message on the ingest log. */
export interface IngestLogMessage<T = unknown> {
  /** Subject, e.g. `agp.ingest.acme.intervention`. */
  subject: string;
  /**
   * Message id (JetStream `Nats-Msg-Id`; the SQL log's unique `msg_id`): publishing the same id twice within the
   * log's window stores it once and reports the second as a duplicate. The ingest service derives it from the
   * organisation, the target and the event ids, so a retried request is the identical message.
   */
  msg_id: string;
  /**
   * Version of what `payload` carries (`INGEST_SCHEMA_VERSION` in @agp/contracts): the JetStream header `Agp-Schema`,
   * the SQL log's `schema` column. Absent on a message published before versions existed.
   */
  schema?: number;
  payload: T;
}

/** Publisher side. */
export interface IngestLogPublisher {
  /**
   * Publish and resolve once the log has durably stored the message (JetStream ack / committed row).
   * @returns whether it was a duplicate of an earlier msg_id.
   * @throws ServiceUnavailableError when the log is unreachable or times out.
   */
  publish<T>(message: IngestLogMessage<T>): Promise<{ duplicate: boolean }>;
}

/** A delivered message; call ack() after it is fully processed, nak() to have it redelivered. */
export interface IngestDelivery<T = unknown> extends IngestLogMessage<T> {
  /** Delivery attempt, from 1. */
  attempt: number;
  ack(): Promise<void>;
  nak(delayMs?: number): Promise<void>;
}

/** Consumer side: durable, at-least-once, pulls in batches. */
export interface IngestLogConsumer {
  /**
   * Consume with a durable consumer `durable` (e.g. `interventions-ingest`) filtered by `subjectFilter`
   * (NATS wildcard syntax). `handler` gets up to `batchSize` messages at a time. Several processes with
   * the same durable name share the work.
   */
  consume<T>(options: {
    durable: string;
    subjectFilter: string;
    batchSize?: number;
    handler: (batch: IngestDelivery<T>[]) => Promise<void>;
  }): Promise<{ stop(): Promise<void> }>;
}

export interface IngestLog extends IngestLogPublisher, IngestLogConsumer {
  close(): Promise<void>;
}

/** The part of a (pino) logger the ingest log adapters use. */
export interface IngestLogLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}
