/**
 * The ingest log in a PostgreSQL/PGlite table, for embedded mode: the same contract as JetStream
 * (dedupe by msg_id within a 2-minute window after ack, at-least-once delivery, ack/nak, redelivery
 * after an ack wait) over the `Sql` port. Source: architecture §2 (Embedded), §4 (Ingest).
 */
import { EventEmitter } from 'node:events';
import { createLogger, ServiceUnavailableError } from '@agp/runtime';
import { migrateSchema, type Sql } from '@agp/eventstore';
import { PullLoop, type PullSource } from './pull-loop.js';
import { subjectFilterToRegex } from './subjects.js';
import type { IngestDelivery, IngestLog, IngestLogLogger, IngestLogMessage } from './types.js';

/** Options of {@link SqlIngestLog.create}. */
export interface SqlIngestLogOptions {
  /** How long a delivered message may stay unacknowledged before redelivery, in ms. @default 30000 */
  ackWaitMs?: number;
  /** How long an acked msg_id still counts as a duplicate, in ms (JetStream's duplicate window). @default 120000 */
  dedupeWindowMs?: number;
  /** Poll interval of an idle consumer, in ms; publishes through the same instance wake it at once. @default 100 */
  pollMs?: number;
  /** Where handler failures are logged. @default createLogger('bus') */
  logger?: IngestLogLogger;
}

/** DDL of the table (idempotent). */
export const SQL_INGEST_LOG_DDL = `
CREATE TABLE IF NOT EXISTS agp_ingest_log (
  seq bigserial PRIMARY KEY,
  msg_id text NOT NULL UNIQUE,
  subject text NOT NULL,
  payload jsonb,
  attempts int NOT NULL DEFAULT 0,
  visible_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz NOT NULL DEFAULT now(),
  acked_at timestamptz
);
CREATE INDEX IF NOT EXISTS agp_ingest_log_pending ON agp_ingest_log (seq) WHERE acked_at IS NULL;
CREATE INDEX IF NOT EXISTS agp_ingest_log_acked ON agp_ingest_log (acked_at) WHERE acked_at IS NOT NULL;
ALTER TABLE agp_ingest_log ADD COLUMN IF NOT EXISTS schema int`;

interface ClaimedRow {
  seq: string;
  msg_id: string;
  subject: string;
  schema: number | null;
  payload: unknown;
  attempts: number;
}

function unavailable(what: string, err: unknown): ServiceUnavailableError {
  const why = err instanceof Error ? err.message : String(err);
  return new ServiceUnavailableError(`ingest log: ${what} failed: ${why}`, { cause: err });
}

/**
 * `IngestLog` over the `Sql` port (table `agp_ingest_log`). Publishing inserts a row (`ON CONFLICT
 * (msg_id) DO NOTHING`); consuming claims visible rows in `seq` order with `FOR UPDATE SKIP LOCKED`
 * and leases them for `ackWaitMs`; ack marks a row done (its msg_id is kept for the dedupe window,
 * then purged); nak makes it visible again after the delay. Share one instance per process so that
 * publishes wake consumers at once.
 *
 * Unlike JetStream, a message goes to one consumer only, whatever its durable name (work-queue
 * semantics): durables with overlapping filters split messages instead of each seeing all of them.
 */
export class SqlIngestLog implements IngestLog {
  private readonly wake = new EventEmitter();
  private readonly consumers = new Set<{ stop(): Promise<void> }>();
  private readonly ackWaitMs: number;
  private readonly dedupeWindowMs: number;
  private readonly pollMs: number;
  private readonly logger: IngestLogLogger;
  private pendingAcks: Array<{ seq: string; done: (err?: unknown) => void }> = [];
  private lastPurge = 0;

  private constructor(
    private readonly sql: Sql,
    options: SqlIngestLogOptions,
  ) {
    this.ackWaitMs = options.ackWaitMs ?? 30_000;
    this.dedupeWindowMs = options.dedupeWindowMs ?? 120_000;
    this.pollMs = options.pollMs ?? 100;
    this.logger = options.logger ?? createLogger('bus');
    this.wake.setMaxListeners(0);
  }

  /**
   * Create the table if missing and return the log.
   * @throws ServiceUnavailableError when the database cannot be reached.
   */
  static async create(sql: Sql, options: SqlIngestLogOptions = {}): Promise<SqlIngestLog> {
    try {
      await migrateSchema(sql, SQL_INGEST_LOG_DDL);
    } catch (err) {
      throw unavailable('creating table agp_ingest_log', err);
    }
    return new SqlIngestLog(sql, options);
  }

  /**
   * Insert the message; resolves once the row is committed.
   * @returns `duplicate: true` when a row with this msg_id exists (pending, or acked within the window).
   * @throws ServiceUnavailableError when the database fails.
   */
  async publish<T>(message: IngestLogMessage<T>): Promise<{ duplicate: boolean }> {
    let rows: unknown[];
    try {
      ({ rows } = await this.sql.query(
        `INSERT INTO agp_ingest_log (msg_id, subject, schema, payload) VALUES ($1, $2, $3, $4::jsonb)
         ON CONFLICT (msg_id) DO NOTHING RETURNING seq`,
        [message.msg_id, message.subject, message.schema ?? null, JSON.stringify(message.payload ?? null)],
      ));
    } catch (err) {
      throw unavailable(`publishing to ${message.subject}`, err);
    }
    if (rows.length > 0) this.wake.emit('publish');
    return { duplicate: rows.length === 0 };
  }

  /**
   * Poll for visible rows matching `subjectFilter` (NATS wildcards) and call `handler` with up to
   * `batchSize` (default 64) of them at a time, in `seq` order. Each claim bumps `attempts` and leases
   * the rows for `ackWaitMs`, so a crashed consumer's messages come back. When `handler` throws, its
   * unsettled messages are nak'd with a 1 s delay. `durable` names the consumer in logs only.
   * @throws Error when `subjectFilter` is not a valid NATS filter.
   */
  async consume<T>(options: { durable: string; subjectFilter: string; batchSize?: number; handler: (batch: IngestDelivery<T>[]) => Promise<void> }): Promise<{ stop(): Promise<void> }> {
    const regex = subjectFilterToRegex(options.subjectFilter);
    const batchSize = Math.max(1, options.batchSize ?? 64);
    const source = new SqlPull(
      {
        claim: async (limit) => {
          await this.maybePurge();
          return this.claim(regex, limit);
        },
        delivery: (r) => this.delivery(r),
        nak: (r, delayMs) => this.nak(r, delayMs),
      },
      this.pollMs,
    );
    this.wake.on('publish', source.wake);
    const loop = new PullLoop(source, { durable: options.durable, batchSize, readAhead: false, handler: options.handler, logger: this.logger });
    const running = {
      stop: async () => {
        this.consumers.delete(running);
        this.wake.off('publish', source.wake);
        await loop.stop();
      },
    };
    this.consumers.add(running);
    return { stop: () => running.stop() };
  }

  /** Stop every consumer. The `Sql` belongs to the caller and stays open. */
  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }

  /** Claim and lease up to `limit` visible rows whose subject matches `regex`. */
  private async claim(regex: string, limit: number): Promise<ClaimedRow[]> {
    const { rows } = await this.sql.query<ClaimedRow>(
      `WITH c AS (
         SELECT seq FROM agp_ingest_log
          WHERE acked_at IS NULL AND visible_at <= now() AND subject ~ $1
          ORDER BY seq LIMIT $2
          FOR UPDATE SKIP LOCKED)
       UPDATE agp_ingest_log l
          SET attempts = l.attempts + 1, visible_at = now() + ($3::int * interval '1 millisecond')
         FROM c WHERE l.seq = c.seq
       RETURNING l.seq::text AS seq, l.msg_id, l.subject, l.schema, l.payload, l.attempts`,
      [regex, limit, this.ackWaitMs],
    );
    return rows.sort((a: ClaimedRow, b: ClaimedRow) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
  }

  /** The row as the handler sees it: `ack` marks it done, `nak(delayMs)` makes it visible again after `delayMs` ms. */
  private delivery<T>(r: ClaimedRow): IngestDelivery<T> {
    return {
      subject: r.subject,
      msg_id: r.msg_id,
      ...(r.schema === null || r.schema === undefined ? {} : { schema: Number(r.schema) }),
      payload: r.payload as T,
      attempt: Number(r.attempts),
      ack: () => this.ack(r.seq),
      nak: (delayMs = 0) => this.nak(r, delayMs),
    };
  }

  /** Make a claimed row visible again after `delayMs` ms, and wake the consumers then. @throws ServiceUnavailableError */
  private async nak(r: ClaimedRow, delayMs: number): Promise<void> {
    try {
      await this.sql.query(
        `UPDATE agp_ingest_log SET visible_at = now() + ($2::int * interval '1 millisecond') WHERE seq = $1::bigint AND acked_at IS NULL`,
        [r.seq, Math.max(0, Math.round(delayMs))],
      );
    } catch (err) {
      throw unavailable(`nak of ${r.subject}#${r.seq}`, err);
    }
    if (delayMs <= 0) this.wake.emit('publish');
    else setTimeout(() => this.wake.emit('publish'), delayMs).unref();
  }

  /** Acks made in the same tick (a handler's `Promise.all(batch.map(m => m.ack()))`) share one UPDATE. */
  private ack(seq: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pendingAcks.push({ seq, done: (err) => (err ? reject(err) : resolve()) });
      if (this.pendingAcks.length > 1) return;
      queueMicrotask(() => {
        const acks = this.pendingAcks;
        this.pendingAcks = [];
        this.sql
          .query(`UPDATE agp_ingest_log SET acked_at = now() WHERE seq = ANY($1::bigint[]) AND acked_at IS NULL`, [acks.map((a) => a.seq)])
          .then(
            () => acks.forEach((a) => a.done()),
            (err: unknown) => {
              const e = unavailable('ack', err);
              acks.forEach((a) => a.done(e));
            },
          );
      });
    });
  }

  /** Forget acked msg_ids older than the dedupe window (at most every 10 s). */
  private async maybePurge(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < 10_000) return;
    this.lastPurge = now;
    try {
      await this.sql.query(`DELETE FROM agp_ingest_log WHERE acked_at < now() - ($1::int * interval '1 millisecond')`, [this.dedupeWindowMs]);
    } catch (err) {
      this.logger.warn({ err }, 'ingest log purge failed');
    }
  }

  /** Purge acked msg_ids older than the dedupe window now (tests, maintenance). @throws the database error. */
  async purgeAcked(): Promise<void> {
    await this.sql.query(`DELETE FROM agp_ingest_log WHERE acked_at < now() - ($1::int * interval '1 millisecond')`, [this.dedupeWindowMs]);
  }
}

/** What a {@link SqlPull} needs of its log. */
interface SqlClaims {
  /** Claim and lease up to `limit` visible rows of the consumer's filter, in `seq` order. */
  claim(limit: number): Promise<ClaimedRow[]>;
  delivery<T>(r: ClaimedRow): IngestDelivery<T>;
  nak(r: ClaimedRow, delayMs: number): Promise<void>;
}

/**
 * How one consumer of the SQL log reads its rows: a claim; when it finds none, an idle wait of `pollMs` that a publish
 * through the same log (see {@link wake}) ends at once, also when it lands while the claim or the handler runs.
 */
class SqlPull implements PullSource<ClaimedRow> {
  private woken = false;
  private interrupt: (() => void) | undefined;

  constructor(
    private readonly log: SqlClaims,
    private readonly pollMs: number,
  ) {}

  /** The log's `publish` listener: end the idle wait now, or skip the next one. */
  readonly wake = (): void => {
    if (this.interrupt) this.interrupt();
    else this.woken = true;
  };

  async read(max: number, arrived: (r: ClaimedRow) => void, signal: AbortSignal): Promise<void> {
    this.woken = false;
    const rows = await this.log.claim(max);
    if (rows.length === 0) await this.idle(signal);
    for (const r of rows) arrived(r);
  }

  /** 1 s between failed claims. */
  retryDelayMs(): number {
    return 1000;
  }

  delivery<T>(r: ClaimedRow): IngestDelivery<T> {
    return this.log.delivery<T>(r);
  }

  async release(r: ClaimedRow): Promise<void> {
    await this.log.nak(r, 0).catch(() => undefined);
  }

  /** Wait `pollMs`, or less when a publish wakes the consumer or the loop stops. */
  private idle(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.woken || signal.aborted) {
        this.woken = false;
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        this.interrupt = undefined;
        resolve();
      };
      const t = setTimeout(done, this.pollMs);
      signal.addEventListener('abort', done, { once: true });
      this.interrupt = done;
    });
  }
}
