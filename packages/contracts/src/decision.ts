import { z } from 'zod';
import { OpaqueIdSchema, UsdSchema } from './common.js';
import { InterventionOutcomeSchema, InterventionTypeSchema, RiskLevelSchema, type InterventionOutcome, type InterventionType } from './enums.js';
import { GuardrailContextSchema } from './guardrail.js';
import { ActionNameSchema, MODERATION_CATEGORIES } from './policy.js';
import { ApprovalRuleSchema } from './approval-rule.js';

/**
 * The policy decision: what `decide` (packages/policy-engine) answers for one action an agent attempts, and the
 * decision API `POST /api/v1/policies/evaluate` that asks it with the organisation's current policies.
 * Source: docs/api.md (Policy decisions); spec §What the service does (allow, block, escalate, rate-limit, enforce a budget,
 * downgrade, warn), §Intervention types, §Intervention outcomes, §Risk levels; architecture §1 (packages/policy-engine).
 */

/**
 * The decisions, most restrictive first; this order is the precedence across policies (the most restrictive
 * decision of any policy wins). `allow` is last. The guardrail decisions sit where the engine's precedence puts
 * them: the blocking guardrails (pii_blocked, content_blocked) and an idempotent replay right after the hard blocks,
 * a detected loop after rate limits.
 */
export const POLICY_DECISIONS = [
  'block',
  'pii_blocked',
  'content_blocked',
  'idempotent_replay',
  'escalate',
  'budget_exceeded',
  'rate_limited',
  'loop_detected',
  'downgrade',
  'warn',
  'allow',
] as const;
/** One of {@link POLICY_DECISIONS}. */
export const PolicyDecisionKindSchema = z.enum(POLICY_DECISIONS);
export type PolicyDecisionKind = z.infer<typeof PolicyDecisionKindSchema>;

/** The intervention type each decision would record (spec §Intervention types); `allow` records none. */
export const DECISION_INTERVENTION_TYPE: Readonly<Record<PolicyDecisionKind, InterventionType | null>> = {
  block: 'hard_block',
  pii_blocked: 'pii_blocked',
  content_blocked: 'content_blocked',
  idempotent_replay: 'idempotent_replay',
  escalate: 'approval_required',
  budget_exceeded: 'budget_exceeded',
  rate_limited: 'rate_limited',
  loop_detected: 'loop_detected',
  downgrade: 'downgrade',
  warn: 'warning',
  allow: null,
};

/**
 * The intervention outcome each decision would record (spec §Intervention outcomes); `allow` records none. An
 * idempotent replay is `blocked`: the action is not executed again (the first call's result is returned).
 * approved_after_review / rejected_after_review follow an escalation when a human resolves the approval.
 */
export const DECISION_OUTCOME: Readonly<Record<PolicyDecisionKind, InterventionOutcome | null>> = {
  block: 'blocked',
  pii_blocked: 'blocked',
  content_blocked: 'blocked',
  idempotent_replay: 'blocked',
  escalate: 'escalated',
  budget_exceeded: 'blocked',
  rate_limited: 'blocked',
  loop_detected: 'blocked',
  downgrade: 'modified',
  warn: 'warned',
  allow: null,
};

/**
 * The decisions that stop the action (it does not run), so that its estimated cost counts as prevented: every
 * `blocked` outcome.
 */
export const STOPPING_DECISIONS: ReadonlySet<PolicyDecisionKind> = new Set(POLICY_DECISIONS.filter((d) => DECISION_OUTCOME[d] === 'blocked'));

/**
 * The rules that can trigger, in precedence order (the kill switches before every policy; within a policy the
 * first stopping rule wins, and a guardrail in `warn` or `redact` mode, or a downgrade, gives way to any later
 * stopping rule):
 * - `organization_kill_switch`, `agent_kill_switch` → block;
 * - `denied_action` (the action is in `denied_actions`), `not_in_allowed_actions` (`allowed_actions` is a list
 *   without it) → block;
 * - `pii_guardrail` → pii_blocked (mode block), downgrade (redact), warn (warn);
 * - `moderation_guardrail` → content_blocked (block), warn (warn);
 * - `idempotency_guardrail` → idempotent_replay;
 * - `approval_required` (in `approval_required_actions`) → escalate;
 * - `action_budget` (the action's estimated cost > the budget), `run_budget`, `session_budget` (spend so far + the
 *   cost > the budget), `period_budget` (a `period_budgets` entry: the period's spend + the cost > `max_usd`; the
 *   reason names the period) → budget_exceeded;
 * - `rate_limit` (a `rate_limits` entry for the action or `*` is full in its window) → rate_limited;
 * - `loop_guardrail` → loop_detected (block), warn (warn);
 * - `downgrade` (a `downgrades` rule changed an argument) → downgrade;
 * - `budget_warning` (spend so far + the cost passes 80% of a budget) → warn.
 */
export const DECISION_RULES = [
  'organization_kill_switch',
  'agent_kill_switch',
  'denied_action',
  'not_in_allowed_actions',
  'pii_guardrail',
  'moderation_guardrail',
  'idempotency_guardrail',
  'approval_required',
  'action_budget',
  'run_budget',
  'session_budget',
  'period_budget',
  'rate_limit',
  'loop_guardrail',
  'downgrade',
  'budget_warning',
] as const;
/** One of {@link DECISION_RULES}. */
export const DecisionRuleSchema = z.enum(DECISION_RULES);
export type DecisionRule = z.infer<typeof DecisionRuleSchema>;

/**
 * One rule that triggered: a kill switch (policy null), or a policy's own decision (the first of its rules that
 * triggered, in {@link DECISION_RULES} order).
 */
export const TriggeredRuleSchema = z.object({
  /** The policy, or null for a kill switch. */
  policy_id: z.string().nullable(),
  policy_name: z.string().nullable(),
  decision: PolicyDecisionKindSchema,
  rule: DecisionRuleSchema,
  /** Why, in one sentence (names the action, the list, the budget or the limit, with USD amounts). */
  reason: z.string(),
});
export type TriggeredRule = z.infer<typeof TriggeredRuleSchema>;

/**
 * What `decide` answers for one action: the winning decision with the rule and policy behind it, and every rule
 * that triggered (most restrictive first), so a caller sees what else would have stopped the action.
 * - `intervention_type` / `outcome`: what the agent-side client records for this decision (null for allow).
 * - `policy_id` / `policy_name`: the winning policy; null for allow and for a kill switch.
 * - `risk_level`: the action's declared risk (its agent registration), else the rule's default (see the engine).
 * - `estimated_cost_usd`: the cost the decision used, USD.
 * - `cost_prevented_usd`: that cost when the action is stopped (block, budget_exceeded, rate_limited), else 0 (an
 *   escalated action may still run; a warned or downgraded one runs). USD.
 * - `policies_evaluated`: the enabled policies that apply to the agent.
 * - `modified_inputs`: for `downgrade`, the arguments the action runs with (every applicable policy's downgrades and
 *   PII redactions applied; the caller's arguments are the original inputs); else null.
 * - `guardrail_context`: the guardrail context payload (spec §Guardrail context payload, version 1) when a guardrail
 *   decided (blocked, warned or redacted), else null; the intervention records it as its `context`.
 * - `arguments_hash`: hex SHA-256 of the canonical JSON of the arguments when a loop or idempotency guardrail
 *   applied (the caller stores it with the call, for later loop windows), else null.
 * - `approval`: for `escalate`, how the winning policy's approval is decided (`approvals_required`,
 *   `separation_of_duties`); the escalated intervention carries it into its approval. Null for every other decision.
 */
export const PolicyDecisionSchema = z.object({
  decision: PolicyDecisionKindSchema,
  intervention_type: InterventionTypeSchema.nullable(),
  outcome: InterventionOutcomeSchema.nullable(),
  rule: DecisionRuleSchema.nullable(),
  policy_id: z.string().nullable(),
  policy_name: z.string().nullable(),
  reason: z.string(),
  risk_level: RiskLevelSchema,
  estimated_cost_usd: z.number(),
  cost_prevented_usd: z.number(),
  policies_evaluated: z.number().int(),
  triggered: z.array(TriggeredRuleSchema),
  modified_inputs: z.record(z.string(), z.unknown()).nullable(),
  guardrail_context: GuardrailContextSchema.nullable(),
  arguments_hash: z.string().nullable(),
  approval: ApprovalRuleSchema.nullable(),
});
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;

/**
 * A moderation provider's answer for the arguments, the input of the moderation guardrail: per scanned field (its
 * dotted `field_path`, e.g. `messages.2.content`), each category's score from 0 to 1 (OpenAI-compatible
 * `/v1/moderations` names, {@link MODERATION_CATEGORIES}; other names are ignored). At most 1000 fields.
 */
export const ModerationScoresSchema = z
  .array(z.strictObject({ field_path: z.string().min(1).max(1024), scores: z.record(z.string().min(1).max(128), z.number().min(0).max(1)) }))
  .max(1000);
export type ModerationScores = z.infer<typeof ModerationScoresSchema>;

/**
 * Body of `POST /api/v1/policies/evaluate` (strict: an unknown field is a 422 naming it). Source: docs/api.md (Policy decisions).
 * - `agent_id`: the agent attempting the action; policies scoped to other agents do not apply.
 * - `run_id`: its run, whose spend so far (and recent actions, for rate limits) the decision counts; an unknown run
 *   has spent nothing.
 * - `arguments`: the action's arguments: downgrades rewrite them, the PII guardrail scans them, the loop and
 *   idempotency guardrails hash them (canonical JSON, key order ignored).
 * - `estimated_cost_usd`: USD ≥ 0; absent = the action's `typical_cost_usd` from the agent's registration, else 0.
 * - `idempotency_key`: the caller's key for the idempotency guardrail; absent = the arguments' hash.
 * - `moderation_scores`: a moderation provider's scores of the arguments' text (see the engine's
 *   `ModerationScoresSchema`); absent = not moderated (the moderation guardrail cannot trigger).
 * - `session_id`: the session the run belongs to; session budgets count the fleet's spend under it.
 * - `reserve`: decide and enforce (needs a write key): when the action may run, its estimate (and one call of each
 *   shared rate limit) is drawn from the fleet's counters, and the answer's `reservations` name the leases holding it;
 *   a caller that then does not act releases them (`POST /api/v1/quotas/leases`, report `spent: 0`, `release`).
 *   Absent or false: a read that changes nothing.
 */
export const EvaluateActionSchema = z.strictObject({
  agent_id: OpaqueIdSchema,
  run_id: OpaqueIdSchema.optional(),
  session_id: OpaqueIdSchema.optional(),
  reserve: z.boolean().optional(),
  action_name: ActionNameSchema,
  arguments: z.record(z.string(), z.unknown()).optional(),
  estimated_cost_usd: UsdSchema.optional(),
  idempotency_key: z.string().min(1).max(512).optional(),
  moderation_scores: ModerationScoresSchema.optional(),
});
export type EvaluateAction = z.infer<typeof EvaluateActionSchema>;

/**
 * Reply of `POST /api/v1/policies/evaluate`: the {@link PolicyDecisionSchema decision}, plus the state it was taken
 * against (`context`): the time (`now`, ISO 8601 UTC), the run's spend so far (`run_spend_usd`, USD; 0 without a
 * run), the session spend used (`session_spend_usd`: the platform records no sessions, so the run's spend stands for
 * it — a lower bound), how many of the run's recent actions fed the rate-limit windows (`recent_calls`), and
 * `run_found` (null without `run_id`; false when the organisation has no such run, which then counts as no spend).
 */
export const PolicyEvaluationSchema = PolicyDecisionSchema.extend({
  context: z.object({
    now: z.string(),
    run_spend_usd: z.number(),
    session_spend_usd: z.number(),
    recent_calls: z.number().int(),
    run_found: z.boolean().nullable(),
    /** Each fleet-counted limit the decision read: what it had left for the fleet (USD or calls). */
    quotas: z
      .array(z.object({ policy_id: z.string(), limit: z.string(), scope_key: z.string(), limit_value: z.number(), remaining: z.number() }))
      .describe('Each fleet-wide limit the decision counted (session, run and period budgets; agent- and organisation-scoped rate limits) with what it had left for the fleet'),
  }),
  /** With `reserve: true` and an action that may run: the leases holding what it drew; else empty. */
  reservations: z
    .array(z.object({ lease_id: z.string(), policy_id: z.string(), limit: z.string(), scope_key: z.string(), amount: z.number() }))
    .describe('With reserve: the leases holding what the action drew from each fleet-wide limit (release them with POST /api/v1/quotas/leases if the action does not run); empty otherwise'),
});
export type PolicyEvaluation = z.infer<typeof PolicyEvaluationSchema>;
