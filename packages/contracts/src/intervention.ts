import { z } from 'zod';
import { DateFilterSchema, DateTimeSchema, NextCursorSchema, OpaqueIdSchema, UsdSchema, enumFilter, keysetPaginationShape } from './common.js';
import { GUARDRAIL_FOR_TYPE, INTERVENTION_OUTCOMES, INTERVENTION_TYPES, InterventionOutcomeSchema, InterventionTypeSchema, RISK_LEVELS, RiskLevelSchema } from './enums.js';
import { GuardrailContextSchema } from './guardrail.js';
import { PurposeFilterSchema, PurposeSchema } from './purpose.js';
import { ApprovalsRequiredSchema, SeparationOfDutiesSchema } from './approval-rule.js';

const Text = (max: number) => z.string().max(max);

/** `{ suggested_rewrite: string | null }`. Source: spec §Intervention record. */
export const RemediationPayloadSchema = z.strictObject({ suggested_rewrite: z.string().max(20_000).nullable() });

/** Enrichment state of a record (issue 4); `pending` until the worker has run, `skipped` with no LLM key. */
export const EnrichmentStatusSchema = z.enum(['pending', 'enriched', 'failed', 'skipped']);

/**
 * The intervention record as every read returns it. Money in USD; times ISO 8601 UTC.
 * Source: spec §Intervention record.
 */
export const InterventionRecordSchema = z.object({
  id: z.string(),
  type: InterventionTypeSchema,
  outcome: InterventionOutcomeSchema,
  action_name: z.string(),
  description: z.string().nullable(),
  agent_id: z.string(),
  run_id: z.string().nullable(),
  policy_id: z.string().nullable(),
  policy_name: z.string().nullable(),
  risk_level: RiskLevelSchema.nullable(),
  estimated_cost_usd: z.number().nullable(),
  actual_cost_usd: z.number().nullable(),
  cost_prevented_usd: z.number(),
  blast_radius: z.string().nullable(),
  reason: z.string().nullable(),
  agent_intent: z.string().nullable(),
  original_inputs: z.record(z.string(), z.unknown()),
  modified_inputs: z.record(z.string(), z.unknown()).nullable(),
  timestamp: z.string(),
  organization_id: z.string(),
  created_at: z.string(),
  context: GuardrailContextSchema.optional(),
  remediation_payload: RemediationPayloadSchema,
  /** `eval` for an intervention an eval harness produced (left out of the list and stats by default), else `production`. */
  purpose: PurposeSchema,
});
export type InterventionRecord = z.infer<typeof InterventionRecordSchema>;

/**
 * The fields of `POST /api/v1/interventions` and of an `intervention.create` ingest event, without the cross-field
 * check ({@link CreateInterventionSchema} adds it); the base of the InterventionRecorded event's data.
 * Required: type, outcome, action_name, agent_id (architecture §4). The spec's twelve creation fields are
 * accepted, plus the record fields an agent-side client knows at the time (policy_name, agent_intent,
 * actual_cost_usd, cost_prevented_usd, modified_inputs, context, remediation_payload, timestamp); see
 * docs/decisions.md. Unknown fields are rejected with 422 naming them.
 */
export const CreateInterventionFieldsSchema = z.strictObject({
  type: InterventionTypeSchema,
  outcome: InterventionOutcomeSchema,
  action_name: z.string().min(1).max(256),
  agent_id: OpaqueIdSchema,
  description: Text(10_000).optional(),
  run_id: OpaqueIdSchema.optional(),
  policy_id: OpaqueIdSchema.optional(),
  policy_name: Text(256).optional(),
  risk_level: RiskLevelSchema.optional(),
  estimated_cost_usd: UsdSchema.optional(),
  actual_cost_usd: UsdSchema.optional(),
  cost_prevented_usd: UsdSchema.optional(),
  blast_radius: Text(10_000).optional(),
  reason: Text(10_000).optional(),
  agent_intent: Text(10_000).optional(),
  original_inputs: z.record(z.string(), z.unknown()).optional(),
  modified_inputs: z.record(z.string(), z.unknown()).nullable().optional(),
  context: GuardrailContextSchema.optional(),
  remediation_payload: RemediationPayloadSchema.optional(),
  timestamp: DateTimeSchema.optional(),
  /** `eval` when an eval harness produced it; absent = production (or eval for a run id of the eval harness's shape). */
  purpose: PurposeSchema.optional(),
  /** For outcome `escalated`: approvals its approval needs (the escalating policy's; absent = 1). Ignored otherwise. */
  approvals_required: ApprovalsRequiredSchema.optional(),
  /** For outcome `escalated`: its approval is under separation of duties (the escalating policy's; absent = false). Ignored otherwise. */
  separation_of_duties: SeparationOfDutiesSchema.optional(),
});

/** {@link CreateInterventionFieldsSchema} plus the check that a guardrail context matches the intervention type. */
export const CreateInterventionSchema = CreateInterventionFieldsSchema.superRefine((body, ctx) => {
  const expected = GUARDRAIL_FOR_TYPE[body.type];
  if (body.context && !expected) {
    ctx.addIssue({ code: 'custom', path: ['context'], message: `context is only accepted for guardrail types (${Object.keys(GUARDRAIL_FOR_TYPE).join(', ')}), not ${body.type}` });
  } else if (body.context && body.context.guardrail !== expected) {
    ctx.addIssue({ code: 'custom', path: ['context', 'guardrail'], message: `type ${body.type} carries guardrail '${expected}', got '${body.context.guardrail}'` });
  }
});
export type CreateIntervention = z.infer<typeof CreateInterventionSchema>;

/**
 * Query of `GET /api/v1/interventions`. Enum filters take one value or a comma-separated list (OR);
 * different filters compose with AND. Dates: `YYYY-MM-DD` or ISO date-time; an `end_date` given as a date
 * includes that whole day. Unknown parameters are rejected (422). Paged by `skip` (absent = 0) or by `cursor` (the
 * `next_cursor` of the page before; not both: 400).
 * Source: spec §List query parameters, Limits; docs/api.md (Pagination).
 */
export const ListInterventionsQuerySchema = z
  .strictObject({
    type: enumFilter(INTERVENTION_TYPES).optional(),
    outcome: enumFilter(INTERVENTION_OUTCOMES).optional(),
    action_name: z.string().min(1).max(256).optional(),
    agent_id: OpaqueIdSchema.optional(),
    run_id: OpaqueIdSchema.optional(),
    policy_id: OpaqueIdSchema.optional(),
    risk_level: enumFilter(RISK_LEVELS).optional(),
    start_date: DateFilterSchema.optional(),
    end_date: DateFilterSchema.optional(),
    purpose: PurposeFilterSchema,
    ...keysetPaginationShape(50, 1000),
  })
  .superRefine((q, ctx) => {
    if (q.start_date && q.end_date && q.start_date.date > endExclusive(q.end_date)) {
      ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'end_date must not be before start_date' });
    }
  });
export type ListInterventionsQuery = z.infer<typeof ListInterventionsQuerySchema>;

/** The exclusive upper bound of an end_date filter: a date-only value includes that whole day. */
export function endExclusive(d: { date: Date; dateOnly: boolean }): Date {
  return d.dateOnly ? new Date(d.date.getTime() + 86_400_000) : new Date(d.date.getTime() + 1);
}

/**
 * A page of the list: the spec's `{interventions, total, skip, limit}` (`skip` 0 on a page asked by `cursor`) and
 * `next_cursor`. Source: spec §Interventions; docs/api.md (Pagination).
 */
export const InterventionPageSchema = z.object({
  interventions: z.array(InterventionRecordSchema),
  total: z.number().int(),
  skip: z.number().int(),
  limit: z.number().int(),
  next_cursor: NextCursorSchema,
});
export type InterventionPage = z.infer<typeof InterventionPageSchema>;

/**
 * Query of `GET /api/v1/interventions/stats`. Without start_date the totals are all-time and the time series
 * covers the last 30 days; with it, both cover start_date..end_date (default today), zero-filled.
 */
export const InterventionStatsQuerySchema = z.strictObject({
  start_date: DateFilterSchema.optional(),
  end_date: DateFilterSchema.optional(),
  /** Which purposes to count (default production: eval interventions are left out). */
  purpose: PurposeFilterSchema,
});
export type InterventionStatsQuery = z.infer<typeof InterventionStatsQuerySchema>;

/** The statistics object. Source: spec §Intervention statistics object. */
export const InterventionStatsSchema = z.object({
  total_interventions: z.number().int(),
  by_type: z.record(z.string(), z.number().int()),
  by_outcome: z.record(z.string(), z.number().int()),
  cost_prevented_usd: z.number(),
  high_risk_blocks: z.number().int(),
  /** One entry per day; `by_type` counts that day's interventions per type (types with none are left out). */
  time_series: z.array(z.object({ date: z.string(), interventions: z.number().int(), cost_prevented_usd: z.number(), by_type: z.record(z.string(), z.number().int()) })),
  top_blocked_actions: z.array(z.object({ action_name: z.string(), count: z.number().int(), cost_prevented_usd: z.number() })),
  top_triggering_policies: z.array(z.object({ policy_id: z.string(), policy_name: z.string(), count: z.number().int() })),
});
export type InterventionStats = z.infer<typeof InterventionStatsSchema>;

/**
 * One audit-trail entry: an event of the record's stream, who or what caused it, and each field it changed.
 * Source: architecture §3.
 */
export const AuditTrailEntrySchema = z.object({
  event: z.string(),
  at: z.string(),
  actor: z.string(),
  version: z.number().int(),
  changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type AuditTrailEntry = z.infer<typeof AuditTrailEntrySchema>;

/**
 * `GET /api/v1/interventions/{id}`: the record plus its audit trail and `enrichment_status` (issue 4):
 * `enriched` / `failed` from the latest enrichment event, `pending` while an enrichment job is queued or running,
 * `skipped` when it was never queued (no LLM key when it was recorded).
 */
export const InterventionDetailSchema = InterventionRecordSchema.extend({ audit_trail: z.array(AuditTrailEntrySchema), enrichment_status: EnrichmentStatusSchema });
export type InterventionDetail = z.infer<typeof InterventionDetailSchema>;

/**
 * Reply of `interventions.enrichment-coverage` (service-only, for the tool gateway): the organisation's
 * live (not deleted) interventions counted by the `enrichment_status` that `GET /api/v1/interventions/{id}` reports
 * for each ({@link InterventionDetailSchema}): `pending` while a job is queued or running, or, with enrichment on,
 * for a record the enrichment subscription has not reached yet; else `enriched` / `failed` from the latest
 * enrichment event; else `skipped` (never queued: recorded while enrichment was off). `total` = the sum of the four.
 * Counts are as of the interventions read model (a record not projected yet is not counted).
 */
export const EnrichmentCoverageSchema = z.object({
  total: z.number().int(),
  enriched: z.number().int(),
  pending: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
});
export type EnrichmentCoverage = z.infer<typeof EnrichmentCoverageSchema>;
