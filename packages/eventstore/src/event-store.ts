/**
 * The SQL event store: one table of events with a global position, one row per stream with its version,
 * one row per subscription checkpoint. The same SQL runs on PostgreSQL and PGlite.
 * Source: architecture §3 (Event store).
 *
 * Ordering: appends take one transaction-scoped advisory lock, so positions are handed out and committed
 * in the same order. A catch-up subscription that reads `position > checkpoint` therefore never skips an
 * event that commits later with a smaller position (the classic bigserial gap problem).
 */
import { WrongExpectedVersionError } from '@agp/runtime';
import { splitDuplicates, storedEventIds } from './append-plan.js';
import { CatchUpSubscription, DEFAULT_IDLE_POLL_MS, type CatchUpSource } from './catch-up.js';
import { CHECKPOINTS_DDL, initCheckpoint, setCheckpoint } from './checkpoints.js';
import { migrateSchema } from './schema.js';
import type { AppendRequest, AppendResult, EventStore, NewEvent, Sql, SqlExecutor, StoredEvent, Subscription, SubscriptionOptions } from './types.js';

/** Advisory lock key serialising appends ("AGPEVNTS" folded to 32 bits). */
const APPEND_LOCK = 0x41475045;

/** DDL of the store's own tables (the checkpoint tables are `checkpoints.ts`'s). Idempotent. */
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


/**
 * The {@link EventStore} over a {@link Sql}. Create with {@link createEventStore}.
 */
export class SqlEventStore implements EventStore, CatchUpSource {
  private readonly wakers = new Set<() => void>();

  /** `sql` holds both the events and, shared with the read models, the checkpoints. */
  constructor(
    private readonly sql: Sql,
    /** Idle poll of subscriptions that set none, in ms. */
    private readonly idlePollMs = DEFAULT_IDLE_POLL_MS,
  ) {}

  get kind(): 'postgres' | 'pglite' {
    return this.sql.kind;
  }

  async migrate(): Promise<void> {
    // Several processes may start at once; the lock makes CREATE ... IF NOT EXISTS race-free.
    await migrateSchema(this.sql, EVENT_STORE_DDL + CHECKPOINTS_DDL);
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
      const { fresh, duplicates } = splitDuplicates(req.events, seen);
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
   * checkpoint to `head` without reading the events of other types at all.
   */
  async readPage(fromPosition: bigint, limit: number, eventTypes: string[]): Promise<{ events: StoredEvent[]; head: bigint }> {
    const { rows } = await this.sql.query<EventRow & { head: string | null; event_id: string | null }>(
      `SELECT h.head::text AS head, e.* FROM (SELECT max(global_position) AS head FROM agp_events) AS h
       LEFT JOIN LATERAL (${SELECT_EVENT} WHERE global_position > $1 AND event_type = ANY($3::text[]) ORDER BY agp_events.global_position LIMIT $2) AS e ON true`,
      [String(fromPosition), limit, eventTypes],
      { prepare: true },
    );
    const head = rows[0]?.head ? BigInt(rows[0].head) : 0n;
    return { events: rows.filter((r) => r.event_id !== null).map(toStored), head };
  }

  async headPosition(): Promise<bigint> {
    const { rows } = await this.sql.query<{ head: string | null }>('SELECT max(global_position)::text AS head FROM agp_events', [], { prepare: true });
    return rows[0]?.head ? BigInt(rows[0].head) : 0n;
  }

  hasEvents(eventIds: readonly string[]): Promise<Set<string>> {
    return storedEventIds(this.sql, 'agp_events', eventIds);
  }


  async resetCheckpoint(name: string, position = 0n): Promise<void> {
    await setCheckpoint(this.sql, name, position);
  }

  async startCheckpointAtHead(name: string): Promise<void> {
    await initCheckpoint(this.sql, name, await this.headPosition());
  }

  subscribe(options: SubscriptionOptions): Subscription {
    return new CatchUpSubscription(this, this.sql, options, this.wakers, this.idlePollMs);
  }

  /** `SELECT 1` on the store's database (the events live beside the read models). `timeoutMs` is left to the pool's own. */
  async ready(): Promise<void> {
    await this.sql.query('SELECT 1');
  }

  async close(): Promise<void> {
    this.wakers.clear();
    await this.sql.close();
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

/** The event store over `sql` (either SQL adapter). Call `migrate()` before use. */
export function createEventStore(sql: Sql, options: EventStoreOptions = {}): EventStore {
  return new SqlEventStore(sql, options.idlePollMs);
}
