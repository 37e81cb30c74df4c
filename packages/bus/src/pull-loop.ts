/**
 * The consumer loop both ingest logs run (JetStream in distributed mode, the SQL table in embedded mode): a reader that
 * pulls messages into a queue, a worker that hands them to the handler in batches, the settling of what a failed
 * handler left open, and progress acks that keep held messages from redelivery. The log supplies only how to read,
 * settle and keep alive one of its messages ({@link PullSource}). Source: architecture §4 (Ingest), §6 (JetStream
 * figures).
 */
import { setImmediate as nextTurn, setTimeout as delay } from 'node:timers/promises';
import type { IngestDelivery, IngestLogLogger } from './types.js';

/** How one log reads, settles and keeps alive its messages of type `M`; the {@link PullLoop} does the rest. */
export interface PullSource<M> {
  /**
   * Read up to `max` messages, calling `arrived` for each as it comes; resolve when the read ends (a JetStream pull
   * when it expires, a SQL claim once its rows are in, or after an idle wait when it found none). `signal` aborts
   * when the loop stops: end the read early.
   * @throws whatever the log throws when it cannot be read; the loop retries with back-off.
   */
  read(max: number, arrived: (message: M) => void, signal: AbortSignal): Promise<void>;
  /** Put back what a failed read may lack (a deleted stream or consumer) before the next read. Failures are ignored. */
  repair?(): Promise<void>;
  /** Wait before the read after `failures` failed reads in a row, in ms. */
  retryDelayMs(failures: number): number;
  /** The message as the handler sees it. */
  delivery<T>(message: M): IngestDelivery<T>;
  /** Hand a message that was read but never handed over back for immediate redelivery (the loop is stopping). */
  release(message: M): void | Promise<void>;
  /** Tell the log this process still works on `message` (a JetStream progress ack); absent when leases do not need it. */
  progress?(message: M): void;
}

/** Settings of a {@link PullLoop}. */
export interface PullLoopOptions<T> {
  /** The durable consumer's name, in logs. */
  durable: string;
  /** Most messages per handler call (at least 1). */
  batchSize: number;
  /**
   * Whether the reader pulls the next messages while the handler works (up to 2 × `batchSize` held, so a network
   * round trip overlaps the work), or only once the handler has returned (each read leases its messages; a read-ahead
   * lease would run down while it waits).
   */
  readAhead: boolean;
  /** How often held messages get a progress ack, in ms, when the source has {@link PullSource.progress}. */
  progressEveryMs?: number;
  /** Longest one message is kept alive by progress acks, in ms; then it is left to redelivery. */
  maxProcessingMs?: number;
  handler: (batch: IngestDelivery<T>[]) => Promise<void>;
  logger: IngestLogLogger;
}

/** Delay of the redelivery of a message the failed handler left unsettled, in ms. */
const FAILED_BATCH_REDELIVERY_MS = 1000;

/**
 * One durable consumer's pull loop over a {@link PullSource}: `read` fills the queue while there is room; `work` hands
 * the queue to the handler up to `batchSize` at a time, one batch at a time; `acknowledge` naks (after 1 s) what a
 * failed handler left unsettled; `progress` keeps every held message alive. A failed read is logged once, retried
 * after the source's back-off and repair, and its return logged once. `stop` ends both loops and releases what was
 * read but never handed over.
 */
export class PullLoop<M, T> {
  private readonly queue: M[] = [];
  /** Every read, unsettled message (queued or in the handler's batch) and when it arrived (epoch ms). */
  private readonly held = new Map<M, number>();
  private readonly abort = new AbortController();
  private stopping = false;
  private working = false;
  private wakeWorker: (() => void) | undefined;
  private wakeReader: (() => void) | undefined;
  private readonly progressTimer: NodeJS.Timeout | undefined;
  private readonly reader: Promise<void>;
  private readonly worker: Promise<void>;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly source: PullSource<M>,
    private readonly options: PullLoopOptions<T>,
  ) {
    if (source.progress && options.progressEveryMs) {
      this.progressTimer = setInterval(() => this.progress(), options.progressEveryMs);
      this.progressTimer.unref();
    }
    this.reader = this.readLoop();
    this.worker = this.workLoop();
  }

  /** Stop reading and working (the current batch finishes), then release what is queued. Idempotent. */
  stop(): Promise<void> {
    return (this.stopped ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    this.wake('worker');
    this.wake('reader');
    this.abort.abort();
    await this.worker;
    await this.reader;
    const unread = this.queue.splice(0);
    for (const m of unread) this.held.delete(m);
    await Promise.all(unread.map(async (m) => this.source.release(m)));
  }

  /** Messages the reader may take now: 0 while the queue or the held set is full (or, without read-ahead, while working). */
  private room(): number {
    const { batchSize, readAhead } = this.options;
    if (!readAhead) return this.working || this.queue.length > 0 ? 0 : batchSize;
    if (this.queue.length >= batchSize) return 0;
    return Math.max(0, 2 * batchSize - this.held.size);
  }

  private async readLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const room = this.room();
      if (room === 0) {
        await new Promise<void>((r) => (this.wakeReader = r));
        continue;
      }
      try {
        await this.read(room);
        if (failures > 0) this.options.logger.warn({ durable: this.options.durable }, 'ingest consumer resumed');
        failures = 0;
      } catch (err) {
        if (this.stopping) break;
        if (failures === 0) this.options.logger.error({ err, durable: this.options.durable }, 'ingest consumer cannot read; retrying until it can');
        failures += 1;
        await delay(this.source.retryDelayMs(failures), undefined, { signal: this.abort.signal }).catch(() => undefined);
        if (this.stopping) break;
        await this.source.repair?.().catch(() => undefined);
      }
    }
  }

  /** Step `read`: one read of up to `max` messages into the queue; a message arriving after `stop` is released. */
  private async read(max: number): Promise<void> {
    await this.source.read(
      max,
      (m) => {
        if (this.stopping) {
          this.source.release(m);
          return;
        }
        this.queue.push(m);
        this.held.set(m, Date.now());
        this.wake('worker');
      },
      this.abort.signal,
    );
  }

  private async workLoop(): Promise<void> {
    while (!this.stopping) {
      if (this.queue.length === 0) {
        await new Promise<void>((r) => (this.wakeWorker = r));
        continue;
      }
      // Let messages that already arrived join the batch.
      await nextTurn();
      if (this.stopping) break;
      this.working = true;
      const batch = this.queue.splice(0, this.options.batchSize);
      try {
        await this.work(batch);
      } finally {
        for (const m of batch) this.held.delete(m);
        this.working = false;
        this.wake('reader');
      }
    }
  }

  /** Step `work`: hand one batch to the handler; when it throws, `acknowledge` what it left open. */
  private async work(batch: M[]): Promise<void> {
    const settled = new Set<M>();
    const deliveries = batch.map((m) => {
      const d = this.source.delivery<T>(m);
      const settle = () => {
        settled.add(m);
        this.held.delete(m);
      };
      return {
        ...d,
        ack: () => (settle(), d.ack()),
        nak: (delayMs?: number) => (settle(), d.nak(delayMs)),
      };
    });
    try {
      await this.options.handler(deliveries);
    } catch (err) {
      this.options.logger.error({ err, durable: this.options.durable, messages: batch.length }, 'ingest handler failed; its messages will be redelivered');
      await this.acknowledge(deliveries.filter((_, i) => !settled.has(batch[i])));
    }
  }

  /** Step `acknowledge`: nak the deliveries a failed handler neither acked nor nak'd, for redelivery after 1 s. */
  private async acknowledge(unsettled: IngestDelivery<T>[]): Promise<void> {
    await Promise.all(unsettled.map((d) => d.nak(FAILED_BATCH_REDELIVERY_MS).catch(() => undefined)));
  }

  /** Step `progress`: a progress ack for every held message younger than `maxProcessingMs`. */
  private progress(): void {
    const now = Date.now();
    const limit = this.options.maxProcessingMs ?? Infinity;
    for (const [m, since] of this.held) {
      if (now - since >= limit) continue;
      try {
        this.source.progress?.(m);
      } catch {
        // The connection is closing: the message comes back after the ack wait.
      }
    }
  }

  private wake(which: 'worker' | 'reader'): void {
    const fn = which === 'worker' ? this.wakeWorker : this.wakeReader;
    if (which === 'worker') this.wakeWorker = undefined;
    else this.wakeReader = undefined;
    fn?.();
  }
}
