/**
 * Whether `err` is a PostgreSQL data exception (SQLSTATE class 22: untranslatable character, invalid text
 * representation, value out of range …): retrying the same data can never succeed. Connection failures, timeouts and
 * version conflicts are not; they are worth a retry. Works for `pg` and PGlite errors (both carry `code`).
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}
