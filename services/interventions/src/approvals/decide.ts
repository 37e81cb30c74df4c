import {
  APPROVAL_EXPIRED_REASON,
  InterventionEvents,
  approverOf,
  type ApprovalDecisionKind,
  type ApprovalGivenData,
  type ApprovalOutcomeChangedData,
  type ApprovalRecord,
  type Approver,
} from '@agp/contracts';
import { checkBoundAgent } from '@agp/auth';
import { ConflictError, ForbiddenError, NotFoundError } from '@agp/runtime';
import type { ApprovalState } from './approval.js';

/**
 * Pure deciders of the approval inbox: they take the folded stream state and the command (time and ids come
 * in) and return the event to append, or throw. Source: architecture §4 (Approvals).
 */

/** An event to append to `intervention-<id>`, with the actor for its metadata. */
export type ApprovalEventToAppend =
  | {
      type: typeof InterventionEvents.OutcomeChanged;
      data: ApprovalOutcomeChangedData;
      /** `approver:<email>` for a decision, `system` for an expiry. */
      actor: string;
    }
  | {
      /** One approval of several (the approval stays pending). */
      type: typeof InterventionEvents.ApprovalGiven;
      data: ApprovalGivenData;
      /** `approver:<email>`. */
      actor: string;
    };

/**
 * Who may not decide an approval under separation of duties, from the agent's registration (the policies service's
 * `agents.get`): its `owner` (an e-mail address or a user id, as registered) and `changed_by`, the actor of its last
 * change (`user:<user id>` or `key:<key id>`; null when not recorded). Null when the agent is not registered.
 */
export interface AgentStewards {
  agent_id: string;
  owner: string | null;
  changed_by: string | null;
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
  /** That person's e-mail and name from their sign-in (kept in the event data). */
  user_email?: string | null;
  user_name?: string | null;
  /**
   * The approval's agent's owner and last changer, for an approval under separation of duties decided by a person
   * (the caller looks them up); null when the agent is not registered; absent when not looked up.
   */
  stewards?: AgentStewards | null;
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

/** Lower-cased and trimmed, for comparing e-mail addresses and owners. */
const norm = (s: string | null | undefined) => (s ?? '').trim().toLowerCase();

/** Whether two approvers are the same: the same person or key, or the same (non-empty) e-mail address. */
export function sameApprover(a: Approver, b: Approver): boolean {
  if (a.type === b.type && a.id === b.id) return true;
  return norm(a.email) !== '' && norm(a.email) === norm(b.email);
}

/**
 * Why `by` may not decide approval `a` under separation of duties, or null when they may (docs/auth.md, Separation of
 * duties): a key may not; nor the person the agent's `owner` names (their e-mail, case-insensitive, or their user id);
 * nor the person who last changed the agent's registration (`changed_by` = `user:<their id>`).
 */
export function separationRefusal(a: ApprovalRecord, by: Approver, stewards: AgentStewards | null | undefined): string | null {
  if (by.type === 'key') return `approval ${a.id} is under separation of duties: an API key cannot decide it; a signed-in person other than the agent's owner and last changer must`;
  if (!stewards) return null;
  const owner = norm(stewards.owner);
  if (owner !== '' && (owner === norm(by.email) || owner === norm(by.id))) {
    return `approval ${a.id} is under separation of duties: ${by.email ?? by.id} owns agent ${a.agent_id} (owner ${stewards.owner}) and cannot decide its approvals`;
  }
  if (stewards.changed_by === `user:${by.id}`) {
    return `approval ${a.id} is under separation of duties: ${by.email ?? by.id} last changed agent ${a.agent_id}'s registration and cannot decide its approvals`;
  }
  return null;
}

/**
 * Approve or reject a pending approval.
 * - approve → InterventionOutcomeChanged `{from: escalated, to: approved_after_review, approver_email, notes}`;
 *   reject → the same with `to: rejected_after_review`. Actor `approver:<email>`. The event also names the key
 *   (`key_id`, `key_name`) or the person (`user_id`, `user_email`, `user_name`).
 * - An approval needing two approvals (`approvals_required` 2) takes the first as InterventionApprovalGiven (it stays
 *   pending) and the second, from a different approver, as the approving InterventionOutcomeChanged. A reject by any
 *   approver rejects at once.
 * - A pending approval already past `expires_at` yields `kind: 'expired'` with the expiry event instead.
 * @throws NotFoundError (404) when there is no approval (unknown or deleted intervention, one never escalated)
 *   or it belongs to another organisation.
 * @throws ForbiddenError (403) when the deciding key is bound to another agent than the approval's
 *   (docs/decisions.md, Agent-bound keys).
 * @throws ConflictError (409) when it is no longer pending, naming its status; or when the same approver approves a
 *   second time an approval that needs two.
 * @throws ForbiddenError (403) under separation of duties: for an API key, the agent's owner, or its last changer
 *   ({@link separationRefusal}).
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
  const who = { approver_email: cmd.approver_email, key_id: cmd.key_id } as Pick<ApprovalGivenData, 'approver_email' | 'key_id' | 'key_name' | 'user_id' | 'user_email' | 'user_name' | 'notes'>;
  if (cmd.key_name) who.key_name = cmd.key_name;
  if (cmd.user_id) {
    who.user_id = cmd.user_id;
    if (cmd.user_email) who.user_email = cmd.user_email;
    if (cmd.user_name) who.user_name = cmd.user_name;
  }
  if (cmd.notes !== undefined && cmd.notes !== '') who.notes = cmd.notes;
  const by = approverOf(who)!;
  if (a.separation_of_duties) {
    const refusal = separationRefusal(a, by, cmd.stewards);
    if (refusal) throw new ForbiddenError(refusal);
  }
  const actor = `approver:${cmd.approver_email}`;
  if (cmd.decision === 'approve') {
    const earlier = a.approvals.find((g) => sameApprover(g.by, by));
    if (earlier) {
      throw new ConflictError(`approval ${a.id} needs ${a.approvals_required} approvals from different approvers; ${by.email ?? by.id} already approved it at ${earlier.at}`);
    }
    if (a.approvals.length + 1 < a.approvals_required) {
      return { kind: 'decided', event: { type: InterventionEvents.ApprovalGiven, data: { id: a.intervention_id, ...who, approvals_required: a.approvals_required }, actor } };
    }
  }
  const data: ApprovalOutcomeChangedData = { id: a.intervention_id, from: 'escalated', to: cmd.decision === 'approve' ? 'approved_after_review' : 'rejected_after_review', ...who };
  return { kind: 'decided', event: { type: InterventionEvents.OutcomeChanged, data, actor } };
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
