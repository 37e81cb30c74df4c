/**
 * The ingest log on JetStream (distributed mode): a file-backed stream with dedupe by `Nats-Msg-Id`,
 * and durable pull consumers that hand batches to a handler. Source: architecture §1, §4 (Ingest),
 * §6 (JetStream figures).
 */
import { INGEST_DURABLES, INGEST_SCHEMA_HEADER } from '@agp/contracts';
import { createLogger, gauge, PayloadTooLargeError, readinessDetail, ServiceUnavailableError } from '@agp/runtime';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamInfo,
} from '@nats-io/jetstream';
import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import { NATS_RECONNECT_OPTIONS, watchNatsConnection, type NatsConnectionHealth } from './nats-connection.js';
import { ingestFilter } from './subjects.js';
import { PullLoop, type PullSource } from './pull-loop.js';
import type { IngestDelivery, IngestLog, IngestLogLogger, IngestLogMessage } from './types.js';

/** Options of {@link JetStreamIngestLog.create}. */
export interface JetStreamIngestLogOptions {
  /** NATS server URL(s), `NATS_URL`. Ignored when `connection` is given. */
  servers?: string | string[];
  /** An existing connection to use instead of opening one; it is left open by `close()`. */
  connection?: NatsConnection;
  /**
   * Called once when the log's own connection closes for good without `close()` (see `watchNatsConnection`); service
   * processes exit non-zero there so an orchestrator restarts them. Ignored when `connection` is given.
   */
  onClosed?: (err: Error | undefined) => void;
  /** Stream name, `AGP_INGEST_STREAM` (e.g. `INGEST`). */
  streamName: string;
  /** Subjects the stream captures, e.g. `['agp.ingest.>']` (see `ingestSubjects(prefix)`). */
  subjects: string[];
  /**
   * Most bytes of unconsumed messages the stream holds; beyond it `publish` is refused (503) instead of any stored
   * message being dropped (discard policy `new`, work-queue retention). @default 1 GiB
   */
  maxBytes?: number;
  /** Age limit of stored messages, in ms; 0 is none. Any other value lets unconsumed messages expire. @default 0 */
  maxAgeMs?: number;
  /**
   * Durable consumers created with the stream: one per subject (work-queue retention refuses a second consumer whose
   * filter overlaps; a message is removed once the consumer of its subject acks it, and kept until one exists).
   * @default the platform's `INGEST_DURABLES` when `subjects` is `<prefix>.ingested.>`, else none
   */
  durables?: Array<{ durable: string; subjectFilter: string }>;
  /** Window in which a repeated `msg_id` is a duplicate, in ms. @default 120000 (2 min) */
  duplicateWindowMs?: number;
  /** How long `publish` waits for the stream's ack, in ms. @default 5000 */
  publishTimeoutMs?: number;
  /**
   * How long a delivered message may go without an ack or a progress ack before redelivery, in ms. Messages held by a
   * consumer get a progress ack every `ackWaitMs / 3`, so only a dead process's messages wait this long. @default 5000
   */
  ackWaitMs?: number;
  /** Longest a consumer keeps one message alive with progress acks, in ms; then it is left to redelivery. @default 300000 */
  maxProcessingMs?: number;
  /** How long one pull request waits for messages, in ms (at least 1000). @default 5000 */
  fetchExpiresMs?: number;
  /** How often the consumers' lag is read for the metric and `/readyz`, in ms. @default 5000 */
  lagIntervalMs?: number;
  /** Max unacknowledged messages per durable consumer, over all its processes. @default 10000 */
  maxAckPending?: number;
  /** Where handler failures and consumer notifications are logged. @default createLogger('bus') */
  logger?: IngestLogLogger;
}

/** A consumer loop's state. */
interface RunningConsumer {
  durable: string;
  stop(): Promise<void>;
}

/** The lag of one durable consumer as last read: messages not yet delivered plus delivered but unacknowledged. */
export interface ConsumerLag {
  stream: string;
  durable: string;
  /** `num_pending`: messages matching the filter not yet delivered. */
  pending: number;
  /** `num_ack_pending`: delivered, not yet acknowledged. */
  ack_pending: number;
  /** pending + ack_pending. */
  lag: number;
  /** When it was read (ISO 8601 UTC). */
  at: string;
  /** Why the last read failed, when it did (the figures are then the previous read's). */
  error?: string;
}

const lagGauge = gauge('agp_ingest_consumer_lag', 'Ingest messages a durable consumer has not acknowledged yet (num_pending + num_ack_pending)', ['stream', 'durable']);
/** Every open log, for the `/readyz` detail `ingest_consumers`. */
const openLogs = new Set<JetStreamIngestLog>();

const GiB = 1024 * 1024 * 1024;
const encoder = new TextEncoder();

/** Map a NATS/JetStream failure to the 503 the port promises, keeping the cause. */
function unavailable(what: string, err: unknown): ServiceUnavailableError {
  if (err instanceof ServiceUnavailableError) return err;
  const why = err instanceof Error ? err.message : String(err);
  if (isStreamFull(err)) return new ServiceUnavailableError(`ingest log is full (${why}): its consumers are behind; retry later`, { cause: err });
  return new ServiceUnavailableError(`ingest log: ${what} failed: ${why}`, { cause: err });
}

/** Whether `err` is the stream refusing a message because it is full (discard policy `new`). */
export function isStreamFull(err: unknown): boolean {
  const e = err as { name?: string; code?: unknown; message?: string } | undefined;
  // JetStreamApiError's `code` is the server's err_code; 10077 is "maximum bytes exceeded".
  return (e?.name === 'JetStreamApiError' && e.code === 10077) || /maximum (bytes|messages) exceeded/i.test(e?.message ?? '');
}


/** Settings a log resolved from its options. */
interface ResolvedOptions {
  publishTimeoutMs: number;
  ackWaitMs: number;
  maxAckPending: number;
  maxProcessingMs: number;
  fetchExpiresMs: number;
  lagIntervalMs: number;
  logger: IngestLogLogger;
}

/**
 * `IngestLog` on JetStream. Create with {@link JetStreamIngestLog.create}; `publish` may be called
 * concurrently from many requests (each waits for its own PubAck; there is no client-side limit).
 */
export class JetStreamIngestLog implements IngestLog {
  private readonly consumers = new Set<RunningConsumer>();
  private readonly lags = new Map<string, ConsumerLag>();
  private lagTimer: NodeJS.Timeout | undefined;
  /**
   * Health of the connection this log opened (reconnects forever, each loss and return logged once); readiness
   * checks it. Undefined when the connection was passed in (its owner watches it).
   */
  health: NatsConnectionHealth | undefined;
  private lastReconcile = 0;
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly ownsConnection: boolean,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    /** The stream's name. */
    readonly streamName: string,
    private readonly options: JetStreamIngestLogOptions,
    private readonly opts: ResolvedOptions,
  ) {}

  /**
   * Connect (unless `connection` is given; an owned connection reconnects forever and logs each loss and return once)
   * and make sure the stream exists with file storage, work-queue retention, discard policy `new`, the dedupe window
   * and the size limit, and that its `durables` exist; an existing stream and its consumers are updated in place to
   * these settings and to include `subjects`.
   * @throws ServiceUnavailableError when NATS or JetStream cannot be reached.
   */
  static async create(options: JetStreamIngestLogOptions): Promise<JetStreamIngestLog> {
    let nc = options.connection;
    const owns = !nc;
    const logger = options.logger ?? createLogger('bus');
    try {
      // noAsyncTraces: every JetStream publish is a NATS request, which otherwise makes an Error (its stack) per
      // message to name the caller should it fail; a failed publish is logged with its subject instead.
      nc ??= await connect({ ...NATS_RECONNECT_OPTIONS, servers: options.servers, name: `agp-ingest-log-${options.streamName}`, noAsyncTraces: true });
    } catch (err) {
      throw unavailable(`connecting to ${String(options.servers)}`, err);
    }
    try {
      const jsm = await jetstreamManager(nc, { timeout: options.publishTimeoutMs ?? 5000 });
      const js = jetstream(nc, { timeout: options.publishTimeoutMs ?? 5000 });
      const ackWaitMs = options.ackWaitMs ?? 5_000;
      const log = new JetStreamIngestLog(nc, owns, js, jsm, options.streamName, options, {
        publishTimeoutMs: options.publishTimeoutMs ?? 5000,
        ackWaitMs,
        maxAckPending: options.maxAckPending ?? 10_000,
        maxProcessingMs: options.maxProcessingMs ?? 300_000,
        fetchExpiresMs: Math.max(1000, options.fetchExpiresMs ?? 5000),
        lagIntervalMs: options.lagIntervalMs ?? 5000,
        logger,
      });
      await log.reconcile();
      if (owns) log.health = watchNatsConnection(nc, { role: 'ingest log', logger, onClosed: options.onClosed });
      return log;
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
   *   `publishTimeoutMs`, or the stream rejects the message (full: {@link isStreamFull}).
   */
  async publish<T>(message: IngestLogMessage<T>): Promise<{ duplicate: boolean }> {
    const data = encoder.encode(JSON.stringify(message.payload));
    if (data.length > this.maxPayloadBytes) {
      throw new PayloadTooLargeError(`ingest message of ${data.length} bytes exceeds the NATS max_payload of ${this.maxPayloadBytes} bytes`);
    }
    try {
      const hdrs = message.schema === undefined ? undefined : natsHeaders();
      hdrs?.set(INGEST_SCHEMA_HEADER, String(message.schema));
      const ack = await this.js.publish(message.subject, data, { msgID: message.msg_id, timeout: this.opts.publishTimeoutMs, ...(hdrs ? { headers: hdrs } : {}) });
      return { duplicate: ack.duplicate };
    } catch (err) {
      // The stream may be gone (a NATS server that lost its storage): put it back, at most every 5 s.
      if (!isStreamFull(err) && Date.now() - this.lastReconcile > 5000) void this.reconcile().catch(() => undefined);
      throw unavailable(`publishing to ${message.subject}`, err);
    }
  }

  /**
   * Create or update the durable pull consumer `durable` (explicit ack, `ackWaitMs`, `maxAckPending`,
   * filter `subjectFilter`, delivering from the start of the stream), then pull continuously and call
   * `handler` with batches of up to `batchSize` (default 64) messages, one batch at a time. A batch
   * holds what has arrived, so a lone message is handed over at once. At most 2 × `batchSize` messages are held
   * (pulled, not settled); each gets a progress ack every `ackWaitMs / 3` (for at most `maxProcessingMs`), so a
   * long batch is not redelivered mid-flight while a dead process's messages come back after `ackWaitMs`.
   * When `handler` throws, its messages that were neither acked nor nak'd are nak'd with a 1 s delay. `ack()` waits
   * for the server's confirmation; `nak(delayMs)` asks for redelivery after `delayMs` ms. The loop survives NATS
   * outages of any length and a deleted consumer or stream: a failed pull is retried with back-off (0.5 s doubling
   * to 10 s) after re-creating what is missing, logged once when lost and once when resumed.
   * @throws ServiceUnavailableError when the consumer cannot be created.
   */
  async consume<T>(options: { durable: string; subjectFilter: string; batchSize?: number; handler: (batch: IngestDelivery<T>[]) => Promise<void> }): Promise<{ stop(): Promise<void> }> {
    const batchSize = Math.max(1, options.batchSize ?? 64);
    const { durable, subjectFilter } = options;
    try {
      await this.ensureConsumer(durable, subjectFilter);
    } catch (err) {
      throw unavailable(`creating consumer ${durable}`, err);
    }

    const source = new JetStreamPull(this.js, this.streamName, durable, this.opts.fetchExpiresMs, () => this.reconcile().then(() => this.ensureConsumer(durable, subjectFilter)));
    const loop = new PullLoop(source, {
      durable,
      batchSize,
      readAhead: true,
      progressEveryMs: Math.max(100, Math.floor(this.opts.ackWaitMs / 3)),
      maxProcessingMs: this.opts.maxProcessingMs,
      handler: options.handler,
      logger: this.opts.logger,
    });
    const running: RunningConsumer = {
      durable,
      stop: async () => {
        this.consumers.delete(running);
        await loop.stop();
        this.lags.delete(durable);
        lagGauge.remove({ stream: this.streamName, durable });
      },
    };
    this.consumers.add(running);
    this.startLagWatch();
    return { stop: () => running.stop() };
  }

  /**
   * Create (or update) the durable `durable` over `subjectFilter` without consuming (the stream keeps its messages
   * until it acks them; a stream left with interest retention keeps only messages published while it exists).
   * @throws ServiceUnavailableError when JetStream cannot be reached, or the filter overlaps another durable's.
   */
  async ensureDurable(durable: string, subjectFilter: string): Promise<void> {
    try {
      await this.ensureConsumer(durable, subjectFilter);
    } catch (err) {
      throw unavailable(`creating consumer ${durable}`, err);
    }
  }

  /** The lag of each durable consumed through this log, as last read (every `lagIntervalMs`). */
  consumerLag(): ConsumerLag[] {
    return [...this.lags.values()];
  }

  /** Read every consumed durable's lag now: sets the `agp_ingest_consumer_lag` gauge and {@link consumerLag}. */
  async refreshLag(): Promise<ConsumerLag[]> {
    await Promise.all(
      [...this.consumers].map(async ({ durable }) => {
        try {
          const info = await this.jsm.consumers.info(this.streamName, durable);
          const lag = info.num_pending + info.num_ack_pending;
          this.lags.set(durable, { stream: this.streamName, durable, pending: info.num_pending, ack_pending: info.num_ack_pending, lag, at: new Date().toISOString() });
          lagGauge.set({ stream: this.streamName, durable }, lag);
        } catch (err) {
          const last = this.lags.get(durable);
          this.lags.set(durable, { ...(last ?? { stream: this.streamName, durable, pending: 0, ack_pending: 0, lag: 0, at: new Date().toISOString() }), error: (err as Error).message });
        }
      }),
    );
    return this.consumerLag();
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
    if (this.lagTimer) clearInterval(this.lagTimer);
    openLogs.delete(this);
    if (openLogs.size === 0) readinessDetail('ingest_consumers', undefined);
    await Promise.all([...this.consumers].map((c) => c.stop()));
    if (this.ownsConnection) {
      this.health?.closing();
      await this.nc.drain().catch(() => this.nc.close());
    }
  }

  /** Make sure the stream and its durables exist with this log's settings (see {@link create}). */
  private async reconcile(): Promise<void> {
    this.lastReconcile = Date.now();
    const o = this.options;
    const info = await ensureStream(this.jsm, o);
    for (const d of o.durables ?? platformDurables(o.subjects)) await this.ensureConsumer(d.durable, d.subjectFilter);
    await reconcileStream(this.jsm, o, info, this.opts.logger);
  }

  /** Start reading the lag every `lagIntervalMs` and show it in `/readyz` (once per log). */
  private startLagWatch(): void {
    if (this.lagTimer || this.closed) return;
    openLogs.add(this);
    readinessDetail('ingest_consumers', () => [...openLogs].flatMap((l) => l.consumerLag()));
    void this.refreshLag();
    this.lagTimer = setInterval(() => void this.refreshLag(), this.opts.lagIntervalMs);
    this.lagTimer.unref();
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

/** The platform's ingest durables when `subjects` is exactly `<prefix>.ingested.>`, else none. */
function platformDurables(subjects: string[]): Array<{ durable: string; subjectFilter: string }> {
  const m = subjects.length === 1 ? /^(.+)\.ingested\.>$/.exec(subjects[0]) : null;
  if (!m) return [];
  return Object.entries(INGEST_DURABLES).map(([target, durable]) => ({ durable, subjectFilter: ingestFilter(m[1], target) }));
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; code?: number; api_error?: { err_code?: number } };
  return e?.name === 'ConsumerNotFoundError' || e?.name === 'StreamNotFoundError' || e?.code === 404 || e?.api_error?.err_code === 10014;
}

/** The stream settings a log wants (see {@link JetStreamIngestLog.create}). */
function streamSettings(o: JetStreamIngestLogOptions): { storage: StorageType; retention: RetentionPolicy; discard: DiscardPolicy; max_bytes: number; max_age: number; duplicate_window: number } {
  return {
    storage: StorageType.File,
    retention: RetentionPolicy.Workqueue,
    discard: DiscardPolicy.New,
    max_bytes: o.maxBytes ?? GiB,
    max_age: nanos(o.maxAgeMs ?? 0),
    duplicate_window: nanos(o.duplicateWindowMs ?? 120_000),
  };
}

/** The stream's info, creating it with the wanted settings when missing. */
async function ensureStream(jsm: JetStreamManager, o: JetStreamIngestLogOptions): Promise<StreamInfo> {
  try {
    return await jsm.streams.info(o.streamName);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    return await jsm.streams.add({ name: o.streamName, subjects: o.subjects, ...streamSettings(o) });
  } catch (err) {
    // Created concurrently by another process.
    return jsm.streams.info(o.streamName).catch(() => {
      throw err;
    });
  }
}

const retentionWarned = new Set<string>();

/**
 * Update an existing stream in place to the wanted settings (after its durables exist). NATS cannot change a stream's
 * retention to or from work-queue in place (nor limits ↔ interest before 2.10): such a stream keeps its retention,
 * discard policy and age limit, with an error logged once (docs/decisions.md, ingest stream and a NATS server stopped
 * by SIGTERM).
 */
async function reconcileStream(jsm: JetStreamManager, o: JetStreamIngestLogOptions, info: StreamInfo, logger: IngestLogLogger): Promise<void> {
  const want = streamSettings(o);
  const c = info.config;
  const subjects = [...new Set([...(c.subjects ?? []), ...o.subjects])];
  const differs = (w: typeof want) =>
    subjects.length !== (c.subjects ?? []).length ||
    c.max_bytes !== w.max_bytes ||
    c.max_age !== w.max_age ||
    c.duplicate_window !== w.duplicate_window ||
    c.discard !== w.discard ||
    c.retention !== w.retention;
  if (!differs(want)) return;
  const { storage: _storage, ...changes } = want;
  try {
    await jsm.streams.update(o.streamName, { ...c, subjects, ...changes });
  } catch (err) {
    if (c.retention === want.retention || !/retention/i.test((err as Error).message ?? '')) throw err;
    const kept = { ...want, retention: c.retention, discard: c.discard, max_age: c.max_age };
    if (!retentionWarned.has(o.streamName)) {
      retentionWarned.add(o.streamName);
      logger.error(
        { err, stream: o.streamName, retention: c.retention, discard: c.discard },
        `ingest stream keeps its ${c.retention} retention: NATS cannot change it to workqueue in place; recreate the stream once its consumers have no backlog (until then ${c.retention === RetentionPolicy.Interest ? 'a message published while its consumers are stopped, as in a NATS shutdown, is acknowledged and dropped' : 'when full it drops its oldest messages, consumed or not'})`,
      );
    }
    if (differs(kept)) {
      const { storage: _s, ...keptChanges } = kept;
      await jsm.streams.update(o.streamName, { ...c, subjects, ...keptChanges });
    }
  }
}

/**
 * How a durable JetStream pull consumer reads, settles and keeps alive its messages: one pull request at a time, each
 * waiting up to `fetchExpiresMs` for messages; after a failed pull the consumer handle is looked up again, once
 * `repair` has put back a stream or consumer the server may have lost.
 */
class JetStreamPull implements PullSource<JsMsg> {
  private consumer: Consumer | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly streamName: string,
    private readonly durable: string,
    private readonly fetchExpiresMs: number,
    /** Re-create the stream and this durable when missing. */
    readonly repair: () => Promise<void>,
  ) {}

  async read(max: number, arrived: (m: JsMsg) => void, signal: AbortSignal): Promise<void> {
    let messages: ConsumerMessages;
    try {
      this.consumer ??= await this.js.consumers.get(this.streamName, this.durable);
      messages = await this.consumer.fetch({ max_messages: max, expires: this.fetchExpiresMs });
    } catch (err) {
      this.consumer = undefined;
      throw err;
    }
    const close = () => void messages.close().catch(() => undefined);
    if (signal.aborted) close();
    signal.addEventListener('abort', close, { once: true });
    try {
      for await (const m of messages) arrived(m);
    } catch (err) {
      this.consumer = undefined;
      throw err;
    } finally {
      signal.removeEventListener('abort', close);
    }
  }

  /** 0.5 s doubling to 10 s. */
  retryDelayMs(failures: number): number {
    return Math.min(10_000, 250 * 2 ** Math.min(failures, 6));
  }

  delivery<T>(m: JsMsg): IngestDelivery<T> {
    let payload: T;
    try {
      payload = m.json<T>();
    } catch {
      payload = m.string() as unknown as T;
    }
    return {
      subject: m.subject,
      msg_id: m.headers?.get('Nats-Msg-Id') ?? '',
      ...schemaOf(m),
      payload,
      attempt: m.info.deliveryCount,
      ack: async () => {
        try {
          await m.ackAck();
        } catch (err) {
          throw unavailable(`acking ${m.subject}#${m.seq}`, err);
        }
      },
      nak: async (delayMs?: number) => m.nak(delayMs),
    };
  }

  release(m: JsMsg): void {
    m.nak();
  }

  progress(m: JsMsg): void {
    m.working();
  }
}

/** The `schema` of a delivery: the message's {@link INGEST_SCHEMA_HEADER} as a number, or nothing when it has none. */
function schemaOf(m: JsMsg): { schema?: number } {
  const v = m.headers?.get(INGEST_SCHEMA_HEADER);
  return v ? { schema: Number(v) } : {};
}
