/**
 * Fleet-wide limits in the engine, tested pure: what an action needs of each limit (`quotaNeeds`), the windows of the
 * counters (`periodWindow`, `rateWindow`, `quotaWindow`), a limit's value (`quotaLimitOf`), the lease slice rule
 * (`leaseSlice`), and `decide` with a quota view: period, run and session budgets compared with what the view has
 * left, `agent`/`organization` rate limits stopped when less than a call is left, `process` (and scope-less) limits
 * counting the recent calls whatever the view says. No I/O.
 */
import { describe, expect, it } from 'vitest';
import { QUOTA_SLICE_FRACTION, RUN_BUDGET_LIMIT, SESSION_BUDGET_LIMIT, periodBudgetLimit, rateLimitLimit, type PeriodBudget } from '@agp/contracts';
import {
  decide,
  enginePolicy,
  fleetCounted,
  leaseSlice,
  NO_KILL_SWITCHES,
  periodWindow,
  quotaLimitOf,
  quotaNeeds,
  quotaWindow,
  rateWindow,
  type DecisionContext,
  type EnginePolicy,
  type PolicyAction,
  type QuotaView,
} from '../src/index.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const AGENT = 'agent-1';
const ACTION = 'send_email';
const COST = 10;
const action: PolicyAction = { agent_id: AGENT, action_name: ACTION, estimated_cost_usd: COST };
const DAY: PeriodBudget = { scope: 'agent', period: 'day', max_usd: 200 };
const MONTH: PeriodBudget = { scope: 'organization', period: 'month', max_usd: 5000 };

/** A policy that stops nothing unless `settings` say so. */
const policy = (id: string, settings: Partial<EnginePolicy> = {}): EnginePolicy => ({ ...enginePolicy(id, '2026-11-01T00:00:00.000Z', { name: id }), ...settings });

/** A quota view answering `left[policy id][limit]` (undefined elsewhere), recording each question. */
function view(left: Record<string, Record<string, number>>): QuotaView & { asked: string[] } {
  const asked: string[] = [];
  const f = ((policyId: string, limit: string) => {
    asked.push(`${policyId} ${limit}`);
    return left[policyId]?.[limit];
  }) as QuotaView & { asked: string[] };
  f.asked = asked;
  return f;
}

const decideWith = (p: EnginePolicy, context: Partial<DecisionContext> = {}, a: PolicyAction = action) => decide([p], NO_KILL_SWITCHES, a, { now: NOW, ...context });

describe('quotaNeeds', () => {
  const full = policy('p-1', {
    run_budget: 50,
    session_budget: 100,
    period_budgets: [DAY, MONTH],
    rate_limits: {
      [ACTION]: { max_calls: 100, window_seconds: 60, scope: 'agent' },
      '*': { max_calls: 1000, window_seconds: 3600, scope: 'organization' },
      search: { max_calls: 5, window_seconds: 60, scope: 'agent' },
    },
  });

  it('lists the run, session and period budgets with the cost, then each fleet-counted rate limit of the action and * with one call', () => {
    expect(quotaNeeds([full], AGENT, ACTION, COST, { runId: 'r-1', sessionId: 's-1' })).toEqual([
      { policy_id: 'p-1', limit: RUN_BUDGET_LIMIT, unit: 'usd', scope: 'run', limit_value: 50, need: COST },
      { policy_id: 'p-1', limit: SESSION_BUDGET_LIMIT, unit: 'usd', scope: 'session', limit_value: 100, need: COST },
      { policy_id: 'p-1', limit: 'period_budget:agent:day', unit: 'usd', scope: 'agent', limit_value: 200, need: COST },
      { policy_id: 'p-1', limit: 'period_budget:organization:month', unit: 'usd', scope: 'organization', limit_value: 5000, need: COST },
      { policy_id: 'p-1', limit: 'rate_limit:send_email', unit: 'calls', scope: 'agent', limit_value: 100, need: 1 },
      { policy_id: 'p-1', limit: 'rate_limit:*', unit: 'calls', scope: 'organization', limit_value: 1000, need: 1 },
    ]);
  });

  it('needs the run budget only with a run id and the session budget only with a session id', () => {
    const limits = (ids: { runId?: string | null; sessionId?: string | null }) => quotaNeeds([full], AGENT, ACTION, COST, ids).map((n) => n.limit);
    expect(limits({})).not.toContain(RUN_BUDGET_LIMIT);
    expect(limits({ runId: null, sessionId: null })).not.toContain(SESSION_BUDGET_LIMIT);
    expect(limits({ runId: 'r-1' })).toEqual([RUN_BUDGET_LIMIT, 'period_budget:agent:day', 'period_budget:organization:month', 'rate_limit:send_email', 'rate_limit:*']);
    expect(limits({ sessionId: 's-1' })).toEqual([SESSION_BUDGET_LIMIT, 'period_budget:agent:day', 'period_budget:organization:month', 'rate_limit:send_email', 'rate_limit:*']);
  });

  it('a free action needs no budget, only its calls', () => {
    expect(quotaNeeds([full], AGENT, ACTION, 0, { runId: 'r-1', sessionId: 's-1' }).map((n) => [n.limit, n.need])).toEqual([
      ['rate_limit:send_email', 1],
      ['rate_limit:*', 1],
    ]);
  });

  it('leaves out process-scoped and scope-less rate limits, disabled policies and policies of other agents; keeps policy order', () => {
    const local = policy('p-2', { rate_limits: { [ACTION]: { max_calls: 1, window_seconds: 1, scope: 'process' }, '*': { max_calls: 1, window_seconds: 1 } } });
    const disabled = policy('p-3', { enabled: false, period_budgets: [DAY] });
    const other = policy('p-4', { agent_ids: ['agent-2'], period_budgets: [DAY] });
    const mine = policy('p-5', { agent_ids: [AGENT, 'agent-2'], period_budgets: [MONTH] });
    const needs = quotaNeeds([mine, local, disabled, other, full], AGENT, ACTION, COST, {});
    expect(needs.map((n) => `${n.policy_id} ${n.limit}`)).toEqual([
      'p-5 period_budget:organization:month',
      'p-1 period_budget:agent:day',
      'p-1 period_budget:organization:month',
      'p-1 rate_limit:send_email',
      'p-1 rate_limit:*',
    ]);
    expect(quotaNeeds([local, disabled, other], AGENT, ACTION, COST, { runId: 'r', sessionId: 's' })).toEqual([]);
  });

  it('counts a rate limit of another action for that action only', () => {
    expect(quotaNeeds([full], AGENT, 'search', 0, {}).map((n) => n.limit)).toEqual(['rate_limit:search', 'rate_limit:*']);
  });
});

describe('periodWindow (UTC calendar)', () => {
  const w = (period: 'hour' | 'day' | 'month', at: string) => {
    const { start, end } = periodWindow(period, Date.parse(at));
    return [new Date(start).toISOString(), new Date(end).toISOString()];
  };
  it('is the clock hour, the day from 00:00 and the month from its first day', () => {
    expect(w('hour', '2026-11-28T17:22:55.123Z')).toEqual(['2026-11-28T17:00:00.000Z', '2026-11-28T18:00:00.000Z']);
    expect(w('day', '2026-11-28T17:22:55.123Z')).toEqual(['2026-11-28T00:00:00.000Z', '2026-11-29T00:00:00.000Z']);
    expect(w('month', '2026-11-28T17:22:55.123Z')).toEqual(['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
  });
  it('turns at the end of a day, a month and a year', () => {
    expect(w('hour', '2026-12-31T23:59:59.999Z')).toEqual(['2026-12-31T23:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(w('day', '2026-12-31T23:59:59.999Z')).toEqual(['2026-12-31T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(w('month', '2026-12-31T23:59:59.999Z')).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(w('month', '2027-01-01T00:00:00.000Z')).toEqual(['2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z']);
    expect(w('day', '2027-01-01T00:00:00.000Z')).toEqual(['2027-01-01T00:00:00.000Z', '2027-01-02T00:00:00.000Z']);
    expect(w('month', '2028-02-29T12:00:00.000Z')).toEqual(['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
    expect(w('day', '2026-03-29T01:30:00.000Z')).toEqual(['2026-03-29T00:00:00.000Z', '2026-03-30T00:00:00.000Z']);
  });
  it('holds `now`: start ≤ now < end, for every period', () => {
    for (const period of ['hour', 'day', 'month'] as const) {
      for (let t = Date.parse('2026-12-31T20:00:00Z'); t < Date.parse('2027-01-01T04:00:00Z'); t += 17 * 60_000 + 1) {
        const { start, end } = periodWindow(period, t);
        expect(start <= t && t < end, `${period} ${new Date(t).toISOString()}`).toBe(true);
      }
    }
  });
});

describe('rateWindow (fixed windows aligned to the epoch)', () => {
  it('starts at a multiple of the window and ends one window later, holding now', () => {
    const now = 1_795_000_123_456;
    const { start, end } = rateWindow(60, now);
    expect(start % 60_000).toBe(0);
    expect(end - start).toBe(60_000);
    expect(start <= now && now < end).toBe(true);
  });
  it('is the same window for two clocks inside it, and the next one from its end', () => {
    const a = rateWindow(10, NOW + 1);
    expect(rateWindow(10, NOW + 9_999)).toEqual(a);
    expect(rateWindow(10, a.end)).toEqual({ start: a.end, end: a.end + 10_000 });
    expect(rateWindow(10, a.start)).toEqual(a);
  });
  it('takes fractional seconds', () => {
    expect(rateWindow(0.5, 1_250)).toEqual({ start: 1_000, end: 1_500 });
  });
});

describe('quotaWindow and quotaLimitOf', () => {
  const p = policy('p-1', { run_budget: 5, period_budgets: [DAY], rate_limits: { a: { max_calls: 3, window_seconds: 60, scope: 'organization' }, b: { max_calls: 3, window_seconds: 60, scope: 'process' } } });
  it('gives each fleet-counted limit its window and value; none for a budget without window or a limit the policy lacks', () => {
    expect(quotaWindow(p, RUN_BUDGET_LIMIT, NOW)).toBeNull();
    expect(quotaWindow(p, SESSION_BUDGET_LIMIT, NOW)).toBeUndefined();
    expect(quotaWindow(p, periodBudgetLimit('agent', 'day'), NOW)).toEqual(periodWindow('day', NOW));
    expect(quotaWindow(p, periodBudgetLimit('agent', 'hour'), NOW)).toBeUndefined();
    expect(quotaWindow(p, rateLimitLimit('a'), NOW)).toEqual(rateWindow(60, NOW));
    expect(quotaWindow(p, rateLimitLimit('b'), NOW)).toBeUndefined();
    expect(quotaLimitOf(p, RUN_BUDGET_LIMIT)).toEqual({ value: 5, unit: 'usd', scope: 'run' });
    expect(quotaLimitOf(p, periodBudgetLimit('agent', 'day'))).toEqual({ value: 200, unit: 'usd', scope: 'agent' });
    expect(quotaLimitOf(p, rateLimitLimit('a'))).toEqual({ value: 3, unit: 'calls', scope: 'organization' });
    expect(quotaLimitOf(p, rateLimitLimit('b'))).toBeUndefined();
    expect(quotaLimitOf(p, rateLimitLimit('c'))).toBeUndefined();
  });
  it('counts agent and organization rate limits for the fleet, process and scope-less ones per process', () => {
    expect([fleetCounted({ max_calls: 1, window_seconds: 1, scope: 'agent' }), fleetCounted({ max_calls: 1, window_seconds: 1, scope: 'organization' })]).toEqual([true, true]);
    expect([fleetCounted({ max_calls: 1, window_seconds: 1, scope: 'process' }), fleetCounted({ max_calls: 1, window_seconds: 1 })]).toEqual([false, false]);
  });
});

describe('leaseSlice', () => {
  const usd = (limit_value: number, committed: number, need: number, others = 0) => leaseSlice({ limit_value, committed, need, others, unit: 'usd' });
  const calls = (limit_value: number, committed: number, need: number, others = 0) => leaseSlice({ limit_value, committed, need, others, unit: 'calls' });

  it('grants nothing when the need is above what remains (whole or not at all)', () => {
    expect(usd(100, 99, 2)).toBe(0);
    expect(usd(100, 100, 0.01)).toBe(0);
    expect(calls(50, 50, 1)).toBe(0);
  });
  it('grants at most the slice fraction of the limit, unless one need is bigger', () => {
    expect(QUOTA_SLICE_FRACTION).toBe(0.05);
    expect(usd(100, 0, 0)).toBe(5);
    expect(usd(100, 0, 1)).toBe(5);
    expect(usd(100, 0, 20)).toBe(20);
    expect(usd(1, 0, 0.01)).toBeCloseTo(0.05, 12);
  });
  it('shrinks the share as the remainder shrinks and as holders multiply', () => {
    expect(usd(100, 90, 0)).toBe(5);
    expect(usd(100, 96, 0)).toBe(2);
    expect(usd(100, 99, 0)).toBe(0.5);
    expect(usd(100, 90, 0, 3)).toBe(2);
    expect(usd(100, 90, 0, 8)).toBe(1);
    const shares = [0, 1, 3, 7, 15].map((others) => usd(100, 80, 0, others));
    expect(shares).toEqual([...shares].sort((a, b) => b - a));
    expect(new Set(shares).size).toBe(shares.length - 1); // 0 and 1 other holder both get the 5 % cap
  });
  it('never grants above what remains, nor below the need it grants', () => {
    for (const limit of [1, 10, 100, 5000]) {
      for (const frac of [0, 0.5, 0.9, 0.99, 0.999, 1]) {
        for (const need of [0, 0.001, 0.01, 1, 10]) {
          for (const others of [0, 1, 4, 50]) {
            const committed = limit * frac;
            const g = usd(limit, committed, need, others);
            const remaining = limit - committed;
            expect(g, `${limit} ${committed} ${need} ${others}`).toBeLessThanOrEqual(remaining + 1e-9);
            expect(g === 0 || g >= need).toBe(true);
            if (g === 0) expect(need > remaining + 1e-9 || remaining / (others + 2) <= 0).toBe(true);
            if (g > need) expect(g).toBeLessThanOrEqual(QUOTA_SLICE_FRACTION * limit + 1e-9);
          }
        }
      }
    }
  });
  it('hands out whole calls: the share rounds down, at least the need', () => {
    expect(calls(50, 0, 0)).toBe(2);
    expect(calls(1000, 0, 1)).toBe(50);
    expect(calls(10, 0, 1)).toBe(1);
    expect(calls(100, 97, 1)).toBe(1);
    expect(calls(100, 97, 3)).toBe(3);
    for (const committed of [0, 10, 45, 49]) for (const others of [0, 2, 9]) expect(Number.isInteger(calls(50, committed, 1, others))).toBe(true);
  });
});

describe('decide with a quota view', () => {
  it('period budgets without a view: the cost above max_usd is budget_exceeded naming the period, with the cost prevented', () => {
    const d = decideWith(policy('p-1', { period_budgets: [{ scope: 'agent', period: 'day', max_usd: 5 }] }));
    expect(d).toMatchObject({ decision: 'budget_exceeded', rule: 'period_budget', policy_id: 'p-1', intervention_type: 'budget_exceeded', cost_prevented_usd: COST });
    expect(d.reason).toMatch(/agent agent-1's budget of 5 USD per day \(UTC\)/);
    expect(decideWith(policy('p-1', { period_budgets: [{ scope: 'agent', period: 'day', max_usd: COST }] })).decision).toBe('allow');
  });

  it('period budgets with a view: the cost above what is left this period stops the action; at most what is left passes', () => {
    const p = policy('p-1', { period_budgets: [DAY, MONTH] });
    const low = view({ 'p-1': { 'period_budget:agent:day': 50, 'period_budget:organization:month': 3 } });
    const d = decideWith(p, { quota: low });
    expect(d).toMatchObject({ decision: 'budget_exceeded', rule: 'period_budget', cost_prevented_usd: COST });
    expect(d.reason).toMatch(/the organisation's budget of 5000 USD per month \(UTC\).*3 USD of it is left this month/);
    expect(low.asked).toEqual(['p-1 period_budget:agent:day', 'p-1 period_budget:organization:month']);
    expect(decideWith(p, { quota: view({ 'p-1': { 'period_budget:agent:day': COST, 'period_budget:organization:month': 4000 } }) }).decision).toBe('allow');
    const spent = decideWith(p, { quota: view({ 'p-1': { 'period_budget:agent:day': -2, 'period_budget:organization:month': 4000 } }) });
    expect(spent.reason).toMatch(/per day \(UTC\).*0 USD of it is left this day/);
    // A limit the view does not answer for: the budget itself.
    expect(decideWith(policy('p-1', { period_budgets: [{ ...DAY, max_usd: 5 }] }), { quota: view({}) }).decision).toBe('budget_exceeded');
  });

  it.each([
    { rule: 'run_budget', settings: { run_budget: 100 } },
    { rule: 'session_budget', settings: { session_budget: 100 } },
  ] as const)('$rule with a view: the cost above what the fleet has left is budget_exceeded, at most it is allowed', ({ rule, settings }) => {
    const p = policy('p-1', settings);
    const d = decideWith(p, { quota: view({ 'p-1': { [rule]: 5 } }) });
    expect(d).toMatchObject({ decision: 'budget_exceeded', rule, cost_prevented_usd: COST });
    expect(d.reason).toMatch(/5 USD of it is left for the fleet/);
    expect(decideWith(p, { quota: view({ 'p-1': { [rule]: COST } }) }).decision).toBe('allow');
    // The view, not the spend in the context, decides while it answers; without an answer, the spend does.
    expect(decideWith(p, { quota: view({ 'p-1': { [rule]: 50 } }), run_spend_usd: 95, session_spend_usd: 95 }).decision).not.toBe('budget_exceeded');
    expect(decideWith(p, { quota: view({}), run_spend_usd: 95, session_spend_usd: 95 }).decision).toBe('budget_exceeded');
  });

  it('agent and organization rate limits with a view: less than one call left is rate_limited, one or more passes whatever the recent calls', () => {
    const recent = Array.from({ length: 5 }, (_, i) => ({ action_name: ACTION, at: NOW - i * 1000 }));
    for (const scope of ['agent', 'organization'] as const) {
      const p = policy('p-1', { rate_limits: { [ACTION]: { max_calls: 3, window_seconds: 60, scope } } });
      const d = decideWith(p, { quota: view({ 'p-1': { 'rate_limit:send_email': 0 } }) });
      expect(d).toMatchObject({ decision: 'rate_limited', rule: 'rate_limit', cost_prevented_usd: COST });
      expect(d.reason).toMatch(scope === 'agent' ? /agent agent-1's calls of send_email reach the limit of 3 per 60 s/ : /the organisation's calls of send_email/);
      expect(decideWith(p, { quota: view({ 'p-1': { 'rate_limit:send_email': 0.5 } }) }).decision).toBe('rate_limited');
      expect(decideWith(p, { quota: view({ 'p-1': { 'rate_limit:send_email': 1 } }), recent_calls: recent }).decision).toBe('allow');
      // Without an answer for the limit (or without a view), the recent calls count.
      expect(decideWith(p, { quota: view({}), recent_calls: recent }).decision).toBe('rate_limited');
      expect(decideWith(p, { recent_calls: recent }).decision).toBe('rate_limited');
    }
    const star = policy('p-1', { rate_limits: { '*': { max_calls: 3, window_seconds: 60, scope: 'agent' } } });
    expect(decideWith(star, { quota: view({ 'p-1': { 'rate_limit:*': 0 } }) }).reason).toMatch(/calls of any action/);
  });

  it('a process-scoped or scope-less rate limit ignores the view and counts the recent calls', () => {
    const empty = view({ 'p-1': { 'rate_limit:send_email': 0 } });
    for (const limit of [{ max_calls: 3, window_seconds: 60, scope: 'process' as const }, { max_calls: 3, window_seconds: 60 }]) {
      const p = policy('p-1', { rate_limits: { [ACTION]: limit } });
      expect(decideWith(p, { quota: empty, recent_calls: [{ action_name: ACTION, at: NOW - 1000 }] }).decision).toBe('allow');
      expect(decideWith(p, { quota: empty, recent_calls: Array.from({ length: 3 }, (_, i) => ({ action_name: ACTION, at: NOW - i * 1000 })) }).decision).toBe('rate_limited');
    }
    expect(empty.asked).toEqual([]);
  });
});
