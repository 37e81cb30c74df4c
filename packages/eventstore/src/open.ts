/**
 * Choosing the event store's adapter from the environment: `AGP_EVENT_STORE=postgres` (default; the events in the
 * same PostgreSQL or PGlite database as the read models) or `kurrentdb` (KurrentDB at `KURRENTDB_URL`, alias
 * `EVENTSTORE_URL`; the checkpoints and the id table stay in the read-model database). The KurrentDB client is loaded
 * only then, by a dynamic import (`kurrentdb.ts`). Source: architecture §3 (Event store); docs/configuration.md.
 */
import type { ReadinessCheck } from '@agp/runtime';
import { createEventStore, type EventStoreOptions } from './event-store.js';
import type { EventStore, Sql } from './types.js';

/** The settings {@link openEventStore} reads (`eventStoreEnv` of @agp/runtime parses them). */
export interface EventStoreSelection {
  /** `postgres` (PostgreSQL or PGlite, whichever `db` is) or `kurrentdb`. @default postgres */
  AGP_EVENT_STORE?: 'postgres' | 'kurrentdb';
  /** KurrentDB connection string, e.g. `kurrentdb://127.0.0.1:2113?tls=false`. */
  KURRENTDB_URL?: string;
  /** The former name of KURRENTDB_URL, read when it is unset. */
  EVENTSTORE_URL?: string;
}

/** The KurrentDB URL of `env` (KURRENTDB_URL, else EVENTSTORE_URL), or undefined. */
export function kurrentDbUrl(env: EventStoreSelection): string | undefined {
  return env.KURRENTDB_URL || env.EVENTSTORE_URL || undefined;
}

/**
 * The event store `env` selects, over the read-model database `db`. Not migrated: call `migrate()`. `options` apply to
 * the SQL adapters (the KurrentDB adapter is woken by its live `$all` subscription).
 * @throws Error naming the missing variable when `AGP_EVENT_STORE=kurrentdb` has no URL.
 */
export async function openEventStore(db: Sql, env: EventStoreSelection, options: EventStoreOptions = {}): Promise<EventStore> {
  if ((env.AGP_EVENT_STORE ?? 'postgres') === 'postgres') return createEventStore(db, options);
  const url = kurrentDbUrl(env);
  if (!url) throw new Error('AGP_EVENT_STORE=kurrentdb needs KURRENTDB_URL (or its former name EVENTSTORE_URL), e.g. kurrentdb://127.0.0.1:2113?tls=false');
  const { createKurrentDbEventStore } = await import('./kurrentdb.js');
  return await createKurrentDbEventStore(url, db);
}

/**
 * Close what a process opened: the store, then the read-model database unless the store owns it (the SQL adapters
 * close their database themselves).
 */
export async function closeEventStoreAndDb(store: EventStore, db: Sql): Promise<void> {
  await store.close();
  if (store.kind === 'kurrentdb') await db.close();
}

/**
 * The readiness checks `store` adds to a process's `/readyz` beside the read-model database's own `postgres` check:
 * `kurrentdb` (the server answers a one-event read of `$all`, {@link EventStore.ready}) when the events live in
 * KurrentDB; none for the SQL adapters, whose events live in that same database. A process reports them as it reports
 * PostgreSQL: a service's `/readyz` answers 503 naming `kurrentdb`, the gateway's says `degraded`.
 * Source: architecture §5 (/readyz); docs/operations.md (Readiness).
 */
export function eventStoreReadiness(store: Pick<EventStore, 'kind' | 'ready'>): ReadinessCheck[] {
  return store.kind === 'kurrentdb' ? [{ name: 'kurrentdb', check: () => store.ready() }] : [];
}
