/**
 * The policy decision, pure: `decide(policies, killSwitches, action, context)` answers whether one action an agent
 * attempts is allowed, blocked, escalated, rate-limited, stopped by a budget, downgraded or warned. No I/O, no clock:
 * the spend so far, the recent calls and `now` come in with the context, so the decision API, counterfactual replay
 * and the agent-side SDK run the same code on the same input and get the same answer.
 * Source: spec §What the service does, §Intervention types; architecture §1 (packages/policy-engine).
 *
 * Precedence (the first that triggers wins), in this one order:
 * 1. kill switches: the organisation's, then the agent's → block (hard_block);
 * 2. each enabled policy that applies to the agent (`agent_ids` empty, or listing it) decides alone, checking its
 *    rules in this order; the first rule that stops the action wins, while a rule that only modifies or warns
 *    (a guardrail in `warn` or `redact` mode, a downgrade, a budget warning) gives way to any later stopping rule:
 *    a. deny and allow lists: the action is in `denied_actions` → block (deny beats allow); `allowed_actions` is a
 *       list (not null) without the action → block (`[]` allows nothing);
 *    b. guardrails that block: `pii` (any string of the arguments holds personal data of its categories) →
 *       pii_blocked, or in `redact` mode downgrade with the matches masked; `moderation` (a provider score of its
 *       categories at or above its threshold, scores passed in with the action) → content_blocked; `idempotency`
 *       (a listed action repeats an idempotency key seen within `ttl_seconds`) → idempotent_replay (the caller
 *       returns the first call's result; nothing runs, so approval, budgets and limits do not apply to it);
 *    c. the action is in `approval_required_actions` → escalate (approval_required);
 *    d. budgets, action then run then session then period: the action's estimated cost > `action_budget`; run spend
 *       + cost > `run_budget`; session spend + cost > `session_budget`; the cost > what is left of a `period_budgets`
 *       entry this period → budget_exceeded (equal to the budget is allowed). With a quota view in the context
 *       (fleet-wide counting, see {@link DecisionContext}), the run and session budgets compare the cost with what
 *       the view has left of them;
 *    e. a `rate_limits` entry for the action, then the `*` entry, already holds `max_calls` calls within its window
 *       (for an `agent`- or `organization`-scoped limit with a quota view: less than one call left in its fixed
 *       window) → rate_limited;
 *    f. `loop`: `threshold` calls of the action with the same arguments hash already within `window_seconds` →
 *       loop_detected (the (threshold+1)th call is stopped);
 *    g. `downgrades`: a rule for the action (or `*`) changes an argument → downgrade (modified);
 *    h. warnings: a guardrail in `warn` mode (in b or f), or spend + cost past {@link WARN_BUDGET_FRACTION} (80%) of
 *       `session_budget`, then of `run_budget` → warn (warning);
 * 3. across policies the most restrictive decision wins, in {@link POLICY_DECISIONS} order (block, pii_blocked,
 *    content_blocked, idempotent_replay, escalate, budget_exceeded, rate_limited, loop_detected, downgrade, warn,
 *    allow), which is the rule order above; ties go to the oldest policy (`created_at`, then `id`). Because an
 *    allow-list only restricts, several policies' allow-lists intersect: an action must be allowed by each.
 *
 * A downgrade's `modified_inputs` apply every applicable policy's downgrade rules and redactions, oldest policy
 * first, each rule on the result of the one before. The state the guardrails need comes in with the context: the calls already
 * made with their arguments hashes (loop), the idempotency keys seen (idempotency), and the provider's moderation
 * scores come in with the action.
 */
import { z } from 'zod';
import {
  DECISION_INTERVENTION_TYPE,
  DECISION_OUTCOME,
  DOWNGRADE_ANY_ACTION,
  MODERATION_CATEGORIES,
  ModerationScoresSchema,
  PII_CATEGORIES,
  POLICY_DECISIONS,
  RATE_LIMIT_ANY_ACTION,
  RiskLevelSchema,
  periodBudgetLimit,
  rateLimitLimit,
  STOPPING_DECISIONS,
  type DecisionRule,
  type DowngradeRule,
  type ApprovalRule,
  type GuardrailContext,
  type Guardrails,
  type KillSwitchState,
  type PiiCategory,
  type Policy,
  type PolicyDecision,
  type PolicyDecisionKind,
  type RiskLevel,
  type TriggeredRule,
} from '@agp/contracts';
import { argumentsHash, getAt, pathSegments, setAt } from './arguments.js';
import { fleetCounted, type EngineRateLimit, type QuotaView } from './quotas.js';
import { maskText, redactPii, scanPii, type PiiScan } from './pii.js';

/** A budget warns once spend so far + the action's cost passes this fraction of it (80%). */
export const WARN_BUDGET_FRACTION = 0.8;

/**
 * Slack when comparing USD sums with a budget: floating-point sums such as 0.1 + 0.2 land a few 1e-17 off, which must
 * not turn "exactly the budget" into "over it". 1e-9 USD is far below any price.
 */
export const USD_TOLERANCE = 1e-9;

/**
 * The risk level a decision carries when the action declares none (its agent registration's `risk_level`), by the
 * rule that decided: a kill switch is an emergency stop (critical); a denied, unlisted or approval-gated action, or
 * personal data or harmful content in the arguments, was judged dangerous by the policy author (high); budgets, rate
 * limits and loops guard cost and volume (medium); a downgrade, a replayed duplicate and a warning are low; an
 * allowed action minimal.
 */
export const RULE_RISK: Readonly<Record<DecisionRule, RiskLevel>> = {
  organization_kill_switch: 'critical',
  agent_kill_switch: 'critical',
  denied_action: 'high',
  not_in_allowed_actions: 'high',
  pii_guardrail: 'high',
  moderation_guardrail: 'high',
  idempotency_guardrail: 'low',
  approval_required: 'high',
  action_budget: 'medium',
  run_budget: 'medium',
  session_budget: 'medium',
  period_budget: 'medium',
  rate_limit: 'medium',
  loop_guardrail: 'medium',
  downgrade: 'low',
  budget_warning: 'low',
};

/**
 * The policy fields `decide` reads. A `Policy` record (current, or any version folded from its stream) fits;
 * budgets in USD, `rate_limits[*].window_seconds` in seconds. `action_budget`, `downgrades`, `guardrails` and
 * `period_budgets` may be absent (a policy recorded before they existed): none; a rate limit without `scope` counts
 * per process.
 */
export interface EnginePolicy
  extends Pick<Policy, 'id' | 'name' | 'enabled' | 'created_at' | 'session_budget' | 'run_budget' | 'denied_actions' | 'allowed_actions' | 'approval_required_actions' | 'agent_ids'> {
  rate_limits: Readonly<Record<string, EngineRateLimit>>;
  action_budget?: Policy['action_budget'];
  downgrades?: Policy['downgrades'];
  guardrails?: Policy['guardrails'];
  period_budgets?: Policy['period_budgets'];
  /** Approvals an escalation of this policy needs (absent: 1). */
  approvals_required?: Policy['approvals_required'];
  /** Whether only a person other than the agent's owner or last changer may decide (absent: false). */
  separation_of_duties?: Policy['separation_of_duties'];
  /** The automatic kill switch rule (absent or null: none); `decide` does not read it, the platform applies it (docs/notifications.md). */
  auto_kill_switch?: Policy['auto_kill_switch'];
}

/**
 * An {@link EnginePolicy} from the settings of a policy as `POST /api/v1/policies` takes them (`CreatePolicy`: every
 * setting optional), each absent one at the value the policies service stores for it: enabled, no budgets (USD), no
 * denied, approval-required or rate-limited actions, every action allowed (`allowed_actions` null), every agent, no
 * downgrades, no guardrails.
 * Pure. Used for counterfactual evaluation's candidate policy (not stored) and as a test fixture.
 * @param id the policy id; @param createdAt ISO 8601 UTC (orders ties between policies, oldest first).
 */
export function enginePolicy(id: string, createdAt: string, s: Pick<Policy, 'name'> & Partial<Omit<EnginePolicy, 'id' | 'name' | 'created_at'>>): EnginePolicy {
  return {
    id,
    name: s.name,
    enabled: s.enabled ?? true,
    created_at: createdAt,
    session_budget: s.session_budget ?? null,
    run_budget: s.run_budget ?? null,
    denied_actions: s.denied_actions ?? [],
    allowed_actions: s.allowed_actions ?? null,
    approval_required_actions: s.approval_required_actions ?? [],
    rate_limits: s.rate_limits ?? {},
    agent_ids: s.agent_ids ?? [],
    action_budget: s.action_budget ?? null,
    downgrades: s.downgrades ?? [],
    guardrails: s.guardrails ?? {},
    period_budgets: s.period_budgets ?? [],
    approvals_required: s.approvals_required ?? 1,
    separation_of_duties: s.separation_of_duties ?? false,
  };
}

/** The kill switches `decide` reads: the organisation's and the agents'. A `KillSwitchOverview` fits. */
export interface EngineKillSwitches {
  organization: Pick<KillSwitchState, 'engaged' | 'reason'>;
  /** Agent switches; only an engaged one for the action's agent counts. */
  agents: ReadonlyArray<Pick<KillSwitchState, 'agent_id' | 'engaged' | 'reason'>>;
}

/** No kill switch engaged. */
export const NO_KILL_SWITCHES: EngineKillSwitches = Object.freeze({ organization: Object.freeze({ engaged: false, reason: null }), agents: Object.freeze([]) });

/**
 * The action an agent attempts.
 * - `estimated_cost_usd`: USD ≥ 0; absent = 0.
 * - `risk_level`: the risk its registration declares; absent or null = the deciding rule's {@link RULE_RISK}.
 * - `arguments`: downgrades rewrite them, the PII guardrail scans them, loop and idempotency hash them.
 * - `idempotency_key`: the caller's key for the idempotency guardrail; absent = the arguments hash.
 * - `moderation_scores`: the moderation provider's scores per field of the arguments (the contracts'
 *   `ModerationScoresSchema`); absent = not moderated.
 */
export const PolicyActionSchema = z.object({
  agent_id: z.string().min(1),
  action_name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  estimated_cost_usd: z.number().finite().min(0).optional(),
  risk_level: RiskLevelSchema.nullish(),
  idempotency_key: z.string().min(1).optional(),
  moderation_scores: ModerationScoresSchema.optional(),
});
export type PolicyAction = z.infer<typeof PolicyActionSchema>;

/**
 * One call already made: its action, when (ms since the Unix epoch) and, for the loop guardrail, its
 * {@link argumentsHash} (a call without one never counts towards a loop).
 */
export const RecentCallSchema = z.object({ action_name: z.string(), at: z.number().finite(), arguments_hash: z.string().optional() });
export type RecentCall = z.infer<typeof RecentCallSchema>;

/**
 * An idempotency key already seen: the action, the key (the caller's, or the arguments hash), when the first call ran
 * (ms since the epoch) and where its result is kept (`cached_result_ref`, the caller's reference; absent =
 * `idempotency:<action>:<key>`).
 */
export const IdempotencyRecordSchema = z.object({ action_name: z.string(), idempotency_key: z.string(), at: z.number().finite(), cached_result_ref: z.string().optional() });
export type IdempotencyRecord = z.infer<typeof IdempotencyRecordSchema>;

/**
 * The state a decision is taken against, passed in (never read):
 * - `now`: ms since the Unix epoch; the rate-limit, loop and idempotency windows end here.
 * - `session_spend_usd` / `run_spend_usd`: USD spent so far in the session / the run; absent = 0.
 * - `recent_calls`: calls already made, in any order; a window of `w` seconds counts those with `at > now − w·1000`
 *   (a call stamped after `now`, by a skewed clock, still counts). Which calls to pass — the run's, the agent's, the
 *   session's — is the caller's choice of the limit's scope. Absent = none.
 * - `idempotency_records`: idempotency keys already seen (see {@link IdempotencyRecordSchema}); absent = none.
 */
export const DecisionContextSchema = z.object({
  now: z.number().finite(),
  session_spend_usd: z.number().finite().min(0).optional(),
  run_spend_usd: z.number().finite().min(0).optional(),
  recent_calls: z.array(RecentCallSchema).optional(),
  idempotency_records: z.array(IdempotencyRecordSchema).optional(),
});
/**
 * {@link DecisionContextSchema}'s fields, and `quota`: what the decider may still admit under each fleet-wide limit
 * (session, run and period budgets; `agent`- and `organization`-scoped rate limits). With it, such a budget stops an
 * action whose cost is above what the view has left, and such a rate limit one with less than a call left; without
 * it (or where it answers undefined) budgets count the spend passed in, rate limits the calls passed in, and a period
 * budget the action's cost alone. Not JSON: a function the caller supplies (the SDK's leases, the decision API's
 * counters).
 */
export type DecisionContext = z.infer<typeof DecisionContextSchema> & { quota?: QuotaView };

/** What a policy's rule found beyond the rule itself: the guardrail context, and whether the policy rewrites arguments. */
interface PolicyHit {
  triggered: TriggeredRule;
  context: GuardrailContext | null;
  /** The policy's PII guardrail is in redact mode and found something (its matches are masked in modified_inputs). */
  redacts: boolean;
  /** One of the policy's downgrade rules changes an argument. */
  downgrades: boolean;
}

/**
 * A policy's own decision, with what orders it among the others. The rule is held, not spread into the candidate: on
 * node 20 each `{ ...rule, rank, … }` got a hidden class of its own (~1 KB allocated and µs spent per candidate, every
 * later property read megamorphic), most of a decision's time when many policies trigger (`pnpm bench policy`).
 */
interface Candidate {
  hit: PolicyHit;
  policy: EnginePolicy;
  rank: number;
  created_at: string;
  id: string;
}

const rankOf = (d: PolicyDecisionKind) => POLICY_DECISIONS.indexOf(d);
/** USD for a reason: at most 6 decimals, without float noise. */
const usd = (n: number) => `${Number(n.toFixed(6))} USD`;
const quoted = (p: EnginePolicy) => `policy "${p.name}"`;
const ALL_PII: ReadonlySet<PiiCategory> = new Set(PII_CATEGORIES);
const ALL_MODERATION: readonly string[] = MODERATION_CATEGORIES;

/** Whether `policy` applies to `agentId`: its `agent_ids` is empty (every agent) or lists it. */
export function appliesTo(policy: Pick<EnginePolicy, 'agent_ids'>, agentId: string): boolean {
  return policy.agent_ids.length === 0 || policy.agent_ids.includes(agentId);
}

/**
 * Counts calls in sliding windows, each (action or `*`, window) once per decision however many policies ask.
 * `*` counts calls of every action.
 */
class CallWindows {
  /** Made on the first count (most decisions count nothing). */
  private counts: Map<string, number> | null = null;
  constructor(
    private readonly calls: readonly RecentCall[],
    private readonly now: number,
  ) {}

  /** Calls of `key` (an action name, or `*` for all) with `at > now − windowSeconds·1000`. */
  count(key: string, windowSeconds: number): number {
    const memo = `${windowSeconds}\u0000${key}`;
    this.counts ??= new Map();
    let n = this.counts.get(memo);
    if (n === undefined) {
      const from = this.now - windowSeconds * 1000;
      n = 0;
      for (const c of this.calls) if (c.at > from && (key === RATE_LIMIT_ANY_ACTION || c.action_name === key)) n++;
      this.counts.set(memo, n);
    }
    return n;
  }

  /** Calls of `action` with arguments hash `hash` and `at > now − windowSeconds·1000`. */
  repeats(action: string, hash: string, windowSeconds: number): number {
    const from = this.now - windowSeconds * 1000;
    let n = 0;
    for (const c of this.calls) if (c.at > from && c.action_name === action && c.arguments_hash === hash) n++;
    return n;
  }
}

/**
 * What every policy of one decision is checked against, with what several policies may ask computed once per
 * decision: the USD amounts its reasons print (`toFixed` is the dear part), the PII scan and the arguments hash.
 */
class DecisionInput {
  /** Made on the first amount printed (most decisions print none). */
  private usdTexts: Map<number, string> | null = null;
  private pii: PiiScan | null = null;
  private hash: string | null = null;
  constructor(
    readonly action: PolicyAction,
    readonly name: string,
    readonly cost: number,
    readonly session: number,
    readonly run: number,
    readonly windows: CallWindows,
    readonly context: DecisionContext,
  ) {}

  /** {@link usd}, memoised for this decision. */
  usd(n: number): string {
    this.usdTexts ??= new Map();
    let text = this.usdTexts.get(n);
    if (text === undefined) {
      text = usd(n);
      this.usdTexts.set(n, text);
    }
    return text;
  }

  /** The PII scan of the arguments for every category (each policy filters its own), once per decision. */
  piiScan(): PiiScan {
    this.pii ??= scanPii(this.action.arguments, ALL_PII);
    return this.pii;
  }

  /** {@link argumentsHash} of the arguments, once per decision. */
  argumentsHash(): string {
    this.hash ??= argumentsHash(this.action.arguments);
    return this.hash;
  }

  /** The hash if some policy asked for it, else null. */
  hashIfComputed(): string | null {
    return this.hash;
  }
}

/** The triggered rule of policy `p`. */
const hit = (p: EnginePolicy, decision: PolicyDecisionKind, rule: DecisionRule, reason: string, context: GuardrailContext | null = null): PolicyHit => ({
  triggered: { policy_id: p.id, policy_name: p.name, decision, rule, reason },
  context,
  redacts: false,
  downgrades: false,
});

/**
 * Rule d for the run or session budget: spent + cost over it → budget_exceeded. With a {@link QuotaView} answering
 * for the limit, the cost over what it has left of the fleet's budget.
 */
function budgetExceeded(p: EnginePolicy, d: DecisionInput, rule: 'run_budget' | 'session_budget', what: string, budget: number | null, spent: number): PolicyHit | null {
  if (budget === null) return null;
  const left = d.context.quota?.(p.id, rule);
  if (left !== undefined) {
    if (!(d.cost > left + USD_TOLERANCE)) return null;
    return hit(p, 'budget_exceeded', rule, `${d.name} ${d.usd(d.cost)} would exceed the ${what} budget of ${d.usd(budget)} of ${quoted(p)}: ${d.usd(Math.max(0, left))} of it is left for the fleet`);
  }
  if (!(spent + d.cost > budget + USD_TOLERANCE)) return null;
  return hit(p, 'budget_exceeded', rule, `${what} spend ${d.usd(spent)} + ${d.name} ${d.usd(d.cost)} would exceed the ${what} budget of ${d.usd(budget)} of ${quoted(p)}`);
}

/**
 * Rule d for the period budgets, in their order: the cost over what the {@link QuotaView} has left of one
 * (without a view, the cost over the budget itself) → budget_exceeded, naming the period.
 */
function periodBudgetExceeded(p: EnginePolicy, d: DecisionInput): PolicyHit | null {
  const budgets = p.period_budgets;
  if (budgets === undefined || budgets.length === 0) return null;
  for (const b of budgets) {
    const left = d.context.quota?.(p.id, periodBudgetLimit(b.scope, b.period)) ?? b.max_usd;
    if (!(d.cost > left + USD_TOLERANCE)) continue;
    const whose = b.scope === 'agent' ? `agent ${d.action.agent_id}'s` : "the organisation's";
    return hit(p, 'budget_exceeded', 'period_budget', `${d.name} ${d.usd(d.cost)} would exceed ${whose} budget of ${d.usd(b.max_usd)} per ${b.period} (UTC) of ${quoted(p)}: ${d.usd(Math.max(0, left))} of it is left this ${b.period}`);
  }
  return null;
}

/** Rule d for the action budget: the action's cost over it → budget_exceeded. */
function actionBudgetExceeded(p: EnginePolicy, d: DecisionInput): PolicyHit | null {
  const budget = p.action_budget ?? null;
  if (budget === null || !(d.cost > budget + USD_TOLERANCE)) return null;
  return hit(p, 'budget_exceeded', 'action_budget', `${d.name} would cost an estimated ${d.usd(d.cost)}, above the action budget of ${d.usd(budget)} of ${quoted(p)}`);
}

/**
 * Rule e for one `rate_limits` key (the action's name, or `*`): its window already full → rate_limited. A limit of
 * scope `agent` or `organization` with a {@link QuotaView} answering for it: less than one call left for the fleet in
 * its fixed window; otherwise the calls in the context, in a sliding window.
 */
function rateLimited(p: EnginePolicy, d: DecisionInput, key: string): PolicyHit | null {
  if (!Object.hasOwn(p.rate_limits, key)) return null;
  const limit = p.rate_limits[key];
  const of = key === RATE_LIMIT_ANY_ACTION ? 'calls of any action' : `calls of ${d.name}`;
  if (d.context.quota !== undefined && fleetCounted(limit)) {
    const left = d.context.quota(p.id, rateLimitLimit(key));
    if (left !== undefined) {
      if (left >= 1) return null;
      const whose = limit.scope === 'agent' ? `agent ${d.action.agent_id}'s` : "the organisation's";
      return hit(p, 'rate_limited', 'rate_limit', `${whose} ${of} reach the limit of ${limit.max_calls} per ${limit.window_seconds} s of ${quoted(p)} in this window`);
    }
  }
  const n = d.windows.count(key, limit.window_seconds);
  if (n < limit.max_calls) return null;
  return hit(p, 'rate_limited', 'rate_limit', `${n} ${of} in the last ${limit.window_seconds} s reach the limit of ${limit.max_calls} of ${quoted(p)}`);
}

/** Rule h for one budget: spent + cost past {@link WARN_BUDGET_FRACTION} of it → warn. */
function budgetWarning(p: EnginePolicy, d: DecisionInput, what: string, budget: number | null, spent: number): PolicyHit | null {
  if (budget === null || !(spent + d.cost > WARN_BUDGET_FRACTION * budget + USD_TOLERANCE)) return null;
  const pct = budget === 0 ? 100 : Math.round(((spent + d.cost) / budget) * 100);
  return hit(p, 'warn', 'budget_warning', `${what} spend would reach ${d.usd(spent + d.cost)}, ${pct}% of the ${what} budget of ${d.usd(budget)} of ${quoted(p)} (warned past ${WARN_BUDGET_FRACTION * 100}%)`);
}

/** Unique values of a list, in first-seen order. */
const uniq = (xs: string[]) => [...new Set(xs)];

/** Rule b, PII: matches of the policy's categories → pii_blocked (block), downgrade (redact) or warn (warn). */
function piiGuardrail(p: EnginePolicy, g: NonNullable<Guardrails['pii']>, d: DecisionInput): PolicyHit | null {
  if (d.action.arguments === undefined) return null;
  const scan = d.piiScan();
  if (scan.matches.length === 0) return null;
  const wanted = g.categories;
  const matches = wanted === undefined ? scan.matches : scan.matches.filter((m) => wanted.includes(m.category));
  if (matches.length === 0) return null;
  const categories = uniq(matches.map((m) => m.category));
  const fields = uniq(matches.map((m) => m.field_path));
  const context: GuardrailContext = { guardrail_schema_version: 1, guardrail: 'pii', matches: matches.map((m) => ({ ...m })), categories, fields };
  const mode = g.mode ?? 'block';
  const found = `${matches.length} personal-data match${matches.length === 1 ? '' : 'es'} (${categories.join(', ')}) in ${fields.slice(0, 5).join(', ')}${fields.length > 5 ? ', …' : ''}`;
  if (mode === 'block') return hit(p, 'pii_blocked', 'pii_guardrail', `${d.name} arguments hold ${found}; blocked by the PII guardrail of ${quoted(p)}`, context);
  if (mode === 'warn') return hit(p, 'warn', 'pii_guardrail', `${d.name} arguments hold ${found}; warned by the PII guardrail of ${quoted(p)}`, context);
  const h = hit(p, 'downgrade', 'pii_guardrail', `${d.name} arguments hold ${found}; redacted by the PII guardrail of ${quoted(p)}`, context);
  h.redacts = true;
  return h;
}

/** Whether a provider category name falls under a configured one (`hate` covers `hate/threatening`). */
const under = (name: string, configured: readonly string[]) => configured.some((c) => name === c || (name.startsWith(c) && name[c.length] === '/'));

/**
 * `text` cut to at most `max` UTF-16 code units (the unit of the contract's string limits), dropping a high surrogate
 * the cut would leave without its pair: PostgreSQL cannot store half a surrogate pair.
 */
function cutUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** An idempotency key as a reason shows it: its first 24 characters (code points, never half a surrogate pair) and `…`. */
function shortKey(key: string): string {
  const chars = Array.from(key);
  return chars.length > 24 ? `${chars.slice(0, 24).join('')}…` : key;
}

/** Rule b, moderation: a listed category's score ≥ threshold in some field → content_blocked (block) or warn. */
function moderationGuardrail(p: EnginePolicy, g: NonNullable<Guardrails['moderation']>, d: DecisionInput): PolicyHit | null {
  const scores = d.action.moderation_scores;
  if (scores === undefined || scores.length === 0) return null;
  const configured = g.categories ?? ALL_MODERATION;
  const matches: Array<{ category: string; field_path: string; matched_text: string; score: number }> = [];
  for (const f of scores) {
    for (const [name, score] of Object.entries(f.scores)) {
      if (score < g.threshold || !under(name, configured) || matches.length >= 1000) continue;
      const text = getAt(d.action.arguments, pathSegments(f.field_path));
      matches.push({ category: name, field_path: f.field_path, matched_text: typeof text === 'string' ? maskText(Array.from(text).slice(0, 64).join('')) : '', score });
    }
  }
  if (matches.length === 0) return null;
  const categories = uniq(matches.map((m) => m.category));
  const fields = uniq(matches.map((m) => m.field_path));
  const top = Math.max(...matches.map((m) => m.score));
  const context: GuardrailContext = { guardrail_schema_version: 1, guardrail: 'moderation', matches, categories, fields };
  const found = `${d.name} arguments were flagged for ${categories.join(', ')} (score ${top.toFixed(2)} ≥ threshold ${g.threshold}) in ${fields.slice(0, 5).join(', ')}`;
  if ((g.mode ?? 'block') === 'block') return hit(p, 'content_blocked', 'moderation_guardrail', `${found}; blocked by the moderation guardrail of ${quoted(p)}`, context);
  return hit(p, 'warn', 'moderation_guardrail', `${found}; warned by the moderation guardrail of ${quoted(p)}`, context);
}

/** Rule b, idempotency: a listed action repeating a key seen within the TTL → idempotent_replay. */
function idempotencyGuardrail(p: EnginePolicy, g: NonNullable<Guardrails['idempotency']>, d: DecisionInput): PolicyHit | null {
  if (!g.actions.includes(d.name)) return null;
  const records = d.context.idempotency_records;
  const key = d.action.idempotency_key ?? d.argumentsHash();
  if (records === undefined || records.length === 0) return null;
  const from = d.context.now - g.ttl_seconds * 1000;
  let first: IdempotencyRecord | null = null;
  for (const r of records) if (r.action_name === d.name && r.idempotency_key === key && r.at > from && (first === null || r.at < first.at)) first = r;
  if (first === null) return null;
  const context: GuardrailContext = {
    guardrail_schema_version: 1,
    guardrail: 'idempotency',
    idempotency_key: cutUnits(key, 512),
    original_timestamp: new Date(first.at).toISOString(),
    cached_result_ref: cutUnits(first.cached_result_ref ?? `idempotency:${d.name}:${key}`, 1024),
  };
  return hit(p, 'idempotent_replay', 'idempotency_guardrail', `${d.name} repeats idempotency key ${shortKey(key)} first used at ${context.original_timestamp} (within ${g.ttl_seconds} s); the first call's result is returned under ${quoted(p)}`, context);
}

/** Rule f, loop: `threshold` identical calls already in the window → loop_detected (block) or warn. */
function loopGuardrail(p: EnginePolicy, g: NonNullable<Guardrails['loop']>, d: DecisionInput): PolicyHit | null {
  const hash = d.argumentsHash();
  const n = d.windows.repeats(d.name, hash, g.window_seconds);
  if (n < g.threshold) return null;
  const context: GuardrailContext = { guardrail_schema_version: 1, guardrail: 'loop', action_name: d.name, arguments_hash: hash, repeat_count: n + 1, threshold: g.threshold, window_seconds: g.window_seconds };
  const found = `${d.name} with the same arguments would run for the ${n + 1}th time in ${g.window_seconds} s (threshold ${g.threshold})`;
  if ((g.mode ?? 'block') === 'block') return hit(p, 'loop_detected', 'loop_guardrail', `${found}; stopped by the loop guardrail of ${quoted(p)}`, context);
  return hit(p, 'warn', 'loop_guardrail', `${found}; warned by the loop guardrail of ${quoted(p)}`, context);
}

/** The value a downgrade rule gives `value`, or undefined when it leaves it alone. */
function downgraded(rule: DowngradeRule, value: unknown): unknown {
  if (rule.max !== undefined) return typeof value === 'number' && value > rule.max ? rule.max : undefined;
  if (rule.replace !== undefined && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) {
    const key = String(value);
    if (Object.hasOwn(rule.replace, key) && rule.replace[key] !== value) return rule.replace[key];
  }
  return undefined;
}

/** Whether `rule` applies to the action `name`. */
const ruleFor = (rule: DowngradeRule, name: string) => rule.action === DOWNGRADE_ANY_ACTION || rule.action === name;

/** Rule g: the first of the policy's downgrade rules that changes an argument → downgrade. */
function downgradeRules(p: EnginePolicy, d: DecisionInput): PolicyHit | null {
  const rules = p.downgrades;
  if (rules === undefined || rules.length === 0 || d.action.arguments === undefined) return null;
  for (const rule of rules) {
    if (!ruleFor(rule, d.name)) continue;
    const value = getAt(d.action.arguments, pathSegments(rule.argument));
    const to = downgraded(rule, value);
    if (to === undefined) continue;
    const how = rule.max !== undefined ? `capped at ${rule.max}` : `replaced by ${JSON.stringify(to)}`;
    const h = hit(p, 'downgrade', 'downgrade', `${d.name} argument ${rule.argument} ${JSON.stringify(value)} ${how} by ${quoted(p)}`);
    h.downgrades = true;
    return h;
  }
  return null;
}

/** Rank of the decisions that only modify or warn: they give way to a later stopping rule of the same policy. */
const SOFT: ReadonlySet<PolicyDecisionKind> = new Set(['downgrade', 'warn']);

/**
 * One policy's own decision for the action: the first of its rules that stops the action, else its most restrictive
 * modifying or warning rule, else null when it allows the action (order in the module docs). Assumes the policy is
 * enabled and applies to the agent.
 */
function decidePolicy(p: EnginePolicy, d: DecisionInput): PolicyHit | null {
  const name = d.name;
  if (p.denied_actions.includes(name)) return hit(p, 'block', 'denied_action', `${name} is a denied action of ${quoted(p)}`);
  if (p.allowed_actions !== null && !p.allowed_actions.includes(name)) return hit(p, 'block', 'not_in_allowed_actions', `${name} is not an allowed action of ${quoted(p)}`);
  let soft: PolicyHit | null = null;
  /** Keep a soft hit if it is the policy's first, or a downgrade after a warning; say whether `h` stops the action. */
  const stops = (h: PolicyHit | null): boolean => {
    if (h === null) return false;
    if (!SOFT.has(h.triggered.decision)) return true;
    if (soft === null) soft = h;
    else if (h.triggered.decision === 'downgrade') {
      if (soft.triggered.decision === 'downgrade') {
        soft.redacts ||= h.redacts;
        soft.downgrades ||= h.downgrades;
      } else soft = h;
    }
    return false;
  };
  const g = p.guardrails;
  let h: PolicyHit | null;
  if (g !== undefined) {
    if (g.pii !== undefined && stops((h = piiGuardrail(p, g.pii, d)))) return h;
    if (g.moderation !== undefined && stops((h = moderationGuardrail(p, g.moderation, d)))) return h;
    if (g.idempotency !== undefined && stops((h = idempotencyGuardrail(p, g.idempotency, d)))) return h;
  }
  if (p.approval_required_actions.includes(name)) return hit(p, 'escalate', 'approval_required', `${name} requires human approval under ${quoted(p)}`);
  h = actionBudgetExceeded(p, d) ?? budgetExceeded(p, d, 'run_budget', 'run', p.run_budget, d.run) ?? budgetExceeded(p, d, 'session_budget', 'session', p.session_budget, d.session) ?? periodBudgetExceeded(p, d) ?? rateLimited(p, d, name) ?? rateLimited(p, d, RATE_LIMIT_ANY_ACTION);
  if (h !== null) return h;
  if (g?.loop !== undefined && stops((h = loopGuardrail(p, g.loop, d)))) return h;
  stops(downgradeRules(p, d));
  stops(budgetWarning(p, d, 'session', p.session_budget, d.session) ?? budgetWarning(p, d, 'run', p.run_budget, d.run));
  return soft;
}

/**
 * The arguments a downgrade runs with: for each applicable policy, oldest first (`created_at`, then `id`), its
 * downgrade rules in order, each on the result of the one before (so a later policy's rule may act on an earlier
 * one's change), then, when the policy redacts, every PII match of its categories masked in place.
 */
function modifiedInputs(applicable: readonly EnginePolicy[], candidates: readonly Candidate[], d: DecisionInput): Record<string, unknown> {
  let args = d.action.arguments ?? {};
  const redacting = new Set(candidates.filter((c) => c.hit.redacts).map((c) => c.policy));
  const ordered = [...applicable].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const p of ordered) {
    for (const rule of p.downgrades ?? []) {
      if (!ruleFor(rule, d.name)) continue;
      const path = pathSegments(rule.argument);
      const to = downgraded(rule, getAt(args, path));
      if (to !== undefined) args = setAt(args, path, to);
    }
    const pii = p.guardrails?.pii;
    if (redacting.has(p) && pii !== undefined) {
      const wanted: ReadonlySet<PiiCategory> = pii.categories === undefined ? ALL_PII : new Set(pii.categories);
      const paths = new Set<string>();
      for (const m of d.piiScan().matches) if (wanted.has(m.category) && !m.field_path.startsWith('…')) paths.add(m.field_path);
      for (const fp of paths) {
        const path = pathSegments(fp);
        const v = getAt(args, path);
        if (typeof v === 'string') args = setAt(args, path, redactPii(v, wanted));
      }
    }
  }
  return args;
}

/** The decision when nothing stops, modifies or warns: `evaluated` applicable policies, the arguments hash if computed. */
function allowDecision(action: PolicyAction, cost: number, evaluated: number, hash: string | null): PolicyDecision {
  return {
    decision: 'allow',
    intervention_type: null,
    outcome: null,
    rule: null,
    policy_id: null,
    policy_name: null,
    reason: evaluated === 0 ? `no kill switch is engaged and no enabled policy applies to agent ${action.agent_id}` : `no kill switch is engaged and none of the ${evaluated} applicable policies stops ${action.action_name}`,
    risk_level: action.risk_level ?? 'minimal',
    estimated_cost_usd: cost,
    cost_prevented_usd: 0,
    policies_evaluated: evaluated,
    triggered: [],
    modified_inputs: null,
    guardrail_context: null,
    arguments_hash: hash,
    approval: null,
  };
}

/**
 * Whether policy `p` can only act on actions it names: no allow-list, guardrail or budget (action, run or session),
 * and its rate limits and downgrade rules (if any) each name one action (none for `*`). For such a policy
 * {@link decidePolicy} returns null for every action it does not name ({@link addNamed}).
 */
function namesOnly(p: EnginePolicy): boolean {
  const g = p.guardrails;
  if (g !== undefined && (g.pii !== undefined || g.moderation !== undefined || g.idempotency !== undefined || g.loop !== undefined)) return false;
  if (p.allowed_actions !== null || p.action_budget != null || p.run_budget != null || p.session_budget != null) return false;
  if (p.period_budgets !== undefined && p.period_budgets.length > 0) return false;
  if (p.rate_limits === null || typeof p.rate_limits !== 'object' || Object.hasOwn(p.rate_limits, RATE_LIMIT_ANY_ACTION)) return false;
  if (p.downgrades !== undefined && p.downgrades.some((r) => r.action === DOWNGRADE_ANY_ACTION)) return false;
  return true;
}

/** Add the actions policy `p` names to `named`: denied, approval-required, rate-limited and downgraded ones. */
function addNamed(p: EnginePolicy, named: Set<string>): void {
  for (const a of p.denied_actions) named.add(a);
  for (const a of p.approval_required_actions) named.add(a);
  for (const a of Object.keys(p.rate_limits)) named.add(a);
  for (const r of p.downgrades ?? []) named.add(r.action);
}

/** What {@link PreparedPolicies} knows of the policies applying to one agent. */
interface AgentIndex {
  /** Enabled policies that apply to the agent (`policies_evaluated` of its decisions). */
  evaluated: number;
  /** Every one of them only names actions ({@link namesOnly}). */
  inert: boolean;
  /** The actions they name ({@link addNamed}; only meaningful when `inert`). */
  named: ReadonlySet<string>;
}

/**
 * A policy set prepared for many decisions: {@link decide} takes it in place of the array and gives the same
 * decisions, answering at once — without evaluating each policy — an action that no applicable policy can stop,
 * modify or warn about: no kill switch is engaged for the agent, every applicable policy only acts on actions it
 * names (denied, approval-required, rate-limited or downgraded by name: no allow-list, guardrail, budget, `*` rate
 * limit or `*` downgrade), and none names this one.
 * Anything else is decided by the full evaluation. What it learns of each agent is computed once, on its first
 * decision. The policies must not change after preparing them: prepare the new set when they do (the SDK prepares
 * each governance snapshot once).
 * Source: architecture §1 (packages/policy-engine); docs/decisions.md §Performance.
 */
export class PreparedPolicies {
  private readonly agents = new Map<string, AgentIndex>();
  /** @param policies the organisation's (or an agent's) policies, as {@link decide} takes them. */
  constructor(readonly policies: readonly EnginePolicy[]) {}

  /** @internal The index of the policies applying to `agentId` (computed on first use, at most 1000 agents kept). */
  forAgent(agentId: string): AgentIndex {
    let index = this.agents.get(agentId);
    if (index === undefined) {
      let evaluated = 0;
      let inert = true;
      const named = new Set<string>();
      for (const p of this.policies) {
        if (!p.enabled || !appliesTo(p, agentId)) continue;
        evaluated++;
        if (namesOnly(p)) addNamed(p, named);
        else inert = false;
      }
      index = { evaluated, inert, named };
      if (this.agents.size >= 1000) this.agents.clear();
      this.agents.set(agentId, index);
    }
    return index;
  }
}

/**
 * Decide one action. Pure and deterministic: the same input gives the same decision.
 * @param policies the organisation's policies, in any order; disabled ones and those scoped to other agents are
 *   skipped here, so a caller may pass them all. Or the same set prepared once ({@link PreparedPolicies}) for a
 *   caller deciding many actions against it: same decisions, an unstoppable action answered without evaluating
 *   each policy.
 * @param killSwitches the organisation's switch and the agents' ({@link NO_KILL_SWITCHES} for none).
 * @param action the attempted action; `estimated_cost_usd` in USD; its arguments, idempotency key and moderation
 *   scores feed the guardrails and downgrades.
 * @param context spend so far (USD), recent calls (with arguments hashes), idempotency keys seen and `now` (ms
 *   since the epoch).
 * @returns the winning decision (precedence in the module docs: kill switches; deny and allow lists; guardrails that
 *   block; approval; budgets — action, run, session, period; rate limits; loop; downgrade; warnings) with its rule, policy
 *   (null for a kill switch or allow), reason, risk level, the intervention type and outcome it would record,
 *   `cost_prevented_usd` (the estimated cost when the action is stopped — every `blocked` outcome — else 0), the
 *   number of policies evaluated, every triggered rule (most restrictive first), `modified_inputs` for a downgrade,
 *   the `guardrail_context` when a guardrail decided, and the `arguments_hash` when a guardrail computed it, and for `escalate` the winning policy's `approval` rule.
 * @throws nothing for JSON-like input (arguments of any depth).
 */
export function decide(policies: readonly EnginePolicy[] | PreparedPolicies, killSwitches: EngineKillSwitches, action: PolicyAction, context: DecisionContext): PolicyDecision {
  const cost = action.estimated_cost_usd ?? 0;
  if (policies instanceof PreparedPolicies) {
    const index = policies.forAgent(action.agent_id);
    if (index.inert && !index.named.has(action.action_name) && !killSwitches.organization.engaged && !killSwitches.agents.some((s) => s.engaged && s.agent_id === action.agent_id)) {
      return allowDecision(action, cost, index.evaluated, null);
    }
    policies = policies.policies;
  }
  const session = context.session_spend_usd ?? 0;
  const run = context.run_spend_usd ?? 0;
  const input = new DecisionInput(action, action.action_name, cost, session, run, new CallWindows(context.recent_calls ?? [], context.now), context);

  const switches: TriggeredRule[] = [];
  if (killSwitches.organization.engaged) {
    const why = killSwitches.organization.reason;
    switches.push({ policy_id: null, policy_name: null, decision: 'block', rule: 'organization_kill_switch', reason: `the organisation's kill switch is engaged${why ? `: ${why}` : ''}` });
  }
  const agentSwitch = killSwitches.agents.find((s) => s.engaged && s.agent_id === action.agent_id);
  if (agentSwitch) {
    const why = agentSwitch.reason;
    switches.push({ policy_id: null, policy_name: null, decision: 'block', rule: 'agent_kill_switch', reason: `agent ${action.agent_id}'s kill switch is engaged${why ? `: ${why}` : ''}` });
  }

  let evaluated = 0;
  const candidates: Candidate[] = [];
  for (const p of policies) {
    if (!p.enabled || !appliesTo(p, action.agent_id)) continue;
    evaluated++;
    const h = decidePolicy(p, input);
    if (h) candidates.push({ hit: h, policy: p, rank: rankOf(h.triggered.decision), created_at: p.created_at, id: p.id });
  }
  candidates.sort((a, b) => a.rank - b.rank || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const switched = switches.length > 0;
  const triggered: TriggeredRule[] = switches;
  for (const c of candidates) triggered.push(c.hit.triggered);

  const win = triggered[0];
  if (!win) return allowDecision(action, cost, evaluated, input.hashIfComputed());
  const winner = switched ? null : candidates[0];
  const modified = win.decision === 'downgrade' ? modifiedInputs(policies.filter((p) => p.enabled && appliesTo(p, action.agent_id)), candidates, input) : null;
  return {
    decision: win.decision,
    intervention_type: DECISION_INTERVENTION_TYPE[win.decision],
    outcome: DECISION_OUTCOME[win.decision],
    rule: win.rule,
    policy_id: win.policy_id,
    policy_name: win.policy_name,
    reason: win.reason,
    risk_level: action.risk_level ?? RULE_RISK[win.rule],
    estimated_cost_usd: cost,
    cost_prevented_usd: STOPPING_DECISIONS.has(win.decision) ? cost : 0,
    policies_evaluated: evaluated,
    triggered,
    modified_inputs: modified,
    guardrail_context: winner?.hit.context ?? null,
    arguments_hash: input.hashIfComputed(),
    approval: win.decision === 'escalate' && winner ? approvalRuleOf(winner.policy) : null,
  };
}

/** The approval rule of a policy that escalates: its `approvals_required` (absent: 1) and `separation_of_duties` (absent: false). */
export function approvalRuleOf(p: Pick<EnginePolicy, 'approvals_required' | 'separation_of_duties'>): ApprovalRule {
  return { approvals_required: p.approvals_required ?? 1, separation_of_duties: p.separation_of_duties ?? false };
}
/**
 * The more restrictive of two decisions by {@link POLICY_DECISIONS} order (block, escalate, budget_exceeded,
 * rate_limited, downgrade, warn, allow); `a` on a tie. For callers that merge a decision of their own (an SDK
 * guardrail's downgrade, say) with `decide`'s.
 */
export function mostRestrictive<T extends { decision: PolicyDecisionKind }>(a: T, b: T): T {
  return rankOf(b.decision) < rankOf(a.decision) ? b : a;
}
