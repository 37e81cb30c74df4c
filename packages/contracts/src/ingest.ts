import { z } from 'zod';
import { DateTimeSchema, OpaqueIdSchema } from './common.js';
import { CreateInterventionSchema } from './intervention.js';
import { ActionRecordSchema, AgentRegisterSchema, ApprovalRequestSchema, RunEndSchema, RunStartSchema } from './fleet.js';

/** Ingest limits. Source: architecture §4 (Ingest). */
export const INGEST_MAX_EVENTS = 1000;
export const INGEST_MAX_BYTES = 5 * 1024 * 1024;

/**
 * Deepest nesting of objects and arrays in any JSON the platform accepts: a REST request body, each ingest event, the
 * arguments of an MCP tool call or prompt. `{}` and `[]` are one level, `{"a": {"b": []}}` three; scalars add none.
 * Deeper input is a permanent client error (422 naming this limit and the path where it was crossed), never retried.
 * Source: spec §Errors (limits); docs/decisions.md (JSON nesting limit).
 */
export const MAX_JSON_DEPTH = 64;

/** Event types accepted by `POST /api/v1/ingest/`. Source: architecture §4 (Ingest). */
export const INGEST_EVENT_TYPES = ['intervention.create', 'agent.register', 'run.start', 'run.end', 'action.record', 'approval.request'] as const;
export const IngestEventTypeSchema = z.enum(INGEST_EVENT_TYPES);
export type IngestEventType = z.infer<typeof IngestEventTypeSchema>;

/** Body schema of each ingest event type. */
export const INGEST_BODY_SCHEMAS = {
  'intervention.create': CreateInterventionSchema,
  'agent.register': AgentRegisterSchema,
  'run.start': RunStartSchema,
  'run.end': RunEndSchema,
  'action.record': ActionRecordSchema,
  'approval.request': ApprovalRequestSchema,
} as const satisfies Record<IngestEventType, z.ZodType>;

/**
 * One ingest event: `{id, type, timestamp, body}`. `id` is the client's idempotency key: the same id sent
 * twice is stored once. Source: architecture §4 (Ingest).
 */
export const IngestEventSchema = z.strictObject({
  id: OpaqueIdSchema,
  type: IngestEventTypeSchema,
  timestamp: DateTimeSchema,
  body: z.record(z.string(), z.unknown()),
});
export type IngestEvent = z.infer<typeof IngestEventSchema>;

/**
 * One ingest event of type `T`, envelope and body in one schema: {@link IngestEventSchema} with `type` fixed to `T` and
 * `body` checked by `INGEST_BODY_SCHEMAS[T]`. Built once per type ({@link INGEST_EVENT_SCHEMAS}), so the ingest service
 * validates each event with a single parse; a bad field is named `body.x` exactly as the body schema alone names it.
 * Source: architecture §4 (Ingest); docs/decisions.md (Ingest validates each event once).
 */
const ingestEventOf = <T extends IngestEventType>(type: T) => IngestEventSchema.extend({ type: z.literal(type), body: INGEST_BODY_SCHEMAS[type] });

/** The combined envelope-and-body schema of each ingest event type (see {@link ingestEventOf}); the output body is typed. */
export const INGEST_EVENT_SCHEMAS = {
  'intervention.create': ingestEventOf('intervention.create'),
  'agent.register': ingestEventOf('agent.register'),
  'run.start': ingestEventOf('run.start'),
  'run.end': ingestEventOf('run.end'),
  'action.record': ingestEventOf('action.record'),
  'approval.request': ingestEventOf('approval.request'),
} as const satisfies Record<IngestEventType, z.ZodType>;

/** An ingest event whose body was checked by its type's schema, as the ingest service publishes it (a union on `type`). */
export type ValidIngestEvent = { [T in IngestEventType]: z.output<(typeof INGEST_EVENT_SCHEMAS)[T]> }[IngestEventType];

/**
 * Version of what an ingest log message carries, sent beside it (the JetStream header {@link INGEST_SCHEMA_HEADER}, the
 * SQL log's `schema` column). Version 1: every event of the envelope was validated by the ingest service with
 * {@link INGEST_EVENT_SCHEMAS} and its body is that schema's output, so consumers use it as it is. A message without a
 * version was published before versions existed (bodies as the client sent them): consumers validate it in full. A
 * message of a newer version is left for a newer consumer (nak'd with a delay and logged), never guessed at.
 * Source: docs/decisions.md (Consumers trust what the log carries).
 */
export const INGEST_SCHEMA_VERSION = 1;
/** The JetStream message header that carries {@link INGEST_SCHEMA_VERSION}. */
export const INGEST_SCHEMA_HEADER = 'Agp-Schema';

/**
 * The request envelope. Each item is validated on its own (invalid ones are reported in the 207 answer);
 * only the envelope's shape (an array of at most 1000) fails the whole request with 422.
 */
export const IngestBatchSchema = z.strictObject({
  batch: z.array(z.unknown()).max(INGEST_MAX_EVENTS, { message: `at most ${INGEST_MAX_EVENTS} events per batch` }),
});
export type IngestBatch = z.infer<typeof IngestBatchSchema>;

/**
 * What became of an accepted event. Source: docs/ingest.md (Ingest answers).
 * - `created` (`status` 201): accepted for the first time; it will be stored.
 * - `duplicate` (`status` 200): nothing new; the id was already stored, or it came earlier in the same batch.
 * An event re-sent while its first copy is still in flight (in the log, not yet stored) may be answered `created`
 * again; it is still stored once.
 */
export const INGEST_RESULTS = ['created', 'duplicate'] as const;
export type IngestResult = (typeof INGEST_RESULTS)[number];

/** The `status` and `result` of an event accepted for the first time (docs/ingest.md, Ingest answers). */
export const INGEST_CREATED = { status: 201, result: 'created' } as const;
/** The `status` and `result` of an event that was already stored or came earlier in its batch (docs/ingest.md, Ingest answers). */
export const INGEST_DUPLICATE = { status: 200, result: 'duplicate' } as const;

/**
 * One accepted event of the 207 answer: `{id, status: 201, result: "created"}` or `{id, status: 200,
 * result: "duplicate"}` (see {@link INGEST_RESULTS}). `status` stays numeric for clients that only read it.
 */
export const IngestSuccessSchema = z.discriminatedUnion('result', [
  z.object({
    id: z.string().describe('the client\'s event id'),
    status: z.literal(INGEST_CREATED.status),
    result: z.literal(INGEST_CREATED.result).describe('accepted for the first time; it will be stored'),
  }),
  z.object({
    id: z.string().describe('the client\'s event id'),
    status: z.literal(INGEST_DUPLICATE.status),
    result: z
      .literal(INGEST_DUPLICATE.result)
      .describe('nothing new: the id was already stored, or the id came earlier in this batch'),
  }),
]);
export type IngestSuccess = z.infer<typeof IngestSuccessSchema>;

/** One rejected event of the 207 answer: its id (null when it had none), a status (413, 422, 503) and why. */
export const IngestErrorSchema = z.object({ id: z.string().nullable(), status: z.number().int(), message: z.string() });
export type IngestError = z.infer<typeof IngestErrorSchema>;

/**
 * 207 answer, per event, in batch order: accepted (`successes`, each `created` 201 or `duplicate` 200) or rejected
 * with a status and message (`errors`). "duplicate" means the id was already stored, or it came earlier in the batch;
 * an event re-sent while its first copy is still in flight may be answered "created"
 * but is still stored once. Source: architecture §4 (Ingest); docs/ingest.md (Ingest answers).
 */
export const IngestResponseSchema = z
  .object({
    successes: z.array(IngestSuccessSchema),
    errors: z.array(IngestErrorSchema),
  })
  .describe(
    'Per-event results. A success is {id, status: 201, result: "created"} (first time) or {id, status: 200, result: "duplicate"} (the id was already stored, or it came earlier in this batch). An event re-sent while its first copy is still in flight may be answered "created" but is still stored once.',
  );
export type IngestResponse = z.infer<typeof IngestResponseSchema>;

/**
 * What the ingest service publishes to JetStream: one message per accepted chunk and target service, with the
 * platform-issued ids already assigned so redelivery is deterministic, and the W3C `traceparent` of the HTTP request
 * when it had one (so the trace continues past the log). Source: architecture §4 (Ingest).
 */
export const IngestEnvelopeSchema = z.object({
  organization_id: z.string(),
  /** `key:<key id>` of the API key that ingested the batch. */
  actor: z.string(),
  correlation_id: z.string(),
  traceparent: z.string().optional(),
  /** When the ingest service accepted the chunk, ISO 8601 UTC. */
  received_at: z.string(),
  events: z.array(IngestEventSchema.extend({ timestamp: z.string(), assigned_id: z.string() })),
});
export type IngestEnvelope = z.infer<typeof IngestEnvelopeSchema>;

/**
 * An {@link IngestEnvelope} whose events are known valid: each body is its type's schema output
 * ({@link ValidIngestEvent}). What a consumer handles once the message's {@link INGEST_SCHEMA_VERSION} was checked.
 */
export type ValidIngestEnvelope = Omit<IngestEnvelope, 'events'> & { events: Array<ValidIngestEvent & { assigned_id: string }> };

/** The client's `id` of a raw batch item when it is a string (for a per-event error about an item that is invalid), else null. */
export function clientEventId(item: unknown): string | null {
  const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : null;
}
