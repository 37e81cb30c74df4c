/**
 * Fleet-wide limits, pure: which of a policy set's limits an action counts against and how much it needs of each
 * ({@link quotaNeeds}), the window a limit's counter belongs to ({@link quotaWindow}), and the lease slice rule the
 * granting service applies ({@link leaseSlice}). No I/O and no clock: `now` comes in. The agent SDK, the decision
 * API and the granting service run the same functions, so they agree on what a limit is and when its window turns.
 * Source: docs/sdk.md (Fleet-wide limits); docs/decisions.md (Leases, not a check per action).
 */
import {
  QUOTA_SLICE_FRACTION,
  RATE_LIMIT_ANY_ACTION,
  RUN_BUDGET_LIMIT,
  SESSION_BUDGET_LIMIT,
  periodBudgetLimit,
  rateLimitLimit,
  type BudgetPeriod,
  type PeriodBudget,
  type QuotaUnit,
  type RateLimitScope,
} from '@agp/contracts';

/** A rate limit as the engine reads it: a limit without `scope` counts per process (a record written before scopes). */
export interface EngineRateLimit {
  max_calls: number;
  window_seconds: number;
  scope?: RateLimitScope;
}

/** The policy fields the quota functions read (an `EnginePolicy` fits). */
export interface QuotaPolicy {
  id: string;
  enabled: boolean;
  agent_ids: readonly string[];
  session_budget: number | null;
  run_budget: number | null;
  rate_limits: Readonly<Record<string, EngineRateLimit>>;
  period_budgets?: readonly PeriodBudget[];
}

/**
 * What a decision sees of the fleet-wide limits: for policy `policyId`'s limit `limit` (a name of the contracts'
 * `QuotaLimitSchema`), how much the decider may still admit: USD for a budget, calls for a rate limit. The agent
 * SDK answers what its leases hold; the decision API what the fleet's counters have left. `undefined`: the limit is
 * not counted for the fleet here, and the engine falls back to the spend and calls in the context.
 */
export type QuotaView = (policyId: string, limit: string) => number | undefined;

/** Whether a rate limit is counted for the fleet (scope `agent` or `organization`) rather than per process. */
export const fleetCounted = (limit: EngineRateLimit): boolean => limit.scope === 'agent' || limit.scope === 'organization';

/**
 * One fleet-wide limit an action counts against: the policy and limit name, the unit, the limit's value (USD or
 * calls), who it counts together (`scope`: run, session, agent or organization) and what the action needs of it
 * (its estimated cost in USD, or one call).
 */
export interface QuotaNeed {
  policy_id: string;
  limit: string;
  unit: QuotaUnit;
  scope: 'run' | 'session' | 'agent' | 'organization';
  limit_value: number;
  need: number;
}

/**
 * The fleet-wide limits action `actionName` of agent `agentId` counts against under the enabled policies that apply
 * to it, with what it needs of each: its estimated cost (USD, when above 0) of the run budget (when `runId` is
 * given), the session budget (when `sessionId` is given) and each period budget; one call of each `agent`- or
 * `organization`-scoped rate limit for the action or `*`. Policies in any order; the result in policy order, then
 * run, session, period budgets, rate limits. Pure.
 */
export function quotaNeeds(policies: readonly QuotaPolicy[], agentId: string, actionName: string, costUsd: number, ids: { sessionId?: string | null; runId?: string | null }): QuotaNeed[] {
  const out: QuotaNeed[] = [];
  for (const p of policies) {
    if (!p.enabled || (p.agent_ids.length > 0 && !p.agent_ids.includes(agentId))) continue;
    if (costUsd > 0) {
      if (p.run_budget !== null && ids.runId) out.push({ policy_id: p.id, limit: RUN_BUDGET_LIMIT, unit: 'usd', scope: 'run', limit_value: p.run_budget, need: costUsd });
      if (p.session_budget !== null && ids.sessionId) out.push({ policy_id: p.id, limit: SESSION_BUDGET_LIMIT, unit: 'usd', scope: 'session', limit_value: p.session_budget, need: costUsd });
      for (const b of p.period_budgets ?? []) out.push({ policy_id: p.id, limit: periodBudgetLimit(b.scope, b.period), unit: 'usd', scope: b.scope, limit_value: b.max_usd, need: costUsd });
    }
    for (const key of [actionName, RATE_LIMIT_ANY_ACTION]) {
      if (!Object.hasOwn(p.rate_limits, key)) continue;
      const r = p.rate_limits[key];
      if (fleetCounted(r)) out.push({ policy_id: p.id, limit: rateLimitLimit(key), unit: 'calls', scope: r.scope as 'agent' | 'organization', limit_value: r.max_calls, need: 1 });
    }
  }
  return out;
}

/** Start (inclusive) and end (exclusive) of a counter's window, ms since the Unix epoch. */
export interface QuotaWindow {
  start: number;
  end: number;
}

/** The UTC calendar period holding `now` (ms since the epoch): its clock hour, its day from 00:00, its month. */
export function periodWindow(period: BudgetPeriod, now: number): QuotaWindow {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (period === 'month') return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
  if (period === 'day') {
    const start = Date.UTC(y, m, d.getUTCDate());
    return { start, end: Date.UTC(y, m, d.getUTCDate() + 1) };
  }
  const start = Date.UTC(y, m, d.getUTCDate(), d.getUTCHours());
  return { start, end: start + 3_600_000 };
}

/**
 * The fixed window of a fleet-counted rate limit holding `now`: windows of `windowSeconds` aligned to the Unix epoch
 * (every holder and replica computes the same one from its own clock). Fixed rather than sliding: each window is one
 * counter, so admitted calls never pass `max_calls` in a window; the price is the known burst of up to 2 × `max_calls`
 * across the turn of a window (docs/decisions.md, Leases).
 */
export function rateWindow(windowSeconds: number, now: number): QuotaWindow {
  const ms = Math.max(1, Math.round(windowSeconds * 1000));
  const start = Math.floor(now / ms) * ms;
  return { start, end: start + ms };
}

/**
 * The window of policy `p`'s limit `limit` at `now`, or null for a run or session budget (they have none), or
 * undefined when the policy has no such limit (or a `process` rate limit, which has no counter).
 */
export function quotaWindow(p: QuotaPolicy, limit: string, now: number): QuotaWindow | null | undefined {
  if (limit === RUN_BUDGET_LIMIT) return p.run_budget === null ? undefined : null;
  if (limit === SESSION_BUDGET_LIMIT) return p.session_budget === null ? undefined : null;
  if (limit.startsWith('period_budget:')) {
    const b = (p.period_budgets ?? []).find((x) => periodBudgetLimit(x.scope, x.period) === limit);
    return b === undefined ? undefined : periodWindow(b.period, now);
  }
  if (limit.startsWith('rate_limit:')) {
    const action = limit.slice('rate_limit:'.length);
    if (!Object.hasOwn(p.rate_limits, action)) return undefined;
    const r = p.rate_limits[action];
    return fleetCounted(r) ? rateWindow(r.window_seconds, now) : undefined;
  }
  return undefined;
}

/**
 * The value of policy `p`'s limit `limit` (USD or calls) and who it counts together, or undefined when the policy
 * has no such fleet-counted limit.
 */
export function quotaLimitOf(p: QuotaPolicy, limit: string): { value: number; unit: QuotaUnit; scope: QuotaNeed['scope'] } | undefined {
  if (limit === RUN_BUDGET_LIMIT) return p.run_budget === null ? undefined : { value: p.run_budget, unit: 'usd', scope: 'run' };
  if (limit === SESSION_BUDGET_LIMIT) return p.session_budget === null ? undefined : { value: p.session_budget, unit: 'usd', scope: 'session' };
  if (limit.startsWith('period_budget:')) {
    const b = (p.period_budgets ?? []).find((x) => periodBudgetLimit(x.scope, x.period) === limit);
    return b === undefined ? undefined : { value: b.max_usd, unit: 'usd', scope: b.scope };
  }
  if (limit.startsWith('rate_limit:')) {
    const action = limit.slice('rate_limit:'.length);
    if (!Object.hasOwn(p.rate_limits, action)) return undefined;
    const r = p.rate_limits[action];
    return fleetCounted(r) ? { value: r.max_calls, unit: 'calls', scope: r.scope as 'agent' | 'organization' } : undefined;
  }
  return undefined;
}

/** What {@link leaseSlice} decides from: the limit, what is committed of it, the asker's need and the other holders. */
export interface SliceInput {
  /** The limit's value, USD or calls. */
  limit_value: number;
  /** Granted to active leases (at least what they spent) plus spent by ended ones. */
  committed: number;
  /** What the asker must have now (granted whole or not at all); 0 = asking ahead of need. */
  need: number;
  /** Active holders of the counter other than the asker. */
  others: number;
  unit: QuotaUnit;
}

/** Slack when comparing USD amounts (float sums land a few 1e-17 off); the engine's `USD_TOLERANCE`. */
const TOLERANCE = 1e-9;

/**
 * How much one grant hands out (the lease slice rule):
 * - `remaining` = limit − committed; when `need` > remaining, nothing (the need is granted whole or not at all);
 * - else the fair share `min(QUOTA_SLICE_FRACTION × limit, remaining / (others + 2))` (the asker and the other
 *   holders, plus room for one newcomer), but at least `need` and never more than `remaining`;
 * - calls are whole: the share rounds down, and is at least `need`.
 * So slices shrink as the remainder shrinks and as holders multiply: the last part of a limit goes out in small pieces,
 * and no holder can take more than a fair share of what is left. A holder cut off from the platform can spend at most
 * what it holds: ≤ 5 % of the limit, or one action's need when a single action needs more. Pure.
 * @returns the amount to grant, 0 when nothing can be.
 */
export function leaseSlice(s: SliceInput): number {
  const remaining = s.limit_value - s.committed;
  if (s.need > remaining + TOLERANCE) return 0;
  let share = Math.min(QUOTA_SLICE_FRACTION * s.limit_value, remaining / (s.others + 2));
  if (s.unit === 'calls') share = Math.floor(share);
  const grant = Math.min(Math.max(share, s.need), Math.max(remaining, s.need));
  return grant > 0 ? grant : 0;
}
