import { z } from 'zod';

/**
 * Client-supplied opaque ids (agent_id, run_id, policy_id, ingest event ids): 1 to 256 characters.
 * Source: architecture §4 (Wire style).
 */
export const OpaqueIdSchema = z.string().min(1).max(256);

/** Largest amount of money one record may carry, in USD: sums of many stay far from float overflow. */
export const MAX_USD = 1e9;

/** Money in USD, never negative, at most {@link MAX_USD}. */
export const UsdSchema = z.number().finite().min(0).max(MAX_USD, `must be at most ${MAX_USD} USD`);

/**
 * The instants AGP stores: years 1000 to 9999 in UTC. PostgreSQL's timestamptz and JavaScript's ISO strings agree on
 * four-digit years only, and a date-only end filter adds a day, so the last day of 9999 is left out.
 */
const EARLIEST_MS = Date.parse('1000-01-01T00:00:00Z');
const LATEST_MS = Date.parse('9999-12-31T00:00:00Z');
const RANGE_MESSAGE = 'must be between 1000-01-01 and 9999-12-30 (UTC)';
const inRange = (ms: number) => ms >= EARLIEST_MS && ms < LATEST_MS;

/** ISO 8601 date-time with an offset or Z, between 1000-01-01 and 9999-12-30 UTC. */
export const DateTimeSchema = z.iso.datetime({ offset: true }).refine((s) => inRange(Date.parse(s)), { message: RANGE_MESSAGE });

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
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not a valid calendar date', abort: true })
  .refine((s) => inRange(Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s)), { message: RANGE_MESSAGE })
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

/** Pagination: `skip` ≥ 0 (default 0), `limit` 1..max (default 50). Source: spec §Limits. */
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


/** Longest `cursor` a list accepts, in characters (one this platform issues is under 100); a longer one is a 400. */
export const MAX_CURSOR_LENGTH = 512;

/**
 * Pagination of a list that also walks by keyset: `limit` as {@link paginationShape}, and either `skip` (an offset,
 * absent = 0) or `cursor` (the opaque `next_cursor` of the page before: the page that follows it, at the cost of the
 * first page however deep the walk). `skip` has no default here so that a query giving both can be refused (400, by
 * the list's query code, which also decodes the cursor: a cursor it did not issue is a 400). Source: spec §Limits;
 * docs/api.md (Pagination).
 */
export function keysetPaginationShape(defaultLimit: number, maxLimit: number) {
  const { limit } = paginationShape(defaultLimit, maxLimit);
  return {
    skip: z.coerce.number().int('expected an integer').min(0, 'must be 0 or more').optional().describe('How many matching records to skip (the offset); absent: 0. Not together with `cursor`.'),
    cursor: z
      .string()
      .optional()
      .describe('Opaque: the `next_cursor` of the page before. Answers the page after it (newest first), with the same filters. Not together with `skip`.'),
    limit,
  };
}

/** `next_cursor` of a list page: the `cursor` of the page after this one; null on the last page. */
export const NextCursorSchema = z.string().nullable().describe('Pass as `cursor` (with the same filters) for the page after this one; null on the last page.');
