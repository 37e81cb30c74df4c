/**
 * The ingest log on JetStream (distributed mode): a file-backed stream with dedupe by `Nats-Msg-Id`,
 * and durable pull consumers that hand batches to a handler. Source: architecture §1, §4 (Ingest),
 * §6 (JetStream figures).
 */
import { createLogger, PayloadTooLargeError, ServiceUnavailableError } from '@agp/runtime';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import type { IngestDelivery, IngestLog, IngestLogMessage } from './types.js';

/** The part of a (pino) logger the ingest log adapters use. */
export interface IngestLogLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Options of {@link JetStreamIngestLog.create}. */
export interface JetStreamIngestLogOptions {
  /** NATS server URL(s), `NATS_URL`. Ignored when `connection` is given. */
  servers?: string | string[];
  /** An existing connection to use instead of opening one; it is left open by `close()`. */
  connection?: NatsConnection;
  /** Stream name, `AGP_INGEST_STREAM` (e.g. `INGEST`). */
  streamName: string;
  /** Subjects the stream captures, e.g. `['agp.ingest.>']` (see `ingestSubjects(prefix)`). */
  subjects: string[];
  /** Stream size limit in bytes; the oldest messages are discarded beyond it. @default 1 GiB */
  maxBytes?: number;
  /** Age limit of stored messages, in ms. @default 7 days */
  maxAgeMs?: number;
  /** Window in which a repeated `msg_id` is a duplicate, in ms. @default 120000 (2 min) */
  duplicateWindowMs?: number;
  /** How long `publish` waits for the stream's ack, in ms. @default 5000 */
  publishTimeoutMs?: number;
  /** How long a delivered message may stay unacknowledged before redelivery, in ms. @default 30000 */
  ackWaitMs?: number;
  /** Max unacknowledged messages per durable consumer, over all its processes. @default 10000 */
  maxAckPending?: number;
  /** Where handler failures and consumer notifications are logged. @default createLogger('bus') */
  logger?: IngestLogLogger;
}

/** A consumer loop's state. */
interface RunningConsumer {
  stop(): Promise<void>;
}

const GiB = 1024 * 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
const encoder = new TextEncoder();

/** Map a NATS/JetStream failure to the 503 the port promises, keeping the cause. */
function unavailable(what: string, err: unknown): ServiceUnavailableError {
  if (err instanceof ServiceUnavailableError) return err;
  const why = err instanceof Error ? err.message : String(err);
  return new ServiceUnavailableError(`ingest log: ${what} failed: ${why}`, { cause: err });
}

/**
 * `IngestLog` on JetStream. Create with {@link JetStreamIngestLog.create}; `publish` may be called
 * concurrently from many requests (each waits for its own PubAck; there is no client-side limit).
 */
export class JetStreamIngestLog implements IngestLog {
  private readonly consumers = new Set<RunningConsumer>();
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly ownsConnection: boolean,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    /** The stream's name. */
    readonly streamName: string,
    private readonly opts: Required<Pick<JetStreamIngestLogOptions, 'publishTimeoutMs' | 'ackWaitMs' | 'maxAckPending'>> & { logger: IngestLogLogger },
  ) {}

  /**
   * Connect (unless `connection` is given) and make sure the stream exists with file storage, limits
   * retention, the dedupe window and the size limits; an existing stream is updated to these settings
   * and to include `subjects`.
   * @throws ServiceUnavailableError when NATS or JetStream cannot be reached.
   */
  static async create(options: JetStreamIngestLogOptions): Promise<JetStreamIngestLog> {
    let nc = options.connection;
    const owns = !nc;
    try {
      nc ??= await connect({ servers: options.servers, name: `agp-ingest-log-${options.streamName}`, maxReconnectAttempts: -1 });
    } catch (err) {
      throw unavailable(`connecting to ${String(options.servers)}`, err);
    }
    try {
      const jsm = await jetstreamManager(nc, { timeout: options.publishTimeoutMs ?? 5000 });
      await ensureStream(jsm, options);
      const js = jetstream(nc, { timeout: options.publishTimeoutMs ?? 5000 });
      return new JetStreamIngestLog(nc, owns, js, jsm, options.streamName, {
        publishTimeoutMs: options.publishTimeoutMs ?? 5000,
        ackWaitMs: options.ackWaitMs ?? 30_000,
        maxAckPending: options.maxAckPending ?? 10_000,
        logger: options.logger ?? createLogger('bus'),
      });
    } catch (err) {
      if (owns) await nc.close().catch(() => undefined);
      throw unavailable(`creating stream ${options.streamName}`, err);
    }
  }

  /** Largest message the server accepts, in bytes (NATS `max_payload`, 1 MiB by default). */
  get maxPayloadBytes(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  /**
   * Publish `payload` as JSON with `Nats-Msg-Id: msg_id`; resolves on the stream's PubAck.
   * @returns `duplicate: true` when the stream already held this msg_id within the dedupe window.
   * @throws PayloadTooLargeError (413) when the encoded message exceeds {@link maxPayloadBytes}.
   * @throws ServiceUnavailableError (503) when NATS is unreachable, JetStream does not answer in
   *   `publishTimeoutMs`, or the stream rejects the message.
   */
  async publish<T>(message: IngestLogMessage<T>): Promise<{ duplicate: boolean }> {
    const data = encoder.encode(JSON.stringify(message.payload));
    if (data.length > this.maxPayloadBytes) {
      throw new PayloadTooLargeError(`ingest message of ${data.length} bytes exceeds the NATS max_payload of ${this.maxPayloadBytes} bytes`);
    }
    try {
      const ack = await this.js.publish(message.subject, data, { msgID: message.msg_id, timeout: this.opts.publishTimeoutMs });
      return { duplicate: ack.duplicate };
    } catch (err) {
      throw unavailable(`publishing to ${message.subject}`, err);
    }
  }

  /**
   * Create or update the durable pull consumer `durable` (explicit ack, `ackWaitMs`, `maxAckPending`,
   * filter `subjectFilter`, delivering from the start of the stream), then pull continuously and call
   * `handler` with batches of up to `batchSize` (default 64) messages, one batch at a time. A batch
   * holds what has arrived, so a lone message is handed over at once. When `handler` throws, its
   * messages that were neither acked nor nak'd are nak'd with a 1 s delay. `ack()` waits for the
   * server's confirmation; `nak(delayMs)` asks for redelivery after `delayMs` ms.
   * @throws ServiceUnavailableError when the consumer cannot be created.
   */
  async consume<T>(options: { durable: string; subjectFilter: string; batchSize?: number; handler: (batch: IngestDelivery<T>[]) => Promise<void> }): Promise<{ stop(): Promise<void> }> {
    const batchSize = Math.max(1, options.batchSize ?? 64);
    let messages: ConsumerMessages;
    try {
      await this.ensureConsumer(options.durable, options.subjectFilter);
      const consumer = await this.js.consumers.get(this.streamName, options.durable);
      messages = await consumer.consume({ max_messages: Math.max(2 * batchSize, 16) });
    } catch (err) {
      throw unavailable(`creating consumer ${options.durable}`, err);
    }

    const { logger } = this.opts;
    const queue: JsMsg[] = [];
    let stopping = false;
    let readerDone = false;
    let wakeWorker: (() => void) | undefined;
    let wakeReader: (() => void) | undefined;
    const signal = (which: 'worker' | 'reader') => {
      const fn = which === 'worker' ? wakeWorker : wakeReader;
      if (which === 'worker') wakeWorker = undefined;
      else wakeReader = undefined;
      fn?.();
    };

    // Reader: moves messages from the pull subscription into `queue`, holding back (and so holding
    // back further pulls, which the iterator issues as it is drained) while a full batch waits.
    const reader = (async () => {
      try {
        for await (const m of messages) {
          queue.push(m);
          signal('worker');
          while (queue.length >= batchSize && !stopping) await new Promise<void>((r) => (wakeReader = r));
          if (stopping) break;
        }
      } catch (err) {
        if (!stopping) logger.error({ err, durable: options.durable }, 'ingest consumer stopped pulling');
      } finally {
        readerDone = true;
        signal('worker');
      }
    })();
    void (async () => {
      for await (const s of messages.status()) {
        if (s.type === 'consumer_deleted' || s.type === 'consumer_not_found' || s.type === 'stream_not_found') {
          logger.warn({ durable: options.durable, status: s }, 'ingest consumer notification');
        }
      }
    })().catch(() => undefined);

    // Worker: hands over what has arrived, up to batchSize at a time.
    const worker = (async () => {
      while (!stopping) {
        if (queue.length === 0) {
          if (readerDone) break;
          await new Promise<void>((r) => (wakeWorker = r));
          continue;
        }
        // Let messages that already arrived join the batch.
        await new Promise((r) => setImmediate(r));
        if (stopping) break;
        const batch = queue.splice(0, batchSize);
        signal('reader');
        const deliveries = batch.map((m) => toDelivery<T>(m));
        try {
          await options.handler(deliveries.map((d) => d.delivery));
        } catch (err) {
          logger.error({ err, durable: options.durable, messages: batch.length }, 'ingest handler failed; its messages will be redelivered');
          for (const d of deliveries) if (!d.settled()) d.msg.nak(1000);
        }
      }
    })();

    const running: RunningConsumer = {
      stop: async () => {
        if (stopping) return;
        stopping = true;
        this.consumers.delete(running);
        signal('worker');
        signal('reader');
        await messages.close().catch(() => undefined);
        await worker;
        await reader;
        // Hand back what was pulled but not handed over, for immediate redelivery.
        for (const m of queue.splice(0)) m.nak();
      },
    };
    this.consumers.add(running);
    return { stop: () => running.stop() };
  }

  /** Delete the stream and everything in it (tests, resets). */
  async deleteStream(): Promise<void> {
    try {
      await this.jsm.streams.delete(this.streamName);
    } catch (err) {
      throw unavailable(`deleting stream ${this.streamName}`, err);
    }
  }

  /** Stop every consumer, then drain and close the connection when this log opened it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.stop()));
    if (this.ownsConnection) {
      await this.nc.drain().catch(() => this.nc.close());
    }
  }

  private async ensureConsumer(durable: string, filter: string): Promise<void> {
    const wanted: Partial<ConsumerConfig> = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(this.opts.ackWaitMs),
      max_ack_pending: this.opts.maxAckPending,
      filter_subject: filter,
    };
    let existing;
    try {
      existing = await this.jsm.consumers.info(this.streamName, durable);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!existing) {
      try {
        await this.jsm.consumers.add(this.streamName, wanted);
        return;
      } catch (err) {
        // Another process created it meanwhile with other settings: fall through to update.
        existing = await this.jsm.consumers.info(this.streamName, durable).catch(() => {
          throw err;
        });
      }
    }
    const c = existing.config;
    if (c.ack_wait !== wanted.ack_wait || c.max_ack_pending !== wanted.max_ack_pending || c.filter_subject !== filter) {
      await this.jsm.consumers.update(this.streamName, durable, {
        ack_wait: wanted.ack_wait,
        max_ack_pending: wanted.max_ack_pending,
        filter_subject: filter,
      });
    }
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; code?: number; api_error?: { err_code?: number } };
  return e?.name === 'ConsumerNotFoundError' || e?.name === 'StreamNotFoundError' || e?.code === 404 || e?.api_error?.err_code === 10014;
}

async function ensureStream(jsm: JetStreamManager, o: JetStreamIngestLogOptions): Promise<void> {
  const config = {
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_bytes: o.maxBytes ?? GiB,
    max_age: nanos(o.maxAgeMs ?? 7 * DAY_MS),
    duplicate_window: nanos(o.duplicateWindowMs ?? 120_000),
  };
  let info;
  try {
    info = await jsm.streams.info(o.streamName);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!info) {
    try {
      await jsm.streams.add({ name: o.streamName, subjects: o.subjects, ...config });
      return;
    } catch (err) {
      // Created concurrently by another process: update it below.
      info = await jsm.streams.info(o.streamName).catch(() => {
        throw err;
      });
    }
  }
  const subjects = [...new Set([...(info.config.subjects ?? []), ...o.subjects])];
  const c = info.config;
  if (
    subjects.length !== (c.subjects ?? []).length ||
    c.max_bytes !== config.max_bytes ||
    c.max_age !== config.max_age ||
    c.duplicate_window !== config.duplicate_window ||
    c.discard !== config.discard
  ) {
    await jsm.streams.update(o.streamName, { ...c, subjects, max_bytes: config.max_bytes, max_age: config.max_age, duplicate_window: config.duplicate_window, discard: config.discard });
  }
}

/** Wrap a JsMsg as an IngestDelivery, remembering whether it was settled (acked or nak'd). */
function toDelivery<T>(m: JsMsg): { msg: JsMsg; delivery: IngestDelivery<T>; settled(): boolean } {
  let settled = false;
  let payload: T;
  try {
    payload = m.json<T>();
  } catch {
    payload = m.string() as unknown as T;
  }
  const delivery: IngestDelivery<T> = {
    subject: m.subject,
    msg_id: m.headers?.get('Nats-Msg-Id') ?? '',
    payload,
    attempt: m.info.deliveryCount,
    ack: async () => {
      settled = true;
      try {
        await m.ackAck();
      } catch (err) {
        throw unavailable(`acking ${m.subject}#${m.seq}`, err);
      }
    },
    nak: async (delayMs?: number) => {
      settled = true;
      m.nak(delayMs);
    },
  };
  return { msg: m, delivery, settled: () => settled };
}
