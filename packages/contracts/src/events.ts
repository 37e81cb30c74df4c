import type { CreateIntervention } from './intervention.js';
import type { InterventionOutcome, RiskLevel } from './enums.js';

/**
 * Domain events of the intervention stream `intervention-<id>`. The stream is the audit trail.
 * Source: ARCHITECTURE.md §3 (Streams).
 */
export const InterventionEvents = {
  Recorded: 'InterventionRecorded',
  Enriched: 'InterventionEnriched',
  OutcomeChanged: 'InterventionOutcomeChanged',
  Deleted: 'InterventionDeleted',
  EnrichmentFailed: 'InterventionEnrichmentFailed',
} as const;

/** Stream id of an intervention. */
export const interventionStream = (id: string) => `intervention-${id}`;

/** Data of InterventionRecorded: the normalised creation fields plus the platform-assigned ones. */
export interface InterventionRecordedData extends Omit<CreateIntervention, 'timestamp'> {
  id: string;
  timestamp: string;
  created_at: string;
  cost_prevented_usd: number;
  /** `api` for POST, `ingest` for the batch path. */
  source: 'api' | 'ingest';
  /** The client's ingest event id, for the ingest path. */
  ingest_event_id?: string;
  /**
   * For outcome `escalated`: when its approval expires (ISO 8601 UTC), fixed at record time so a replay
   * decides expiry the same way. Absent on records from before approvals (then created_at + the current TTL).
   */
  approval_expires_at?: string;
}

/** Data of InterventionDeleted. */
export interface InterventionDeletedData {
  id: string;
  reason?: string;
}

/** Data of InterventionOutcomeChanged (approvals, issue 3). */
export interface InterventionOutcomeChangedData {
  id: string;
  from: InterventionOutcome;
  to: InterventionOutcome;
  approver_email?: string;
  notes?: string;
  reason?: string;
}

/** Data of InterventionEnriched (issue 4): new and original values side by side. */
export interface InterventionEnrichedData {
  id: string;
  model: string;
  prompt_version: string;
  changes: {
    reason?: { from: string | null; to: string };
    agent_intent?: { from: string | null; to: string };
    risk_level?: { from: RiskLevel | null; to: RiskLevel };
    suggested_rewrite?: { from: string | null; to: string };
  };
  /** Values of the model's answer that were refused (e.g. a risk_level outside the five wire values); the original stays. */
  rejected?: Array<{ field: string; value: unknown; reason: string }>;
}

/**
 * Data of InterventionEnrichmentFailed (issue 4): enrichment gave up after `attempts` provider requests
 * (AGP_ENRICHMENT_MAX_ATTEMPTS); the record keeps its original values.
 */
export interface InterventionEnrichmentFailedData {
  id: string;
  model: string;
  prompt_version: string;
  /** Provider requests made, retries included. */
  attempts: number;
  /** Why the last attempt failed (provider status and message, or why the answer was invalid). */
  error: string;
}
