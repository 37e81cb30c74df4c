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
