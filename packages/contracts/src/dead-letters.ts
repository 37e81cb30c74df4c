import { z } from 'zod';
import { DateTimeSchema, OpaqueIdSchema, paginationShape } from './common.js';
import { IngestResponseSchema } from './ingest.js';

/**
 * Dead letters over HTTP (`/api/v1/dead-letters`): what the platform could never store or apply, kept for an operator
 * with the reason. Two kinds: an `ingest` dead letter is an ingest log message a consumer could never store (the
 * message's events, kept whole); a `projection` dead letter is a stored event a projection could never apply or
 * refused on a data-quality rule. Source: docs/api.md (Dead letters); docs/decisions.md (Dead letters over HTTP).
 */

/** The kinds of dead letter. */
export const DEAD_LETTER_KINDS = ['ingest', 'projection'] as const;
/** One of {@link DEAD_LETTER_KINDS}. */
export type DeadLetterKind = (typeof DEAD_LETTER_KINDS)[number];

/** Query of `GET /api/v1/dead-letters`: `skip`, `limit` (default 50, at most 200), `kind`, `projection` (a subscription name). */
export const ListDeadLettersQuerySchema = z.strictObject({
  ...paginationShape(50, 200),
  kind: z.enum(DEAD_LETTER_KINDS).optional(),
  projection: z.string().min(1).max(200).optional(),
});
export type ListDeadLettersQuery = z.infer<typeof ListDeadLettersQuerySchema>;

/** One dead letter. */
export const DeadLetterSchema = z.object({
  id: z.string().describe('`ingest-<n>` or `projection-<subscription>-<global position>`'),
  kind: z.enum(DEAD_LETTER_KINDS),
  source: z.string().describe('Who could not take it: the ingest consumer (e.g. `stats-ingest`) or the projection (e.g. `stats-read-model`)'),
  reason: z.string().describe('The error, or `refused: <rule>` for an event a projection refused on a data-quality rule'),
  first_seen: DateTimeSchema,
  last_seen: DateTimeSchema.describe('When it last failed (a projection replay, a retry that failed again)'),
  attempts: z.number().int().describe('How often it failed'),
  event: z
    .unknown()
    .describe(
      'ingest: the log message as the consumer received it (`{organization_id, actor, received_at, events: [...]}`); projection: the stored event `{event_id, type, stream_id, global_position, data, metadata}` (data and metadata null on a letter kept before events were kept with it)',
    ),
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

/** A page of the organisation's dead letters, the most recently failed first. */
export const DeadLetterPageSchema = z.object({ dead_letters: z.array(DeadLetterSchema), total: z.number().int(), skip: z.number().int(), limit: z.number().int() });
export type DeadLetterPage = z.infer<typeof DeadLetterPageSchema>;

/** Path of `POST /api/v1/dead-letters/{id}/retry`. */
export const DeadLetterIdPathSchema = z.strictObject({ id: OpaqueIdSchema });

/** The largest global position an event can have, and the largest dead-letter number (PostgreSQL's bigint). */
export const MAX_GLOBAL_POSITION = 9223372036854775807n;

/**
 * Body of `<service>.retry-projection-dead-letter`: which dead letter of the organisation (the caller's context) to
 * apply again: the projection (subscription name) and the event's global position (a decimal string).
 */
export const RetryProjectionDeadLetterSchema = z.strictObject({
  projection: z.string().min(1).max(200),
  global_position: z
    .string()
    .regex(/^[0-9]{1,19}$/, 'a global position: decimal digits')
    .refine((v) => !/^[0-9]+$/.test(v) || BigInt(v) <= MAX_GLOBAL_POSITION, `a global position: at most ${MAX_GLOBAL_POSITION}`),
});
export type RetryProjectionDeadLetter = z.infer<typeof RetryProjectionDeadLetterSchema>;

/** The event a projection applied on a retry: the projection, the event's id and its global position (decimal string). */
export const ProjectionRetriedSchema = z.object({ name: z.string(), event_id: z.string(), global_position: z.string() });
export type ProjectionRetried = z.infer<typeof ProjectionRetriedSchema>;

/**
 * Answer of a successful retry; the dead letter is removed. An ingest dead letter: `ingest` is ingest's answer per
 * event. A projection dead letter: `projection` names the projection that applied the event, and the event.
 */
export const DeadLetterRetrySchema = z.union([
  z.object({ id: z.string(), result: z.literal('retried'), ingest: IngestResponseSchema }),
  z.object({ id: z.string(), result: z.literal('retried'), projection: ProjectionRetriedSchema }),
]);
export type DeadLetterRetry = z.infer<typeof DeadLetterRetrySchema>;
