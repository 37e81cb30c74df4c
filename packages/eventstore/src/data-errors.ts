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
 * (subscription, position, event id, type, stream, `reason`), inside the projection's transaction, so the record
 * commits with the checkpoint that moves past them. Idempotent: a replay that refuses them again adds nothing.
 * Operators read them with SQL, as parked events. Source: docs/decisions.md (Text PostgreSQL cannot store, and poison
 * messages; Run data quality).
 * @param tx the projection handler's transaction.
 */
export async function recordRefusedEvents(
  tx: { query: (text: string, params?: unknown[]) => Promise<unknown> },
  subscription: string,
  refused: Array<{ event: { global_position: bigint; event_id: string; type: string; stream_id: string }; reason: string }>,
): Promise<void> {
  if (refused.length === 0) return;
  await tx.query(
    `INSERT INTO agp_projection_dead_letters (subscription, global_position, event_id, event_type, stream_id, error)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]) ON CONFLICT DO NOTHING`,
    [
      subscription,
      refused.map((r) => String(r.event.global_position)),
      refused.map((r) => r.event.event_id),
      refused.map((r) => r.event.type),
      refused.map((r) => r.event.stream_id),
      refused.map((r) => `refused: ${r.reason}`),
    ],
  );
}
