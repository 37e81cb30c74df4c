import { ingestedEventId, type SqlExecutor } from '@agp/eventstore';

/**
 * Which client event ids of an organisation are already stored: the ingest service asks before publishing a chunk,
 * so that a re-sent event is answered `duplicate` (200) instead of `created` (201). Read-only.
 * Source: docs/ingest.md (Ingest answers).
 */
export interface IngestedIds {
  /**
   * The subset of `clientIds` (the `id` of ingest events of organisation `org`) whose event is already in the event
   * store. An id whose event is still in flight (in the ingest log, not yet appended) is not in the answer.
   * @throws the driver's error when the database cannot be asked (the ingest service then answers every event as new).
   */
  stored(org: string, clientIds: readonly string[]): Promise<Set<string>>;
}

/** PostgreSQL's "undefined_table": nothing was ever stored in a database whose event store is not created yet. */
const UNDEFINED_TABLE = '42P01';

/**
 * {@link IngestedIds} over the event store's SQL port (`pg` pool in distributed mode, the shared PGlite when embedded).
 * The consumers (services/interventions, services/policies, services/stats) append each ingested event under
 * `event_id = ingestedEventId(org, client id)`, so one query on the unique `agp_events.event_id` index
 * answers a whole chunk: `SELECT event_id FROM agp_events WHERE event_id = ANY($1)`. Before the event store's table
 * exists (a fresh database whose consumers have not migrated yet) it answers the empty set.
 * Source: docs/ingest.md (Ingest answers).
 */
export function sqlIngestedIds(sql: SqlExecutor): IngestedIds {
  return {
    async stored(org, clientIds) {
      if (clientIds.length === 0) return new Set();
      const byEventId = new Map(clientIds.map((id) => [ingestedEventId(org, id), id]));
      let rows: Array<{ event_id: string }>;
      try {
        ({ rows } = await sql.query<{ event_id: string }>('SELECT event_id FROM agp_events WHERE event_id = ANY($1::text[])', [[...byEventId.keys()]]));
      } catch (err) {
        if ((err as { code?: unknown })?.code === UNDEFINED_TABLE) return new Set();
        throw err;
      }
      return new Set(rows.map((r) => byEventId.get(r.event_id)!));
    },
  };
}
