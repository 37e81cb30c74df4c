import {
  BLOCKING_OUTCOMES,
  InterventionEvents,
  approverOf,
  purposeOf,
  type ApprovalGivenData,
  type ApprovalOutcomeChangedData,
  type AuditTrailEntry,
  type InterventionDeletedData,
  type InterventionEnrichedData,
  type InterventionEnrichmentFailedData,
  type InterventionOutcomeChangedData,
  type InterventionRecord,
  type InterventionRecordedData,
} from '@agp/contracts';
import type { StoredEvent } from '@agp/eventstore';

/**
 * The intervention aggregate: its state is the record as read models show it, folded from the stream
 * `intervention-<id>`. Source: architecture §3 (Streams).
 */
export interface InterventionState {
  record: InterventionRecord;
  deleted: boolean;
  /** Stream version of the last applied event. */
  version: number;
  /** Outcome of the latest enrichment run on the stream (issue 4); absent until InterventionEnriched or InterventionEnrichmentFailed. */
  enrichment_status?: 'enriched' | 'failed';
}

/**
 * The record an InterventionRecorded event creates, with every optional field defaulted. `purpose` is `purposeOf` the
 * stated purpose and the run id, and comes last (after `context`), where the read-model migration appended it to
 * records stored before it existed, so both give the same text.
 */
export function recordFromRecorded(d: InterventionRecordedData, organizationId: string): InterventionRecord {
  // One object, its last fields added in place (no copy of the whole record to put `purpose` after `context`).
  const rec = {
    id: d.id,
    type: d.type,
    outcome: d.outcome,
    action_name: d.action_name,
    description: d.description ?? null,
    agent_id: d.agent_id,
    run_id: d.run_id ?? null,
    policy_id: d.policy_id ?? null,
    policy_name: d.policy_name ?? null,
    risk_level: d.risk_level ?? null,
    estimated_cost_usd: d.estimated_cost_usd ?? null,
    actual_cost_usd: d.actual_cost_usd ?? null,
    cost_prevented_usd: d.cost_prevented_usd,
    blast_radius: d.blast_radius ?? null,
    reason: d.reason ?? null,
    agent_intent: d.agent_intent ?? null,
    original_inputs: d.original_inputs ?? {},
    modified_inputs: d.modified_inputs ?? null,
    timestamp: d.timestamp,
    organization_id: organizationId,
    created_at: d.created_at,
    remediation_payload: { suggested_rewrite: d.remediation_payload?.suggested_rewrite ?? null },
  } as InterventionRecord;
  if (d.context) rec.context = d.context;
  rec.purpose = purposeOf(d.purpose, d.run_id);
  return rec;
}

/**
 * Fold one event into the state. Unknown event types leave it unchanged.
 * `null` state plus a non-Recorded event stays null (a stream always starts with InterventionRecorded).
 */
export function evolve(state: InterventionState | null, event: Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'stream_version'>): InterventionState | null {
  switch (event.type) {
    case InterventionEvents.Recorded:
      return { record: recordFromRecorded(event.data as unknown as InterventionRecordedData, event.metadata.organization_id), deleted: false, version: event.stream_version };
    case InterventionEvents.Deleted:
      return state && { ...state, deleted: true, version: event.stream_version };
    case InterventionEvents.OutcomeChanged: {
      if (!state) return state;
      const d = event.data as unknown as InterventionOutcomeChangedData;
      // A rejected (or expired) approval prevented the action: its estimated cost counts as prevented, as it does
      // for a record created as blocked (decide.ts costPrevented). An explicit or earlier amount is kept.
      const prevented = isBlocking(d.to) && state.record.cost_prevented_usd === 0 ? (state.record.estimated_cost_usd ?? 0) : state.record.cost_prevented_usd;
      return { ...state, record: { ...state.record, outcome: d.to, cost_prevented_usd: prevented }, version: event.stream_version };
    }
    case InterventionEvents.Enriched: {
      if (!state) return state;
      const c = (event.data as unknown as InterventionEnrichedData).changes;
      const r = { ...state.record };
      if (c.reason) r.reason = c.reason.to;
      if (c.agent_intent) r.agent_intent = c.agent_intent.to;
      if (c.risk_level) r.risk_level = c.risk_level.to;
      if (c.suggested_rewrite) r.remediation_payload = { suggested_rewrite: c.suggested_rewrite.to };
      return { ...state, record: r, version: event.stream_version, enrichment_status: 'enriched' };
    }
    case InterventionEvents.EnrichmentFailed:
      return state && { ...state, version: event.stream_version, enrichment_status: 'failed' };
    default:
      return state ? { ...state, version: event.stream_version } : state;
  }
}

/** Fold a whole stream. */
export function fold(events: Array<Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'stream_version'>>): InterventionState | null {
  return events.reduce<InterventionState | null>(evolve, null);
}

const AUDITED_CREATION_FIELDS = [
  'type', 'outcome', 'action_name', 'agent_id', 'run_id', 'policy_id', 'policy_name', 'risk_level',
  'estimated_cost_usd', 'actual_cost_usd', 'cost_prevented_usd', 'reason', 'agent_intent',
] as const;

/**
 * The audit trail: one entry per stream event, saying who or what changed which field, when, from what, to what.
 * Source: architecture §3 (`audit_trail: [{event, at, actor, changes: {field: {from, to}}}]`).
 */
export function auditTrail(events: StoredEvent[]): AuditTrailEntry[] {
  return events.map((e): AuditTrailEntry => {
    const base = { event: e.type, at: e.recorded_at, actor: e.metadata.actor, version: e.stream_version };
    switch (e.type) {
      case InterventionEvents.Recorded: {
        const rec = recordFromRecorded(e.data as unknown as InterventionRecordedData, e.metadata.organization_id);
        const changes: AuditTrailEntry['changes'] = {};
        for (const f of AUDITED_CREATION_FIELDS) if (rec[f] !== null) changes[f] = { from: null, to: rec[f] };
        if (rec.remediation_payload.suggested_rewrite !== null) changes.suggested_rewrite = { from: null, to: rec.remediation_payload.suggested_rewrite };
        return { ...base, changes, details: { source: (e.data as unknown as InterventionRecordedData).source } };
      }
      case InterventionEvents.OutcomeChanged: {
        const d = e.data as unknown as InterventionOutcomeChangedData;
        const details: Record<string, unknown> = {};
        if (d.approver_email) details.approver_email = d.approver_email;
        if (d.notes) details.notes = d.notes;
        if (d.reason) details.reason = d.reason;
        const by = approverOf(d as ApprovalOutcomeChangedData);
        if (by) details.by = by;
        return { ...base, changes: { outcome: { from: d.from, to: d.to } }, details };
      }
      case InterventionEvents.ApprovalGiven: {
        // One approval of several: the outcome does not change yet.
        const d = e.data as unknown as ApprovalGivenData;
        const details: Record<string, unknown> = { approver_email: d.approver_email, by: approverOf(d), approvals_required: d.approvals_required };
        if (d.notes) details.notes = d.notes;
        return { ...base, changes: {}, details };
      }
      case InterventionEvents.Enriched: {
        const d = e.data as unknown as InterventionEnrichedData;
        return { ...base, changes: { ...d.changes }, details: { model: d.model, prompt_version: d.prompt_version, ...(d.rejected?.length ? { rejected: d.rejected } : {}) } };
      }
      case InterventionEvents.EnrichmentFailed: {
        const d = e.data as unknown as InterventionEnrichmentFailedData;
        return { ...base, changes: {}, details: { model: d.model, prompt_version: d.prompt_version, attempts: d.attempts, error: d.error } };
      }
      case InterventionEvents.Deleted: {
        const d = e.data as unknown as InterventionDeletedData;
        return { ...base, changes: { deleted: { from: false, to: true } }, ...(d.reason ? { details: { reason: d.reason } } : {}) };
      }
      default:
        return { ...base, changes: {} };
    }
  });
}

/** Whether an outcome counts as blocked for stats. */
export const isBlocking = (outcome: string) => (BLOCKING_OUTCOMES as readonly string[]).includes(outcome);
