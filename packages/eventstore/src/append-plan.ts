import type { NewEvent, SqlExecutor } from './types.js';

/**
 * Split one stream's events of an append into those to write and the ids to report as duplicates: an id in `seen`
 * (already stored, or earlier in the same append) is a duplicate; every fresh id is added to `seen`. Shared by the
 * adapters so that idempotence by event id means the same everywhere. Source: architecture §3 (Event store).
 */
export function splitDuplicates(events: readonly NewEvent[], seen: Set<string>): { fresh: NewEvent[]; duplicates: string[] } {
  const fresh: NewEvent[] = [];
  const duplicates: string[] = [];
  for (const e of events) {
    if (seen.has(e.event_id)) duplicates.push(e.event_id);
    else {
      seen.add(e.event_id);
      fresh.push(e);
    }
  }
  return { fresh, duplicates };
}

/** PostgreSQL's "undefined_table": a database whose event store nobody has created yet. */
const UNDEFINED_TABLE = '42P01';

/**
 * Which of `eventIds` are in `table` (its `event_id` column, unique): the SQL adapters' events, or the KurrentDB
 * adapter's id table. The empty set before the table exists (a fresh database nobody migrated yet).
 * @throws the driver's error when the database cannot answer.
 */
export async function storedEventIds(db: SqlExecutor, table: 'agp_events' | 'agp_kurrentdb_event_ids', eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  try {
    const { rows } = await db.query<{ event_id: string }>(`SELECT event_id FROM ${table} WHERE event_id = ANY($1::text[])`, [[...eventIds]]);
    return new Set(rows.map((r) => r.event_id));
  } catch (err) {
    if ((err as { code?: unknown })?.code === UNDEFINED_TABLE) return new Set();
    throw err;
  }
}
