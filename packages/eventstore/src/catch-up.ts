/**
 * Catch-up subscriptions over any adapter of the {@link EventStore} port: read the global log after the checkpoint,
 * hand each batch to the handler inside a read-model transaction that also advances the checkpoint
 * (`checkpoints.ts`). The log is read through {@link CatchUpSource} (the adapter's `readAll`, or one read that also
 * returns the head), so the same loop runs on PostgreSQL, PGlite and KurrentDB.
 * Source: architecture §3 (Projections: checkpoint in the same transaction as the writes).
 */
import { isTransientInfraError } from '@agp/runtime';
import { checkpointPosition, deadLetter, lockCheckpoint, saveCheckpoint } from './checkpoints.js';
import { isDataError } from './data-errors.js';
import type { EventStore, Sql, StoredEvent, Subscription, SubscriptionOptions } from './types.js';

/** Idle poll interval of a catch-up subscription whose options and adapter set none, in ms. */
export const DEFAULT_IDLE_POLL_MS = 200;

/**
 * A type-filtered subscription that finds only events of other types moves its checkpoint in memory, and stores it at
 * most this often (ms); any batch it applies stores it at once. Source: architecture §3 (Projections).
 */
export const SKIPPED_CHECKPOINT_MS = 1000;

/** What a catch-up subscription reads: the adapter's log. */
export interface CatchUpSource extends Pick<EventStore, 'readAll'> {
  /**
   * The events after `fromPosition` whose type is one of `eventTypes` (at most `limit`, in global order), and a head
   * position such that every event at or below it that has those types is among the events returned or before them
   * (read the head first, then the events; or both in one snapshot). A subscription that got fewer than `limit`
   * events moves its checkpoint to `head` without reading the events of other types.
   */
  readPage(fromPosition: bigint, limit: number, eventTypes: string[]): Promise<{ events: StoredEvent[]; head: bigint }>;
}

/** {@link CatchUpSource.readPage} from the port alone: the head first, then the filtered read. */
export async function readPageOf(store: Pick<EventStore, 'readAll' | 'headPosition'>, fromPosition: bigint, limit: number, eventTypes: string[]): Promise<{ events: StoredEvent[]; head: bigint }> {
  const head = await store.headPosition();
  const events = head > fromPosition ? await store.readAll(fromPosition, limit, eventTypes) : [];
  return { events, head };
}

/**
 * A catch-up subscription: reads after its checkpoint in global order (from `source`), hands each batch to the handler
 * inside a transaction of the read-model database `db` that also advances the checkpoint. Processes running the same subscription
 * compete safely: the checkpoint row is locked, and a process that finds it moved re-reads from there.
 */
export class CatchUpSubscription implements Subscription {
  /** Position applied in this process (the read model is current up to it). */
  private pos = -1n;
  /** The stored checkpoint as this process last read or wrote it; `pos` runs ahead of it over skipped events. */
  private persisted = -1n;
  /** When `persisted` was last read or written (epoch ms). */
  private persistedAt = 0;
  private stopped = false;
  private wake: () => void = () => {};
  private readonly waiters = new Set<{ target: bigint; resolve: () => void }>();
  private readonly loop: Promise<void>;
  /** The event types handed to the handler (all when undefined); only these are read. */
  private readonly types?: string[];

  constructor(
    private readonly source: CatchUpSource,
    private readonly db: Sql,
    private readonly opts: SubscriptionOptions,
    private readonly wakers: Set<() => void>,
    /** Idle poll when the options set none, in ms (the adapter's default). */
    private readonly defaultIdlePollMs = DEFAULT_IDLE_POLL_MS,
  ) {
    this.types = opts.eventTypes ? [...opts.eventTypes] : undefined;
    this.wakers.add(this.wakeUp);
    this.loop = this.run();
  }

  /** Set when woken while busy, so the next idle wait returns at once instead of missing the wake-up. */
  private dirty = false;
  private readonly wakeUp = () => {
    this.dirty = true;
    this.wake();
  };

  position(): bigint {
    return this.pos < 0n ? 0n : this.pos;
  }

  waitFor(position: bigint, timeoutMs = 5000): Promise<void> {
    if (this.pos >= position) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = {
        target: position,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`subscription ${this.opts.name} did not reach position ${position} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(w);
      this.wakeUp();
    });
  }

  /**
   * An append in this process applied this subscription's read model inline and committed its checkpoint at
   * `position` (`SqlEventStore.append`): the read model is current up to it, so move on without reading those events
   * back. Never moves backwards.
   */
  inlineApplied(position: bigint): void {
    if (position <= this.pos || this.stopped) return;
    this.pos = position;
    if (position > this.persisted) this.persisted = position;
    this.persistedAt = Date.now();
    this.advanced();
  }

  /** An append in this process committed events up to `head`: read them unless this subscription is already there. */
  appended(head: bigint): void {
    if (this.pos < head) this.wakeUp();
  }

  /** The subscription's name (its checkpoint's). */
  get name(): string {
    return this.opts.name;
  }

  private advanced(): void {
    for (const w of this.waiters) {
      if (this.pos >= w.target) {
        this.waiters.delete(w);
        w.resolve();
      }
    }
  }

  private idle(ms: number): Promise<void> {
    if (this.dirty) {
      this.dirty = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    const sql = this.db;
    const batchSize = this.opts.batchSize ?? 500;
    let backoff = 100;
    /** Epoch ms of the first failure of a transient outage (the database down), 0 while healthy. */
    let outageSince = 0;
    /** After a batch failed on its data, events up to this position are handled one at a time. */
    let isolateUntil = -1n;
    while (!this.stopped) {
      let events: StoredEvent[] = [];
      try {
        if (this.pos < 0n) {
          this.pos = this.persisted = (await checkpointPosition(sql, this.opts.name)) ?? 0n;
          this.persistedAt = Date.now();
          this.advanced();
        }
        this.dirty = false;
        // The checkpoint this read starts from, captured before it: an inline apply in this process (`inlineApplied`)
        // may move `pos` and `persisted` while the read is in flight, and the batch read must then be dropped, never
        // applied against the moved checkpoint (it would apply those events a second time).
        const readFrom = this.pos;
        const from = this.persisted;
        const limit = this.pos < isolateUntil ? 1 : batchSize;
        // With an event-type filter, only the wanted events are read; when fewer than `limit` came back, the checkpoint
        // passes the others up to the head of the same snapshot (which is at or past every event read).
        let last: bigint;
        if (this.types) {
          const read = await this.source.readPage(this.pos, limit, this.types);
          events = read.events;
          const lastRead = events.at(-1)?.global_position ?? this.pos;
          last = events.length < limit && read.head > lastRead ? read.head : lastRead;
        } else {
          events = await this.source.readAll(this.pos, limit);
          last = events.at(-1)?.global_position ?? this.pos;
        }
        if (outageSince) {
          this.opts.onRecovered?.(Date.now() - outageSince);
          outageSince = 0;
        }
        if (this.pos !== readFrom) continue; // moved by an inline apply meanwhile: read again from there
        if (last <= this.pos) {
          await this.idle(this.opts.idlePollMs ?? this.defaultIdlePollMs);
          continue;
        }
        // Only events of other types up to the head: the read model is current up to it. Move on in memory (waiters
        // resolve at once) and store the checkpoint at most every SKIPPED_CHECKPOINT_MS, not once per append of an
        // event this projection ignores: a restart re-reads at most that much of the log, and finds nothing to apply.
        if (events.length === 0 && Date.now() - this.persistedAt < SKIPPED_CHECKPOINT_MS) {
          this.pos = last;
          this.advanced();
          await this.idle(this.opts.idlePollMs ?? this.defaultIdlePollMs);
          continue;
        }
        const moved = await sql.transaction(async (tx) => {
          await tx.query('SET LOCAL synchronous_commit = off');
          const stored = await lockCheckpoint(tx, this.opts.name);
          if (stored !== from) return stored; // another process advanced it: resume from there (it never moves back)
          if (events.length > 0) await this.opts.handler(events, tx);
          await saveCheckpoint(tx, this.opts.name, last);
          return last;
        });
        // Another process may have stored a position behind this one's skipped-ahead `pos`: resume from the stored one
        // (re-reading only events the type filter skips, or that the other process has applied).
        // The stored checkpoint wins, even when it is behind (a replay reset it). If an inline apply moved it further
        // meanwhile, the next batch finds the stored one moved and resumes from there: a re-read, never a second apply.
        this.pos = this.persisted = moved;
        this.persistedAt = Date.now();
        this.advanced();
        backoff = 100;
        if (moved === last && events.length > 0 && this.opts.onCommitted) {
          try {
            this.opts.onCommitted(events);
          } catch {
            /* documented: ignored */
          }
        }
      } catch (err) {
        if (this.stopped) break;
        // A data error (SQLSTATE 22) will fail the same way on every retry: find the event that causes it by
        // handling the batch one event at a time, then park that event and move on instead of stalling forever.
        if (isDataError(err) && events.length > 1) {
          isolateUntil = events[events.length - 1].global_position;
          continue;
        }
        if (isDataError(err) && events.length === 1) {
          try {
            await this.park(events[0], err);
            backoff = 100;
            continue;
          } catch (parkErr) {
            err = parkErr;
          }
        }
        // The database being down is reported once per outage; the loop never dies and resumes from its checkpoint.
        const transient = isTransientInfraError(err);
        if (!transient || !outageSince) this.opts.onError?.(err);
        if (transient && !outageSince) outageSince = Date.now();
        await this.idle(backoff + Math.floor(Math.random() * (backoff / 4)));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  /**
   * Keep an event this projection can never apply in `agp_projection_dead_letters` (with the error) and move the
   * checkpoint past it, in one transaction; reported through `onError`. Replaying the projection (reset its
   * checkpoint) tries it again.
   */
  private async park(event: StoredEvent, err: unknown): Promise<void> {
    const from = this.persisted;
    const moved = await this.db.transaction(async (tx) => {
      const stored = await lockCheckpoint(tx, this.opts.name);
      if (stored !== from) return stored;
      await deadLetter(tx, this.opts.name, event, err);
      await saveCheckpoint(tx, this.opts.name, event.global_position);
      return event.global_position;
    });
    this.pos = this.persisted = moved;
    this.persistedAt = Date.now();
    this.advanced();
    this.opts.onError?.(new Error(`subscription ${this.opts.name}: event ${event.event_id} (${event.type}, position ${event.global_position}) can never be applied; parked in agp_projection_dead_letters: ${String((err as Error)?.message ?? err)}`, { cause: err }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakers.delete(this.wakeUp);
    this.wakeUp();
    await this.loop;
  }
}

