/**
 * The ingest log in a PostgreSQL/PGlite table, for embedded mode: the same contract as JetStream
 * (dedupe by msg_id within a 2-minute window after ack, at-least-once delivery, ack/nak, redelivery
 * after an ack wait) over the `Sql` port. Source: architecture §2 (Embedded), §4 (Ingest).
 */
import { EventEmitter } from 'node:events';
import { createLogger, ServiceUnavailableError } from '@agp/runtime';
import { migrateSchema, type Sql } from '@agp/eventstore';
import type { IngestLogLogger } from './jetstream-log.js';
import { subjectFilterToRegex } from './subjects.js';
import type { IngestDelivery, IngestLog, IngestLogMessage } from './types.js';

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
    let stopping = false;
    let interrupt: (() => void) | undefined;
    // A publish that lands while the loop is busy makes its next idle wait end at once.
    let woken = false;
    const onWake = () => {
      if (interrupt) interrupt();
      else woken = true;
    };
    this.wake.on('publish', onWake);

    const idle = (ms: number) =>
      new Promise<void>((resolve) => {
        if (woken || stopping) {
          woken = false;
          resolve();
          return;
        }
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          interrupt = undefined;
          resolve();
        }
        interrupt = done;
      });

    const loop = (async () => {
      while (!stopping) {
        await this.maybePurge();
        woken = false;
        let rows: ClaimedRow[];
        try {
          rows = await this.claim(regex, batchSize);
        } catch (err) {
          if (stopping) break;
          this.logger.error({ err, durable: options.durable }, 'ingest log claim failed; retrying');
          await idle(1000);
          continue;
        }
        if (rows.length === 0) {
          await idle(this.pollMs);
          continue;
        }
        const deliveries = rows.map((r) => this.toDelivery<T>(r));
        try {
          await options.handler(deliveries.map((d) => d.delivery));
        } catch (err) {
          this.logger.error({ err, durable: options.durable, messages: rows.length }, 'ingest handler failed; its messages will be redelivered');
          await Promise.all(deliveries.filter((d) => !d.settled()).map((d) => d.delivery.nak(1000).catch(() => undefined)));
        }
      }
    })();

    const running = {
      stop: async () => {
        if (stopping) return;
        stopping = true;
        this.consumers.delete(running);
        this.wake.off('publish', onWake);
        interrupt?.();
        await loop;
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

  private toDelivery<T>(r: ClaimedRow): { delivery: IngestDelivery<T>; settled(): boolean } {
    let settled = false;
    const delivery: IngestDelivery<T> = {
      subject: r.subject,
      msg_id: r.msg_id,
      ...(r.schema === null || r.schema === undefined ? {} : { schema: Number(r.schema) }),
      payload: r.payload as T,
      attempt: Number(r.attempts),
      ack: () => {
        settled = true;
        return this.ack(r.seq);
      },
      nak: async (delayMs = 0) => {
        settled = true;
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
      },
    };
    return { delivery, settled: () => settled };
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
