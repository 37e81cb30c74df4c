import { z } from 'zod';

/**
 * Guardrail context payloads, schema version 1, discriminated by `guardrail`.
 * `pii` is the spec's shape; `moderation`, `loop` and `idempotency` are decided in architecture §4.
 * Source: spec §Guardrail context payload.
 */
const version = z.literal(1);

/** One match inside an argument. `matched_text` is stored partly masked (the platform masks it if the client did not). */
export const GuardrailMatchSchema = z.strictObject({
  category: z.string().min(1).max(128),
  field_path: z.string().min(1).max(1024),
  matched_text: z.string().max(4096),
});

export const PiiContextSchema = z.strictObject({
  guardrail_schema_version: version,
  guardrail: z.literal('pii'),
  matches: z.array(GuardrailMatchSchema).max(1000),
  categories: z.array(z.string().min(1).max(128)).max(100),
  fields: z.array(z.string().min(1).max(1024)).max(1000),
});

export const ModerationContextSchema = z.strictObject({
  guardrail_schema_version: version,
  guardrail: z.literal('moderation'),
  matches: z.array(GuardrailMatchSchema.extend({ score: z.number().min(0).max(1) })).max(1000),
  categories: z.array(z.string().min(1).max(128)).max(100),
  fields: z.array(z.string().min(1).max(1024)).max(1000),
});

export const LoopContextSchema = z.strictObject({
  guardrail_schema_version: version,
  guardrail: z.literal('loop'),
  action_name: z.string().min(1).max(256),
  arguments_hash: z.string().min(1).max(256),
  repeat_count: z.number().int().min(1),
  threshold: z.number().int().min(1),
  window_seconds: z.number().positive(),
});

export const IdempotencyContextSchema = z.strictObject({
  guardrail_schema_version: version,
  guardrail: z.literal('idempotency'),
  idempotency_key: z.string().min(1).max(512),
  original_timestamp: z.iso.datetime({ offset: true }),
  cached_result_ref: z.string().min(1).max(1024),
});

export const GuardrailContextSchema = z.discriminatedUnion('guardrail', [
  PiiContextSchema,
  ModerationContextSchema,
  LoopContextSchema,
  IdempotencyContextSchema,
]);
export type GuardrailContext = z.infer<typeof GuardrailContextSchema>;
