/**
 * The alert rules as pure functions: which budget percentages a rise of spend passed, whether a block rate over a
 * window trips a rule, and the words of an automatic kill switch's reason. Source: docs/notifications.md (Alerts;
 * Automatic kill switch).
 */
import { BUDGET_THRESHOLD_PERCENTS, type AutoKillSwitch, type BlockRateRule } from '@agp/contracts';

/**
 * The percentages of {@link BUDGET_THRESHOLD_PERCENTS} (50, 80, 100) that spend rising from `from` to `to` USD passed
 * of a `limit` USD budget: `p` is passed when `from < limit·p/100 ≤ to`. None for a budget of 0 or less (nothing to
 * take a share of), or spend that did not rise. Exact to 1e-9 USD (counter amounts are decimal).
 */
export function crossedPercents(limit: number, from: number, to: number): Array<(typeof BUDGET_THRESHOLD_PERCENTS)[number]> {
  if (!(limit > 0) || !(to > from)) return [];
  const eps = 1e-9;
  return BUDGET_THRESHOLD_PERCENTS.filter((p) => {
    const mark = (limit * p) / 100;
    return from < mark - eps && to >= mark - eps;
  });
}

/** Decisions counted over a window: all of them, and those that stopped the action. */
export interface DecisionTally {
  decisions: number;
  stopped: number;
}

/** The share of stopped decisions, 0..1 (0 when none were counted). */
export const blockRateOf = (t: DecisionTally): number => (t.decisions > 0 ? t.stopped / t.decisions : 0);

/**
 * Whether a tally trips a rule: at least `min_actions` decisions, and a block rate above `threshold` (a
 * `block_rate.spike` subscription's rule) or `block_rate` (a policy's `auto_kill_switch`).
 */
export function trips(rule: Pick<BlockRateRule, 'min_actions'> & ({ threshold: number } | { block_rate: number }), t: DecisionTally): boolean {
  const limit = 'threshold' in rule ? rule.threshold : rule.block_rate;
  return t.decisions >= rule.min_actions && blockRateOf(t) > limit;
}

/** The actor an automatic kill switch is recorded with: the rule, named by its policy. */
export const autoKillActor = (policyId: string) => `rule:auto_kill_switch:${policyId}`;

/** The reason an automatic kill switch records: the rule, its policy, and what it counted. */
export function autoKillReason(policy: { id: string; name: string }, rule: AutoKillSwitch, t: DecisionTally): string {
  const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
  return `auto_kill_switch of policy "${policy.name}" (${policy.id}): ${t.stopped} of ${t.decisions} decisions within ${rule.window_seconds} s stopped the action (${pct(blockRateOf(t))}), above ${pct(rule.block_rate)}`;
}

/** The agent a budget counter concerns: its scope key for a budget counted per agent (`period_budget:agent:*`), else null. */
export function budgetAgent(limit: string, scopeKey: string): string | null {
  return limit.startsWith('period_budget:agent:') ? scopeKey : null;
}
