/**
 * The SQL event store: one table of events with a global position, one row per stream with its version,
 * one row per subscription checkpoint. The same SQL runs on PostgreSQL and PGlite.
 * Source: architecture §3 (Event store).
 *
 * Ordering: appends take one transaction-scoped advisory lock, so positions are handed out and committed
 * in the same order. A catch-up subscription that reads `position > checkpoint` therefore never skips an
 * event that commits later with a smaller position (the classic bigserial gap problem).
 */
import { isTransientInfraError, WrongExpectedVersionError } from '@agp/runtime';
import { isDataError } from './data-errors.js';
import { checkpointPosition } from './pages.js';
import { migrateSchema } from './schema.js';
import type { AppendRequest, AppendResult, EventStore, NewEvent, Sql, SqlExecutor, StoredEvent, Subscription, SubscriptionOptions } from './types.js';

/** Advisory lock key serialising appends ("AGPEVNTS" folded to 32 bits). */
const APPEND_LOCK = 0x41475045;

/**
 * A type-filtered subscription that finds only events of other types moves its checkpoint in memory, and stores it at
 * most this often (ms); any batch it applies stores it at once. Source: architecture §3 (Projections).
 */
export const SKIPPED_CHECKPOINT_MS = 1000;

/** DDL of the store. Idempotent. */
export const EVENT_STORE_DDL = `
CREATE TABLE IF NOT EXISTS agp_events (
  global_position bigserial PRIMARY KEY,
  event_id text NOT NULL UNIQUE,
  stream_id text NOT NULL,
  stream_version integer NOT NULL,
  event_type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  organization_id text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, stream_version)
);
CREATE TABLE IF NOT EXISTS agp_streams (
  stream_id text PRIMARY KEY,
  version integer NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS agp_checkpoints (
  name text PRIMARY KEY,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS agp_projection_dead_letters (
  subscription text NOT NULL,
  global_position bigint NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  stream_id text NOT NULL,
  error text NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription, global_position)
);
`;

interface EventRow {
  global_position: string;
  event_id: string;
  stream_id: string;
  stream_version: number;
  event_type: string;
  data: Record<string, unknown>;
  metadata: NewEvent['metadata'];
  recorded_at: Date | string;
}

const SELECT_EVENT = `SELECT global_position::text AS global_position, event_id, stream_id, stream_version, event_type, data, metadata, recorded_at FROM agp_events`;

function toStored(r: EventRow): StoredEvent {
  return {
    event_id: r.event_id,
    type: r.event_type,
    data: r.data,
    metadata: r.metadata,
    stream_id: r.stream_id,
    stream_version: r.stream_version,
    global_position: BigInt(r.global_position),
    recorded_at: new Date(r.recorded_at).toISOString(),
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The {@link EventStore} over a {@link Sql}. Create with {@link createEventStore}.
 */
export class SqlEventStore implements EventStore {
  private readonly wakers = new Set<() => void>();

  constructor(
    readonly sql: Sql,
    /** Default idle poll of subscriptions, in ms. */
    readonly idlePollMs = 200,
  ) {}

  async migrate(): Promise<void> {
    // Several processes may start at once; the lock makes CREATE ... IF NOT EXISTS race-free.
    await migrateSchema(this.sql, EVENT_STORE_DDL);
  }

  async append(requests: AppendRequest[]): Promise<AppendResult[]> {
    if (requests.length === 0) return [];
    const results = await this.sql.transaction((tx) => this.appendIn(tx, requests));
    if (results.some((r) => r.appended.length > 0)) for (const wake of this.wakers) wake();
    return results;
  }

  private async appendIn(tx: SqlExecutor, requests: AppendRequest[]): Promise<AppendResult[]> {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
    const allIds = requests.flatMap((r) => r.events.map((e) => e.event_id));
    const streamIds = [...new Set(requests.map((r) => r.stream_id))];
    const { rows: dupRows } = await tx.query<{ event_id: string }>(`SELECT event_id FROM agp_events WHERE event_id IN (SELECT jsonb_array_elements_text($1::jsonb))`, [
      JSON.stringify(allIds),
    ]);
    const { rows: versionRows } = await tx.query<{ stream_id: string; version: number }>(
      `SELECT stream_id, version FROM agp_streams WHERE stream_id IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [JSON.stringify(streamIds)],
    );
    const seen = new Set(dupRows.map((r) => r.event_id));
    const versions = new Map(versionRows.map((r) => [r.stream_id, r.version]));
    const rows: Array<{ event_id: string; stream_id: string; stream_version: number; event_type: string; data: unknown; metadata: unknown; organization_id: string }> = [];
    const pending: Array<{ stream_id: string; next: number; ids: string[]; duplicates: string[] }> = [];

    for (const req of requests) {
      const current = versions.get(req.stream_id) ?? 0;
      const fresh: NewEvent[] = [];
      const duplicates: string[] = [];
      for (const e of req.events) {
        if (seen.has(e.event_id)) duplicates.push(e.event_id);
        else {
          seen.add(e.event_id);
          fresh.push(e);
        }
      }
      if (fresh.length > 0) {
        const exp = req.expected_version ?? 'any';
        const ok = exp === 'any' || (exp === 'no_stream' ? !versions.has(req.stream_id) : exp === current);
        if (!ok) throw new WrongExpectedVersionError(req.stream_id, exp, current);
      }
      let v = current;
      for (const e of fresh) {
        v += 1;
        rows.push({ event_id: e.event_id, stream_id: req.stream_id, stream_version: v, event_type: e.type, data: e.data, metadata: e.metadata, organization_id: e.metadata.organization_id });
      }
      if (fresh.length > 0) versions.set(req.stream_id, v);
      pending.push({ stream_id: req.stream_id, next: v, ids: fresh.map((e) => e.event_id), duplicates });
    }

    const stored = new Map<string, StoredEvent>();
    if (rows.length > 0) {
      // Only the columns the database assigns come back; the rest is what was sent (no JSON round trip).
      const { rows: inserted } = await tx.query<{ global_position: string; event_id: string; recorded_at: Date | string }>(
        `INSERT INTO agp_events (event_id, stream_id, stream_version, event_type, data, metadata, organization_id)
         SELECT x.event_id, x.stream_id, x.stream_version, x.event_type, x.data, x.metadata, x.organization_id
           FROM jsonb_to_recordset($1::jsonb) AS x(event_id text, stream_id text, stream_version integer, event_type text, data jsonb, metadata jsonb, organization_id text)
         RETURNING global_position::text AS global_position, event_id, recorded_at`,
        [JSON.stringify(rows)],
      );
      const sent = new Map(rows.map((r) => [r.event_id, r]));
      for (const r of inserted) {
        const row = sent.get(r.event_id)!;
        stored.set(r.event_id, {
          event_id: r.event_id,
          type: row.event_type,
          data: row.data as Record<string, unknown>,
          metadata: row.metadata as NewEvent['metadata'],
          stream_id: row.stream_id,
          stream_version: row.stream_version,
          global_position: BigInt(r.global_position),
          recorded_at: new Date(r.recorded_at).toISOString(),
        });
      }
      const touched = [...new Map(rows.map((r) => [r.stream_id, { stream_id: r.stream_id, version: versions.get(r.stream_id)! }])).values()];
      await tx.query(
        `INSERT INTO agp_streams (stream_id, version)
         SELECT x.stream_id, x.version FROM jsonb_to_recordset($1::jsonb) AS x(stream_id text, version integer)
         ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, updated_at = now()`,
        [JSON.stringify(touched)],
      );
    }
    return pending.map((p) => ({
      stream_id: p.stream_id,
      next_version: versions.get(p.stream_id) ?? 0,
      appended: p.ids.map((id) => stored.get(id)!).sort((a, b) => a.stream_version - b.stream_version),
      duplicates: p.duplicates,
    }));
  }

  async readStream(streamId: string): Promise<StoredEvent[]> {
    const { rows } = await this.sql.query<EventRow>(`${SELECT_EVENT} WHERE stream_id = $1 ORDER BY stream_version`, [streamId]);
    return rows.map(toStored);
  }

  async readAll(fromPosition: bigint, limit: number, eventTypes?: string[]): Promise<StoredEvent[]> {
    const { rows } = eventTypes
      ? await this.sql.query<EventRow>(
          `${SELECT_EVENT} WHERE global_position > $1 AND event_type IN (SELECT jsonb_array_elements_text($3::jsonb)) ORDER BY agp_events.global_position LIMIT $2`,
          [String(fromPosition), limit, JSON.stringify(eventTypes)],
        )
      : await this.sql.query<EventRow>(`${SELECT_EVENT} WHERE global_position > $1 ORDER BY agp_events.global_position LIMIT $2`, [String(fromPosition), limit]);
    return rows.map(toStored);
  }

  /**
   * The events after `fromPosition` whose type is one of `eventTypes` (at most `limit`, in global order), and the
   * store's head position, both from one snapshot. Appends commit in position order (the append lock), so every event
   * at or below `head` is visible to that snapshot: a subscription that got fewer than `limit` events may move its
   * checkpoint to `head` without reading the events of other types at all (docs/decisions.md (The read path): each service's subscriptions
   * used to read, and parse, every event of every type).
   */
  async readTypesAfter(fromPosition: bigint, limit: number, eventTypes: string[]): Promise<{ events: StoredEvent[]; head: bigint }> {
    const { rows } = await this.sql.query<EventRow & { head: string | null; event_id: string | null }>(
      `SELECT h.head::text AS head, e.* FROM (SELECT max(global_position) AS head FROM agp_events) AS h
       LEFT JOIN LATERAL (${SELECT_EVENT} WHERE global_position > $1 AND event_type = ANY($3::text[]) ORDER BY agp_events.global_position LIMIT $2) AS e ON true`,
      [String(fromPosition), limit, eventTypes],
      { prepare: true },
    );
    const head = rows[0]?.head ? BigInt(rows[0].head) : 0n;
    return { events: rows.filter((r) => r.event_id !== null).map(toStored), head };
  }

  async resetCheckpoint(name: string, position = 0n): Promise<void> {
    await this.sql.query(
      `INSERT INTO agp_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()`,
      [name, String(position)],
    );
  }

  subscribe(options: SubscriptionOptions): Subscription {
    return new CatchUpSubscription(this, options, this.wakers);
  }

  async close(): Promise<void> {
    this.wakers.clear();
    await this.sql.close();
  }
}

/**
 * A catch-up subscription: reads after its checkpoint in global order, hands each batch to the handler
 * inside a transaction that also advances the checkpoint. Processes running the same subscription
 * compete safely: the checkpoint row is locked, and a process that finds it moved re-reads from there.
 */
class CatchUpSubscription implements Subscription {
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
    private readonly store: SqlEventStore,
    private readonly opts: SubscriptionOptions,
    private readonly wakers: Set<() => void>,
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
    const { sql } = this.store;
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
        const limit = this.pos < isolateUntil ? 1 : batchSize;
        // With an event-type filter, only the wanted events are read; when fewer than `limit` came back, the checkpoint
        // passes the others up to the head of the same snapshot (which is at or past every event read).
        let last: bigint;
        if (this.types) {
          const read = await this.store.readTypesAfter(this.pos, limit, this.types);
          events = read.events;
          last = events.length < limit ? read.head : events[events.length - 1].global_position;
        } else {
          events = await this.store.readAll(this.pos, limit);
          last = events.at(-1)?.global_position ?? this.pos;
        }
        if (outageSince) {
          this.opts.onRecovered?.(Date.now() - outageSince);
          outageSince = 0;
        }
        if (last <= this.pos) {
          await this.idle(this.opts.idlePollMs ?? this.store.idlePollMs);
          continue;
        }
        // Only events of other types up to the head: the read model is current up to it. Move on in memory (waiters
        // resolve at once) and store the checkpoint at most every SKIPPED_CHECKPOINT_MS, not once per append of an
        // event this projection ignores: a restart re-reads at most that much of the log, and finds nothing to apply.
        if (events.length === 0 && Date.now() - this.persistedAt < SKIPPED_CHECKPOINT_MS) {
          this.pos = last;
          this.advanced();
          await this.idle(this.opts.idlePollMs ?? this.store.idlePollMs);
          continue;
        }
        const from = this.persisted;
        const moved = await sql.transaction(async (tx) => {
          await tx.query('SET LOCAL synchronous_commit = off');
          await tx.query(`INSERT INTO agp_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING`, [this.opts.name]);
          const { rows } = await tx.query<{ position: string }>('SELECT position::text AS position FROM agp_checkpoints WHERE name = $1 FOR UPDATE', [this.opts.name]);
          const stored = BigInt(rows[0].position);
          if (stored !== from) return stored; // another process advanced it: resume from there (it never moves back)
          if (events.length > 0) await this.opts.handler(events, tx);
          await tx.query('UPDATE agp_checkpoints SET position = $2, updated_at = now() WHERE name = $1', [this.opts.name, String(last)]);
          return last;
        });
        // Another process may have stored a position behind this one's skipped-ahead `pos`: resume from the stored one
        // (re-reading only events that the type filter skips, or that the other process has applied).
        this.pos = this.persisted = moved;
        this.persistedAt = Date.now();
        this.advanced();
        backoff = 100;
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
    const moved = await this.store.sql.transaction(async (tx) => {
      const { rows } = await tx.query<{ position: string }>('SELECT position::text AS position FROM agp_checkpoints WHERE name = $1 FOR UPDATE', [this.opts.name]);
      const stored = rows[0] ? BigInt(rows[0].position) : 0n;
      if (stored !== from) return stored;
      await tx.query(
        `INSERT INTO agp_projection_dead_letters (subscription, global_position, event_id, event_type, stream_id, error)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [this.opts.name, String(event.global_position), event.event_id, event.type, event.stream_id, String((err as Error)?.message ?? err)],
      );
      await tx.query(
        `INSERT INTO agp_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()`,
        [this.opts.name, String(event.global_position)],
      );
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

/** Options of {@link createEventStore}. */
export interface EventStoreOptions {
  /**
   * Idle poll interval of the store's catch-up subscriptions that set none, in ms. Appends through this store wake its
   * subscriptions at once; the poll only finds appends made by other processes. One process that owns the database
   * (embedded mode) can poll rarely. @default 200
   */
  idlePollMs?: number;
}

/** The event store over `sql` (either adapter). Call `migrate()` before use. */
export function createEventStore(sql: Sql, options: EventStoreOptions = {}): EventStore {
  return new SqlEventStore(sql, options.idlePollMs);
}
