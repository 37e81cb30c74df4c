import { keepProjectionDeadLetters } from './checkpoints.js';
import type { SqlExecutor, StoredEvent } from './types.js';

/**
 * Whether `err` is a PostgreSQL data exception (SQLSTATE class 22: untranslatable character, invalid text
 * representation, value out of range …): retrying the same data can never succeed. Connection failures, timeouts and
 * version conflicts are not; they are worth a retry. Works for `pg` and PGlite errors (both carry `code`).
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * An append refused because its events hold text PostgreSQL cannot store (a NUL character or an unpaired UTF-16
 * surrogate, in a string or a member name): a data error with PostgreSQL's SQLSTATE for it (22P05,
 * untranslatable_character), so {@link isDataError} and the ingest consumer's dead-lettering treat it as they treat the
 * database's own refusal. Nothing of the append is written. `paths`: where, e.g. `events.3.data.reason`.
 * Source: docs/decisions.md (Text PostgreSQL cannot store, and poison messages).
 */
export class UnstorableTextError extends Error {
  /** SQLSTATE class 22 (data exception): untranslatable_character. */
  readonly code = '22P05';
  constructor(readonly paths: string[]) {
    super(`text that cannot be stored (a NUL character or an unpaired surrogate) at ${paths.join(', ')}`);
    this.name = 'UnstorableTextError';
  }
}

/**
 * Record events a projection refuses on purpose (a data-quality rule, not a failure) in `agp_projection_dead_letters`
 * with the reason `refused: <reason>`, inside the projection's transaction, so the record commits with the checkpoint
 * that moves past them. A replay that refuses them again updates their `last_seen` and `attempts`, adding no row.
 * Operators read them with `GET /api/v1/dead-letters`. Source: docs/decisions.md (Text PostgreSQL cannot store, and
 * poison messages; Run data quality; Dead letters over HTTP).
 * @param tx the projection handler's transaction.
 */
export async function recordRefusedEvents(tx: SqlExecutor, subscription: string, refused: ReadonlyArray<{ event: StoredEvent; reason: string }>): Promise<void> {
  await keepProjectionDeadLetters(tx, subscription, refused.map((r) => ({ event: r.event, reason: `refused: ${r.reason}` })));
}
