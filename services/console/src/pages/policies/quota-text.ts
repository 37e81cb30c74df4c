/**
 * A fleet counter in words, for the counters panel of a policy's page (`GET /api/v1/quotas?policy_id=…`): which limit
 * it counts (`Period budget: per UTC day per agent`, `Rate limit: send_email`), for whom (`agent billing-bot`, `the
 * organisation`, `session s-1`), what is left of the limit (`$150.00 of $200.00`, `37 of 50 calls`) and its window.
 * Pure (no React), unit-tested in quota-text.test.ts. Limit names are parsed here rather than with the contract's
 * helpers, since importing `@agp/contracts` at run time would bundle zod; the names are checked against the
 * contract's types at compile time. Source: packages/contracts/src/quota.ts; docs/sdk.md (Fleet-wide limits).
 */
import type { BudgetPeriod, PeriodBudgetScope, Policy, QuotaCounter, QuotaUnit, RateLimitScope } from '@agp/contracts';
import { count, usd, when } from '../../components/format.js';
import { ANY_ACTION, BUDGET_PERIODS, LEGACY_RATE_LIMIT_SCOPE, PERIOD_BUDGET_SCOPES } from './policy-text.js';

/** A counter's limit, parsed: a run or session budget, one period budget, or the rate limit of one action (or `*`). */
export type ParsedLimit =
  | { kind: 'run_budget' }
  | { kind: 'session_budget' }
  | { kind: 'period_budget'; scope: PeriodBudgetScope; period: BudgetPeriod }
  | { kind: 'rate_limit'; action: string }
  | { kind: 'unknown'; name: string };

const PERIOD_RE = new RegExp(`^period_budget:(${PERIOD_BUDGET_SCOPES.join('|')}):(${BUDGET_PERIODS.join('|')})$`);

/**
 * A limit name (contract QuotaLimitSchema: `run_budget`, `session_budget`, `period_budget:<scope>:<period>`,
 * `rate_limit:<action or *>`) parsed; a name of none of these forms is `unknown` (shown as it is).
 */
export function parseLimit(name: string): ParsedLimit {
  if (name === 'run_budget' || name === 'session_budget') return { kind: name };
  if (name.startsWith('rate_limit:') && name.length > 'rate_limit:'.length) return { kind: 'rate_limit', action: name.slice('rate_limit:'.length) };
  const m = PERIOD_RE.exec(name);
  if (m) return { kind: 'period_budget', scope: m[1] as PeriodBudgetScope, period: m[2] as BudgetPeriod };
  return { kind: 'unknown', name };
}

/** The limit a counter counts, in words: `Run budget`, `Period budget: per UTC day per agent`, `Rate limit: all actions together`. */
export function limitText(name: string): string {
  const l = parseLimit(name);
  switch (l.kind) {
    case 'run_budget':
      return 'Run budget';
    case 'session_budget':
      return 'Session budget';
    case 'period_budget':
      return `Period budget: per UTC ${l.period} ${l.scope === 'agent' ? 'per agent' : 'for the organisation'}`;
    case 'rate_limit':
      return `Rate limit: ${l.action === ANY_ACTION ? 'all actions together' : l.action}`;
    case 'unknown':
      return l.name;
  }
}

/**
 * Whom a counter counts for, in words, from its limit and scope key: `run r-1`, `session s-1`, `agent billing-bot`,
 * `the organisation`. A rate limit's scope is the policy's (`policy`, when given) for that action: `organization`
 * counts the organisation, otherwise the key is an agent.
 */
export function scopeKeyText(c: Pick<QuotaCounter, 'limit' | 'scope_key'>, policy?: Pick<Policy, 'rate_limits'>): string {
  const l = parseLimit(c.limit);
  switch (l.kind) {
    case 'run_budget':
      return `run ${c.scope_key}`;
    case 'session_budget':
      return `session ${c.scope_key}`;
    case 'period_budget':
      return l.scope === 'organization' ? 'the organisation' : `agent ${c.scope_key}`;
    case 'rate_limit': {
      const limit = policy?.rate_limits[l.action] as { scope?: RateLimitScope } | undefined;
      return (limit?.scope ?? LEGACY_RATE_LIMIT_SCOPE) === 'organization' ? 'the organisation' : `agent ${c.scope_key}`;
    }
    case 'unknown':
      return c.scope_key;
  }
}

/** An amount of a limit in its unit: `$150.00` (usd), `37 calls` (calls; `1 call`). */
export function amountText(v: number, unit: QuotaUnit): string {
  return unit === 'usd' ? usd(v) : `${count(v)} ${v === 1 ? 'call' : 'calls'}`;
}

/**
 * What is left of a counter's limit: `$150.00 of $200.00` or `37 of 50 calls`. `remaining` may be negative (an actual
 * cost passed its estimate, or the limit was lowered below what was granted): printed as it is, never clamped.
 */
export function remainingText(c: Pick<QuotaCounter, 'remaining' | 'limit_value' | 'unit'>): string {
  return c.unit === 'usd' ? `${usd(c.remaining)} of ${usd(c.limit_value)}` : `${count(c.remaining)} of ${amountText(c.limit_value, 'calls')}`;
}

/** A counter's window: `start – end` (times as the console prints them), or `no window` for run and session budgets. */
export function windowText(c: Pick<QuotaCounter, 'window_start' | 'window_end'>): string {
  return c.window_start && c.window_end ? `${when(c.window_start)} – ${when(c.window_end)}` : 'no window';
}
