import {
  APPROVAL_EXPIRED_REASON,
  InterventionEvents,
  type ApprovalDecisionKind,
  type ApprovalOutcomeChangedData,
  type ApprovalRecord,
} from '@agp/contracts';
import { checkBoundAgent } from '@agp/auth';
import { ConflictError, NotFoundError } from '@agp/runtime';
import type { ApprovalState } from './approval.js';

/**
 * Pure deciders of the approval inbox: they take the folded stream state and the command (time and ids come
 * in) and return the event to append, or throw. Source: architecture §4 (Approvals).
 */

/** An event to append to `intervention-<id>`, with the actor for its metadata. */
export interface ApprovalEventToAppend {
  type: typeof InterventionEvents.OutcomeChanged;
  data: ApprovalOutcomeChangedData;
  /** `approver:<email>` for a decision, `system` for an expiry. */
  actor: string;
}

/** ApproveAction / RejectAction. */
export interface DecideApprovalCommand {
  /** The approval id as asked for (for messages). */
  approval_id: string;
  decision: ApprovalDecisionKind;
  approver_email: string;
  notes?: string;
  /** Caller's organisation: another organisation's approval is never revealed. */
  organization_id: string;
  /** API key that made the decision (kept in the event data). */
  key_id: string;
  /** That key's name, when it has one (kept in the event data: the name that acted). */
  key_name?: string | null;
  /** The agent that key is bound to (null or absent: none); a bound key decides only its own agent's approvals. */
  bound_agent_id?: string | null;
  /** The signed-in person who decided (a session, docs/auth.md); absent for an API key (kept in the event data). */
  user_id?: string;
  /** Current time, ISO 8601 UTC. */
  now: string;
}

/**
 * The outcome of a decision: `decided` (append it, answer 200) or `expired` (the approval was past its expiry
 * but not yet swept: append the expiry, then answer 409).
 */
export type ApprovalDecisionResult = { kind: 'decided'; event: ApprovalEventToAppend } | { kind: 'expired'; event: ApprovalEventToAppend };

/** True when a pending approval is due to expire at `now` (ISO 8601 UTC). */
export const isDue = (a: ApprovalRecord, now: string) => Date.parse(a.expires_at) <= Date.parse(now);

/** The InterventionOutcomeChanged that expires an approval: escalated → rejected_after_review, reason `expired`, actor `system`. */
export function expiryEvent(a: ApprovalRecord): ApprovalEventToAppend {
  return {
    type: InterventionEvents.OutcomeChanged,
    data: { id: a.intervention_id, from: 'escalated', to: 'rejected_after_review', reason: APPROVAL_EXPIRED_REASON },
    actor: 'system',
  };
}

/**
 * Approve or reject a pending approval.
 * - approve → InterventionOutcomeChanged `{from: escalated, to: approved_after_review, approver_email, notes}`;
 *   reject → the same with `to: rejected_after_review`. Actor `approver:<email>`.
 * - A pending approval already past `expires_at` yields `kind: 'expired'` with the expiry event instead.
 * @throws NotFoundError (404) when there is no approval (unknown or deleted intervention, one never escalated)
 *   or it belongs to another organisation.
 * @throws ForbiddenError (403) when the deciding key is bound to another agent than the approval's
 *   (docs/decisions.md, Agent-bound keys).
 * @throws ConflictError (409) when it is no longer pending, naming its status.
 */
export function decideApproval(state: ApprovalState, cmd: DecideApprovalCommand): ApprovalDecisionResult {
  const a = state.approval;
  if (!a || a.organization_id !== cmd.organization_id) throw new NotFoundError(`approval ${cmd.approval_id} not found`);
  checkBoundAgent({ agent_id: cmd.bound_agent_id }, a.agent_id, `path.id (approval ${a.id}, of agent ${a.agent_id})`);
  if (a.status !== 'pending') {
    const by = a.approver_email ? ` by ${a.approver_email}` : '';
    throw new ConflictError(`approval ${a.id} is already ${a.status}${by}${a.decided_at ? ` at ${a.decided_at}` : ''}`);
  }
  if (isDue(a, cmd.now)) return { kind: 'expired', event: expiryEvent(a) };
  const data: ApprovalOutcomeChangedData = {
    id: a.intervention_id,
    from: 'escalated',
    to: cmd.decision === 'approve' ? 'approved_after_review' : 'rejected_after_review',
    approver_email: cmd.approver_email,
    key_id: cmd.key_id,
  };
  if (cmd.key_name) data.key_name = cmd.key_name;
  if (cmd.user_id) data.user_id = cmd.user_id;
  if (cmd.notes !== undefined && cmd.notes !== '') data.notes = cmd.notes;
  return { kind: 'decided', event: { type: InterventionEvents.OutcomeChanged, data, actor: `approver:${cmd.approver_email}` } };
}

/**
 * Expire an approval if it is still pending and due at `now` (the sweeper). Returns null when there is
 * nothing to do (decided meanwhile, deleted, or not yet due).
 */
export function decideExpiry(state: ApprovalState, now: string): ApprovalEventToAppend | null {
  const a = state.approval;
  if (!a || a.status !== 'pending' || !isDue(a, now)) return null;
  return expiryEvent(a);
}
