import {
  APPROVAL_EXPIRED_REASON,
  InterventionEvents,
  approvalId,
  approverOf,
  type ApprovalGivenData,
  type ApprovalOutcomeChangedData,
  type ApprovalRecord,
  type ApprovalStatus,
  type InterventionEnrichedData,
  type InterventionRecordedData,
} from '@agp/contracts';
import type { StoredEvent } from '@agp/eventstore';
import { recordFromRecorded } from '../intervention/intervention.js';

/**
 * The approval view of an intervention stream `intervention-<id>`: the same events, folded into the approval
 * that an escalated record opens. One `evolve` serves the decider and the approvals projection, so both always
 * agree. Source: architecture §4 (Approvals).
 */

/** Default approval expiry in seconds (24 h), when AGP_APPROVAL_TTL_SECONDS is not given. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 86_400;

/** The fields of a stored event the fold reads. */
export type ApprovalEvent = Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'recorded_at'>;

/**
 * When the approval of a recorded intervention expires (ISO 8601 UTC): the `approval_expires_at` fixed at
 * record time, else (records created without it, e.g. through POST) `created_at` + `ttlSeconds`.
 */
export function expiresAtOf(d: InterventionRecordedData, ttlSeconds: number): string {
  return d.approval_expires_at ?? new Date(Date.parse(d.created_at) + ttlSeconds * 1000).toISOString();
}

/** The approval status an outcome change leads to: approved, rejected, or expired (reason `expired`). */
export function statusAfter(d: Pick<ApprovalOutcomeChangedData, 'to' | 'reason'>): ApprovalStatus {
  if (d.to === 'approved_after_review') return 'approved';
  return d.reason === APPROVAL_EXPIRED_REASON ? 'expired' : 'rejected';
}

/**
 * Fold one event into the approval. `null` means "no approval": the stream is new, its record was never
 * escalated, or it was deleted.
 * - InterventionRecorded with outcome `escalated` opens a pending approval `apr-<id>`.
 * - InterventionApprovalGiven adds one approval to a pending approval that needs two (it stays pending).
 * - InterventionOutcomeChanged from `escalated` decides a pending approval (decided_at = the event's time; the actor
 *   is the deciding key or person from the event data, or `system` for an expiry); an approve adds the last approval.
 * - InterventionEnriched carries the enriched reason, agent_intent and risk_level over.
 * - InterventionDeleted removes the approval.
 * @param ttlSeconds expiry for records without `approval_expires_at`.
 */
export function evolveApproval(approval: ApprovalRecord | null, event: ApprovalEvent, ttlSeconds: number): ApprovalRecord | null {
  switch (event.type) {
    case InterventionEvents.Recorded: {
      const d = event.data as unknown as InterventionRecordedData;
      if (d.outcome !== 'escalated') return null;
      const r = recordFromRecorded(d, event.metadata.organization_id);
      return {
        id: approvalId(r.id),
        intervention_id: r.id,
        status: 'pending',
        agent_id: r.agent_id,
        run_id: r.run_id,
        action_name: r.action_name,
        policy_id: r.policy_id,
        policy_name: r.policy_name,
        risk_level: r.risk_level,
        reason: r.reason,
        agent_intent: r.agent_intent,
        estimated_cost_usd: r.estimated_cost_usd,
        original_inputs: r.original_inputs,
        requested_at: d.created_at,
        expires_at: expiresAtOf(d, ttlSeconds),
        decided_at: null,
        approver_email: null,
        notes: null,
        decision_reason: null,
        actor: null,
        actor_name: null,
        approvals_required: d.approvals_required ?? 1,
        separation_of_duties: d.separation_of_duties ?? false,
        approvals: [],
        decided_by: null,
        organization_id: r.organization_id,
      };
    }
    case InterventionEvents.ApprovalGiven: {
      const d = event.data as unknown as ApprovalGivenData;
      const by = approverOf(d);
      if (!approval || approval.status !== 'pending' || !by) return approval;
      return { ...approval, approvals: [...approval.approvals, { by, at: event.recorded_at, comment: d.notes ?? null }] };
    }
    case InterventionEvents.OutcomeChanged: {
      const d = event.data as unknown as ApprovalOutcomeChangedData;
      if (!approval || approval.status !== 'pending' || d.from !== 'escalated') return approval;
      const status = statusAfter(d);
      const by = approverOf(d);
      return {
        ...approval,
        status,
        approvals: status === 'approved' && by ? [...approval.approvals, { by, at: event.recorded_at, comment: d.notes ?? null }] : approval.approvals,
        decided_by: by,
        decided_at: event.recorded_at,
        approver_email: d.approver_email ?? null,
        notes: d.notes ?? null,
        decision_reason: d.reason ?? null,
        actor: d.user_id ? `user:${d.user_id}` : d.key_id ? `key:${d.key_id}` : event.metadata.actor === 'system' ? 'system' : null,
        actor_name: d.key_name ?? null,
      };
    }
    case InterventionEvents.Enriched: {
      if (!approval) return approval;
      const c = (event.data as unknown as InterventionEnrichedData).changes;
      const next = { ...approval };
      if (c.reason) next.reason = c.reason.to;
      if (c.agent_intent) next.agent_intent = c.agent_intent.to;
      if (c.risk_level) next.risk_level = c.risk_level.to;
      return next;
    }
    case InterventionEvents.Deleted:
      return null;
    default:
      return approval;
  }
}

/** The approval of a whole stream and the stream's version (for the expected-version append). */
export interface ApprovalState {
  approval: ApprovalRecord | null;
  /** Version of the stream's last event; 0 for an empty stream. */
  version: number;
}

/** Fold a stream (version order) into its approval state. */
export function foldApproval(events: Array<ApprovalEvent & Pick<StoredEvent, 'stream_version'>>, ttlSeconds: number): ApprovalState {
  let approval: ApprovalRecord | null = null;
  for (const e of events) approval = evolveApproval(approval, e, ttlSeconds);
  return { approval, version: events.at(-1)?.stream_version ?? 0 };
}
