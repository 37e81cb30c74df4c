/**
 * The SQL event store: one table of events with a global position, one row per stream with its version,
 * one row per subscription checkpoint. The same SQL runs on PostgreSQL and PGlite.
 * Source: architecture §3 (Event store).
 *
 * Ordering: appends take one transaction-scoped advisory lock, so positions are handed out and committed
 * in the same order. A catch-up subscription that reads `position > checkpoint` therefore never skips an
 * event that commits later with a smaller position (the classic bigserial gap problem).
 */
import { WrongExpectedVersionError, mayHoldUnstorableText, unstorableTextPaths } from '@agp/runtime';
import { splitDuplicates, storedEventIds } from './append-plan.js';
import { UnstorableTextError } from './data-errors.js';
import { CatchUpSubscription, DEFAULT_IDLE_POLL_MS, type CatchUpSource } from './catch-up.js';
import { CHECKPOINTS_DDL, initCheckpoint, lockCheckpoints, saveCheckpoints, setCheckpoint } from './checkpoints.js';
import { migrateSchema } from './schema.js';
import type { AppendOptions, AppendRequest, AppendResult, EventStore, InlineProjection, NewEvent, Sql, SqlExecutor, StoredEvent, Subscription, SubscriptionOptions } from './types.js';

/** Advisory lock key serialising appends ("AGPEVNTS" folded to 32 bits). */
const APPEND_LOCK = 0x41475045;

/**
 * DDL of the store's own tables (the checkpoint tables are `checkpoints.ts`'s). Idempotent. `data` and `metadata` are
 * `json` (the text as written: no query looks inside them, and storing and reading json costs PostgreSQL less than
 * jsonb); a table created when they were `jsonb` keeps them (the append statement follows the column type, see
 * {@link SqlEventStore.migrate}). Source: docs/decisions.md (Event store).
 */
export const EVENT_STORE_DDL = `
CREATE TABLE IF NOT EXISTS agp_events (
  global_position bigserial PRIMARY KEY,
  event_id text NOT NULL UNIQUE,
  stream_id text NOT NULL,
  stream_version integer NOT NULL,
  event_type text NOT NULL,
  data json NOT NULL,
  metadata json NOT NULL,
  organization_id text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, stream_version)
);
`;

/**
 * Remove the members at RFC 6901 JSON Pointers (`/reason`, `/changes/reason`) from `doc`. Mutates `doc`.
 * @returns whether anything was removed.
 */
export function removeMembers(doc: unknown, pointers: readonly string[]): boolean {
  let removed = false;
  for (const pointer of pointers) {
    const tokens = pointer.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    let parent: unknown = doc;
    for (const t of tokens.slice(0, -1)) parent = typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)[t] : undefined;
    const last = tokens.at(-1);
    if (last === undefined || typeof parent !== 'object' || parent === null || !Object.hasOwn(parent, last)) continue;
    delete (parent as Record<string, unknown>)[last];
    removed = true;
  }
  return removed;
}

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


/** An inline projection's handler failed: the append is made again without them (its catch-up applies the events). */
class InlineProjectionFailed extends Error {
  constructor(name: string, cause: unknown) {
    super(`inline projection ${name} failed: ${String((cause as Error)?.message ?? cause)}`, { cause });
  }
}

/**
 * The append's INSERT of its events, read from ONE JSON array: `json_to_recordset` into `json` columns (each document
 * is copied as sent), or for an events table created with `jsonb` columns `jsonb_to_recordset` (one jsonb parse of the
 * batch; json_to_recordset into jsonb columns would parse each document twice). Only the columns the database assigns
 * come back.
 */
const insertEvents = (type: 'json' | 'jsonb') => `INSERT INTO agp_events (event_id, stream_id, stream_version, event_type, data, metadata, organization_id)
         SELECT x.event_id, x.stream_id, x.stream_version, x.event_type, x.data, x.metadata, x.organization_id
           FROM ${type}_to_recordset($1::${type}) AS x(event_id text, stream_id text, stream_version integer, event_type text, data ${type}, metadata ${type}, organization_id text)
         RETURNING global_position::text AS global_position, event_id, floor(extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms`;

const byPosition = (a: StoredEvent, b: StoredEvent) => (a.global_position < b.global_position ? -1 : a.global_position > b.global_position ? 1 : 0);

/**
 * Inside an append's transaction, holding the append lock, after its events are inserted: apply each inline
 * projection whose checkpoint has every earlier event of its types applied, and move those checkpoints to the append's
 * last position. Returns the names applied.
 *
 * Why this never makes a catch-up skip an event: the append lock is held from before the positions are drawn until
 * commit, so every event with a position below this append's first belongs to a transaction that has already
 * committed (or rolled back) and is visible to this statement. A checkpoint at `c` is therefore safe to move to the
 * last position when no committed event of the projection's types lies in (c, first): checked by one index range
 * read (none when `c` is first - 1, the steady state). Otherwise the projection is left to its catch-up subscription,
 * which applies these events in order. The checkpoint rows are locked (name order), so a catch-up batch of the same
 * projection in flight commits first and this one sees its position. Source: docs/decisions.md (Inline projections).
 */
async function applyInline(tx: SqlExecutor, results: AppendResult[], inline: readonly InlineProjection[]): Promise<Set<string>> {
  const applied = new Set<string>();
  const events: StoredEvent[] = [];
  for (const r of results) for (const e of r.appended) events.push(e);
  if (events.length === 0) return applied;
  events.sort(byPosition);
  const first = events[0].global_position;
  const last = events[events.length - 1].global_position;
  // Steady state, one statement: every checkpoint that is at first - 1 moves to `last` (the UPDATE locks each row,
  // waiting for a catch-up batch of the same projection in flight, and re-checks it after that commits).
  const names = inline.map((p) => p.name);
  const { rows: moved } = await tx.query<{ name: string }>(
    'UPDATE agp_checkpoints SET position = $3, updated_at = now() WHERE name = ANY($1::text[]) AND position = $2 RETURNING name',
    [names, String(first - 1n), String(last)],
    { prepare: true },
  );
  for (const r of moved) applied.add(r.name);
  const behind: string[] = [];
  if (applied.size < inline.length) {
    const checkpoints = await lockCheckpoints(tx, names.filter((n) => !applied.has(n)));
    for (const p of inline) {
      if (applied.has(p.name)) continue;
      const at = checkpoints.get(p.name) ?? 0n;
      if (at >= first) continue; // a checkpoint set past the head (a replay's reset): nothing is safe to apply
      if (at < first - 1n) {
        const types = p.eventTypes ? [...p.eventTypes] : null;
        const { rows } = await tx.query(
          `SELECT 1 FROM agp_events WHERE global_position > $1 AND global_position < $2 AND ($3::text[] IS NULL OR event_type = ANY($3::text[])) LIMIT 1`,
          [String(at), String(first), types],
          { prepare: true },
        );
        if (rows.length > 0) continue; // its catch-up is behind: it applies these events after the earlier ones
      }
      behind.push(p.name);
    }
    if (behind.length > 0) await saveCheckpoints(tx, behind, last);
    for (const n of behind) applied.add(n);
  }
  for (const p of inline) {
    if (!applied.has(p.name)) continue;
    const mine = p.eventTypes ? events.filter((e) => p.eventTypes!.includes(e.type)) : events;
    if (mine.length > 0) await p.handler(mine, tx).catch((err: unknown) => Promise.reject(new InlineProjectionFailed(p.name, err)));
  }
  return applied;
}

/**
 * The {@link EventStore} over a {@link Sql}. Create with {@link createEventStore}.
 */
export class SqlEventStore implements EventStore, CatchUpSource {
  private readonly wakers = new Set<() => void>();
  /** The running catch-up subscriptions of this store, told of each append (and of inline applies) in this process. */
  private readonly subscriptions = new Set<CatchUpSubscription>();
  /** Appends apply {@link AppendOptions.inline} projections in their transaction. */
  readonly canInline = true;
  /** The append's INSERT for the events table's document columns (json, or jsonb in a table created before). */
  private insertEventsSql = insertEvents('json');

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
    // A table created with jsonb documents keeps them (no rewrite of the log at start); its appends parse the batch
    // as jsonb once. Without migrate() the json statement is used, which also stores into jsonb columns (a cast).
    const { rows } = await this.sql.query<{ data_type: string }>(
      "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'agp_events' AND column_name = 'data'",
    );
    this.insertEventsSql = insertEvents(rows[0]?.data_type === 'jsonb' ? 'jsonb' : 'json');
  }

  async append(requests: AppendRequest[], options: AppendOptions = {}): Promise<AppendResult[]> {
    if (requests.length === 0) return [];
    const inline = options.inline ?? [];
    const once = (withInline: readonly InlineProjection[]) =>
      this.sql.transaction(async (tx) => {
        const results = await this.appendIn(tx, requests);
        return { results, applied: withInline.length > 0 ? await applyInline(tx, results, withInline) : undefined };
      });
    // A read model that fails to apply never fails the append: it is made again without the inline projections, and
    // their catch-up subscriptions apply the events (retrying, or parking one that can never be applied).
    const { results, applied } = await once(inline).catch((err: unknown) => {
      if (err instanceof InlineProjectionFailed) return once([]);
      throw err;
    });
    let head = -1n;
    for (const r of results) for (const e of r.appended) if (e.global_position > head) head = e.global_position;
    if (head < 0n) return results;
    // Committed: the inline-applied subscriptions of this process are current up to `head` without reading it back;
    // the others are woken to read it.
    for (const sub of this.subscriptions) {
      if (applied?.has(sub.name)) sub.inlineApplied(head);
      sub.appended(head);
    }
    return results;
  }

  async appendWith<T>(write: (tx: SqlExecutor) => Promise<{ value: T; events: AppendRequest[] }>): Promise<T> {
    const { value, head } = await this.sql.transaction(async (tx) => {
      const { value, events } = await write(tx);
      const requests = events.filter((r) => r.events.length > 0);
      let head = -1n;
      if (requests.length > 0) for (const r of await this.appendIn(tx, requests)) for (const e of r.appended) if (e.global_position > head) head = e.global_position;
      return { value, head };
    });
    if (head >= 0n) for (const sub of this.subscriptions) sub.appended(head);
    return value;
  }

  private async appendIn(tx: SqlExecutor, requests: AppendRequest[]): Promise<AppendResult[]> {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK], { prepare: true });
    const allIds: string[] = [];
    for (const r of requests) for (const e of r.events) allIds.push(e.event_id);
    const streamIds = [...new Set(requests.map((r) => r.stream_id))];
    // The stored duplicates and the streams' versions in one statement. A stream's version is its last event's
    // (the `(stream_id, stream_version)` index answers it): no stream table to keep in step on every append.
    const { rows: known } = await tx.query<{ id: string; version: number | null }>(
      `SELECT event_id AS id, NULL::integer AS version FROM agp_events WHERE event_id = ANY($1::text[])
       UNION ALL SELECT stream_id, max(stream_version) FROM agp_events WHERE stream_id = ANY($2::text[]) GROUP BY stream_id`,
      [allIds, streamIds],
      { prepare: true },
    );
    const seen = new Set<string>();
    const versions = new Map<string, number>();
    for (const r of known) {
      if (r.version === null) seen.add(r.id);
      else versions.set(r.id, r.version);
    }
    // The new rows, sent as ONE JSON array read by `json_to_recordset` (one `JSON.stringify` of the batch: no
    // per-event data string and no array-literal escaping of it, which measured as the append's largest allocation).
    const rows: Array<{ event_id: string; stream_id: string; stream_version: number; event_type: string; data: unknown; metadata: unknown; organization_id: string }> = [];
    const fresh: NewEvent[] = [];
    const pending: Array<{ stream_id: string; from: number; count: number; duplicates: string[] }> = [];

    for (const req of requests) {
      const current = versions.get(req.stream_id) ?? 0;
      const split = splitDuplicates(req.events, seen);
      if (split.fresh.length > 0) {
        const exp = req.expected_version ?? 'any';
        const ok = exp === 'any' || (exp === 'no_stream' ? !versions.has(req.stream_id) : exp === current);
        if (!ok) throw new WrongExpectedVersionError(req.stream_id, exp, current);
      }
      pending.push({ stream_id: req.stream_id, from: fresh.length, count: split.fresh.length, duplicates: split.duplicates });
      let v = current;
      for (const e of split.fresh) {
        v += 1;
        fresh.push(e);
        rows.push({ event_id: e.event_id, stream_id: req.stream_id, stream_version: v, event_type: e.type, data: e.data, metadata: e.metadata, organization_id: e.metadata.organization_id });
      }
      if (split.fresh.length > 0) versions.set(req.stream_id, v);
    }

    const stored: StoredEvent[] = new Array(fresh.length);
    if (fresh.length > 0) {
      const text = JSON.stringify(rows);
      // json columns keep any text; refuse what jsonb (and text) cannot hold, as a data error, so every adapter stores the same.
      if (mayHoldUnstorableText(text)) {
        const paths = unstorableTextPaths(rows, 'events');
        if (paths.length > 0) throw new UnstorableTextError(paths);
      }
      // Only the columns the database assigns come back; the rest is what was sent (no JSON round trip).
      let { rows: inserted } = await tx.query<{ global_position: string; event_id: string; recorded_ms: number | string }>(this.insertEventsSql, [text], { prepare: true });
      // RETURNING lists the rows in the order the SELECT produced them, the array's: row i is fresh[i]. Checked,
      // not assumed: any other order is put back by event id.
      if (inserted.some((r, i) => r.event_id !== rows[i].event_id)) {
        const byId = new Map(inserted.map((r) => [r.event_id, r]));
        inserted = rows.map((row) => byId.get(row.event_id)!);
      }
      let recordedAt = '';
      let recordedMs = NaN;
      for (let i = 0; i < fresh.length; i++) {
        const r = inserted[i];
        const e = fresh[i];
        // One transaction's rows share now() (the column's default): a Date and its ISO text once, not per row.
        const ms = Number(r.recorded_ms);
        if (ms !== recordedMs) {
          recordedMs = ms;
          recordedAt = new Date(ms).toISOString();
        }
        stored[i] = {
          event_id: e.event_id,
          type: e.type,
          data: e.data,
          metadata: e.metadata,
          stream_id: rows[i].stream_id,
          stream_version: rows[i].stream_version,
          global_position: BigInt(r.global_position),
          recorded_at: recordedAt,
        };
      }
    }
    return pending.map((p) => ({
      stream_id: p.stream_id,
      next_version: versions.get(p.stream_id) ?? 0,
      appended: stored.slice(p.from, p.from + p.count),
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

  async eraseData(edits: ReadonlyArray<{ event_id: string; pointers: readonly string[] }>): Promise<number> {
    if (!edits.length) return 0;
    const wanted = new Map(edits.map((e) => [e.event_id, e.pointers]));
    const { rows } = await this.sql.query<{ event_id: string; data: unknown }>(`SELECT event_id, data FROM agp_events WHERE event_id = ANY($1::text[])`, [[...wanted.keys()]]);
    const changed: Array<{ id: string; d: string }> = [];
    for (const r of rows) {
      const data = (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>;
      if (removeMembers(data, wanted.get(r.event_id)!)) changed.push({ id: r.event_id, d: JSON.stringify(data) });
    }
    // One statement; json is assigned to a jsonb column (a table created with it) by its assignment cast.
    if (changed.length) {
      await this.sql.query(
        `UPDATE agp_events e SET data = x.d::json
         FROM jsonb_to_recordset($1::jsonb) AS x(id text, d text) WHERE e.event_id = x.id`,
        [JSON.stringify(changed)],
      );
    }
    return changed.length;
  }

  async readEvents(eventIds: readonly string[]): Promise<StoredEvent[]> {
    if (eventIds.length === 0) return [];
    const { rows } = await this.sql.query<EventRow>(`${SELECT_EVENT} WHERE event_id = ANY($1::text[]) ORDER BY global_position`, [[...eventIds]]);
    return rows.map(toStored);
  }


  async resetCheckpoint(name: string, position = 0n): Promise<void> {
    await setCheckpoint(this.sql, name, position);
  }

  async startCheckpointAtHead(name: string): Promise<void> {
    await initCheckpoint(this.sql, name, await this.headPosition());
  }

  subscribe(options: SubscriptionOptions): Subscription {
    const sub = new CatchUpSubscription(this, this.sql, options, this.wakers, this.idlePollMs);
    this.subscriptions.add(sub);
    return {
      position: () => sub.position(),
      waitFor: (position, timeoutMs) => sub.waitFor(position, timeoutMs),
      stop: async () => {
        this.subscriptions.delete(sub);
        await sub.stop();
      },
    };
  }

  /** `SELECT 1` on the store's database (the events live beside the read models). `timeoutMs` is left to the pool's own. */
  async ready(): Promise<void> {
    await this.sql.query('SELECT 1');
  }

  async close(): Promise<void> {
    this.wakers.clear();
    this.subscriptions.clear();
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
