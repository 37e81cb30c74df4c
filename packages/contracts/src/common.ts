import { z } from 'zod';

/**
 * Client-supplied opaque ids (agent_id, run_id, policy_id, ingest event ids): 1 to 256 characters.
 * Source: ARCHITECTURE.md §4 (Wire style).
 */
export const OpaqueIdSchema = z.string().min(1).max(256);

/** Money in USD, never negative. */
export const UsdSchema = z.number().finite().min(0);

/** ISO 8601 date-time with an offset or Z. */
export const DateTimeSchema = z.iso.datetime({ offset: true });

/**
 * A date filter in a query string: `YYYY-MM-DD` or a full ISO 8601 date-time.
 * Parsed to `{ iso, dateOnly }`; unparseable input is a 422 naming the field.
 */
export const DateFilterSchema = z
  .string()
  .refine((s) => /^\d{4}-\d{2}-\d{2}$/.test(s) || z.iso.datetime({ offset: true }).safeParse(s).success, {
    message: 'expected an ISO 8601 date (YYYY-MM-DD) or date-time (e.g. 2026-11-22T10:00:00Z)',
    abort: true,
  })
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not a valid calendar date' })
  .transform((s) => ({ date: new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s), dateOnly: /^\d{4}-\d{2}-\d{2}$/.test(s) }));

/**
 * An enum filter in a query string. One value, or several separated by commas (matched with OR);
 * different filters compose with AND.
 */
export function enumFilter<const T extends readonly [string, ...string[]]>(values: T) {
  return z.preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v),
    z.array(z.enum(values)).min(1),
  );
}

/** Pagination: `skip` ≥ 0 (default 0), `limit` 1..max (default 50). Source: platform-api.md (Limits). */
export function paginationShape(defaultLimit: number, maxLimit: number) {
  return {
    skip: z.coerce.number().int('expected an integer').min(0, 'must be 0 or more').default(0),
    limit: z.coerce
      .number()
      .int('expected an integer')
      .min(1, `must be between 1 and ${maxLimit}`)
      .max(maxLimit, `must be between 1 and ${maxLimit}`)
      .default(defaultLimit),
  };
}
