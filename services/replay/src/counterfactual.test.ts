import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY_DECISIONS, type LedgerEntry, type PolicyDecisionKind } from '@agp/contracts';
import { enginePolicy, type EnginePolicy } from '@agp/policy-engine';
import { startMemoryTracing, type MemoryTracing } from '../../../test/support/spans.js';
import { replayDecisions } from './counterfactual.js';

/**
 * The pure stepping of counterfactual evaluation (`replayDecisions`, docs/replay.md): a small recorded run decided
 * again step by step, with the state at each step rebuilt from the earlier steps the counterfactual lets through.
 */
const AGENT = 'billing-bot';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

/** Policy `pol-1` "Guard" (or `id`), created 2026-01-01, stopping nothing but what `over` sets. */
const policy = (over: Partial<EnginePolicy> = {}): EnginePolicy => enginePolicy(over.id ?? 'pol-1', '2026-01-01T00:00:00.000Z', { name: 'Guard', ...over });

let n = 0;
/** A recorded action `seconds` after T0; costs in USD (null = not recorded). */
function recorded(seconds: number, action_name: string, cost: { est?: number; actual?: number }, status: LedgerEntry['status'] = 'success'): LedgerEntry {
  return {
    id: `act-${++n}`,
    run_id: 'run-1',
    agent_id: AGENT,
    action_name,
    status,
    timestamp: new Date(T0 + seconds * 1000).toISOString(),
    cost_usd: cost.est ?? null,
    actual_cost_usd: cost.actual ?? null,
    duration_ms: 5,
    inputs: {},
    outputs: null,
    error: null,
    purpose: 'production',
  };
}

const byDecision = (counts: Partial<Record<PolicyDecisionKind, number>>) => Object.fromEntries(POLICY_DECISIONS.map((d) => [d, counts[d] ?? 0]));

describe('replayDecisions: a recorded run decided again, step by step', () => {
  // run_budget 5 USD (warns past 80% = 4 USD), at most 2 send_email per 60 s, delete_records denied.
  const guard = policy({ run_budget: 5, denied_actions: ['delete_records'], rate_limits: { send_email: { max_calls: 2, window_seconds: 60 } } });
  const run = [
    recorded(0, 'send_email', { est: 1 }), //                   spend 0 + 1 = 1; 0 calls in the window → allow
    recorded(10, 'send_email', { est: 1, actual: 2 }), //       its cost is the actual 2 USD; 1 call in the window → allow
    recorded(20, 'send_email', { est: 0.5 }), //                2 calls (t 0, 10) in the last 60 s → rate_limited
    recorded(30, 'delete_records', { est: 2, actual: 3 }), //   denied → block
    recorded(65, 'send_email', { est: 0.5 }), //                window (5 s, 65 s]: t 10 only (the stopped t 20 never counted) → allow
    recorded(80, 'generate_report', { est: 1, actual: 1.5 }), // 3.5 + 1.5 = 5 = the budget (allowed), past 80% → warn
    recorded(90, 'lookup', { est: 0.25 }, 'blocked'), //        5 + 0.25 > 5 → budget_exceeded (recorded as blocked)
    recorded(95, 'generate_report', { est: 2 }), //             5 + 2 > 5 → budget_exceeded
  ];
  const { steps, totals } = replayDecisions([guard], AGENT, run);

  it('answers each step: decision, rule, policy, its cost (actual where reported, else estimate) and what it prevents', () => {
    expect(steps.map((s) => [s.step, s.action_name, s.decision, s.rule, s.cost_usd, s.prevented_usd])).toEqual([
      [0, 'send_email', 'allow', null, 1, 0],
      [1, 'send_email', 'allow', null, 2, 0],
      [2, 'send_email', 'rate_limited', 'rate_limit', 0.5, 0.5],
      [3, 'delete_records', 'block', 'denied_action', 3, 3],
      [4, 'send_email', 'allow', null, 0.5, 0],
      [5, 'generate_report', 'warn', 'budget_warning', 1.5, 0],
      [6, 'lookup', 'budget_exceeded', 'run_budget', 0.25, 0.25],
      [7, 'generate_report', 'budget_exceeded', 'run_budget', 2, 2],
    ]);
    expect(steps[2]).toMatchObject({ action_id: run[2].id, timestamp: run[2].timestamp, recorded_status: 'success', policy_id: 'pol-1', policy_name: 'Guard', reason: '2 calls of send_email in the last 60 s reach the limit of 2 of policy "Guard"' });
    expect(steps[6]).toMatchObject({ recorded_status: 'blocked', reason: 'run spend 5 USD + lookup 0.25 USD would exceed the run budget of 5 USD of policy "Guard"' });
    expect(steps[0]).toMatchObject({ policy_id: null, policy_name: null });
  });

  it('totals: prevented USD, what was actually spent (recorded blocked actions spent nothing), what would be spent, the difference', () => {
    expect(totals).toEqual({
      steps: 8,
      by_decision: byDecision({ allow: 3, rate_limited: 1, block: 1, warn: 1, budget_exceeded: 2 }),
      prevented_usd: 0.5 + 3 + 0.25 + 2,
      actually_spent_usd: 1 + 2 + 0.5 + 3 + 0.5 + 1.5 + 2,
      would_spend_usd: 1 + 2 + 0.5 + 1.5,
      difference_usd: 5 - 10.5,
    });
  });

  it('a rate-limit window counts only the earlier calls of the same run that went through, and slides with the timestamps', () => {
    const limit = policy({ rate_limits: { '*': { max_calls: 1, window_seconds: 10 } } });
    const r = replayDecisions([limit], AGENT, [recorded(0, 'a', { est: 1 }), recorded(5, 'b', { est: 1 }), recorded(9, 'a', { est: 1 }), recorded(10.5, 'b', { est: 1 })]);
    // t 5 and t 9: the call at t 0 is within 10 s; t 10.5: the window (0.5 s, 10.5 s] holds no call that went through.
    expect(r.steps.map((s) => s.decision)).toEqual(['allow', 'rate_limited', 'rate_limited', 'allow']);
    expect(r.totals).toMatchObject({ prevented_usd: 2, actually_spent_usd: 4, would_spend_usd: 2, difference_usd: -2 });
  });

  it('a budget is checked against the spend the counterfactual lets through, so a stopped step leaves room for a later one', () => {
    const budget = policy({ run_budget: 3 });
    const r = replayDecisions([budget], AGENT, [recorded(0, 'big', { est: 1, actual: 2.5 }), recorded(1, 'huge', { actual: 4 }), recorded(2, 'small', { est: 0.5 })]);
    // 0 + 2.5 ≤ 3 (past 80% → warn); 2.5 + 4 > 3 → stopped; 2.5 + 0.5 = 3 ≤ 3 → warn again (the 4 USD never counted).
    expect(r.steps.map((s) => [s.decision, s.cost_usd])).toEqual([
      ['warn', 2.5],
      ['budget_exceeded', 4],
      ['warn', 0.5],
    ]);
    expect(r.totals).toMatchObject({ prevented_usd: 4, actually_spent_usd: 7, would_spend_usd: 3, difference_usd: -4 });
  });

  it('an escalated step counts as approved (adds spend and a call); disabled policies and other agents’ policies are skipped', () => {
    const approval = policy({ approval_required_actions: ['refund'], run_budget: 1 });
    const off = policy({ id: 'pol-off', enabled: false, denied_actions: ['refund'] });
    const other = policy({ id: 'pol-other', agent_ids: ['someone-else'], denied_actions: ['refund'] });
    const r = replayDecisions([approval, off, other], AGENT, [recorded(0, 'refund', { est: 1 }), recorded(1, 'lookup', { est: 0.5 })]);
    expect(r.steps.map((s) => [s.decision, s.policy_id])).toEqual([
      ['escalate', 'pol-1'],
      ['budget_exceeded', 'pol-1'],
    ]);
    expect(r.totals).toMatchObject({ prevented_usd: 0.5, actually_spent_usd: 1.5, would_spend_usd: 1, difference_usd: -0.5 });
  });

  it('no policy: every step allowed, nothing prevented, no difference; an empty run has zero totals', () => {
    const r = replayDecisions([], AGENT, run);
    expect(r.totals).toMatchObject({ steps: 8, by_decision: byDecision({ allow: 8 }), prevented_usd: 0, actually_spent_usd: 10.5, would_spend_usd: 10.75, difference_usd: 0.25 });
    expect(replayDecisions([guard], AGENT, []).totals).toEqual({ steps: 0, by_decision: byDecision({}), prevented_usd: 0, actually_spent_usd: 0, would_spend_usd: 0, difference_usd: 0 });
  });

  it('sums costs below a micro-dollar exactly and rounds the totals once (float noise gone)', () => {
    // 25 steps of 0.4 micro-dollars (a few tokens): rounding each partial sum to the micro-dollar would leave 0.
    const tokens = Array.from({ length: 25 }, (_, i) => recorded(i, 'complete', { est: 4e-7 }));
    expect(replayDecisions([], AGENT, tokens).totals).toMatchObject({ actually_spent_usd: 0.00001, would_spend_usd: 0.00001, difference_usd: 0 });
    const tenths = [0.1, 0.2].map((est, i) => recorded(i, 'lookup', { est }));
    expect(replayDecisions([], AGENT, tenths).totals).toMatchObject({ actually_spent_usd: 0.3, would_spend_usd: 0.3 });
  });
});

describe('replayDecisions: the guardrails and downgrades see the recorded inputs', () => {
  const withInputs = (seconds: number, name: string, inputs: Record<string, unknown>): LedgerEntry => ({ ...recorded(seconds, name, { est: 1 }), inputs });

  it('a loop of identical calls is stopped at threshold + 1, a repeated idempotent call replayed, PII blocked, an amount downgraded', () => {
    const guard = policy({
      guardrails: { loop: { mode: 'block', threshold: 2, window_seconds: 60 }, idempotency: { actions: ['send_email'], ttl_seconds: 3600 }, pii: { mode: 'block', categories: ['email'] } },
      downgrades: [{ action: 'refund', argument: 'amount', max: 100 }],
    });
    const run = [
      withInputs(0, 'search', { q: 'x', page: 1 }),
      withInputs(1, 'search', { page: 1, q: 'x' }),
      withInputs(2, 'search', { q: 'x', page: 1 }), // third identical call, threshold 2 → loop_detected
      withInputs(3, 'send_email', { to: 'ops' }),
      withInputs(4, 'send_email', { to: 'ops' }), // same arguments hash within the TTL → idempotent_replay
      withInputs(5, 'notify', { note: 'mail jane.doe@example.com' }),
      withInputs(6, 'refund', { amount: 250 }),
    ];
    const { steps, totals } = replayDecisions([guard], AGENT, run);
    expect(steps.map((s) => [s.action_name, s.decision, s.prevented_usd])).toEqual([
      ['search', 'allow', 0],
      ['search', 'allow', 0],
      ['search', 'loop_detected', 1],
      ['send_email', 'allow', 0],
      ['send_email', 'idempotent_replay', 1],
      ['notify', 'pii_blocked', 1],
      ['refund', 'downgrade', 0],
    ]);
    expect(totals.by_decision).toEqual(byDecision({ allow: 3, loop_detected: 1, idempotent_replay: 1, pii_blocked: 1, downgrade: 1 }));
    expect(totals.prevented_usd).toBe(3);
  });
});

describe('replayDecisions: each step is a policy.decide span (in-memory exporter)', () => {
  let tracing: MemoryTracing;
  beforeAll(() => {
    tracing = startMemoryTracing();
  });
  afterAll(() => tracing.stop());

  it('with the counterfactual source, the tool, the agent and the decision, never the recorded inputs', () => {
    const guard = policy({ denied_actions: ['delete_records'], guardrails: { pii: { mode: 'block', categories: ['email'] } } });
    const inputs = (seconds: number, name: string, args: Record<string, unknown>): LedgerEntry => ({ ...recorded(seconds, name, { est: 1 }), inputs: args });
    replayDecisions([guard], AGENT, [inputs(0, 'lookup', { q: 'parcel 7' }), inputs(1, 'delete_records', { table: 'users' }), inputs(2, 'notify', { note: 'mail jane.doe@example.com' })]);
    const spans = tracing.spans().filter((s) => s.name === 'policy.decide');
    const subject = (tool: string) => ({ 'agp.decision.source': 'counterfactual', 'gen_ai.tool.name': tool, 'gen_ai.agent.id': AGENT });
    expect(spans.map((s) => s.attributes)).toEqual([
      { ...subject('lookup'), 'agp.decision': 'allow' },
      { ...subject('delete_records'), 'agp.decision': 'block', 'agp.decision.rule': 'denied_action', 'agp.decision.policy_id': 'pol-1', 'agp.decision.intervention_type': 'hard_block' },
      { ...subject('notify'), 'agp.decision': 'pii_blocked', 'agp.decision.rule': 'pii_guardrail', 'agp.decision.policy_id': 'pol-1', 'agp.decision.intervention_type': 'pii_blocked' },
    ]);
    const text = JSON.stringify(spans.map((s) => [s.attributes, s.events]));
    for (const value of ['parcel 7', 'users', 'jane.doe']) expect(text).not.toContain(value);
  });
});
