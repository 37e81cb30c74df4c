/**
 * The decision an agent's action got, and the errors `run.act` throws when the action does not run.
 * Source: spec §Intervention types, §Intervention outcomes, §Risk levels; docs/sdk.md.
 */

/** Risk levels, most to least severe (spec §Risk levels). */
export type RiskLevel = 'critical' | 'high' | 'medium' | 'low' | 'minimal';

/**
 * What the SDK decided for one action: the policy engine's decision (the same `decide()` the platform's decision API
 * runs), or one the SDK took itself when it could not ask the engine (no policy snapshot, a stale one, an answer of the
 * platform it does not understand, a full report spool; then `rule` is null and `reason` says why).
 * - `decision`: allow, warn, block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked,
 *   escalate, downgrade or idempotent_replay.
 * - `intervention_type` / `outcome`: what was recorded (null for allow).
 * - `policy_id` / `policy_name`: the deciding policy; null for a kill switch, allow, or the SDK's own decision.
 * - `estimated_cost_usd`: the cost the decision used (USD); `cost_prevented_usd`: that cost when the action was stopped.
 * - `modified_inputs`: a downgrade's arguments (the action runs with them), else absent.
 * - `context`: a guardrail's context payload (spec §Guardrail context payload), else absent.
 */
export interface GovernanceDecision {
  decision: string;
  intervention_type: string | null;
  outcome: string | null;
  rule: string | null;
  policy_id: string | null;
  policy_name: string | null;
  reason: string;
  risk_level: RiskLevel;
  estimated_cost_usd: number;
  cost_prevented_usd: number;
  modified_inputs?: Record<string, unknown> | null;
  context?: Record<string, unknown>;
  /**
   * For `escalate`: how its approval is decided (`approvals_required` 1 or 2, `separation_of_duties`), from the
   * escalating policy; the escalated intervention carries it. Absent or null otherwise.
   */
  approval?: { approvals_required: number; separation_of_duties: boolean } | null;
}

/** What `run.act` returns instead of throwing when `onBlocked` is `'return'`. */
export interface BlockedResult {
  blocked: true;
  decision: GovernanceDecision;
}

/**
 * The action was not executed: a kill switch, a policy (block, budget_exceeded, rate_limited), a guardrail
 * (pii_blocked, content_blocked, loop_detected) or the SDK's fail-closed rule stopped it. The intervention is recorded.
 * `.decision` carries decision, intervention_type, policy_id, policy_name, reason, risk_level and cost_prevented_usd.
 */
export class ActionBlockedError extends Error {
  override readonly name = 'ActionBlockedError';
  constructor(
    /** The action that was stopped. */
    readonly actionName: string,
    /** Why, with the deciding policy. */
    readonly decision: GovernanceDecision,
  ) {
    super(`${actionName} blocked (${decision.decision}): ${decision.reason}`);
  }
}

/** How an approval ended without approving the call: a human rejected it, it expired, or the wait timed out. */
export type ApprovalEnd = 'rejected' | 'expired' | 'timeout' | 'mismatch';

/**
 * An escalated action was not approved: `status` is `rejected` (a human said no), `expired` (nobody decided before the
 * platform's expiry), `timeout` (nobody decided within `approvalTimeoutMs`, or the platform was unreachable that long)
 * or `mismatch` (the approval's arguments do not hash to this call's; approving one call never approves another).
 * The action was not executed.
 */
export class ApprovalRejectedError extends Error {
  override readonly name = 'ApprovalRejectedError';
  constructor(
    readonly actionName: string,
    /** How the approval ended. */
    readonly status: ApprovalEnd,
    /** The approval id (`apr-<intervention id>`), or null when the escalation could not be recorded. */
    readonly approvalId: string | null,
    /** The escalation decision. */
    readonly decision: GovernanceDecision,
    /** Who decided, and their notes, when a human did. */
    readonly approver: { email: string | null; notes: string | null } = { email: null, notes: null },
  ) {
    super(`${actionName} was not approved (${status})${approvalId ? ` [${approvalId}]` : ''}${approver.email ? ` by ${approver.email}` : ''}${approver.notes ? `: ${approver.notes}` : ''}`);
  }
}
