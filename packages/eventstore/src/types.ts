/**
 * The EventStore port, and the SQL surface of the read-model database. The port hands out no SQL: a service gets its
 * read-model database ({@link Sql}) separately. Three adapters implement the port: PostgreSQL (`pg`) and PGlite with
 * the same SQL (`event-store.ts`), and KurrentDB (`kurrentdb.ts`). Source: architecture §3.
 */

/** Options of one query. */
export interface QueryOptions {
  /**
   * Run as a named prepared statement (PostgreSQL parses and plans it once per connection, then only binds and
   * executes it). For hot reads whose text takes few shapes: each distinct text stays prepared on every pooled
   * connection. The name must stay with one text. Ignored by PGlite (one in-process connection, no protocol cost).
   */
  prepare?: boolean;
}

/** Minimal SQL surface shared by `pg` and PGlite. `$1`-style parameters. */
export interface SqlExecutor {
  query<R = Record<string, unknown>>(text: string, params?: unknown[], opts?: QueryOptions): Promise<{ rows: R[] }>;
}

/** A database: query outside a transaction, or run `fn` inside one (committed when it resolves, rolled back when it throws). */
export interface Sql extends SqlExecutor {
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Run several statements separated by `;` (migrations). */
  exec(text: string): Promise<void>;
  close(): Promise<void>;
  /** `postgres` or `pglite`. */
  readonly kind: 'postgres' | 'pglite';
}

/** Metadata every event carries. Source: architecture §3 (Event metadata). */
export interface EventMetadata {
  organization_id: string;
  /** Who caused it: `key:<key id>`, `system`, `enrichment:<model>`, `approver:<email>`. */
  actor: string;
  /**
   * The name of the API key when `actor` is `key:<key id>` and the key has one, as it was when the event was appended
   * (so a renamed or revoked key keeps the name that acted). Absent otherwise, and on events appended before names were.
   */
  actor_name?: string;
  correlation_id?: string;
  causation_id?: string;
  traceparent?: string;
  schema_version: number;
}

/** An event to append. `event_id` is the idempotency key: appending the same id twice stores it once. */
export interface NewEvent<D = Record<string, unknown>> {
  event_id: string;
  type: string;
  data: D;
  metadata: EventMetadata;
}

/**
 * An event as stored. `global_position` increases in commit order (gap-free in the SQL adapters; KurrentDB's commit
 * position, which has gaps); `stream_version` starts at 1.
 */
export interface StoredEvent<D = Record<string, unknown>> extends NewEvent<D> {
  stream_id: string;
  stream_version: number;
  global_position: bigint;
  /** Time of append (ISO 8601 UTC). */
  recorded_at: string;
}

/** `any`: no check; `no_stream`: the stream must not exist; number: its current version must equal it. */
export type ExpectedVersion = number | 'no_stream' | 'any';

/** One stream's part of a (multi-stream) append. */
export interface AppendRequest {
  stream_id: string;
  events: NewEvent[];
  expected_version?: ExpectedVersion;
}

/** Result per stream: its version after the append and the positions of the events actually written. */
export interface AppendResult {
  stream_id: string;
  next_version: number;
  /** Events newly written (duplicates by event_id are left out). */
  appended: StoredEvent[];
  /** Event ids skipped because they were already stored. */
  duplicates: string[];
}

/** Options of a catch-up subscription. */
export interface SubscriptionOptions {
  /** Durable name; its checkpoint is stored under this name. e.g. `interventions-read-model`. */
  name: string;
  /** Only these event types are handed to the handler (the checkpoint still advances past others). */
  eventTypes?: string[];
  /** Max events per handler call. @default 500 */
  batchSize?: number;
  /** Poll interval when idle, in ms (appends through the same store wake it at once). @default the store's (200, or `createEventStore`'s `idlePollMs`) */
  idlePollMs?: number;
  /**
   * Apply a batch. Runs inside the transaction that also stores the checkpoint, so read-model writes
   * made through `tx` commit atomically with it. Throwing rolls back and the batch is retried.
   */
  handler: (events: StoredEvent[], tx: SqlExecutor) => Promise<void>;
  /**
   * Called after a batch's transaction committed, with its events: the handler's writes are now visible to every
   * connection (e.g. wake a worker that reads them over another connection). Not called for a batch another process
   * had applied first. Must not throw (what it throws is ignored).
   */
  onCommitted?: (events: StoredEvent[]) => void;
  /**
   * Called when a batch fails (it will be retried after a back-off: 100 ms doubling to 5 s, with jitter). A transient
   * infrastructure failure (the database restarting or unreachable: `isTransientInfraError`) is reported once per
   * outage, not on every retry; other failures on each.
   */
  onError?: (err: unknown) => void;
  /** Called once when the subscription runs again after a transient outage, with the outage's length in ms. */
  onRecovered?: (outageMs: number) => void;
}

/**
 * A read model a write must make queryable at once: applied by {@link EventStore.append} in the append's own transaction,
 * from the events in memory (Marten's and Emmett's "inline projection"). It shares its name, and so its checkpoint, with
 * the catch-up subscription of the same read model, which stays for rebuilds, for events appended without it, and for
 * adapters that cannot inline (KurrentDB: {@link EventStore.canInline}). The handler must be the catch-up handler's
 * equal (a rebuild through catch-up gives the same rows). Source: docs/decisions.md (Inline projections).
 */
export interface InlineProjection {
  /** The read model's subscription name: its checkpoint (`agp_checkpoints`) is the one the append advances. */
  name: string;
  /** Only these event types are handed to the handler. @default all */
  eventTypes?: readonly string[];
  /**
   * Apply the append's events (those of `eventTypes`, in global order, positions assigned) through `tx`: the append's
   * transaction, so the read-model rows, the events and the checkpoint commit (or roll back) together. Throwing rolls
   * back the whole append.
   */
  handler: (events: StoredEvent[], tx: SqlExecutor) => Promise<void>;
}

/** Options of {@link EventStore.append}. */
export interface AppendOptions {
  /**
   * Read models to apply in the append's transaction. Each is applied only when its checkpoint has every earlier event
   * of its types applied (otherwise its catch-up subscription applies these events in order, as without this option);
   * then its checkpoint moves to the append's last position in the same transaction. Ignored by an adapter whose
   * `canInline` is false.
   */
  inline?: readonly InlineProjection[];
}

/** A running catch-up subscription. */
export interface Subscription {
  /** Last position applied (committed). */
  position(): bigint;
  /** Resolve once the checkpoint is at or past `position`; reject after `timeoutMs`. */
  waitFor(position: bigint, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The EventStore port. */
export interface EventStore {
  /** Which adapter: `postgres`, `pglite` or `kurrentdb`. */
  readonly kind: 'postgres' | 'pglite' | 'kurrentdb';
  /** Create what the store needs (tables, the checkpoint table in the read-model database) if missing. Idempotent. */
  migrate(): Promise<void>;
  /**
   * Append to one or many streams in ONE transaction. Idempotent by event_id: events already stored are
   * skipped (reported in `duplicates`), and a request whose events are all duplicates succeeds without a
   * version check. @throws WrongExpectedVersionError (409) when an expected version does not match; nothing is written then.
   */
  append(requests: AppendRequest[], options?: AppendOptions): Promise<AppendResult[]>;
  /**
   * Whether `append` can apply {@link AppendOptions.inline} projections in its transaction: true for PostgreSQL and
   * PGlite (events and read models in one database); false for KurrentDB (no transaction spans both), whose catch-up
   * subscriptions then apply every event.
   */
  readonly canInline: boolean;
  /**
   * A change made in the platform database that is recorded as events ("a write and its event in one transaction"):
   * run `write` in a transaction of the database the store was opened on, then append the events it returns. In the
   * SQL adapters (PostgreSQL, PGlite) the append is made in that same transaction, so the row and its events commit
   * or roll back together. KurrentDB cannot join that transaction: the write commits first and the events are
   * appended right after it (a crash between the two loses the events, never the change). Events are appended with
   * their expected versions; a request with no events appends nothing.
   * @returns what `write` returned as `value`.
   * @throws whatever `write` throws (nothing is written); WrongExpectedVersionError (409) from the append (SQL adapters:
   *   the write rolls back too).
   * Source: docs/decisions.md (Key and member changes are events).
   */
  appendWith<T>(write: (tx: SqlExecutor) => Promise<{ value: T; events: AppendRequest[] }>): Promise<T>;
  /** All events of a stream in version order; [] when it does not exist. */
  readStream(streamId: string): Promise<StoredEvent[]>;
  /** Events after `fromPosition` (exclusive) in global order, up to `limit`, optionally filtered by type. */
  readAll(fromPosition: bigint, limit: number, eventTypes?: string[]): Promise<StoredEvent[]>;
  /** The global position of the last committed event (0 when the store is empty). */
  headPosition(): Promise<bigint>;
  /**
   * Which of `eventIds` are stored (any stream). Read-only; ingest's `duplicate` answer. Before the store's tables exist
   * (a fresh database nobody migrated yet) the empty set.
   */
  hasEvents(eventIds: readonly string[]): Promise<Set<string>>;
  /**
   * Remove members of stored events' `data` in place: personal data erased on request or by retention (the event, its
   * id, type, stream, version and position stay; projections that read the stream again see the data without them).
   * Each entry names an event and the members to remove as RFC 6901 JSON Pointers into its `data` (`/reason`); an
   * absent member or an unknown event id is skipped. The only change the store allows to a stored event.
   * @returns how many events changed. KurrentDB events cannot change: its adapter changes nothing and answers 0.
   * Source: docs/audit.md (Erasure).
   */
  eraseData(edits: ReadonlyArray<{ event_id: string; pointers: readonly string[] }>): Promise<number>;
  /**
   * The stored events of `eventIds` (any stream), in global order; ids not stored are left out. Read-only; the audit
   * trail's records route reads the records its leaves commit to.
   */
  readEvents(eventIds: readonly string[]): Promise<StoredEvent[]>;
  /**
   * Start a catch-up subscription from its stored checkpoint (0 when new). The checkpoint lives in the read-model
   * database and is committed in the same transaction as the handler's writes (`checkpoints.ts`, `catch-up.ts`).
   */
  subscribe(options: SubscriptionOptions): Subscription;
  /** Reset a subscription's checkpoint (a replay). */
  resetCheckpoint(name: string, position?: bigint): Promise<void>;
  /** Put a subscription's checkpoint at the head of the log, unless it already has one (a first start skips history). */
  startCheckpointAtHead(name: string): Promise<void>;
  /**
   * Resolves when the store's server answers a cheap read; readiness probes call it (`eventStoreReadiness` in open.ts).
   * The SQL adapters run `SELECT 1` on their database; the KurrentDB adapter reads one event of `$all` backwards,
   * bounded by `timeoutMs`. Source: architecture §5 (/readyz); docs/operations.md (Readiness).
   * @param timeoutMs how long the read may take, in ms. @default 1000
   * @throws Error naming the store and why it did not answer (connection refused, unavailable, deadline exceeded).
   */
  ready(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}
