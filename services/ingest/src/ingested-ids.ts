import { ingestedEventId, type EventStore } from '@agp/eventstore';

/**
 * Which client event ids of an organisation are already stored: the ingest service asks before publishing a chunk,
 * so that a re-sent event is answered `duplicate` (200) instead of `created` (201). Read-only.
 * Source: spec (ingest answers `duplicate` for a re-sent event).
 */
export interface IngestedIds {
  /**
   * The subset of `clientIds` (the `id` of ingest events of organisation `org`) whose event is already in the event
   * store. An id whose event is still in flight (in the ingest log, not yet appended) is not in the answer.
   * @throws the driver's error when the database cannot be asked (the ingest service then answers every event as new).
   */
  stored(org: string, clientIds: readonly string[]): Promise<Set<string>>;
}

/**
 * {@link IngestedIds} over the event store's port (`hasEvents`). The consumers (services/interventions,
 * services/policies, services/stats) append each ingested event under `event_id = ingestedEventId(org, client id)`,
 * so one `hasEvents` call answers a whole chunk. Before the event store exists (a fresh database whose consumers have
 * not migrated yet) it answers the empty set. Source: architecture §3 (Event store port).
 */
export function storeIngestedIds(store: Pick<EventStore, 'hasEvents'>): IngestedIds {
  return {
    async stored(org, clientIds) {
      if (clientIds.length === 0) return new Set();
      const byEventId = new Map(clientIds.map((id) => [ingestedEventId(org, id), id]));
      const found = await store.hasEvents([...byEventId.keys()]);
      return new Set([...found].map((id) => byEventId.get(id)!));
    },
  };
}
