/**
 * Reporting that loses nothing: every report (intervention, ledger entry, run and agent event) is kept in the spool
 * first, then sent in batches through `POST /api/v1/ingest/` in the background. `enqueue` never waits on the network.
 * - Each report carries its id from creation on; a retry or a re-delivery after a restart sends the same id, which the
 *   platform stores once (ingest dedupes by id).
 * - 429, 503, other 5xx and network errors: the batch stays pending and is retried with jittered exponential back-off
 *   (250 ms doubling to 30 s, at least `Retry-After`); 401/403 too (a key may be fixed), reported through `onError`.
 * - An event the platform refuses for good (a per-event 413 or 422) is set aside in the spool's `rejected.jsonl` (or
 *   kept in memory), counted in `stats().rejected` and passed to `onError`: never dropped silently.
 * - When the agent traces, each request is an `agp.report` span linked to the `agp.act` span of each report it carries
 *   and its context goes in the request's `traceparent` header ({@link withReportSpan}); a batch retried after a
 *   back-off is a new span with the same links (the client's own quick retries of one request share its span).
 * - Backpressure: while the spool is at its bound, a new action waits ({@link Reporter.whenRoom}) in arrival order
 *   until acknowledgements bring the pending bytes below the low-water mark; it is refused (fail closed) only when
 *   nothing was acknowledged for `stallMs` while it waited (the platform is failing, not late) or the governor closes.
 * Source: docs/sdk.md §Reporting, §The spool's bound.
 */
import { AgpHttpError, AgpNetworkError, type AgpClient } from './http.js';
import { INGEST_MAX_BYTES, INGEST_MAX_EVENTS, type IngestEvent } from '@agp/contracts';
import type { Spool, SpoolEvent } from './spool.js';
import type { ReporterStats } from './status.js';
import { withReportSpan } from './tracing.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Most events per ingest request the reporter sends (the platform takes 1000). */
const BATCH_EVENTS = Math.min(500, INGEST_MAX_EVENTS);
/** Most bytes per request, under the platform's 5 MiB. */
const BATCH_BYTES = Math.floor(INGEST_MAX_BYTES * 0.8);

/** See the module docs. */
export class Reporter {
  /**
   * Reports not yet acknowledged, oldest first, from `head` on (a queue: an append is a push, not a hash-table insert;
   * only the batch in flight is looked up by id, in a table of its own).
   */
  private pending: SpoolEvent[] = [];
  private head = 0;
  private readonly counters = { delivered: 0, rejected: 0, recovered: 0 };
  private lastError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private failures = 0;
  private nextAttemptAt = 0;
  private readonly syncTimer: NodeJS.Timeout;
  private stopped = false;
  /** Most events per request; halved after a whole request was answered 413, back to the full size after a success. */
  private batchEvents = BATCH_EVENTS;
  /** Actions waiting for room in the spool, oldest first: each is settled with null (go on) or why it is refused. */
  private waiters: Array<(refused: string | null) => void> = [];
  /** When the oldest waiting action began to wait (ms since epoch). */
  private waitingSince = 0;
  /** When the platform last acknowledged (or refused for good) a report, or the reporter started (ms since epoch). */
  private lastProgressAt = Date.now();
  /** Why actions are refused at once: the platform stalled (cleared by the next acknowledgement) or the governor closes. */
  private refusing: string | null = null;
  private closing: string | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  /** Actions that waited for room, since connect. */
  private waited = 0;

  constructor(
    private readonly client: AgpClient,
    readonly spool: Spool,
    private readonly opts: {
      flushIntervalMs: number;
      fsyncIntervalMs: number;
      onError: (message: string, events?: SpoolEvent[]) => void;
      /** Waiting actions go on once the spool's pending bytes fall below this (bytes). */
      lowWaterBytes: number;
      /** A waiting action is refused when nothing was acknowledged for this long (ms). */
      stallMs: number;
    },
  ) {
    for (const ev of spool.recovered()) {
      this.pending.push(ev);
      this.counters.recovered++;
    }
    this.syncTimer = setInterval(() => spool.sync(), opts.fsyncIntervalMs);
    this.syncTimer.unref();
    if (this.size()) this.schedule(0);
  }

  /** Keep `ev` (spool first, synchronously) and send it soon. Never waits on the network. */
  enqueue(ev: SpoolEvent): void {
    this.spool.append(ev);
    this.pending.push(ev);
    if (this.timer === null) this.schedule(this.opts.flushIntervalMs);
  }

  /** Reports not yet acknowledged. */
  private size(): number {
    return this.pending.length - this.head;
  }

  /**
   * Whether a new action must wait for room ({@link whenRoom}): the spool is at its bound, or earlier actions wait.
   * Synchronous and allocation-free: the path of every action while there is room.
   */
  mustWait(): boolean {
    return this.waiters.length > 0 || this.spool.full();
  }

  /**
   * Wait for room in the spool. Resolves with null once the pending bytes fell below the low-water mark (waiting
   * actions go on in arrival order), or with why the action is refused: nothing was acknowledged for `stallMs` while
   * it waited (then later actions are refused at once until the next acknowledgement), or the governor is closing.
   * Woken by acknowledgements, never by polling.
   */
  whenRoom(): Promise<string | null> {
    const refused = this.closing ?? this.refusing;
    if (refused !== null) return Promise.resolve(refused);
    if (!this.mustWait()) return Promise.resolve(null);
    if (this.waiters.length === 0) this.waitingSince = Date.now();
    this.waited++;
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.armStall();
    });
  }

  /** Refuse every waiting action and every later one with `reason` (the governor is closing). */
  refuseWaiting(reason: string): void {
    this.closing = reason;
    this.settleWaiters(reason);
  }

  /** Counters. */
  stats(): ReporterStats {
    return { pending: this.size(), ...this.counters, waited: this.waited, last_error: this.lastError };
  }

  /**
   * Send until nothing is pending or `timeoutMs` passes. Resolves with the number still pending (0 = all delivered).
   */
  async drain(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.size() > 0 && Date.now() < deadline) {
      if (this.inFlight) await this.inFlight;
      else if (Date.now() >= this.nextAttemptAt) await this.flushOnce();
      else await sleep(Math.max(0, Math.min(this.nextAttemptAt - Date.now(), deadline - Date.now(), 1000)));
    }
    return this.size();
  }

  /** Stop the timers (pending reports stay in the spool). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    clearInterval(this.syncTimer);
    this.refuseWaiting('the governor is closed');
  }

  /** The platform acknowledged (or refused for good) reports: the stall clock restarts; waiting actions go on below the low-water mark. */
  private progressed(): void {
    this.lastProgressAt = Date.now();
    this.refusing = null;
    if (this.waiters.length > 0 && this.spool.pendingBytes() < this.opts.lowWaterBytes) this.settleWaiters(null);
  }

  /** Settle every waiting action, oldest first, with `refused` (null: go on). */
  private settleWaiters(refused: string | null): void {
    if (this.stallTimer) {
      clearTimeout(this.stallTimer);
      this.stallTimer = null;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(refused);
  }

  /**
   * Check for a stall when the oldest waiting action has waited `stallMs` with no acknowledgement. The timer is not
   * unref'd: a waiting action keeps the process alive until it is settled.
   */
  private armStall(): void {
    if (this.stallTimer !== null || this.waiters.length === 0) return;
    const due = Math.max(this.lastProgressAt, this.waitingSince) + this.opts.stallMs;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = null;
      if (this.waiters.length === 0) return;
      if (Date.now() < Math.max(this.lastProgressAt, this.waitingSince) + this.opts.stallMs) return this.armStall();
      this.refusing = `the report spool is full (${this.spool.pendingBytes()} bytes not yet acknowledged) and the platform acknowledged nothing for ${this.opts.stallMs} ms (${this.lastError ?? 'no error yet'}); new actions are refused until reports are delivered`;
      this.settleWaiters(this.refusing);
    }, Math.max(0, due - Date.now()));
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.stopped) return;
    const wait = Math.max(delayMs, this.nextAttemptAt - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flushOnce().then(() => {
        if (this.size()) this.schedule(this.opts.flushIntervalMs);
      });
    }, wait);
    this.timer.unref();
  }

  /** One request with the oldest pending reports. Never throws. */
  private flushOnce(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.size() === 0) return Promise.resolve();
    this.inFlight = this.send().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async send(): Promise<void> {
    const batch: SpoolEvent[] = [];
    let bytes = 16;
    for (let i = this.head; i < this.pending.length; i++) {
      const ev = this.pending[i];
      const n = JSON.stringify(ev).length + 1;
      if (batch.length > 0 && (batch.length >= this.batchEvents || bytes + n > BATCH_BYTES)) break;
      batch.push(ev);
      bytes += n;
    }
    // The events as ingest takes them (a report's act span `traceparent` stays here: the spec's event has no such
    // field), and the act spans the batch's span links to.
    const events: IngestEvent[] = new Array(batch.length);
    const traceparents: Array<string | undefined> = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const ev = batch[i];
      traceparents[i] = ev.traceparent;
      events[i] = (ev.traceparent === undefined ? ev : { id: ev.id, type: ev.type, timestamp: ev.timestamp, body: ev.body }) as IngestEvent;
    }
    try {
      const res = await withReportSpan(traceparents, (headers) => this.client.ingest(events, headers));
      // Ids of this batch only (the spool forgets each acknowledged id once).
      const inBatch = new Map<string, SpoolEvent>();
      for (const ev of batch) inBatch.set(ev.id, ev);
      const acked: string[] = [];
      for (const s of res.successes) if (inBatch.has(s.id)) acked.push(s.id);
      const refused: Array<{ event: SpoolEvent; status: number; message: string }> = [];
      for (const e of res.errors) {
        // 503 (and any 5xx) per event: transient; the event stays pending.
        if (e.status >= 500 || e.status === 429 || e.id === null) continue;
        const event = inBatch.get(e.id);
        if (event) refused.push({ event, status: e.status, message: e.message });
      }
      this.spool.ack(acked);
      this.counters.delivered += acked.length;
      if (refused.length) this.spool.reject(refused);
      this.settled(batch, [...acked, ...refused.map((r) => r.event.id)]);
      if (acked.length > 0 || refused.length > 0) this.progressed();
      if (refused.length) {
        this.counters.rejected += refused.length;
        this.opts.onError(`the platform refused ${refused.length} report(s) for good: ${refused.map((r) => `${r.event.id} (${r.status} ${r.message})`).join('; ').slice(0, 2000)}`, refused.map((r) => r.event));
      }
      const retryable = res.errors.length - refused.length;
      if (retryable > 0) this.backoff(`${retryable} report(s) answered 503; retrying`);
      else {
        this.batchEvents = BATCH_EVENTS;
        this.failures = 0;
        this.nextAttemptAt = 0;
        this.lastError = null;
      }
    } catch (err) {
      const tooLarge = err instanceof RangeError || (err instanceof AgpHttpError && err.status === 413);
      if (tooLarge && batch.length > 1) {
        // The request as a whole is too large for the platform (or a proxy before it): send fewer at a time.
        this.batchEvents = Math.max(1, Math.floor(batch.length / 2));
        return;
      }
      if (tooLarge && batch.length === 1) {
        // One report alone is over the platform's request limit: it can never be delivered.
        this.spool.reject([{ event: batch[0], status: 413, message: err.message }]);
        this.settled(batch, [batch[0].id]);
        this.counters.rejected++;
        this.progressed();
        this.opts.onError(`report ${batch[0].id} is too large to send: ${err.message}`, [batch[0]]);
        return;
      }
      const message = err instanceof AgpHttpError || err instanceof AgpNetworkError || err instanceof Error ? err.message : String(err);
      this.backoff(message);
      if (err instanceof AgpHttpError && (err.status === 401 || err.status === 403)) this.opts.onError(`reports are not accepted (${message}); they stay pending`);
    }
  }

  /**
   * Forget the reports of `batch` (the oldest pending ones, sent together) whose ids are in `done`; the others stay
   * pending, first, in their order.
   */
  private settled(batch: readonly SpoolEvent[], done: readonly string[]): void {
    if (done.length === 0) return;
    const gone = new Set(done);
    const keep = batch.filter((ev) => !gone.has(ev.id));
    const end = this.head + batch.length;
    for (let i = this.head; i < end; i++) (this.pending as Array<SpoolEvent | undefined>)[i] = undefined;
    this.head = end - keep.length;
    for (let i = 0; i < keep.length; i++) this.pending[this.head + i] = keep[i];
    // Drop the forgotten front once it is most of the array (amortised O(1) per report).
    if (this.head === this.pending.length) {
      this.pending = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
  }

  /** Wait before the next attempt: 250 ms doubling to 30 s, jittered to 50–100 % (the client already honoured `Retry-After`). */
  private backoff(message: string): void {
    this.lastError = message;
    const exp = Math.min(30_000, 250 * 2 ** this.failures++);
    this.nextAttemptAt = Date.now() + exp * (0.5 + Math.random() * 0.5);
  }
}

