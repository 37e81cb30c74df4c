/**
 * Applying one projection dead letter again: the stored event, read back from the log by its position, handed to the
 * projection's own handler in a read-model transaction that holds the projection's checkpoint lock and leaves the
 * checkpoint where it is. Source: docs/api.md (Dead letters); docs/architecture.md (Projections: dead letters).
 */
import { isDatabaseUnavailable } from '@agp/runtime';
import { deadLetter, lockExistingCheckpoint, projectionDeadLetter, removeProjectionDeadLetter } from './checkpoints.js';
import type { EventStore, Sql, StoredEvent, SubscriptionOptions } from './types.js';

/**
 * What {@link retryProjectionDeadLetter} did:
 * - `applied`: the handler applied the event; the dead letter is removed (same transaction);
 * - `failed`: the handler refused the event again (a data-quality rule) or threw; the dead letter is kept with
 *   `last_seen` now, `attempts` counted up and `reason` (the new error) as its reason;
 * - `not_found`: the organisation has no dead letter of this projection at this position (or it was just retried);
 * - `behind`: the projection's checkpoint (`checkpoint`, absent when it has none) is before the event: its
 *   subscription applies the event itself (a replay), so nothing was done;
 * - `event_missing`: the log no longer holds the event the dead letter names; nothing was done.
 */
export type ProjectionRetryOutcome =
  | { result: 'applied'; event: StoredEvent }
  | { result: 'failed'; event: StoredEvent; reason: string; attempts: number }
  | { result: 'not_found' }
  | { result: 'behind'; checkpoint?: bigint }
  | { result: 'event_missing' };

/** How many events of one position a read may meet before the one named (KurrentDB: the events of one append share a commit position). */
const SAME_POSITION_READ = 64;

/**
 * Apply the event of `organizationId`'s dead letter of `projection` at global `position` again, through
 * `projection.handler` alone, in one transaction of the read-model database `db` that locks the projection's
 * checkpoint (so its catch-up batches and inline appends wait) and never writes it: a retry neither moves the
 * checkpoint back nor forward, it applies the one event. The handler refusing the event again (it records it through
 * `recordRefusedEvents`, which counts the letter's `attempts` up) commits that record and nothing else; the handler
 * throwing rolls its writes back and the letter's `last_seen`, `attempts` and reason are updated after.
 * @param store the log the event is read from (by position, then checked by the letter's event id).
 * @throws the driver's error when the database or the log is unavailable (`isDatabaseUnavailable`): nothing changed.
 */
export async function retryProjectionDeadLetter(
  store: Pick<EventStore, 'readAll'>,
  db: Sql,
  projection: Pick<SubscriptionOptions, 'name' | 'handler'>,
  organizationId: string,
  position: bigint,
): Promise<ProjectionRetryOutcome> {
  const letter = await projectionDeadLetter(db, organizationId, projection.name, position);
  if (!letter) return { result: 'not_found' };
  const read = await store.readAll(position - 1n, SAME_POSITION_READ, [letter.event_type]);
  const event = read.find((e) => e.global_position === position && e.event_id === letter.event_id);
  if (!event) return { result: 'event_missing' };
  try {
    return await db.transaction<ProjectionRetryOutcome>(async (tx) => {
      const checkpoint = await lockExistingCheckpoint(tx, projection.name);
      if (checkpoint === undefined || checkpoint < position) return { result: 'behind', checkpoint };
      const before = await projectionDeadLetter(tx, organizationId, projection.name, position, true);
      if (!before) return { result: 'not_found' };
      await projection.handler([event], tx);
      const after = await projectionDeadLetter(tx, organizationId, projection.name, position);
      if (after && after.attempts > before.attempts) return { result: 'failed', event, reason: after.error, attempts: after.attempts };
      await removeProjectionDeadLetter(tx, projection.name, position);
      return { result: 'applied', event };
    });
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw err;
    await deadLetter(db, projection.name, event, err);
    const kept = (await projectionDeadLetter(db, organizationId, projection.name, position))!;
    return { result: 'failed', event, reason: kept.error, attempts: kept.attempts };
  }
}
