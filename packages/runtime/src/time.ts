/**
 * A timestamp as an ISO 8601 UTC string (`2026-11-23T18:00:00.000Z`), from a `Date` or anything `Date` parses
 * (PostgreSQL `timestamptz` values arrive as `Date` from pg and as strings from PGlite).
 * @throws RangeError when `value` is not a valid date.
 */
export function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

/** {@link iso}, keeping `null` (a nullable column). @throws RangeError when `value` is not a valid date. */
export function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : iso(value);
}
