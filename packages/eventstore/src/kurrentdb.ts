/**
 * The KurrentDB adapter of the {@link EventStore} port (`@kurrent/kurrentdb-client`). Loaded only by
 * `openEventStore` with `AGP_EVENT_STORE=kurrentdb` (a dynamic import), so a PostgreSQL or PGlite deployment never
 * loads the client. Source: architecture §3 (Event store); docs/decisions.md (KurrentDB adapter).
 *
 * - Streams: the port's stream ids as KurrentDB stream names (`intervention-<org>-<id>`, …). The port's version is
 *   KurrentDB's revision + 1 (versions start at 1, revisions at 0).
 * - Optimistic concurrency: an expected version is sent as the expected revision (`no_stream` / version 0 as
 *   NO_STREAM); the server's WrongExpectedVersionError becomes the port's {@link WrongExpectedVersionError}.
 * - Idempotence by event id: KurrentDB dedupes an event id only within a stream's recent writes, so every stored id
 *   is also kept in `agp_kurrentdb_event_ids` in the read-model PostgreSQL. An append skips the ids found there
 *   (reported as duplicates) and records the ids it wrote. KurrentDB needs UUID event ids: an id that is not one is
 *   sent as its deterministic UUID (v5), and the port's id travels in the event's metadata (`$agp_event_id`).
 * - Multi-stream appends: one `multiStreamAppend` (atomic; KurrentDB 25.1 and later). A server without it
 *   (UnsupportedError) gets one append per stream in request order: see docs/decisions.md for what holds then.
 * - Global position: the event's prepare position in `$all` (unique per event; the commit position is shared by the
 *   events of one append). Reads resume from `{commit: p, prepare: p}` and drop what is at or below `p`.
 * - Subscriptions: the shared catch-up loop (`catch-up.ts`) over `$all` reads with a server-side event-type filter;
 *   the checkpoint is committed in the read-model transaction (`checkpoints.ts`). A live `$all` subscription (system
 *   events excluded) wakes the loops when another process appends.
 */
import type { AllStreamSubscription, AppendStreamState, EventData, KurrentDBClient, Position, RecordedEvent } from '@kurrent/kurrentdb-client';
import { deterministicId, WrongExpectedVersionError } from '@agp/runtime';
import { splitDuplicates, storedEventIds } from './append-plan.js';
import { CatchUpSubscription, readPageOf, type CatchUpSource } from './catch-up.js';
import { CHECKPOINTS_DDL, initCheckpoint, setCheckpoint } from './checkpoints.js';
import { migrateSchema } from './schema.js';
import type { AppendOptions, AppendRequest, AppendResult, EventMetadata, EventStore, ExpectedVersion, NewEvent, Sql, SqlExecutor, StoredEvent, Subscription, SubscriptionOptions } from './types.js';

/** The id table: every event id this adapter stored, with where it went. In the read-model database. Idempotent DDL. */
export const KURRENTDB_EVENT_IDS_DDL = `
CREATE TABLE IF NOT EXISTS agp_kurrentdb_event_ids (
  event_id text PRIMARY KEY,
  stream_id text NOT NULL,
  stream_version integer NOT NULL,
  global_position bigint NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
`;

/** The client module (`@kurrent/kurrentdb-client`), loaded on demand. */
export type KurrentDbModule = typeof import('@kurrent/kurrentdb-client');

/** The client's read and stream-state constants (string literals, so this module need not load the client). */
const ANY = 'any' as const;
const NO_STREAM = 'no_stream' as const;
const START = 'start' as const;
const END = 'end' as const;
const FORWARDS = 'forwards' as const;
const BACKWARDS = 'backwards' as const;

/** Metadata key carrying the port's event id. */
const EVENT_ID_KEY = '$agp_event_id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** KurrentDB's event id for the port's `eventId`: itself when it is a UUID, else its deterministic UUID. */
export function kurrentEventId(eventId: string): string {
  return UUID.test(eventId) ? eventId.toLowerCase() : deterministicId('kurrentdb-event', eventId);
}

/** The expected revision KurrentDB is sent for the port's expected version (versions start at 1, revisions at 0). */
export function expectedRevision(expected: ExpectedVersion | undefined): AppendStreamState {
  if (expected === undefined || expected === 'any') return ANY;
  if (expected === 'no_stream' || expected === 0) return NO_STREAM;
  return BigInt(expected - 1);
}

/** The port's version of a stream whose KurrentDB state is `actual` (a revision, or NO_STREAM). */
export function versionOfRevision(actual: unknown): number {
  return typeof actual === 'bigint' ? Number(actual) + 1 : 0;
}

/** The `$all` read position that resumes after the port's global position `p` (exclusive once at-or-below is dropped). */
export function readPositionAfter(p: bigint): typeof START | Position {
  return p <= 0n ? START : { commit: p, prepare: p };
}

/** A `$all` filter keeping exactly `eventTypes` (a server-side regex), or every non-system event. */
export function typeFilter(k: KurrentDbModule, eventTypes?: readonly string[]) {
  if (!eventTypes) return k.excludeSystemEvents();
  const escaped = eventTypes.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return k.eventTypeFilter({ regex: `^(${escaped.join('|')})$` });
}

/** A KurrentDB event as the port's {@link StoredEvent}. @throws Error when it carries no JSON (not written by this adapter). */
export function storedOf(e: RecordedEvent): StoredEvent {
  if (!e.isJson) throw new Error(`event ${e.id} of stream ${e.streamId} is not JSON; not written by the AGP adapter`);
  const { [EVENT_ID_KEY]: portId, ...metadata } = (e.metadata ?? {}) as Record<string, unknown>;
  return {
    event_id: typeof portId === 'string' ? portId : e.id,
    type: e.type,
    data: e.data as Record<string, unknown>,
    metadata: metadata as unknown as EventMetadata,
    stream_id: e.streamId,
    stream_version: Number(e.revision) + 1,
    global_position: e.position?.prepare ?? 0n,
    recorded_at: e.created.toISOString(),
  };
}

/** The port's event as KurrentDB event data (JSON, the port's id in the metadata). */
export function eventDataOf(k: KurrentDbModule, e: NewEvent): EventData {
  return k.jsonEvent({ id: kurrentEventId(e.event_id), type: e.type, data: e.data, metadata: { ...e.metadata, [EVENT_ID_KEY]: e.event_id } });
}

/**
 * The {@link EventStore} over a KurrentDB client, with its id table and the checkpoints in `db` (the read-model
 * database). Create with {@link createKurrentDbEventStore}.
 */
export class KurrentDbEventStore implements EventStore, CatchUpSource {
  readonly kind = 'kurrentdb' as const;
  /**
   * No transaction spans KurrentDB and the read-model database, so `append` ignores {@link AppendOptions.inline}: the
   * catch-up subscriptions apply every event, and a synchronous write waits for them (`waitForProjections`).
   */
  readonly canInline = false;
  private readonly wakers = new Set<() => void>();
  private live: AllStreamSubscription | null = null;
  /** False once the server has answered a multi-stream append with UnsupportedError. */
  private multiAppend = true;

  constructor(
    private readonly k: KurrentDbModule,
    private readonly client: KurrentDBClient,
    private readonly db: Sql,
    /** Where the server is, for messages: the connection string's hosts, without credentials or settings. */
    private readonly endpoint: string,
  ) {}

  async migrate(): Promise<void> {
    await migrateSchema(this.db, CHECKPOINTS_DDL + KURRENTDB_EVENT_IDS_DDL);
  }

  /**
   * Append: skip ids already stored (the id table, and repeats within the request), write the rest with their
   * expected revisions, read back their positions, record their ids.
   * @throws WrongExpectedVersionError (409) when an expected version does not match; nothing is written then (with
   *   multi-stream append support; see the module note otherwise).
   */
  async append(requests: AppendRequest[], _options?: AppendOptions): Promise<AppendResult[]> {
    if (requests.length === 0) return [];
    const seen = await this.hasEvents(requests.flatMap((r) => r.events.map((e) => e.event_id)));
    const plan = requests.map((req) => ({ req, ...splitDuplicates(req.events, seen) }));
    const writes = plan.filter((p) => p.fresh.length > 0);
    try {
      if (writes.length > 1 && this.multiAppend) {
        try {
          await this.client.multiStreamAppend(writes.map((w) => ({ streamName: w.req.stream_id, events: w.fresh.map((e) => eventDataOf(this.k, e)), expectedState: expectedRevision(w.req.expected_version) })));
        } catch (err) {
          if (!(err instanceof this.k.UnsupportedError)) throw err;
          this.multiAppend = false;
          for (const w of writes) await this.client.appendToStream(w.req.stream_id, w.fresh.map((e) => eventDataOf(this.k, e)), { streamState: expectedRevision(w.req.expected_version) });
        }
      } else {
        for (const w of writes) await this.client.appendToStream(w.req.stream_id, w.fresh.map((e) => eventDataOf(this.k, e)), { streamState: expectedRevision(w.req.expected_version) });
      }
    } catch (err) {
      if (err instanceof this.k.WrongExpectedVersionError) {
        const expected = writes.find((w) => w.req.stream_id === err.streamName)?.req.expected_version ?? 'any';
        throw new WrongExpectedVersionError(err.streamName, expected, versionOfRevision(err.actualState));
      }
      throw err;
    }
    const results: AppendResult[] = [];
    const written: StoredEvent[] = [];
    for (const p of plan) {
      const appended = p.fresh.length > 0 ? await this.readBack(p.req.stream_id, p.fresh) : [];
      written.push(...appended);
      const next = appended.at(-1)?.stream_version ?? (await this.streamVersion(p.req.stream_id));
      results.push({ stream_id: p.req.stream_id, next_version: next, appended, duplicates: p.duplicates });
    }
    if (written.length > 0) {
      await this.db.query(
        `INSERT INTO agp_kurrentdb_event_ids (event_id, stream_id, stream_version, global_position)
         SELECT x.event_id, x.stream_id, x.stream_version, x.global_position FROM jsonb_to_recordset($1::jsonb) AS x(event_id text, stream_id text, stream_version integer, global_position bigint)
         ON CONFLICT (event_id) DO NOTHING`,
        [JSON.stringify(written.map((e) => ({ event_id: e.event_id, stream_id: e.stream_id, stream_version: e.stream_version, global_position: String(e.global_position) })))],
      );
      for (const wake of this.wakers) wake();
    }
    return results;
  }

  /** See {@link EventStore.appendWith}: no transaction spans KurrentDB and the database, so the write commits first, then the events are appended. */
  async appendWith<T>(write: (tx: SqlExecutor) => Promise<{ value: T; events: AppendRequest[] }>): Promise<T> {
    const { value, events } = await this.db.transaction(write);
    const requests = events.filter((r) => r.events.length > 0);
    if (requests.length > 0) await this.append(requests);
    return value;
  }

  /** The stored form of `fresh` (just written to `streamId`): read back from the stream's end for their positions. */
  private async readBack(streamId: string, fresh: NewEvent[]): Promise<StoredEvent[]> {
    const want = new Set(fresh.map((e) => e.event_id));
    const found: StoredEvent[] = [];
    for await (const r of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: BigInt(fresh.length) * 2n + 16n })) {
      if (!r.event) continue;
      const e = storedOf(r.event);
      if (want.has(e.event_id)) found.push(e);
      if (found.length === want.size) break;
    }
    return found.sort((a, b) => a.stream_version - b.stream_version);
  }

  /** A stream's current version (0 when it does not exist). */
  private async streamVersion(streamId: string): Promise<number> {
    try {
      for await (const r of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1n })) return r.event ? Number(r.event.revision) + 1 : 0;
    } catch (err) {
      if (err instanceof this.k.StreamNotFoundError) return 0;
      throw err;
    }
    return 0;
  }

  async readStream(streamId: string): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    try {
      for await (const r of this.client.readStream(streamId, { direction: FORWARDS, fromRevision: START })) if (r.event) out.push(storedOf(r.event));
    } catch (err) {
      if (err instanceof this.k.StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  async readAll(fromPosition: bigint, limit: number, eventTypes?: string[]): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    if (limit <= 0) return out;
    // The events of one append share a commit position: a read from {p, p} can return earlier events of p's append again.
    for await (const r of this.client.readAll({ fromPosition: readPositionAfter(fromPosition), direction: FORWARDS, maxCount: BigInt(limit) + 64n, filter: typeFilter(this.k, eventTypes) })) {
      if (!r.event) continue;
      const e = storedOf(r.event);
      if (e.global_position <= fromPosition) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return out;
  }

  readPage(fromPosition: bigint, limit: number, eventTypes: string[]): Promise<{ events: StoredEvent[]; head: bigint }> {
    return readPageOf(this, fromPosition, limit, eventTypes);
  }

  async headPosition(): Promise<bigint> {
    for await (const r of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1n, filter: this.k.excludeSystemEvents() })) {
      if (r.event?.position) return r.event.position.prepare;
    }
    return 0n;
  }

  hasEvents(eventIds: readonly string[]): Promise<Set<string>> {
    return storedEventIds(this.db, 'agp_kurrentdb_event_ids', eventIds);
  }

  /** KurrentDB events are immutable: nothing changes (docs/audit.md, Erasure: the salts and read models are erased all the same). */
  async eraseData(): Promise<number> {
    return 0;
  }

  /** The events of `eventIds`: their streams (from the id table) read whole, the asked events kept. */
  async readEvents(eventIds: readonly string[]): Promise<StoredEvent[]> {
    if (eventIds.length === 0) return [];
    const { rows } = await this.db.query<{ stream_id: string }>(`SELECT DISTINCT stream_id FROM agp_kurrentdb_event_ids WHERE event_id = ANY($1::text[])`, [[...eventIds]]);
    const wanted = new Set(eventIds);
    const events = (await Promise.all(rows.map((r) => this.readStream(r.stream_id)))).flat().filter((e) => wanted.has(e.event_id));
    return events.sort((a, b) => (a.global_position < b.global_position ? -1 : a.global_position > b.global_position ? 1 : 0));
  }


  subscribe(options: SubscriptionOptions): Subscription {
    this.startLive();
    return new CatchUpSubscription(this, this.db, options, this.wakers);
  }

  /** One live `$all` subscription per store, from the end, waking the catch-up loops on every append anywhere. */
  private startLive(): void {
    if (this.live) return;
    this.live = this.client.subscribeToAll({ fromPosition: END, filter: this.k.excludeSystemEvents() });
    this.live.on('data', () => {
      for (const wake of this.wakers) wake();
    });
    // Losing it only slows the loops down to their idle poll.
    this.live.on('error', () => {
      this.live = null;
    });
  }

  async resetCheckpoint(name: string, position = 0n): Promise<void> {
    await setCheckpoint(this.db, name, position);
  }

  async startCheckpointAtHead(name: string): Promise<void> {
    await initCheckpoint(this.db, name, await this.headPosition());
  }

  /**
   * Read one event of `$all` backwards (system events included, so an empty database answers too): the cheapest call
   * that needs the server. A refused connection fails at once; a server that accepts but does not answer fails after
   * `timeoutMs` (the client's own `deadline` is passed too, but its native reads do not always honour it).
   * @throws Error `KurrentDB at <host:port> did not answer a read of $all: <the client's error, e.g. UnavailableError,
   *   or "no answer within <timeoutMs> ms">` (the hosts only: no credentials).
   */
  async ready(timeoutMs = 1_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const read = (async () => {
      for await (const _ of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1n, deadline: timeoutMs })) break;
    })();
    // A read still pending when the deadline passes ends later on its own; its late error is not a failure of anything.
    read.catch(() => {});
    try {
      await Promise.race([read, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)))]);
    } catch (err) {
      // The client's errors carry their kind in the class name (UnavailableError, DeadlineExceededError), often as the message too.
      const kind = err instanceof Error ? err.constructor.name : 'Error';
      const message = err instanceof Error ? err.message : String(err);
      const why = kind === 'Error' ? message : message && message !== kind ? `${kind}: ${message}` : kind;
      throw new Error(`KurrentDB at ${this.endpoint} did not answer a read of $all: ${why}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Dispose of the client. The read-model database belongs to the caller, who closes it. */
  async close(): Promise<void> {
    this.wakers.clear();
    await this.live?.unsubscribe().catch(() => {});
    this.live = null;
    await this.client.dispose();
  }
}

/**
 * The KurrentDB event store at `url` (a `kurrentdb://` / `esdb://` connection string), its id table and checkpoints
 * in `db`: loads the client. Call `migrate()` before use.
 * @throws the client's error when `url` is not a valid connection string.
 */
export async function createKurrentDbEventStore(url: string, db: Sql): Promise<KurrentDbEventStore> {
  const k = await import('@kurrent/kurrentdb-client');
  return new KurrentDbEventStore(k, k.KurrentDBClient.connectionString(url), db, kurrentDbEndpoint(url));
}

/**
 * The hosts of a KurrentDB connection string, for messages: `kurrentdb://admin:secret@10.0.0.5:2113?tls=false` →
 * `10.0.0.5:2113` (the user and password, path and settings dropped; a cluster's hosts stay comma-separated).
 */
export function kurrentDbEndpoint(url: string): string {
  return url.replace(/^[a-z0-9+.-]+:\/\//i, '').replace(/^[^@/?]*@/, '').split(/[/?]/)[0] || url.split('://')[0];
}
