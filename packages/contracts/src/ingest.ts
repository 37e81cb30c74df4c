import { z } from 'zod';
import { DateTimeSchema, OpaqueIdSchema } from './common.js';
import { CreateInterventionSchema } from './intervention.js';
import { ActionRecordSchema, AgentRegisterSchema, ApprovalRequestSchema, RunEndSchema, RunStartSchema } from './fleet.js';

/** Ingest limits. Source: ARCHITECTURE.md §4 (Ingest). */
export const INGEST_MAX_EVENTS = 1000;
export const INGEST_MAX_BYTES = 5 * 1024 * 1024;

/** Event types accepted by `POST /api/v1/ingest/`. Source: ARCHITECTURE.md §4 (Ingest), issue #3 point 1. */
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
 * twice is stored once. Source: ARCHITECTURE.md §4 (Ingest).
 */
export const IngestEventSchema = z.strictObject({
  id: OpaqueIdSchema,
  type: IngestEventTypeSchema,
  timestamp: DateTimeSchema,
  body: z.record(z.string(), z.unknown()),
});
export type IngestEvent = z.infer<typeof IngestEventSchema>;

/**
 * The request envelope. Each item is validated on its own (invalid ones are reported in the 207 answer);
 * only the envelope's shape (an array of at most 1000) fails the whole request with 422.
 */
export const IngestBatchSchema = z.strictObject({
  batch: z.array(z.unknown()).max(INGEST_MAX_EVENTS, { message: `at most ${INGEST_MAX_EVENTS} events per batch` }),
});
export type IngestBatch = z.infer<typeof IngestBatchSchema>;

/** 207 answer: per event, accepted (`status` 201) or rejected with a status and message. */
export const IngestResponseSchema = z.object({
  successes: z.array(z.object({ id: z.string(), status: z.number().int() })),
  errors: z.array(z.object({ id: z.string().nullable(), status: z.number().int(), message: z.string() })),
});
export type IngestResponse = z.infer<typeof IngestResponseSchema>;

/**
 * What the ingest service publishes to JetStream: one message per accepted chunk and target service,
 * with the platform-issued ids already assigned so redelivery is deterministic.
 */
export interface IngestEnvelope {
  organization_id: string;
  actor: string;
  correlation_id: string;
  received_at: string;
  events: Array<{ id: string; type: IngestEventType; timestamp: string; body: Record<string, unknown>; assigned_id: string }>;
}
