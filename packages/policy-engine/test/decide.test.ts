/**
 * The policy engine's table, tested pure: every rule alone, every precedence pair — within one
 * policy, across two policies in both creation orders, and against each kill switch — then the edges of each rule
 * (agent scope, enabled, allow-lists, budget bounds, window bounds, ties, risk, cost prevented). No I/O.
 */
import { describe, expect, it } from 'vitest';
import { POLICY_DECISIONS, type PolicyDecisionKind, type PolicySettings } from '@agp/contracts';
import { argumentsHash, decide, enginePolicy, mostRestrictive, NO_KILL_SWITCHES, PreparedPolicies, type DecisionContext, type EngineKillSwitches, type EnginePolicy, type PolicyAction } from '../src/index.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const AGENT = 'agent-1';
const ACTION = 'send_email';
/** The action's estimated cost, USD. */
const COST = 10;

/** The arguments of every case's action: an email address (PII), an amount and a model to downgrade, a flagged body. */
const ARGS = { to: 'jane.doe@example.com', amount: 250, model: 'gpt-4o', body: 'a message the moderation provider flags' };
/** Their canonical hash (what the loop guardrail compares). */
const HASH = argumentsHash(ARGS);
/**
 * Every case's action: agent-1 sends an email estimated at 10 USD, with idempotency key k-1 and a harassment score of
 * 0.9 for its body.
 */
const action: PolicyAction = {
  agent_id: AGENT,
  action_name: ACTION,
  estimated_cost_usd: COST,
  arguments: ARGS,
  idempotency_key: 'k-1',
  moderation_scores: [{ field_path: 'body', scores: { harassment: 0.9, hate: 0.1 } }],
};
/**
 * Every case's state: 10 USD spent in the session and in the run; two send_email calls (with the same arguments) and
 * one search call in the last minute, one search call two minutes ago; idempotency key k-1 of send_email seen 5 s ago.
 */
const context: DecisionContext = {
  now: NOW,
  session_spend_usd: 10,
  run_spend_usd: 10,
  recent_calls: [
    { action_name: ACTION, at: NOW - 1_000, arguments_hash: HASH },
    { action_name: ACTION, at: NOW - 2_000, arguments_hash: HASH },
    { action_name: 'search', at: NOW - 3_000 },
    { action_name: 'search', at: NOW - 120_000 },
  ],
  idempotency_records: [{ action_name: ACTION, idempotency_key: 'k-1', at: NOW - 5_000, cached_result_ref: 'cache://1' }],
};

const NEUTRAL: Omit<PolicySettings, 'name' | 'description'> = {
  enabled: true,
  session_budget: null,
  run_budget: null,
  denied_actions: [],
  allowed_actions: null,
  approval_required_actions: [],
  rate_limits: {},
  agent_ids: [],
  action_budget: null,
  downgrades: [],
  guardrails: {},
  period_budgets: [],
  approvals_required: 1,
  separation_of_duties: false,
  auto_kill_switch: null,
};

/** A policy that stops nothing unless `settings` say so; `n` orders creation (p-1 is the oldest). */
function policy(n: number, settings: Partial<EnginePolicy> = {}): EnginePolicy {
  return { id: `p-${n}`, name: `policy ${n}`, created_at: `2026-11-0${n}T00:00:00.000Z`, ...NEUTRAL, ...settings };
}

const switches = (org: boolean, agent: boolean): EngineKillSwitches => ({
  organization: { engaged: org, reason: org ? 'incident 42' : null },
  agents: agent ? [{ agent_id: AGENT, engaged: true, reason: 'runaway' }] : [],
});

/**
 * One rule, as the state that triggers it with the shared action and context: a kill switch, or policy settings. The
 * table is in precedence order: of two rules met by one policy, the earlier one decides.
 */
interface RuleCase {
  name: string;
  kill?: 'organization' | 'agent';
  settings?: Partial<EnginePolicy>;
  decision: PolicyDecisionKind;
  rule: string | null;
  /** The risk level the decision carries when the action declares none. */
  risk: string;
  /** Tells this case's reason from another case's with the same rule. */
  reason: RegExp;
}

const RULES: RuleCase[] = [
  { name: 'organisation kill switch', kill: 'organization', decision: 'block', rule: 'organization_kill_switch', risk: 'critical', reason: /organisation's kill switch is engaged: incident 42/ },
  { name: 'agent kill switch', kill: 'agent', decision: 'block', rule: 'agent_kill_switch', risk: 'critical', reason: /agent agent-1's kill switch is engaged: runaway/ },
  { name: 'denied action', settings: { denied_actions: [ACTION] }, decision: 'block', rule: 'denied_action', risk: 'high', reason: /send_email is a denied action/ },
  { name: 'not in allowed actions', settings: { allowed_actions: ['search'] }, decision: 'block', rule: 'not_in_allowed_actions', risk: 'high', reason: /send_email is not an allowed action/ },
  { name: 'pii guardrail', settings: { guardrails: { pii: { mode: 'block' } } }, decision: 'pii_blocked', rule: 'pii_guardrail', risk: 'high', reason: /1 personal-data match \(email\) in to; blocked by the PII guardrail/ },
  { name: 'moderation guardrail', settings: { guardrails: { moderation: { mode: 'block', threshold: 0.8 } } }, decision: 'content_blocked', rule: 'moderation_guardrail', risk: 'high', reason: /flagged for harassment \(score 0.90 ≥ threshold 0.8\) in body; blocked/ },
  { name: 'idempotency guardrail', settings: { guardrails: { idempotency: { actions: [ACTION], ttl_seconds: 60 } } }, decision: 'idempotent_replay', rule: 'idempotency_guardrail', risk: 'low', reason: /repeats idempotency key k-1 first used at 2026-11-22T11:59:55.000Z/ },
  { name: 'approval required', settings: { approval_required_actions: [ACTION] }, decision: 'escalate', rule: 'approval_required', risk: 'high', reason: /requires human approval/ },
  { name: 'action budget', settings: { action_budget: 5 }, decision: 'budget_exceeded', rule: 'action_budget', risk: 'medium', reason: /send_email would cost an estimated 10 USD, above the action budget of 5 USD/ },
  { name: 'run budget', settings: { run_budget: 15 }, decision: 'budget_exceeded', rule: 'run_budget', risk: 'medium', reason: /run spend 10 USD \+ send_email 10 USD would exceed the run budget of 15 USD/ },
  { name: 'session budget', settings: { session_budget: 15 }, decision: 'budget_exceeded', rule: 'session_budget', risk: 'medium', reason: /session spend 10 USD \+ send_email 10 USD would exceed the session budget of 15 USD/ },
  { name: 'period budget', settings: { period_budgets: [{ scope: 'agent', period: 'day', max_usd: 5 }] }, decision: 'budget_exceeded', rule: 'period_budget', risk: 'medium', reason: /send_email 10 USD would exceed agent agent-1's budget of 5 USD per day \(UTC\)/ },
  { name: 'rate limit of the action', settings: { rate_limits: { [ACTION]: { max_calls: 2, window_seconds: 60 } } }, decision: 'rate_limited', rule: 'rate_limit', risk: 'medium', reason: /2 calls of send_email in the last 60 s reach the limit of 2/ },
  { name: 'rate limit of every action (*)', settings: { rate_limits: { '*': { max_calls: 3, window_seconds: 60 } } }, decision: 'rate_limited', rule: 'rate_limit', risk: 'medium', reason: /3 calls of any action in the last 60 s reach the limit of 3/ },
  { name: 'loop guardrail', settings: { guardrails: { loop: { mode: 'block', threshold: 2, window_seconds: 60 } } }, decision: 'loop_detected', rule: 'loop_guardrail', risk: 'medium', reason: /send_email with the same arguments would run for the 3th time in 60 s \(threshold 2\)/ },
  { name: 'pii guardrail, redact mode', settings: { guardrails: { pii: { mode: 'redact' } } }, decision: 'downgrade', rule: 'pii_guardrail', risk: 'high', reason: /redacted by the PII guardrail/ },
  { name: 'downgrade (cap)', settings: { downgrades: [{ action: ACTION, argument: 'amount', max: 100 }] }, decision: 'downgrade', rule: 'downgrade', risk: 'low', reason: /send_email argument amount 250 capped at 100/ },
  { name: 'downgrade (substitution, every action)', settings: { downgrades: [{ action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } }] }, decision: 'downgrade', rule: 'downgrade', risk: 'low', reason: /argument model "gpt-4o" replaced by "gpt-4o-mini"/ },
  { name: 'pii guardrail, warn mode', settings: { guardrails: { pii: { mode: 'warn', categories: ['email'] } } }, decision: 'warn', rule: 'pii_guardrail', risk: 'high', reason: /warned by the PII guardrail/ },
  { name: 'session budget warning', settings: { session_budget: 24 }, decision: 'warn', rule: 'budget_warning', risk: 'low', reason: /session spend would reach 20 USD, 83% of the session budget of 24 USD/ },
  { name: 'run budget warning', settings: { run_budget: 24 }, decision: 'warn', rule: 'budget_warning', risk: 'low', reason: /run spend would reach 20 USD, 83% of the run budget of 24 USD/ },
  { name: 'no rule', settings: {}, decision: 'allow', rule: null, risk: 'minimal', reason: /none of the 1 applicable policies stops send_email/ },
];

const INTERVENTION: Record<PolicyDecisionKind, [string | null, string | null]> = {
  block: ['hard_block', 'blocked'],
  pii_blocked: ['pii_blocked', 'blocked'],
  content_blocked: ['content_blocked', 'blocked'],
  idempotent_replay: ['idempotent_replay', 'blocked'],
  loop_detected: ['loop_detected', 'blocked'],
  escalate: ['approval_required', 'escalated'],
  budget_exceeded: ['budget_exceeded', 'blocked'],
  rate_limited: ['rate_limited', 'blocked'],
  downgrade: ['downgrade', 'modified'],
  warn: ['warning', 'warned'],
  allow: [null, null],
};
const STOPS = new Set<PolicyDecisionKind>(['block', 'pii_blocked', 'content_blocked', 'idempotent_replay', 'budget_exceeded', 'rate_limited', 'loop_detected']);
const rank = (d: PolicyDecisionKind) => POLICY_DECISIONS.indexOf(d);

/** The kill switches and policies of a set of cases, each policy case in its own policy p-1, p-2, … in that order. */
function stateOf(cases: RuleCase[]): { policies: EnginePolicy[]; kills: EngineKillSwitches } {
  const org = cases.some((c) => c.kill === 'organization');
  const agent = cases.some((c) => c.kill === 'agent');
  const policies = cases.filter((c) => !c.kill).map((c, i) => policy(i + 1, c.settings));
  return { policies, kills: switches(org, agent) };
}

/** Both cases' settings in one policy, or null when they set the same budget (one policy cannot hold both). */
function merged(a: RuleCase, b: RuleCase): Partial<EnginePolicy> | null {
  const s = { ...(a.settings ?? {}) };
  for (const [k, v] of Object.entries(b.settings ?? {}) as Array<[keyof EnginePolicy, unknown]>) {
    if (k === 'rate_limits') s.rate_limits = { ...s.rate_limits, ...(v as EnginePolicy['rate_limits']) };
    else if (k === 'guardrails' && s.guardrails) {
      const g = v as NonNullable<EnginePolicy['guardrails']>;
      if (Object.keys(g).some((name) => name in s.guardrails!)) return null;
      s.guardrails = { ...s.guardrails, ...g };
    } else if (k === 'downgrades' && s.downgrades) s.downgrades = [...s.downgrades, ...(v as NonNullable<EnginePolicy['downgrades']>)];
    else if (k in s) return null;
    else (s as Record<string, unknown>)[k] = v;
  }
  return s;
}

const expectCase = (got: ReturnType<typeof decide>, c: RuleCase, policyId: string | null) => {
  expect({ decision: got.decision, rule: got.rule, policy_id: got.policy_id }).toEqual({ decision: c.decision, rule: c.rule, policy_id: c.decision === 'allow' ? null : policyId });
  expect(got.reason).toMatch(c.reason);
};

describe('decide: each rule alone', () => {
  it.each(RULES)('$name → $decision', (c) => {
    const { policies, kills } = stateOf([c]);
    const got = decide(policies, kills, action, context);
    const policyId = c.kill ? null : 'p-1';
    expectCase(got, c, policyId);
    expect([got.intervention_type, got.outcome]).toEqual(INTERVENTION[c.decision]);
    expect(got.policy_name).toBe(policyId && c.decision !== 'allow' ? 'policy 1' : null);
    expect(got.risk_level).toBe(c.risk);
    expect(got.estimated_cost_usd).toBe(COST);
    expect(got.cost_prevented_usd).toBe(STOPS.has(c.decision) ? COST : 0);
    expect(got.policies_evaluated).toBe(c.kill ? 0 : 1);
    expect(got.triggered).toHaveLength(c.decision === 'allow' ? 0 : 1);
  });
});

/** Every unordered pair of rules, the higher-precedence one first. */
const PAIRS = RULES.flatMap((a, i) => RULES.slice(i + 1).map((b) => ({ first: a, second: b, label: `${a.name} over ${b.name}` })));

describe('decide: every precedence pair', () => {
  it('covers every pair of the rules', () => {
    expect(RULES).toHaveLength(22);
    expect(PAIRS).toHaveLength((22 * 21) / 2);
  });

  describe('met by one policy (or a kill switch and a policy): the earlier rule decides', () => {
    it.each(PAIRS)('$label', ({ first, second }) => {
      if (first.kill || second.kill) {
        const { policies, kills } = stateOf([first, second]);
        expectCase(decide(policies, kills, action, context), first, first.kill ? null : 'p-1');
        return;
      }
      const settings = merged(first, second);
      if (!settings) return; // two values of one budget: covered by the two-policy cases below
      expectCase(decide([policy(1, settings)], NO_KILL_SWITCHES, action, context), first, 'p-1');
    });
  });

  describe('met by two policies, the higher-precedence rule in the older one: it decides', () => {
    it.each(PAIRS.filter((p) => !p.first.kill && !p.second.kill))('$label', ({ first, second }) => {
      const got = decide([policy(1, first.settings), policy(2, second.settings)], NO_KILL_SWITCHES, action, context);
      expectCase(got, first, 'p-1');
      // Every policy that does not allow is listed, most restrictive first.
      expect(got.triggered.map((t) => t.policy_id)).toEqual(['p-1', 'p-2'].slice(0, [first, second].filter((c) => c.decision !== 'allow').length));
    });
  });

  describe('met by two policies, the higher-precedence rule in the newer one: the more restrictive decision wins, a tie goes to the older policy', () => {
    it.each(PAIRS.filter((p) => !p.first.kill && !p.second.kill))('$label', ({ first, second }) => {
      // Policies passed newest first: the order of the list must not matter.
      const got = decide([policy(2, first.settings), policy(1, second.settings)], NO_KILL_SWITCHES, action, context);
      if (rank(first.decision) < rank(second.decision)) expectCase(got, first, 'p-2');
      else expectCase(got, second, 'p-1');
    });
  });
});

describe('decide: kill switches', () => {
  it('lists the organisation switch before the agent switch, both before any policy', () => {
    const got = decide([policy(1, { denied_actions: [ACTION] })], switches(true, true), action, context);
    expect(got.triggered.map((t) => t.rule)).toEqual(['organization_kill_switch', 'agent_kill_switch', 'denied_action']);
    expect(got.policy_id).toBeNull();
  });

  it("ignores another agent's engaged switch, a released one, and says no reason when none was given", () => {
    const kills: EngineKillSwitches = { organization: { engaged: false, reason: 'old' }, agents: [{ agent_id: 'agent-2', engaged: true, reason: null }, { agent_id: AGENT, engaged: false, reason: null }] };
    expect(decide([], kills, action, context).decision).toBe('allow');
    const bare = decide([], { organization: { engaged: true, reason: null }, agents: [] }, action, context);
    expect(bare.reason).toBe("the organisation's kill switch is engaged");
  });
});

describe('decide: which policies count', () => {
  it('skips disabled policies', () => {
    const got = decide([policy(1, { enabled: false, denied_actions: [ACTION] })], NO_KILL_SWITCHES, action, context);
    expect(got).toMatchObject({ decision: 'allow', policies_evaluated: 0, reason: 'no kill switch is engaged and no enabled policy applies to agent agent-1' });
  });

  it.each([
    { agent_ids: [], applies: true },
    { agent_ids: [AGENT], applies: true },
    { agent_ids: ['agent-2', AGENT], applies: true },
    { agent_ids: ['agent-2'], applies: false },
  ])('applies a policy scoped to $agent_ids: $applies', ({ agent_ids, applies }) => {
    const got = decide([policy(1, { agent_ids, denied_actions: [ACTION] })], NO_KILL_SWITCHES, action, context);
    expect(got.decision).toBe(applies ? 'block' : 'allow');
    expect(got.policies_evaluated).toBe(applies ? 1 : 0);
  });
});

describe('decide: denied and allowed actions', () => {
  it('blocks an action both denied and allowed by one policy (deny beats allow)', () => {
    expect(decide([policy(1, { denied_actions: [ACTION], allowed_actions: [ACTION] })], NO_KILL_SWITCHES, action, context).rule).toBe('denied_action');
  });

  it("blocks an action one policy allows and another denies: an allow-list grants nothing", () => {
    const got = decide([policy(1, { allowed_actions: [ACTION] }), policy(2, { denied_actions: [ACTION] })], NO_KILL_SWITCHES, action, context);
    expect(got).toMatchObject({ decision: 'block', rule: 'denied_action', policy_id: 'p-2' });
  });

  it('intersects allow-lists: the action must be in each', () => {
    const got = decide([policy(1, { allowed_actions: [ACTION, 'search'] }), policy(2, { allowed_actions: ['search'] })], NO_KILL_SWITCHES, action, context);
    expect(got).toMatchObject({ decision: 'block', rule: 'not_in_allowed_actions', policy_id: 'p-2' });
  });

  it.each([
    { allowed_actions: null, decision: 'allow' },
    { allowed_actions: [], decision: 'block' },
    { allowed_actions: [ACTION], decision: 'allow' },
  ])('allowed_actions $allowed_actions → $decision', ({ allowed_actions, decision }) => {
    expect(decide([policy(1, { allowed_actions })], NO_KILL_SWITCHES, action, context).decision).toBe(decision);
  });

  it('matches action names exactly (case and whole name)', () => {
    expect(decide([policy(1, { denied_actions: ['Send_Email', 'send'] })], NO_KILL_SWITCHES, action, context).decision).toBe('allow');
  });
});

describe('decide: budgets (USD)', () => {
  const at = (spend: number, cost: number | undefined, budget: Partial<EnginePolicy>) =>
    decide([policy(1, budget)], NO_KILL_SWITCHES, { ...action, estimated_cost_usd: cost }, { now: NOW, run_spend_usd: spend, session_spend_usd: spend });

  it.each([
    { case: 'spend + cost equal to the budget is allowed (with a warning)', spend: 10, cost: 10, budget: 20, decision: 'warn' },
    { case: 'a cent over is exceeded', spend: 10, cost: 10.01, budget: 20, decision: 'budget_exceeded' },
    { case: 'float sums are compared with a tolerance: 0.1 + 0.2 fits 0.3', spend: 0.1, cost: 0.2, budget: 0.3, decision: 'warn' },
    { case: 'spend already past the budget stops even a free action', spend: 21, cost: 0, budget: 20, decision: 'budget_exceeded' },
    { case: 'a missing cost counts as 0', spend: 10, cost: undefined, budget: 20, decision: 'allow' },
    { case: 'a zero budget allows a free action', spend: 0, cost: 0, budget: 0, decision: 'allow' },
    { case: 'a zero budget stops any paid action', spend: 0, cost: 0.01, budget: 0, decision: 'budget_exceeded' },
    { case: 'exactly 80% of the budget does not warn', spend: 10, cost: 10, budget: 25, decision: 'allow' },
    { case: 'just past 80% warns', spend: 10, cost: 10.01, budget: 25, decision: 'warn' },
  ])('$case', ({ spend, cost, budget, decision }) => {
    expect(at(spend, cost, { run_budget: budget }).decision).toBe(decision);
    expect(at(spend, cost, { session_budget: budget }).decision).toBe(decision);
  });

  it('counts the session and the run separately', () => {
    const ctx = { now: NOW, session_spend_usd: 100, run_spend_usd: 1 };
    expect(decide([policy(1, { run_budget: 15 })], NO_KILL_SWITCHES, action, ctx).decision).toBe('allow');
    expect(decide([policy(1, { session_budget: 15 })], NO_KILL_SWITCHES, action, ctx).decision).toBe('budget_exceeded');
  });

  it('treats missing spend as 0', () => {
    expect(decide([policy(1, { run_budget: 10, session_budget: 10 })], NO_KILL_SWITCHES, action, { now: NOW }).decision).toBe('warn');
  });
});

describe('decide: rate limits (sliding window over the recent calls)', () => {
  const limited = (calls: DecisionContext['recent_calls'], rate_limits: EnginePolicy['rate_limits']) => decide([policy(1, { rate_limits })], NO_KILL_SWITCHES, action, { now: NOW, recent_calls: calls }).decision;
  const limit = { [ACTION]: { max_calls: 1, window_seconds: 60 } };

  it.each([
    { case: 'a call exactly one window ago has left it', at: NOW - 60_000, decision: 'allow' },
    { case: 'a call 1 ms inside the window counts', at: NOW - 59_999, decision: 'rate_limited' },
    { case: 'a call stamped after now (a skewed clock) counts', at: NOW + 5_000, decision: 'rate_limited' },
  ])('$case', ({ at, decision }) => {
    expect(limited([{ action_name: ACTION, at }], limit)).toBe(decision);
  });

  it('allows the call that reaches max_calls and limits the next one', () => {
    const calls = (n: number) => Array.from({ length: n }, (_, i) => ({ action_name: ACTION, at: NOW - i * 1000 }));
    const three = { [ACTION]: { max_calls: 3, window_seconds: 60 } };
    expect(limited(calls(2), three)).toBe('allow');
    expect(limited(calls(3), three)).toBe('rate_limited');
  });

  it("counts only the action's own calls for its limit, every call for *, and ignores another action's limit", () => {
    const others = [{ action_name: 'search', at: NOW - 1000 }];
    expect(limited(others, limit)).toBe('allow');
    expect(limited(others, { '*': { max_calls: 1, window_seconds: 60 } })).toBe('rate_limited');
    expect(limited([{ action_name: ACTION, at: NOW - 1000 }], { search: { max_calls: 1, window_seconds: 60 } })).toBe('allow');
  });

  it('accepts fractional windows (seconds)', () => {
    expect(limited([{ action_name: ACTION, at: NOW - 400 }], { [ACTION]: { max_calls: 1, window_seconds: 0.5 } })).toBe('rate_limited');
    expect(limited([{ action_name: ACTION, at: NOW - 600 }], { [ACTION]: { max_calls: 1, window_seconds: 0.5 } })).toBe('allow');
  });

  it('treats missing recent calls as none', () => {
    expect(limited(undefined, limit)).toBe('allow');
  });
});

describe('decide: ties, risk, cost prevented, purity', () => {
  it('breaks a tie between policies created at the same time by id', () => {
    const same = (id: string) => ({ ...policy(1, { denied_actions: [ACTION] }), id });
    expect(decide([same('p-b'), same('p-a')], NO_KILL_SWITCHES, action, context).policy_id).toBe('p-a');
  });

  it("carries the action's declared risk level instead of the rule's default, for allow too", () => {
    expect(decide([policy(1, { run_budget: 15 })], NO_KILL_SWITCHES, { ...action, risk_level: 'critical' }, context).risk_level).toBe('critical');
    expect(decide([], NO_KILL_SWITCHES, { ...action, risk_level: 'high' }, context)).toMatchObject({ decision: 'allow', risk_level: 'high' });
  });

  it('answers the same decision for the same input and changes nothing it is given', () => {
    const freeze = <T>(v: T): T => (v && typeof v === 'object' ? (Object.values(v).forEach(freeze), Object.freeze(v)) : v);
    const policies = freeze([policy(2, { approval_required_actions: [ACTION] }), policy(1, { run_budget: 24, rate_limits: { '*': { max_calls: 9, window_seconds: 1 } } })]);
    const ctx = freeze(structuredClone(context));
    const first = decide(policies, freeze(switches(false, false)), freeze({ ...action }), ctx);
    expect(decide(policies, switches(false, false), action, ctx)).toEqual(first);
    expect(first).toMatchObject({ decision: 'escalate', policy_id: 'p-2', cost_prevented_usd: 0 });
    expect(first.triggered.map((t) => t.decision)).toEqual(['escalate', 'warn']);
  });
});

describe('mostRestrictive', () => {
  const order = [...POLICY_DECISIONS];
  it('orders the eleven decisions by the documented precedence', () => {
    expect(order).toEqual(['block', 'pii_blocked', 'content_blocked', 'idempotent_replay', 'escalate', 'budget_exceeded', 'rate_limited', 'loop_detected', 'downgrade', 'warn', 'allow']);
  });

  it.each(order.flatMap((a, i) => order.slice(i + 1).map((b) => [a, b] as const)))('%s over %s, in either argument order', (a, b) => {
    expect(mostRestrictive({ decision: a }, { decision: b }).decision).toBe(a);
    expect(mostRestrictive({ decision: b }, { decision: a }).decision).toBe(a);
  });

  it('keeps the first on a tie', () => {
    const a = { decision: 'downgrade' as const, from: 'sdk' };
    expect(mostRestrictive(a, { decision: 'downgrade', from: 'engine' })).toBe(a);
  });
});

describe('enginePolicy', () => {
  it('fills every absent setting decide() reads with what the policies service stores for it, and keeps the given ones', () => {
    // `auto_kill_switch` is the policies service's rule over counted decisions, not a setting decide() reads: the
    // engine's policy leaves it out.
    const { auto_kill_switch: _alertRule, ...decided } = NEUTRAL;
    expect(enginePolicy('c', '2026-11-24T00:00:00.000Z', { name: 'candidate' })).toEqual({ id: 'c', name: 'candidate', created_at: '2026-11-24T00:00:00.000Z', ...decided });
    const p = enginePolicy('c', '2026-11-24T00:00:00.000Z', { name: 'x', enabled: false, run_budget: 5, allowed_actions: [], rate_limits: { a: { max_calls: 1, window_seconds: 1 } } });
    expect(p).toMatchObject({ enabled: false, run_budget: 5, session_budget: null, allowed_actions: [], rate_limits: { a: { max_calls: 1, window_seconds: 1 } }, denied_actions: [] });
  });
});

describe('decide with a prepared policy set', () => {
  /** Every rule alone and every pair in two policies, plus sets that only name other actions (the fast answer). */
  const sets: EnginePolicy[][] = [
    [],
    ...RULES.filter((c) => !c.kill).map((c) => [policy(1, c.settings)]),
    ...PAIRS.filter((p) => !p.first.kill && !p.second.kill).map((p) => [policy(2, p.first.settings), policy(1, p.second.settings)]),
    [policy(1, { denied_actions: ['drop_table'], approval_required_actions: ['wire_transfer'], rate_limits: { search: { max_calls: 1, window_seconds: 60 } }, downgrades: [{ action: 'search', argument: 'amount', max: 1 }] }), policy(2, { denied_actions: ['delete_records'] })],
    [policy(1, { denied_actions: [ACTION], agent_ids: ['another-agent'] }), policy(2, { approval_required_actions: [ACTION], enabled: false }), policy(3, { denied_actions: ['x'] })],
  ];
  const actions: PolicyAction[] = [action, { ...action, action_name: 'search' }, { ...action, action_name: 'drop_table' }, { ...action, action_name: 'wire_transfer' }, { ...action, agent_id: 'another-agent' }, { agent_id: AGENT, action_name: 'refund', risk_level: 'low' }];
  const kills = [NO_KILL_SWITCHES, switches(true, false), switches(false, true)];

  it('gives the same decision as the array for every rule, pair, action and kill switch', () => {
    let compared = 0;
    for (const policies of sets) {
      const prepared = new PreparedPolicies(policies);
      for (const a of actions) {
        for (const k of kills) {
          expect(decide(prepared, k, a, context), `${JSON.stringify(policies.map((p) => p.id))} ${a.action_name}`).toEqual(decide(policies, k, a, context));
          compared++;
        }
      }
    }
    expect(compared).toBe(sets.length * actions.length * kills.length);
  });

  it('answers an action no policy names without evaluating the policies, and still counts them', () => {
    const policies = [policy(1, { denied_actions: ['drop_table'] }), policy(2, { approval_required_actions: ['wire_transfer'] })];
    const prepared = new PreparedPolicies(policies);
    expect(decide(prepared, NO_KILL_SWITCHES, action, context)).toMatchObject({ decision: 'allow', policies_evaluated: 2, reason: 'no kill switch is engaged and none of the 2 applicable policies stops send_email' });
    // The agent's index is built: a policy record changed in place afterwards is not seen (the policies were not
    // evaluated again), which is why the SDK prepares each new snapshot.
    policies[0].denied_actions = [ACTION];
    const got = decide(prepared, NO_KILL_SWITCHES, action, context);
    expect(got.decision).toBe('allow');
    expect(got.policies_evaluated).toBe(2);
    expect(decide(new PreparedPolicies(policies), NO_KILL_SWITCHES, action, context).decision).toBe('block');
  });

  it('evaluates a policy with period budgets for every action: its budgets name no action, so the fast answer cannot skip it', () => {
    const budgets = [{ scope: 'organization' as const, period: 'month' as const, max_usd: 5 }];
    for (const policies of [[policy(1, { period_budgets: budgets })], [policy(1, { denied_actions: ['drop_table'] }), policy(2, { period_budgets: budgets })]]) {
      const prepared = new PreparedPolicies(policies);
      const got = decide(prepared, NO_KILL_SWITCHES, { ...action, action_name: 'refund' }, context);
      expect(got).toMatchObject({ decision: 'budget_exceeded', rule: 'period_budget', cost_prevented_usd: COST, policies_evaluated: policies.length });
      expect(got).toEqual(decide(policies, NO_KILL_SWITCHES, { ...action, action_name: 'refund' }, context));
    }
    // Empty period budgets stop nothing: the fast answer stands.
    expect(decide(new PreparedPolicies([policy(1, { period_budgets: [] })]), NO_KILL_SWITCHES, { ...action, action_name: 'refund' }, context)).toMatchObject({ decision: 'allow', policies_evaluated: 1 });
  });
});

describe('decide: period budgets (USD per UTC calendar period, without a quota view)', () => {
  const at = (cost: number | undefined, period_budgets: EnginePolicy['period_budgets']) => decide([policy(1, { period_budgets })], NO_KILL_SWITCHES, { ...action, estimated_cost_usd: cost }, { now: NOW, run_spend_usd: 1000, session_spend_usd: 1000 });

  it.each([
    { case: 'a cost equal to max_usd is allowed', cost: 10, max: 10, decision: 'allow' },
    { case: 'a cent over is exceeded', cost: 10.01, max: 10, decision: 'budget_exceeded' },
    { case: 'a missing cost counts as 0', cost: undefined, max: 0, decision: 'allow' },
    { case: 'a zero budget stops any paid action', cost: 0.01, max: 0, decision: 'budget_exceeded' },
  ])('$case', ({ cost, max, decision }) => {
    for (const scope of ['agent', 'organization'] as const) for (const period of ['hour', 'day', 'month'] as const) expect(at(cost, [{ scope, period, max_usd: max }]).decision).toBe(decision);
  });

  it('names the period and whose budget it is, prevents the cost, and checks the budgets in their order', () => {
    const got = at(10, [{ scope: 'agent', period: 'day', max_usd: 50 }, { scope: 'organization', period: 'hour', max_usd: 4 }, { scope: 'agent', period: 'month', max_usd: 3 }]);
    expect(got).toMatchObject({ decision: 'budget_exceeded', rule: 'period_budget', intervention_type: 'budget_exceeded', outcome: 'blocked', cost_prevented_usd: 10, risk_level: 'medium' });
    expect(got.reason).toBe('send_email 10 USD would exceed the organisation\'s budget of 4 USD per hour (UTC) of policy "policy 1": 4 USD of it is left this hour');
  });

  it('sits with the budgets: after the session budget, before the rate limits', () => {
    const both = policy(1, { session_budget: 15, period_budgets: [{ scope: 'agent', period: 'day', max_usd: 5 }], rate_limits: { [ACTION]: { max_calls: 1, window_seconds: 60 } } });
    expect(decide([both], NO_KILL_SWITCHES, action, context).rule).toBe('session_budget');
    expect(decide([{ ...both, session_budget: null }], NO_KILL_SWITCHES, action, context).rule).toBe('period_budget');
    expect(decide([{ ...both, session_budget: null, period_budgets: [] }], NO_KILL_SWITCHES, action, context).rule).toBe('rate_limit');
  });
});
