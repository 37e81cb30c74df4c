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
}
