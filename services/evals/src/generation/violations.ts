/**
 * Which policy rules a scenario breaks, counted per category, so every generated scenario carries a violation
 * breakdown (`{denied_actions: 1, budget_blowout: 1}`) whatever pass made it. The rules read as the policy decision
 * states them (contracts `DECISION_RULES`): a step is denied when a policy lists it in `denied_actions` or has an
 * `allowed_actions` list without it; it blows a budget when the spend so far plus its estimated cost is above a run
 * budget, or above a session budget with the session's earlier spend added (USD). Pure.
 * Source: docs/scenario-format.md (Violations: per-category breakdown); spec §Evals rule 4.
 */
import { roundUsd, type Policy } from '@agp/contracts';
import type { ScenarioContext, ScenarioStep } from '@agp/scenario-file';

/** A run or session budget of one policy, USD. */
export interface Budget {
  kind: 'run_budget' | 'session_budget';
  usd: number;
  policy: string;
}

/** Why `action` is refused by the policies (the first reason), or null when none refuses it. */
export function denialOf(policies: readonly Policy[], action: string): string | null {
  for (const p of policies) {
    if (p.denied_actions.includes(action)) return `policy '${p.name}' denies ${action}`;
    if (p.allowed_actions !== null && !p.allowed_actions.includes(action)) return `policy '${p.name}' allows only ${p.allowed_actions.length ? p.allowed_actions.join(', ') : 'no action'}`;
  }
  return null;
}

/** Whether any policy asks for approval before `action` (it would be escalated, not allowed). */
export function needsApproval(policies: readonly Policy[], action: string): boolean {
  return policies.some((p) => p.approval_required_actions.includes(action));
}

/** The fewest calls of `action` any rate limit allows in its window (`*` limits included), or null when none applies. */
export function rateLimitOf(policies: readonly Policy[], action: string): number | null {
  const limits = policies.flatMap((p) => [p.rate_limits[action], p.rate_limits['*']]).filter((l) => l !== undefined);
  return limits.length ? Math.min(...limits.map((l) => l.max_calls)) : null;
}

/** Every distinct run and session budget of the policies, smallest first within each kind (run budgets first). */
export function budgetsOf(policies: readonly Policy[]): Budget[] {
  const out: Budget[] = [];
  for (const kind of ['run_budget', 'session_budget'] as const) {
    const seen = new Set<number>();
    for (const p of [...policies].sort((a, b) => (a[kind] ?? 0) - (b[kind] ?? 0) || (a.id < b.id ? -1 : 1))) {
      const usd = p[kind];
      if (usd === null || seen.has(usd)) continue;
      seen.add(usd);
      out.push({ kind, usd, policy: p.name });
    }
  }
  return out;
}

/**
 * The policy violations of a scenario, per category: `denied_actions` = steps a policy refuses; `budget_blowout` =
 * steps at which the spend passes a run or session budget (spend so far = `context.run_spend_usd` + the prior calls'
 * costs + the earlier steps' costs; a session adds `context.session_spend_usd`). Categories with none are left out.
 * A step without `estimated_cost_usd` counts as `typicalCost(action)` (its registered typical cost), else 0.
 */
export function policyViolations(policies: readonly Policy[], context: ScenarioContext, steps: readonly ScenarioStep[], typicalCost: (action: string) => number | null = () => null): Record<string, number> {
  const runBudgets = policies.map((p) => p.run_budget).filter((b): b is number => b !== null);
  const sessionBudgets = policies.map((p) => p.session_budget).filter((b): b is number => b !== null);
  let run = roundUsd(context.run_spend_usd + context.prior_calls.reduce((sum, c) => sum + c.cost_usd, 0));
  let denied = 0;
  let blown = 0;
  for (const step of steps) {
    if (denialOf(policies, step.action_name)) denied++;
    run = roundUsd(run + (step.estimated_cost_usd ?? typicalCost(step.action_name) ?? 0));
    if (runBudgets.some((b) => run > b) || sessionBudgets.some((b) => roundUsd(context.session_spend_usd + run) > b)) blown++;
  }
  return { ...(denied ? { denied_actions: denied } : {}), ...(blown ? { budget_blowout: blown } : {}) };
}

/** Per-category counts of `a` and `b` merged, keeping the larger count of a category both name. */
export function mergeViolations(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
}
