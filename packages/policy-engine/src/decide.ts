/**
 * The policy decision, pure: `decide(policies, killSwitches, action, context)` answers whether one action an agent
 * attempts is allowed, blocked, escalated, rate-limited, stopped by a budget, downgraded or warned. No I/O, no clock:
 * the spend so far, the recent calls and `now` come in with the context, so the decision API, counterfactual replay
 * and the agent-side SDK run the same code on the same input and get the same answer.
 * Source: issue #14 point 1; spec §What the service does, §Intervention types; architecture §1 (packages/policy-engine).
 *
 * Precedence (the first that triggers wins):
 * 1. the organisation's kill switch, then the agent's → block (hard_block);
 * 2. each enabled policy that applies to the agent (`agent_ids` empty, or listing it) decides alone, checking its
 *    rules in this order and stopping at the first that triggers:
 *    a. the action is in `denied_actions` → block — deny beats allow, so an action both denied and allowed is blocked;
 *    b. `allowed_actions` is a list (not null) without the action → block (`[]` allows nothing);
 *    c. the action is in `approval_required_actions` → escalate (approval_required);
 *    d. session spend + the action's estimated cost > `session_budget`, then the same for the run and `run_budget`
 *       → budget_exceeded (equal to the budget is allowed);
 *    e. a `rate_limits` entry for the action, then the `*` entry, already holds `max_calls` calls within its window
 *       → rate_limited;
 *    f. session spend + cost passes {@link WARN_BUDGET_FRACTION} (80%) of `session_budget`, then of `run_budget`
 *       → warn (warning);
 * 3. across policies the most restrictive decision wins, in {@link POLICY_DECISIONS} order: block, escalate,
 *    budget_exceeded, rate_limited, downgrade, warn, allow; ties go to the oldest policy (`created_at`, then `id`).
 *    Because an allow-list only restricts, several policies' allow-lists intersect: an action must be allowed by each.
 *
 * Downgrade: no policy field can express it yet (PolicySchema has no parameter caps such as a cheaper model or a lower
 * limit), so `decide` never returns it. The decision stays in the type for the agent-side SDK and replay, whose own
 * logic may downgrade an action; {@link mostRestrictive} merges such a decision with this one by the same order.
 */
import { z } from 'zod';
import {
  DECISION_INTERVENTION_TYPE,
  DECISION_OUTCOME,
  POLICY_DECISIONS,
  RATE_LIMIT_ANY_ACTION,
  RiskLevelSchema,
  type DecisionRule,
  type KillSwitchState,
  type Policy,
  type PolicyDecision,
  type PolicyDecisionKind,
  type RiskLevel,
  type TriggeredRule,
} from '@agp/contracts';

/** A budget warns once spend so far + the action's cost passes this fraction of it (80%). */
export const WARN_BUDGET_FRACTION = 0.8;

/**
 * Slack when comparing USD sums with a budget: floating-point sums such as 0.1 + 0.2 land a few 1e-17 off, which must
 * not turn "exactly the budget" into "over it". 1e-9 USD is far below any price.
 */
export const USD_TOLERANCE = 1e-9;

/**
 * The risk level a decision carries when the action declares none (its agent registration's `risk_level`), by the
 * rule that decided: a kill switch is an emergency stop (critical); a denied, unlisted or approval-gated action was
 * judged dangerous by the policy author (high); budget and rate limits guard cost and volume (medium); a budget
 * warning is low; an allowed action minimal.
 */
export const RULE_RISK: Readonly<Record<DecisionRule, RiskLevel>> = {
  organization_kill_switch: 'critical',
  agent_kill_switch: 'critical',
  denied_action: 'high',
  not_in_allowed_actions: 'high',
  approval_required: 'high',
  session_budget: 'medium',
  run_budget: 'medium',
  rate_limit: 'medium',
  budget_warning: 'low',
};

/** The decisions that stop the action, so that its estimated cost counts as prevented. */
const STOPPING: ReadonlySet<PolicyDecisionKind> = new Set(['block', 'budget_exceeded', 'rate_limited']);

/**
 * The policy fields `decide` reads. A `Policy` record (current, or any version folded from its stream) fits;
 * budgets in USD, `rate_limits[*].window_seconds` in seconds.
 */
export type EnginePolicy = Pick<
  Policy,
  'id' | 'name' | 'enabled' | 'created_at' | 'session_budget' | 'run_budget' | 'denied_actions' | 'allowed_actions' | 'approval_required_actions' | 'rate_limits' | 'agent_ids'
>;

/**
 * An {@link EnginePolicy} from the settings of a policy as `POST /api/v1/policies` takes them (`CreatePolicy`: every
 * setting optional), each absent one at the value the policies service stores for it: enabled, no budgets (USD), no
 * denied, approval-required or rate-limited actions, every action allowed (`allowed_actions` null), every agent.
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
 * - `arguments`: carried for callers; no rule reads them yet.
 */
export const PolicyActionSchema = z.object({
  agent_id: z.string().min(1),
  action_name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  estimated_cost_usd: z.number().finite().min(0).optional(),
  risk_level: RiskLevelSchema.nullish(),
});
export type PolicyAction = z.infer<typeof PolicyActionSchema>;

/** One call already made: its action and when, in ms since the Unix epoch. */
export const RecentCallSchema = z.object({ action_name: z.string(), at: z.number().finite() });
export type RecentCall = z.infer<typeof RecentCallSchema>;

/**
 * The state a decision is taken against, passed in (never read):
 * - `now`: ms since the Unix epoch; the rate-limit windows end here.
 * - `session_spend_usd` / `run_spend_usd`: USD spent so far in the session / the run; absent = 0.
 * - `recent_calls`: calls already made, in any order; a window of `w` seconds counts those with `at > now − w·1000`
 *   (a call stamped after `now`, by a skewed clock, still counts). Which calls to pass — the run's, the agent's, the
 *   session's — is the caller's choice of the limit's scope. Absent = none.
 */
export const DecisionContextSchema = z.object({
  now: z.number().finite(),
  session_spend_usd: z.number().finite().min(0).optional(),
  run_spend_usd: z.number().finite().min(0).optional(),
  recent_calls: z.array(RecentCallSchema).optional(),
});
export type DecisionContext = z.infer<typeof DecisionContextSchema>;

/**
 * A policy's own decision, with what orders it among the others. The rule is held, not spread into the candidate: on
 * node 20 each `{ ...rule, rank, … }` got a hidden class of its own (~1 KB allocated and µs spent per candidate, every
 * later property read megamorphic), most of a decision's time when many policies trigger (`pnpm bench policy`).
 */
interface Candidate {
  triggered: TriggeredRule;
  rank: number;
  created_at: string;
  id: string;
}

const rankOf = (d: PolicyDecisionKind) => POLICY_DECISIONS.indexOf(d);
/** USD for a reason: at most 6 decimals, without float noise. */
const usd = (n: number) => `${Number(n.toFixed(6))} USD`;
const quoted = (p: EnginePolicy) => `policy "${p.name}"`;

/** Whether `policy` applies to `agentId`: its `agent_ids` is empty (every agent) or lists it. */
export function appliesTo(policy: Pick<EnginePolicy, 'agent_ids'>, agentId: string): boolean {
  return policy.agent_ids.length === 0 || policy.agent_ids.includes(agentId);
}

/**
 * Counts calls in sliding windows, each (action or `*`, window) once per decision however many policies ask.
 * `*` counts calls of every action.
 */
class CallWindows {
  private readonly counts = new Map<string, number>();
  constructor(
    private readonly calls: readonly RecentCall[],
    private readonly now: number,
  ) {}

  /** Calls of `key` (an action name, or `*` for all) with `at > now − windowSeconds·1000`. */
  count(key: string, windowSeconds: number): number {
    const memo = `${windowSeconds}\u0000${key}`;
    let n = this.counts.get(memo);
    if (n === undefined) {
      const from = this.now - windowSeconds * 1000;
      n = 0;
      for (const c of this.calls) if (c.at > from && (key === RATE_LIMIT_ANY_ACTION || c.action_name === key)) n++;
      this.counts.set(memo, n);
    }
    return n;
  }
}

/**
 * What every policy of one decision is checked against, with the USD amounts its reasons print formatted once per
 * decision (spend and cost recur in every policy's reason, budgets across policies; `toFixed` is the dear part).
 */
class DecisionInput {
  private readonly usdTexts = new Map<number, string>();
  constructor(
    readonly name: string,
    readonly cost: number,
    readonly session: number,
    readonly run: number,
    readonly windows: CallWindows,
  ) {}

  /** {@link usd}, memoised for this decision. */
  usd(n: number): string {
    let text = this.usdTexts.get(n);
    if (text === undefined) {
      text = usd(n);
      this.usdTexts.set(n, text);
    }
    return text;
  }
}

/** The triggered rule of policy `p`. */
const hit = (p: EnginePolicy, decision: PolicyDecisionKind, rule: DecisionRule, reason: string): TriggeredRule => ({ policy_id: p.id, policy_name: p.name, decision, rule, reason });

/** Rule d for one budget: spent + cost over it → budget_exceeded. */
function budgetExceeded(p: EnginePolicy, d: DecisionInput, rule: DecisionRule, what: string, budget: number | null, spent: number): TriggeredRule | null {
  if (budget === null || !(spent + d.cost > budget + USD_TOLERANCE)) return null;
  return hit(p, 'budget_exceeded', rule, `${what} spend ${d.usd(spent)} + ${d.name} ${d.usd(d.cost)} would exceed the ${what} budget of ${d.usd(budget)} of ${quoted(p)}`);
}

/** Rule e for one `rate_limits` key (the action's name, or `*`): its window already full → rate_limited. */
function rateLimited(p: EnginePolicy, d: DecisionInput, key: string): TriggeredRule | null {
  if (!Object.hasOwn(p.rate_limits, key)) return null;
  const limit = p.rate_limits[key];
  const n = d.windows.count(key, limit.window_seconds);
  if (n < limit.max_calls) return null;
  const of = key === RATE_LIMIT_ANY_ACTION ? 'calls of any action' : `calls of ${d.name}`;
  return hit(p, 'rate_limited', 'rate_limit', `${n} ${of} in the last ${limit.window_seconds} s reach the limit of ${limit.max_calls} of ${quoted(p)}`);
}

/** Rule f for one budget: spent + cost past {@link WARN_BUDGET_FRACTION} of it → warn. */
function budgetWarning(p: EnginePolicy, d: DecisionInput, what: string, budget: number | null, spent: number): TriggeredRule | null {
  if (budget === null || !(spent + d.cost > WARN_BUDGET_FRACTION * budget + USD_TOLERANCE)) return null;
  const pct = budget === 0 ? 100 : Math.round(((spent + d.cost) / budget) * 100);
  return hit(p, 'warn', 'budget_warning', `${what} spend would reach ${d.usd(spent + d.cost)}, ${pct}% of the ${what} budget of ${d.usd(budget)} of ${quoted(p)} (warned past ${WARN_BUDGET_FRACTION * 100}%)`);
}

/**
 * One policy's own decision for the action: the first of its rules that triggers (order in the module docs), or null
 * when it allows the action. Assumes the policy is enabled and applies to the agent.
 */
function decidePolicy(p: EnginePolicy, d: DecisionInput): TriggeredRule | null {
  const name = d.name;
  if (p.denied_actions.includes(name)) return hit(p, 'block', 'denied_action', `${name} is a denied action of ${quoted(p)}`);
  if (p.allowed_actions !== null && !p.allowed_actions.includes(name)) return hit(p, 'block', 'not_in_allowed_actions', `${name} is not an allowed action of ${quoted(p)}`);
  if (p.approval_required_actions.includes(name)) return hit(p, 'escalate', 'approval_required', `${name} requires human approval under ${quoted(p)}`);
  return (
    budgetExceeded(p, d, 'session_budget', 'session', p.session_budget, d.session) ??
    budgetExceeded(p, d, 'run_budget', 'run', p.run_budget, d.run) ??
    rateLimited(p, d, name) ??
    rateLimited(p, d, RATE_LIMIT_ANY_ACTION) ??
    budgetWarning(p, d, 'session', p.session_budget, d.session) ??
    budgetWarning(p, d, 'run', p.run_budget, d.run)
  );
}

/**
 * Decide one action. Pure and deterministic: the same input gives the same decision.
 * @param policies the organisation's policies, in any order; disabled ones and those scoped to other agents are
 *   skipped here, so a caller may pass them all.
 * @param killSwitches the organisation's switch and the agents' ({@link NO_KILL_SWITCHES} for none).
 * @param action the attempted action; `estimated_cost_usd` in USD.
 * @param context spend so far (USD), recent calls and `now` (ms since the epoch).
 * @returns the winning decision (precedence in the module docs) with its rule, policy (null for a kill switch or
 *   allow), reason, risk level, the intervention type and outcome it would record, `cost_prevented_usd` (the
 *   estimated cost when the action is stopped — block, budget_exceeded, rate_limited — else 0), the number of
 *   policies evaluated, and every triggered rule, most restrictive first.
 * @throws nothing for well-typed input.
 */
export function decide(policies: readonly EnginePolicy[], killSwitches: EngineKillSwitches, action: PolicyAction, context: DecisionContext): PolicyDecision {
  const cost = action.estimated_cost_usd ?? 0;
  const session = context.session_spend_usd ?? 0;
  const run = context.run_spend_usd ?? 0;
  const input = new DecisionInput(action.action_name, cost, session, run, new CallWindows(context.recent_calls ?? [], context.now));

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
    const t = decidePolicy(p, input);
    if (t) candidates.push({ triggered: t, rank: rankOf(t.decision), created_at: p.created_at, id: p.id });
  }
  candidates.sort((a, b) => a.rank - b.rank || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const triggered: TriggeredRule[] = switches;
  for (const c of candidates) triggered.push(c.triggered);

  const win = triggered[0];
  if (!win) {
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
    };
  }
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
    cost_prevented_usd: STOPPING.has(win.decision) ? cost : 0,
    policies_evaluated: evaluated,
    triggered,
  };
}

/**
 * The more restrictive of two decisions by {@link POLICY_DECISIONS} order (block, escalate, budget_exceeded,
 * rate_limited, downgrade, warn, allow); `a` on a tie. For callers that merge a decision of their own (an SDK
 * guardrail's downgrade, say) with `decide`'s.
 */
export function mostRestrictive<T extends { decision: PolicyDecisionKind }>(a: T, b: T): T {
  return rankOf(b.decision) < rankOf(a.decision) ? b : a;
}
