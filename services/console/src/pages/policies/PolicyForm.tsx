/**
 * The policy form: creates a policy (`POST /api/v1/policies`) or edits one (`PATCH /api/v1/policies/{id}`, only the
 * changed fields, so an edit never rewrites what it did not touch). It edits every field of a policy, in the
 * contract's shapes (packages/contracts/src/policy.ts): name, description, enabled flag, the agent scope (empty =
 * every agent), the denied, allowed (an allow-list, or none = every action not denied) and approval-required
 * actions, the session, run and action budgets (USD), the period budgets (USD per UTC hour, day or month, per agent or
 * for the organisation; one per scope and period), the rate limits (per action or `*`, calls per window in seconds,
 * counted per agent, for the organisation or per process), the downgrade rules (a numeric cap or a value substitution on a dotted argument path, `*` = every action)
 * and the four guardrails (pii, moderation, loop, idempotency).
 *
 * The platform validates: a 422's field errors (`body.guardrails.moderation.threshold`, `body.downgrades.0.max`) are
 * shown next to the field they name (the input marked `aria-invalid` and described by the message), and the whole
 * problem above the buttons as everywhere else. Source: docs/decisions.md (The policy engine's action budget,
 * downgrades and guardrails).
 */
import { useState, type ReactNode } from 'react';
import { useApiMutation } from '../../api/hooks.js';
import type { ProblemError, ProblemFieldError } from '../../api/client.js';
import type { BudgetPeriod, PeriodBudgetScope, Policy, RateLimitScope } from '../../api/types.js';
import { ProblemMessage } from '../../components/States.js';
import { WriteButton } from '../../components/WriteButton.js';
import { errorsAt, Field } from '../../components/Field.js';
import { ANY_ACTION, BUDGET_PERIODS, GUARDRAIL_MODES, LEGACY_RATE_LIMIT_SCOPE, MODERATION_CATEGORIES, PERIOD_BUDGET_SCOPES, PII_CATEGORIES, PII_GUARDRAIL_MODES, RATE_LIMIT_SCOPES } from './policy-text.js';

/** One downgrade rule as the form holds it: texts as typed; `kind` picks `max` or one `from → to` substitution. */
interface DowngradeDraft {
  action: string;
  argument: string;
  kind: 'max' | 'replace';
  max: string;
  from: string;
  to: string;
  /** The substitution's value as loaded (kept when `to` is unchanged, so a number stays a number). */
  loadedTo?: string | number | boolean;
  /** Index of the loaded rule this row came from: adjacent rows of one loaded `replace` rule are saved as one rule again. */
  loadedRule?: number;
}

/** One rate limit as the form holds it: the action (or `*`), the two numbers as typed, and who it counts together. */
interface RateLimitDraft {
  action: string;
  max_calls: string;
  window_seconds: string;
  scope: RateLimitScope;
}

/** One period budget as the form holds it: its scope and period, and the USD amount as typed. */
interface PeriodBudgetDraft {
  scope: PeriodBudgetScope;
  period: BudgetPeriod;
  max_usd: string;
}

/** The hint under a rate limit's scope: what the chosen scope counts together. */
const RATE_LIMIT_SCOPE_HINTS: Record<RateLimitScope, string> = {
  agent: 'agent: every process of each agent counts toward one limit per agent',
  organization: "organization: all of the organisation's agents share one limit",
  process: 'process: each process counts its own calls alone (a fleet of n processes makes up to n times the calls)',
};

/** The hint under a period budget's scope: what the chosen scope counts together. */
const PERIOD_BUDGET_SCOPE_HINTS: Record<PeriodBudgetScope, string> = {
  agent: 'agent: each agent the policy covers has this budget on its own',
  organization: "organization: the organisation's agents share this budget",
};

/** The first (scope, period) pair no row uses yet, for a new period budget row (the first pair when all are taken). */
function freePeriodPair(rows: PeriodBudgetDraft[]): Pick<PeriodBudgetDraft, 'scope' | 'period'> {
  for (const scope of PERIOD_BUDGET_SCOPES) for (const period of BUDGET_PERIODS) if (!rows.some((r) => r.scope === scope && r.period === period)) return { scope, period };
  return { scope: PERIOD_BUDGET_SCOPES[0], period: BUDGET_PERIODS[0] };
}

/** The form's state: every input's text, guardrails switched on or off. */
interface Draft {
  name: string;
  description: string;
  enabled: boolean;
  /** Agent ids, comma- or newline-separated; empty = every agent. */
  agent_ids: string;
  denied_actions: string;
  /** `restrict` off = no allow-list (every action not denied); on = only `actions` (none listed = nothing allowed). */
  allowed: { restrict: boolean; actions: string };
  approval_required_actions: string;
  rate_limits: RateLimitDraft[];
  period_budgets: PeriodBudgetDraft[];
  session_budget: string;
  run_budget: string;
  action_budget: string;
  downgrades: DowngradeDraft[];
  pii: { on: boolean; mode: string; all: boolean; categories: string[] };
  moderation: { on: boolean; mode: string; threshold: string; all: boolean; categories: string[] };
  loop: { on: boolean; mode: string; threshold: string; window_seconds: string };
  idempotency: { on: boolean; actions: string; ttl_seconds: string };
  /** The automatic kill switch: on or off, and its three numbers as typed. */
  auto_kill: { on: boolean; block_rate: string; window_seconds: string; min_actions: string };
}

const text = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));

/** The form's state for a policy (or for a new one when `p` is undefined). */
function draftOf(p?: Policy): Draft {
  const g = p?.guardrails ?? {};
  const downgrades: DowngradeDraft[] = [];
  for (const [i, r] of (p?.downgrades ?? []).entries()) {
    if (r.replace) for (const [from, to] of Object.entries(r.replace)) downgrades.push({ action: r.action, argument: r.argument, kind: 'replace', max: '', from, to: String(to), loadedTo: to, loadedRule: i });
    else downgrades.push({ action: r.action, argument: r.argument, kind: 'max', max: text(r.max), from: '', to: '' });
  }
  return {
    name: p?.name ?? '',
    description: p?.description ?? '',
    enabled: p?.enabled ?? true,
    agent_ids: (p?.agent_ids ?? []).join(', '),
    denied_actions: (p?.denied_actions ?? []).join(', '),
    allowed: { restrict: Array.isArray(p?.allowed_actions), actions: (p?.allowed_actions ?? []).join(', ') },
    approval_required_actions: (p?.approval_required_actions ?? []).join(', '),
    // A limit stored before scopes existed counts per process (the platform reads it so too).
    rate_limits: Object.entries(p?.rate_limits ?? {}).map(([action, l]) => ({ action, max_calls: text(l.max_calls), window_seconds: text(l.window_seconds), scope: (l.scope as RateLimitScope | undefined) ?? LEGACY_RATE_LIMIT_SCOPE })),
    period_budgets: (p?.period_budgets ?? []).map((b) => ({ scope: b.scope, period: b.period, max_usd: text(b.max_usd) })),
    session_budget: text(p?.session_budget),
    run_budget: text(p?.run_budget),
    action_budget: text(p?.action_budget),
    downgrades,
    pii: { on: !!g.pii, mode: g.pii?.mode ?? 'block', all: !g.pii?.categories, categories: g.pii?.categories ?? [] },
    moderation: { on: !!g.moderation, mode: g.moderation?.mode ?? 'block', threshold: text(g.moderation?.threshold), all: !g.moderation?.categories, categories: g.moderation?.categories ?? [] },
    loop: { on: !!g.loop, mode: g.loop?.mode ?? 'block', threshold: text(g.loop?.threshold), window_seconds: text(g.loop?.window_seconds) },
    idempotency: { on: !!g.idempotency, actions: (g.idempotency?.actions ?? []).join(', '), ttl_seconds: text(g.idempotency?.ttl_seconds) },
    auto_kill: { on: !!p?.auto_kill_switch, block_rate: text(p?.auto_kill_switch?.block_rate), window_seconds: text(p?.auto_kill_switch?.window_seconds ?? 300), min_actions: text(p?.auto_kill_switch?.min_actions ?? 50) },
  };
}

/** A typed number: '' → `empty`; a number → the number; anything else as typed (the API names it). */
function num(s: string, empty: null | undefined = undefined): number | string | null | undefined {
  const t = s.trim();
  if (t === '') return empty;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

/** A comma- or newline-separated list, trimmed, empties dropped. */
const list = (s: string) =>
  s
    .split(/[,\n]/)
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The downgrade rules of the form's rows: a `max` row is one rule; adjacent `replace` rows loaded from one rule (same
 * action and argument still) are one rule again, so editing the list keeps a multi-value substitution whole.
 */
function downgradesOf(rows: DowngradeDraft[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown> & { replace?: Record<string, unknown> }> = [];
  rows.forEach((r, i) => {
    const action = r.action.trim();
    const argument = r.argument.trim();
    if (r.kind === 'max') {
      out.push({ action, argument, max: num(r.max) });
      return;
    }
    const to = r.loadedTo !== undefined && String(r.loadedTo) === r.to ? r.loadedTo : r.to;
    const prev = rows[i - 1];
    const last = out[out.length - 1];
    if (prev && last?.replace && r.loadedRule !== undefined && prev.kind === 'replace' && prev.loadedRule === r.loadedRule && last.action === action && last.argument === argument && !(r.from in last.replace)) last.replace[r.from] = to;
    else out.push({ action, argument, replace: { [r.from]: to } });
  });
  return out;
}

/** The request body of the draft: every field the form edits, in the contract's shapes. */
function bodyOf(d: Draft): Record<string, unknown> {
  const guardrails: Record<string, unknown> = {};
  if (d.pii.on) guardrails.pii = { mode: d.pii.mode, ...(d.pii.all ? {} : { categories: d.pii.categories }) };
  if (d.moderation.on) guardrails.moderation = { mode: d.moderation.mode, threshold: num(d.moderation.threshold), ...(d.moderation.all ? {} : { categories: d.moderation.categories }) };
  if (d.loop.on) guardrails.loop = { mode: d.loop.mode, threshold: num(d.loop.threshold), window_seconds: num(d.loop.window_seconds) };
  if (d.idempotency.on) guardrails.idempotency = { actions: list(d.idempotency.actions), ttl_seconds: num(d.idempotency.ttl_seconds) };
  return {
    name: d.name.trim(),
    description: d.description.trim() ? d.description : null,
    enabled: d.enabled,
    agent_ids: list(d.agent_ids),
    denied_actions: list(d.denied_actions),
    allowed_actions: d.allowed.restrict ? list(d.allowed.actions) : null,
    approval_required_actions: list(d.approval_required_actions),
    rate_limits: Object.fromEntries(d.rate_limits.map((r) => [r.action.trim(), { max_calls: num(r.max_calls), window_seconds: num(r.window_seconds), scope: r.scope }])),
    period_budgets: d.period_budgets.map((b) => ({ scope: b.scope, period: b.period, max_usd: num(b.max_usd) })),
    session_budget: num(d.session_budget, null),
    run_budget: num(d.run_budget, null),
    action_budget: num(d.action_budget, null),
    downgrades: downgradesOf(d.downgrades),
    guardrails: JSON.parse(JSON.stringify(guardrails)) as Record<string, unknown>,
    auto_kill_switch: d.auto_kill.on ? { block_rate: num(d.auto_kill.block_rate), window_seconds: num(d.auto_kill.window_seconds), min_actions: num(d.auto_kill.min_actions) } : null,
  };
}

/** The fields of `next` that differ from `prev` (a JSON merge patch of the form's fields). */
function changedFields(prev: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(next).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(prev[k])));
}

/** For each rate-limit row, the number of an earlier row naming the same action (a policy has one limit per action), else undefined. */
function repeatedRateLimits(rows: RateLimitDraft[]): Array<number | undefined> {
  return rows.map((r, i) => {
    const j = rows.findIndex((o) => o.action.trim() === r.action.trim());
    return j < i ? j + 1 : undefined;
  });
}

/** The errors of a list's fieldset that no row's inputs show (`rowPaths`: each row's body path). */
function unclaimed(errors: ProblemFieldError[], path: string, rowPaths: string[]): ProblemFieldError[] {
  return errorsAt(errors, path).filter((e) => !rowPaths.some((r) => e.path === `body.${r}` || e.path.startsWith(`body.${r}.`)));
}

/** A set of checkboxes (categories), with an "all" box that clears the choice. */
function Categories({ id, legend, all, chosen, options, errors, path, onChange }: { id: string; legend: string; all: boolean; chosen: string[]; options: readonly string[]; errors: ProblemFieldError[]; path: string; onChange: (all: boolean, chosen: string[]) => void }) {
  const mine = errorsAt(errors, path);
  return (
    <fieldset className="policy-categories" aria-describedby={mine.length ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      <div className="check-row">
        <label>
          <input type="checkbox" checked={all} onChange={(e) => onChange(e.target.checked, chosen)} /> all (including ones added later)
        </label>
        {options.map((c) => (
          <label key={c}>
            <input type="checkbox" disabled={all} checked={!all && chosen.includes(c)} onChange={(e) => onChange(false, e.target.checked ? [...chosen, c] : chosen.filter((x) => x !== c))} /> {c.replace(/_/g, ' ')}
          </label>
        ))}
      </div>
      {mine.length ? (
        <span id={`${id}-error`} className="field-error">
          {mine.map((e) => e.message).join('; ')}
        </span>
      ) : null}
    </fieldset>
  );
}

/** Props of {@link PolicyForm}. */
export interface PolicyFormProps {
  /** The policy to edit; undefined creates a new one. */
  policy?: Policy;
  /** Called with the saved policy (after the list and detail queries were invalidated). */
  onSaved: (p: Policy) => void;
  onCancel: () => void;
}

/** The create / edit form of a policy. */
export function PolicyForm({ policy, onSaved, onCancel }: PolicyFormProps) {
  const [d, setD] = useState<Draft>(() => draftOf(policy));
  const [unchanged, setUnchanged] = useState(false);
  const save = useApiMutation<Record<string, unknown>, Policy>(
    (api, body) => (policy ? api.patch<Policy>(`/api/v1/policies/${encodeURIComponent(policy.id)}`, body) : api.post<Policy>('/api/v1/policies', body)),
    ['/api/v1/policies'],
  );
  const errors = (save.error as ProblemError | null)?.errors ?? [];
  const up = <K extends keyof Draft>(k: K, v: Partial<Draft[K]> | Draft[K]) => setD((s) => ({ ...s, [k]: typeof v === 'object' && v !== null && !Array.isArray(v) ? { ...(s[k] as object), ...v } : v }));
  const setRule = (i: number, v: Partial<DowngradeDraft>) => setD((s) => ({ ...s, downgrades: s.downgrades.map((r, j) => (j === i ? { ...r, ...v } : r)) }));
  const p = policy ? 'edit' : 'new';

  const repeated = repeatedRateLimits(d.rate_limits);
  const setLimit = (i: number, v: Partial<RateLimitDraft>) => setD((s) => ({ ...s, rate_limits: s.rate_limits.map((r, j) => (j === i ? { ...r, ...v } : r)) }));
  const setPeriodBudget = (i: number, v: Partial<PeriodBudgetDraft>) => setD((s) => ({ ...s, period_budgets: s.period_budgets.map((r, j) => (j === i ? { ...r, ...v } : r)) }));

  const submit = () => {
    if (repeated.some((r) => r !== undefined)) return; // shown next to the repeated action; the body could hold only one of them
    const body = bodyOf(d);
    const sent = policy ? changedFields(bodyOf(draftOf(policy)), body) : body;
    if (Object.keys(sent).length === 0) {
      setUnchanged(true);
      return;
    }
    setUnchanged(false);
    save.mutate(sent, { onSuccess: onSaved });
  };

  return (
    <form
      className="policy-form"
      aria-label={policy ? `Edit policy ${policy.name}` : 'New policy'}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Field id={`${p}-name`} label="Name" path="name" errors={errors}>
        {(a) => <input {...a} type="text" value={d.name} onChange={(e) => up('name', e.target.value)} maxLength={256} required />}
      </Field>
      <Field id={`${p}-description`} label="Description" path="description" errors={errors}>
        {(a) => <textarea {...a} value={d.description} onChange={(e) => up('description', e.target.value)} rows={2} />}
      </Field>
      <div className="check-row">
        <label>
          <input type="checkbox" checked={d.enabled} onChange={(e) => up('enabled', e.target.checked)} /> Policy enabled
        </label>
      </div>

      <Field id={`${p}-agent-ids`} label="Applies to agents" path="agent_ids" errors={errors} hint="comma-separated agent ids; empty = every agent of the organisation">
        {(a) => <input {...a} type="text" value={d.agent_ids} onChange={(e) => up('agent_ids', e.target.value)} />}
      </Field>

      <fieldset>
        <legend>Actions (comma-separated action names)</legend>
        <Field id={`${p}-denied`} label="Denied actions" path="denied_actions" errors={errors} hint="always blocked, whatever else the policy says">
          {(a) => <input {...a} type="text" value={d.denied_actions} onChange={(e) => up('denied_actions', e.target.value)} />}
        </Field>
        <Field id={`${p}-approval`} label="Actions that need approval" path="approval_required_actions" errors={errors} hint="escalated: they wait in the approvals inbox for a human decision">
          {(a) => <input {...a} type="text" value={d.approval_required_actions} onChange={(e) => up('approval_required_actions', e.target.value)} />}
        </Field>
        <div className="check-row">
          <label>
            <input type="checkbox" checked={d.allowed.restrict} onChange={(e) => up('allowed', { restrict: e.target.checked })} /> Allow only listed actions (an allow-list)
          </label>
        </div>
        {d.allowed.restrict ? (
          <Field id={`${p}-allowed`} label="Allowed actions" path="allowed_actions" errors={errors} hint="every other action is blocked; an empty list blocks every action">
            {(a) => <input {...a} type="text" value={d.allowed.actions} onChange={(e) => up('allowed', { actions: e.target.value })} />}
          </Field>
        ) : (
          <p className="muted field-hint">No allow-list: every action that is not denied is allowed.</p>
        )}
      </fieldset>

      <fieldset>
        <legend>Budgets (USD; empty = none)</legend>
        <div className="form-grid">
          <Field id={`${p}-session-budget`} label="Session budget" path="session_budget" errors={errors}>
            {(a) => <input {...a} type="text" inputMode="decimal" value={d.session_budget} onChange={(e) => up('session_budget', e.target.value)} />}
          </Field>
          <Field id={`${p}-run-budget`} label="Run budget" path="run_budget" errors={errors}>
            {(a) => <input {...a} type="text" inputMode="decimal" value={d.run_budget} onChange={(e) => up('run_budget', e.target.value)} />}
          </Field>
          <Field id={`${p}-action-budget`} label="Action budget" path="action_budget" errors={errors} hint="one action estimated above it is budget exceeded">
            {(a) => <input {...a} type="text" inputMode="decimal" value={d.action_budget} onChange={(e) => up('action_budget', e.target.value)} />}
          </Field>
        </div>
        <p className="muted field-hint">Session and run budgets count every process that names the session or run.</p>
      </fieldset>

      <fieldset>
        <legend>Period budgets (USD per calendar hour, day or month, UTC)</legend>
        {unclaimed(
          errors,
          'period_budgets',
          d.period_budgets.map((_, i) => `period_budgets.${i}`),
        ).map((e, i) => (
          <span key={i} className="field-error">
            {e.path}: {e.message}
          </span>
        ))}
        {d.period_budgets.length === 0 ? <p className="muted">No period budgets.</p> : null}
        {d.period_budgets.map((b, i) => (
          <div key={i} className="rule-row" role="group" aria-label={`Period budget ${i + 1}`}>
            <Field id={`${p}-pb-${i}-scope`} label={`Period budget ${i + 1}: scope`} path={`period_budgets.${i}.scope`} errors={errors} hint={PERIOD_BUDGET_SCOPE_HINTS[b.scope]}>
              {(a) => <OptionSelect a={a} modes={PERIOD_BUDGET_SCOPES} value={b.scope} onChange={(scope) => setPeriodBudget(i, { scope })} />}
            </Field>
            <Field id={`${p}-pb-${i}-period`} label={`Period budget ${i + 1}: period`} path={`period_budgets.${i}.period`} errors={errors} hint="one budget per scope and period">
              {(a) => <OptionSelect a={a} modes={BUDGET_PERIODS} value={b.period} onChange={(period) => setPeriodBudget(i, { period })} />}
            </Field>
            <Field id={`${p}-pb-${i}-max`} label={`Period budget ${i + 1}: max USD`} path={`period_budgets.${i}.max_usd`} errors={errors} hint="spent within one period; more is budget exceeded">
              {(a) => <input {...a} type="text" inputMode="decimal" value={b.max_usd} onChange={(e) => setPeriodBudget(i, { max_usd: e.target.value })} />}
            </Field>
            <button type="button" className="link-button" onClick={() => setD((s) => ({ ...s, period_budgets: s.period_budgets.filter((_, j) => j !== i) }))}>
              Remove period budget {i + 1}
            </button>
          </div>
        ))}
        <button type="button" disabled={d.period_budgets.length >= PERIOD_BUDGET_SCOPES.length * BUDGET_PERIODS.length} onClick={() => setD((s) => ({ ...s, period_budgets: [...s.period_budgets, { ...freePeriodPair(s.period_budgets), max_usd: '' }] }))}>
          Add a period budget
        </button>
      </fieldset>

      <fieldset>
        <legend>Rate limits (calls per window)</legend>
        {unclaimed(errors, 'rate_limits', d.rate_limits.map((r) => `rate_limits.${r.action.trim()}`)).map((e, i) => (
          <span key={i} className="field-error">
            {e.path}: {e.message}
          </span>
        ))}
        {d.rate_limits.length === 0 ? <p className="muted">No rate limits.</p> : null}
        {d.rate_limits.map((r, i) => {
          const at = `rate_limits.${r.action.trim()}`;
          return (
            <div key={i} className="rule-row" role="group" aria-label={`Rate limit ${i + 1}`}>
              <Field id={`${p}-rl-${i}-action`} label={`Limit ${i + 1}: action`} path={at} exact errors={errors} local={repeated[i] ? `limit ${repeated[i]} already names this action: a policy has one limit per action` : undefined} hint="* = all actions together">
                {(a) => <input {...a} type="text" value={r.action} onChange={(e) => setLimit(i, { action: e.target.value })} />}
              </Field>
              <Field id={`${p}-rl-${i}-calls`} label={`Limit ${i + 1}: calls`} path={`${at}.max_calls`} errors={errors} hint="at most this many calls">
                {(a) => <input {...a} type="text" inputMode="numeric" value={r.max_calls} onChange={(e) => setLimit(i, { max_calls: e.target.value })} />}
              </Field>
              <Field id={`${p}-rl-${i}-window`} label={`Limit ${i + 1}: window (s)`} path={`${at}.window_seconds`} errors={errors} hint={r.scope === 'process' ? 'in seconds; a sliding window' : 'in seconds; fixed windows aligned to the clock'}>
                {(a) => <input {...a} type="text" inputMode="decimal" value={r.window_seconds} onChange={(e) => setLimit(i, { window_seconds: e.target.value })} />}
              </Field>
              <Field id={`${p}-rl-${i}-scope`} label={`Limit ${i + 1}: scope`} path={`${at}.scope`} errors={errors} hint={RATE_LIMIT_SCOPE_HINTS[r.scope]}>
                {(a) => <OptionSelect a={a} modes={RATE_LIMIT_SCOPES} value={r.scope} onChange={(scope) => setLimit(i, { scope })} />}
              </Field>
              <button type="button" className="link-button" onClick={() => setD((s) => ({ ...s, rate_limits: s.rate_limits.filter((_, j) => j !== i) }))}>
                Remove limit {i + 1}
              </button>
            </div>
          );
        })}
        <button type="button" onClick={() => setD((s) => ({ ...s, rate_limits: [...s.rate_limits, { action: s.rate_limits.some((x) => x.action.trim() === ANY_ACTION) ? '' : ANY_ACTION, max_calls: '', window_seconds: '', scope: RATE_LIMIT_SCOPES[0] }] }))}>
          Add a rate limit
        </button>
      </fieldset>

      <fieldset>
        <legend>Downgrades (change an argument instead of blocking; applied in order)</legend>
        {errorsAt(errors, 'downgrades')
          .filter((e) => !/^body\.downgrades\.\d+\./.test(e.path))
          .map((e, i) => (
            <span key={i} className="field-error">
              {e.message}
            </span>
          ))}
        {d.downgrades.length === 0 ? <p className="muted">No downgrade rules.</p> : null}
        {d.downgrades.map((r, i) => (
          <div key={i} className="rule-row" role="group" aria-label={`Downgrade rule ${i + 1}`}>
            <Field id={`${p}-dg-${i}-action`} label={`Rule ${i + 1}: action`} path={`downgrades.${i}.action`} errors={errors} hint="* = every action">
              {(a) => <input {...a} type="text" value={r.action} onChange={(e) => setRule(i, { action: e.target.value })} />}
            </Field>
            <Field id={`${p}-dg-${i}-argument`} label={`Rule ${i + 1}: argument`} path={`downgrades.${i}.argument`} errors={errors} hint="dotted path, e.g. payment.amount">
              {(a) => <input {...a} type="text" value={r.argument} onChange={(e) => setRule(i, { argument: e.target.value })} />}
            </Field>
            <Field id={`${p}-dg-${i}-kind`} label={`Rule ${i + 1}: change`} path={`downgrades.${i}.replace`} errors={errors}>
              {(a) => (
                <select {...a} value={r.kind} onChange={(e) => setRule(i, { kind: e.target.value as DowngradeDraft['kind'] })}>
                  <option value="max">cap at a maximum</option>
                  <option value="replace">replace a value</option>
                </select>
              )}
            </Field>
            {r.kind === 'max' ? (
              <Field id={`${p}-dg-${i}-max`} label={`Rule ${i + 1}: maximum`} path={`downgrades.${i}.max`} errors={errors}>
                {(a) => <input {...a} type="text" inputMode="decimal" value={r.max} onChange={(e) => setRule(i, { max: e.target.value })} />}
              </Field>
            ) : (
              <>
                <Field id={`${p}-dg-${i}-from`} label={`Rule ${i + 1}: value`} path={`downgrades.${i}.max`} errors={errors}>
                  {(a) => <input {...a} type="text" value={r.from} onChange={(e) => setRule(i, { from: e.target.value })} />}
                </Field>
                <Field id={`${p}-dg-${i}-to`} label={`Rule ${i + 1}: replaced by`} path={`downgrades.${i}.replace.${r.from}`} errors={errors}>
                  {(a) => <input {...a} type="text" value={r.to} onChange={(e) => setRule(i, { to: e.target.value })} />}
                </Field>
              </>
            )}
            <button type="button" className="link-button" onClick={() => setD((s) => ({ ...s, downgrades: s.downgrades.filter((_, j) => j !== i) }))}>
              Remove rule {i + 1}
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setD((s) => ({ ...s, downgrades: [...s.downgrades, { action: ANY_ACTION, argument: '', kind: 'max', max: '', from: '', to: '' }] }))}>
          Add a downgrade rule
        </button>
      </fieldset>

      <fieldset>
        <legend>Guardrails</legend>
        {errorsAt(errors, 'guardrails')
          .filter((e) => !/^body\.guardrails\.(pii|moderation|loop|idempotency)(\.|$)/.test(e.path))
          .map((e, i) => (
            <span key={i} className="field-error">
              {e.path}: {e.message}
            </span>
          ))}
        <div className="guardrail">
          <label className="guardrail-switch">
            <input type="checkbox" checked={d.pii.on} onChange={(e) => up('pii', { on: e.target.checked })} /> Personal data (PII)
          </label>
          {d.pii.on ? (
            <>
              <Field id={`${p}-pii-mode`} label="PII mode" path="guardrails.pii.mode" errors={errors} hint="redact masks each match and lets the action run">
                {(a) => <OptionSelect a={a} modes={PII_GUARDRAIL_MODES} value={d.pii.mode} onChange={(mode) => up('pii', { mode })} />}
              </Field>
              <Categories id={`${p}-pii-categories`} legend="PII categories" all={d.pii.all} chosen={d.pii.categories} options={PII_CATEGORIES} errors={errors} path="guardrails.pii.categories" onChange={(all, categories) => up('pii', { all, categories })} />
            </>
          ) : null}
        </div>
        <div className="guardrail">
          <label className="guardrail-switch">
            <input type="checkbox" checked={d.moderation.on} onChange={(e) => up('moderation', { on: e.target.checked })} /> Moderation
          </label>
          {d.moderation.on ? (
            <>
              <div className="form-grid">
                <Field id={`${p}-moderation-mode`} label="Moderation mode" path="guardrails.moderation.mode" errors={errors}>
                  {(a) => <OptionSelect a={a} modes={GUARDRAIL_MODES} value={d.moderation.mode} onChange={(mode) => up('moderation', { mode })} />}
                </Field>
                <Field id={`${p}-moderation-threshold`} label="Moderation threshold" path="guardrails.moderation.threshold" errors={errors} hint="score from 0 to 1 at which it triggers">
                  {(a) => <input {...a} type="text" inputMode="decimal" value={d.moderation.threshold} onChange={(e) => up('moderation', { threshold: e.target.value })} />}
                </Field>
              </div>
              <Categories id={`${p}-moderation-categories`} legend="Moderation categories" all={d.moderation.all} chosen={d.moderation.categories} options={MODERATION_CATEGORIES} errors={errors} path="guardrails.moderation.categories" onChange={(all, categories) => up('moderation', { all, categories })} />
            </>
          ) : null}
        </div>
        <div className="guardrail">
          <label className="guardrail-switch">
            <input type="checkbox" checked={d.loop.on} onChange={(e) => up('loop', { on: e.target.checked })} /> Loop detection
          </label>
          {d.loop.on ? (
            <div className="form-grid">
              <Field id={`${p}-loop-mode`} label="Loop mode" path="guardrails.loop.mode" errors={errors}>
                {(a) => <OptionSelect a={a} modes={GUARDRAIL_MODES} value={d.loop.mode} onChange={(mode) => up('loop', { mode })} />}
              </Field>
              <Field id={`${p}-loop-threshold`} label="Loop threshold (identical calls that run)" path="guardrails.loop.threshold" errors={errors}>
                {(a) => <input {...a} type="text" inputMode="numeric" value={d.loop.threshold} onChange={(e) => up('loop', { threshold: e.target.value })} />}
              </Field>
              <Field id={`${p}-loop-window`} label="Loop window (seconds)" path="guardrails.loop.window_seconds" errors={errors}>
                {(a) => <input {...a} type="text" inputMode="decimal" value={d.loop.window_seconds} onChange={(e) => up('loop', { window_seconds: e.target.value })} />}
              </Field>
            </div>
          ) : null}
        </div>
        <div className="guardrail">
          <label className="guardrail-switch">
            <input type="checkbox" checked={d.idempotency.on} onChange={(e) => up('idempotency', { on: e.target.checked })} /> Idempotency
          </label>
          {d.idempotency.on ? (
            <div className="form-grid">
              <Field id={`${p}-idem-actions`} label="Idempotent actions" path="guardrails.idempotency.actions" errors={errors} hint="comma-separated action names">
                {(a) => <input {...a} type="text" value={d.idempotency.actions} onChange={(e) => up('idempotency', { actions: e.target.value })} />}
              </Field>
              <Field id={`${p}-idem-ttl`} label="Idempotency TTL (seconds)" path="guardrails.idempotency.ttl_seconds" errors={errors}>
                {(a) => <input {...a} type="text" inputMode="decimal" value={d.idempotency.ttl_seconds} onChange={(e) => up('idempotency', { ttl_seconds: e.target.value })} />}
              </Field>
            </div>
          ) : null}
        </div>
        <div className="guardrail">
          <label className="guardrail-switch">
            <input type="checkbox" checked={d.auto_kill.on} onChange={(e) => up('auto_kill', { on: e.target.checked })} /> Automatic kill switch
          </label>
          {d.auto_kill.on ? (
            <div className="form-grid">
              <Field id={`${p}-autokill-rate`} label="Block rate that stops the agent" path="auto_kill_switch.block_rate" errors={errors} hint="share of stopped decisions, above 0 and at most 1">
                {(a) => <input {...a} type="text" inputMode="decimal" value={d.auto_kill.block_rate} onChange={(e) => up('auto_kill', { block_rate: e.target.value })} />}
              </Field>
              <Field id={`${p}-autokill-window`} label="Window (seconds)" path="auto_kill_switch.window_seconds" errors={errors}>
                {(a) => <input {...a} type="text" inputMode="numeric" value={d.auto_kill.window_seconds} onChange={(e) => up('auto_kill', { window_seconds: e.target.value })} />}
              </Field>
              <Field id={`${p}-autokill-min`} label="Fewest decisions in the window" path="auto_kill_switch.min_actions" errors={errors}>
                {(a) => <input {...a} type="text" inputMode="numeric" value={d.auto_kill.min_actions} onChange={(e) => up('auto_kill', { min_actions: e.target.value })} />}
              </Field>
            </div>
          ) : null}
        </div>
      </fieldset>

      {save.isError ? <ProblemMessage error={save.error} /> : null}
      {unchanged ? (
        <p className="state" role="status">
          Nothing changed.
        </p>
      ) : null}
      <div className="actions-row">
        <WriteButton type="submit" className="primary" disabled={save.isPending}>
          {policy ? 'Save changes' : 'Create policy'}
        </WriteButton>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A select of a few enum values shown as they are (a guardrail mode, a rate limit's scope, a budget's period). */
function OptionSelect<T extends string>({ a, modes, value, onChange }: { a: object; modes: readonly T[]; value: T; onChange: (m: T) => void }) {
  return (
    <select {...a} value={value} onChange={(e) => onChange(e.target.value as T)}>
      {modes.map((m) => (
        <option key={m} value={m}>
          {m}
        </option>
      ))}
    </select>
  );
}
