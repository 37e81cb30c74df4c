import { z } from 'zod';
import { InterventionOutcomeSchema, RiskLevelSchema } from './enums.js';
import { CreateInterventionFieldsSchema } from './intervention.js';

/**
 * Domain events of the intervention stream `intervention-<id>`. The stream is the audit trail.
 * Source: architecture §3 (Streams).
 */
export const InterventionEvents = {
  Recorded: 'InterventionRecorded',
  Enriched: 'InterventionEnriched',
  OutcomeChanged: 'InterventionOutcomeChanged',
  Deleted: 'InterventionDeleted',
  EnrichmentFailed: 'InterventionEnrichmentFailed',
  /** One approval given of an approval that needs two; it stays pending (docs/auth.md). */
  ApprovalGiven: 'InterventionApprovalGiven',
} as const;

/** Stream id of an intervention. */
export const interventionStream = (id: string) => `intervention-${id}`;

/** Data of InterventionRecorded: the normalised creation fields plus the platform-assigned ones. */
export const InterventionRecordedDataSchema = z.object({
  ...CreateInterventionFieldsSchema.omit({ timestamp: true }).shape,
  id: z.string(),
  /** When the intervention happened, ISO 8601 UTC. */
  timestamp: z.string(),
  created_at: z.string(),
  /** USD. */
  cost_prevented_usd: z.number(),
  /** `api` for POST, `ingest` for the batch path. */
  source: z.enum(['api', 'ingest']),
  /** The client's ingest event id, for the ingest path. */
  ingest_event_id: z.string().optional(),
  /**
   * For outcome `escalated`: when its approval expires (ISO 8601 UTC), fixed at record time so a replay
   * decides expiry the same way. Absent on records from before approvals (then created_at + the current TTL).
   */
  approval_expires_at: z.string().optional(),
});
export type InterventionRecordedData = z.infer<typeof InterventionRecordedDataSchema>;

/** Data of InterventionDeleted. */
export const InterventionDeletedDataSchema = z.object({ id: z.string(), reason: z.string().optional() });
export type InterventionDeletedData = z.infer<typeof InterventionDeletedDataSchema>;

/** Data of InterventionOutcomeChanged (approvals, issue 3). */
export const InterventionOutcomeChangedDataSchema = z.object({
  id: z.string(),
  from: InterventionOutcomeSchema,
  to: InterventionOutcomeSchema,
  approver_email: z.string().optional(),
  notes: z.string().optional(),
  reason: z.string().optional(),
});
export type InterventionOutcomeChangedData = z.infer<typeof InterventionOutcomeChangedDataSchema>;

const change = <S extends z.ZodType>(to: S) => z.object({ from: to.nullable(), to }).optional();

/** Data of InterventionEnriched (issue 4): new and original values side by side. */
export const InterventionEnrichedDataSchema = z.object({
  id: z.string(),
  model: z.string(),
  prompt_version: z.string(),
  changes: z.object({
    reason: change(z.string()),
    agent_intent: change(z.string()),
    risk_level: change(RiskLevelSchema),
    suggested_rewrite: change(z.string()),
  }),
  /** Values of the model's answer that were refused (e.g. a risk_level outside the five wire values); the original stays. */
  rejected: z.array(z.object({ field: z.string(), value: z.unknown(), reason: z.string() })).optional(),
});
export type InterventionEnrichedData = z.infer<typeof InterventionEnrichedDataSchema>;

/**
 * Data of InterventionEnrichmentFailed (issue 4): enrichment gave up after `attempts` provider requests
 * (AGP_ENRICHMENT_MAX_ATTEMPTS); the record keeps its original values.
 */
export const InterventionEnrichmentFailedDataSchema = z.object({
  id: z.string(),
  model: z.string(),
  prompt_version: z.string(),
  /** Provider requests made, retries included. */
  attempts: z.number().int(),
  /** Why the last attempt failed (provider status and message, or why the answer was invalid). */
  error: z.string(),
});
export type InterventionEnrichmentFailedData = z.infer<typeof InterventionEnrichmentFailedDataSchema>;
