/**
 * A policy in words: the enum values the form offers, the field list, and each field's value as lines of plain text
 * (`refund_payment: at most 5 calls per 60 s`, `every agent`), which the policy's summary, its version diff and its
 * history all print, so no rule is ever shown as raw JSON. Pure (no React), so it is unit-tested
 * (policy-text.test.ts). Enum values are plain arrays checked against the contract's types at compile time, since
 * importing `@agp/contracts` at run time would bundle zod. Source: packages/contracts/src/policy.ts; docs/decisions.md
 * (Policies, agents and kill switches; The policy engine's action budget, downgrades and guardrails).
 */
import type { AutoKillSwitch, BudgetPeriod, DowngradeRule, Guardrails, ModerationCategory, PeriodBudget, PeriodBudgetScope, PiiCategory, PolicyField, RateLimit, RateLimitScope } from '@agp/contracts';
import { usd } from '../../components/format.js';

type SameUnion<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The PII categories (contract PII_CATEGORIES). */
export const PII_CATEGORIES = ['email', 'phone', 'payment_card', 'iban', 'us_ssn', 'ip_address', 'secret'] as const;
/** The moderation categories (contract MODERATION_CATEGORIES). */
export const MODERATION_CATEGORIES = ['harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic'] as const;
/** Modes of the moderation and loop guardrails. */
export const GUARDRAIL_MODES = ['block', 'warn'] as const;
/** Modes of the PII guardrail. */
export const PII_GUARDRAIL_MODES = ['block', 'warn', 'redact'] as const;
/**
 * The policy fields (exactly the contract's POLICY_FIELDS, checked below) in the order the policy page and the form
 * show them: who it applies to, which actions, how much money, how often, then what it changes or guards.
 */
export const POLICY_FIELDS = ['name', 'description', 'enabled', 'agent_ids', 'denied_actions', 'allowed_actions', 'approval_required_actions', 'approvals_required', 'separation_of_duties', 'session_budget', 'run_budget', 'action_budget', 'period_budgets', 'rate_limits', 'downgrades', 'guardrails', 'auto_kill_switch'] as const;
/** The key of `rate_limits` and the `action` of a downgrade rule that mean every action (contract RATE_LIMIT_ANY_ACTION, DOWNGRADE_ANY_ACTION). */
export const ANY_ACTION = '*';
/** Who a rate limit counts together (contract RATE_LIMIT_SCOPES); the first is the default of a new limit. */
export const RATE_LIMIT_SCOPES = ['agent', 'organization', 'process'] as const;
/** The scope of a stored rate limit that has none: each process alone (contract LEGACY_RATE_LIMIT_SCOPE). */
export const LEGACY_RATE_LIMIT_SCOPE: RateLimitScope = 'process';
/** Who a period budget counts together (contract PERIOD_BUDGET_SCOPES). */
export const PERIOD_BUDGET_SCOPES = ['agent', 'organization'] as const;
/** The calendar periods of a period budget, in UTC (contract BUDGET_PERIODS). */
export const BUDGET_PERIODS = ['hour', 'day', 'month'] as const;

const sameAsContract: [
  SameUnion<(typeof PII_CATEGORIES)[number], PiiCategory>,
  SameUnion<(typeof MODERATION_CATEGORIES)[number], ModerationCategory>,
  SameUnion<(typeof PII_GUARDRAIL_MODES)[number], NonNullable<Guardrails['pii']>['mode']>,
  SameUnion<(typeof GUARDRAIL_MODES)[number], NonNullable<Guardrails['loop']>['mode']>,
  SameUnion<(typeof POLICY_FIELDS)[number], PolicyField>,
  SameUnion<(typeof RATE_LIMIT_SCOPES)[number], RateLimitScope>,
  SameUnion<(typeof PERIOD_BUDGET_SCOPES)[number], PeriodBudgetScope>,
  SameUnion<(typeof BUDGET_PERIODS)[number], BudgetPeriod>,
] = [true, true, true, true, true, true, true, true];
void sameAsContract;

/** The name each field goes by on the policy page (summary, diff, history). */
export const FIELD_LABELS: Record<PolicyField, string> = {
  name: 'Name',
  description: 'Description',
  enabled: 'State',
  session_budget: 'Session budget',
  run_budget: 'Run budget',
  denied_actions: 'Denied actions',
  allowed_actions: 'Allowed actions',
  approval_required_actions: 'Needs approval',
  approvals_required: 'Approvals needed',
  separation_of_duties: 'Separation of duties',
  rate_limits: 'Rate limits',
  agent_ids: 'Applies to',
  action_budget: 'Action budget',
  downgrades: 'Downgrade rules',
  guardrails: 'Guardrails',
  period_budgets: 'Period budgets',
  auto_kill_switch: 'Automatic kill switch',
};

/** How each rate-limit scope reads after the limit: `… per 60 s per agent`. */
const RATE_LIMIT_SCOPE_WORDS: Record<RateLimitScope, string> = {
  agent: 'per agent',
  organization: 'for the organisation',
  process: 'per process',
};

/** How each period-budget scope reads after the budget: `$200.00 per UTC day per agent`. */
const PERIOD_BUDGET_SCOPE_WORDS: Record<PeriodBudgetScope, string> = {
  agent: 'per agent',
  organization: 'for the organisation',
};

/** One downgrade rule as a sentence: `refund_payment: amount capped at 100`, `every action: model gpt-4o → gpt-4o-mini`. */
export function downgradeText(r: DowngradeRule): string {
  const who = r.action === ANY_ACTION ? 'every action' : r.action;
  if (r.replace) return `${who}: ${r.argument} ${Object.entries(r.replace).map(([from, to]) => `${from} → ${String(to)}`).join(', ')}`;
  return `${who}: ${r.argument} capped at ${r.max}`;
}

/**
 * One rate limit as a sentence: `refund_payment: at most 5 calls per 60 s per agent`; `*` counts every action's calls
 * together; the scope says who shares the count (`per agent`, `for the organisation`, `per process`). A stored limit
 * without a scope reads as {@link LEGACY_RATE_LIMIT_SCOPE}, as the platform decides it.
 */
export function rateLimitText(action: string, l: Omit<RateLimit, 'scope'> & { scope?: RateLimitScope }): string {
  const who = action === ANY_ACTION ? 'all actions together' : action;
  return `${who}: at most ${l.max_calls} ${l.max_calls === 1 ? 'call' : 'calls'} per ${l.window_seconds} s ${RATE_LIMIT_SCOPE_WORDS[l.scope ?? LEGACY_RATE_LIMIT_SCOPE]}`;
}

/** One period budget as a sentence: `$200.00 per UTC day per agent`, `$5,000.00 per UTC month for the organisation`. */
export function periodBudgetText(b: PeriodBudget): string {
  return `${usd(b.max_usd)} per UTC ${b.period} ${PERIOD_BUDGET_SCOPE_WORDS[b.scope]}`;
}

const cats = (c: readonly string[] | undefined) => (c ? c.join(', ').replace(/_/g, ' ') : 'all categories');

/** Each configured guardrail as a sentence, in the contract's order: `PII: redact email, payment card`. */
export function guardrailTexts(g: Guardrails): string[] {
  const out: string[] = [];
  if (g.pii) out.push(`PII: ${g.pii.mode} ${cats(g.pii.categories)}`);
  if (g.moderation) out.push(`Moderation: ${g.moderation.mode} at a score of ${g.moderation.threshold} or more, ${cats(g.moderation.categories)}`);
  if (g.loop) out.push(`Loop: ${g.loop.mode} after ${g.loop.threshold} identical calls within ${g.loop.window_seconds} s`);
  if (g.idempotency) out.push(`Idempotency: ${g.idempotency.actions.join(', ')}, a repeat within ${g.idempotency.ttl_seconds} s returns the first result`);
  return out;
}

/** The automatic kill switch as a sentence: `stop the agent when over 50% of at least 50 decisions within 300 s stop`. */
export function autoKillSwitchText(r: AutoKillSwitch): string {
  return `stop the agent when more than ${Math.round(r.block_rate * 1000) / 10}% of its decisions within ${r.window_seconds} s stop the action (after at least ${r.min_actions})`;
}

/** The line of a field with nothing set (no budget, no rule, an empty list). */
export const NONE = 'none';
/** The line of a field a version does not have. */
export const ABSENT = '—';

const budget = (v: unknown, per: string) => (typeof v === 'number' ? [`${usd(v)} per ${per}`] : [NONE]);
const names = (v: unknown, none: string) => (Array.isArray(v) && v.length ? v.map(String) : [none]);

/**
 * A policy field's value as lines of text, one line per item of a list (an action, an agent, a rule), so a diff can
 * mark what was added and removed. `undefined` (a field a version did not have) is `—`.
 */
export function fieldLines(field: PolicyField, v: unknown): string[] {
  if (v === undefined) return [ABSENT];
  switch (field) {
    case 'name':
      return [String(v)];
    case 'description':
      return typeof v === 'string' && v !== '' ? [v] : [NONE];
    case 'enabled':
      return [v ? 'enabled' : 'disabled'];
    case 'session_budget':
      return budget(v, 'session');
    case 'run_budget':
      return budget(v, 'run');
    case 'action_budget':
      return budget(v, 'action');
    case 'denied_actions':
      return names(v, NONE);
    case 'approval_required_actions':
      return names(v, NONE);
    case 'approvals_required':
      return [v === 2 ? '2 approvals from different people' : '1 approval'];
    case 'separation_of_duties':
      return [v ? "a person other than the agent's owner and last changer decides; keys cannot" : 'off'];
    case 'allowed_actions':
      if (v === null) return ['every action that is not denied'];
      return names(v, 'none: an empty allow-list blocks every action');
    case 'agent_ids':
      return names(v, 'every agent');
    case 'rate_limits': {
      const entries = Object.entries((v ?? {}) as Record<string, RateLimit>);
      return entries.length ? entries.map(([a, l]) => rateLimitText(a, l)) : [NONE];
    }
    case 'period_budgets':
      return Array.isArray(v) && v.length ? (v as PeriodBudget[]).map(periodBudgetText) : [NONE];
    case 'downgrades':
      return Array.isArray(v) && v.length ? (v as DowngradeRule[]).map(downgradeText) : [NONE];
    case 'guardrails': {
      const t = guardrailTexts((v ?? {}) as Guardrails);
      return t.length ? t : [NONE];
    }
    case 'auto_kill_switch':
      return v && typeof v === 'object' ? [autoKillSwitchText(v as AutoKillSwitch)] : [NONE];
  }
}

/** One line of a compared value: its text and whether the other side lacks it. */
export interface DiffLine {
  text: string;
  /** True when the other version has no such line (removed on the old side, added on the new one). */
  changed: boolean;
}

/**
 * Two versions of one field, line by line: each side's lines, those the other side lacks marked `changed`
 * (a single-line value that changed is marked whole: `$5.00 per action` → `$7.50 per action`), and whether the value
 * changed at all (compared as JSON, so a reordered list counts: downgrade rules apply in order).
 */
export function diffLines(field: PolicyField, from: unknown, to: unknown): { from: DiffLine[]; to: DiffLine[]; changed: boolean } {
  const a = fieldLines(field, from);
  const b = fieldLines(field, to);
  const inA = new Set(a);
  const inB = new Set(b);
  const left = a.map((text) => ({ text, changed: !inB.has(text) }));
  const right = b.map((text) => ({ text, changed: !inA.has(text) }));
  return { from: left, to: right, changed: JSON.stringify(from) !== JSON.stringify(to) };
}
