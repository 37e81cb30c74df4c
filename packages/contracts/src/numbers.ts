/**
 * The precision of numbers in API answers (docs/api.md, Numbers). Arithmetic on binary floats leaves noise in sums and
 * means (`17.900000000000002` ms, `383.02980000000004` USD); every reply is rounded once, where a service answers a
 * message (`wireEndpoint` in `@agp/bus`), by the reply schema of its wire row:
 * - **USD amounts**: {@link USD_DECIMALS} decimals (a millionth of a dollar, below the price of one LLM token at most
 *   prices), in records and aggregates alike;
 * - **durations in ms**: {@link MS_DECIMALS} decimal (a tenth of a millisecond).
 * A field is a USD amount when its name ends in `_usd` or is one of {@link USD_FIELDS}; a duration when its name ends
 * in `_ms`. Only number fields the schema types are rounded: free-form JSON the caller sent (`inputs`, `outputs`,
 * `original_inputs`, `metadata`, …: `z.unknown()` / records of unknown) is returned exactly as stored.
 * Fractions (rates, shares) and counts are left as computed.
 */
import type { z } from 'zod';
import { defOf, unwrapSchema as unwrap } from './zod-walk.js';

/** Decimals of a USD amount in an answer: 6 (a micro-dollar). */
export const USD_DECIMALS = 6;
/** Decimals of a duration in ms in an answer: 1 (a tenth of a millisecond). */
export const MS_DECIMALS = 1;

/** USD fields whose name does not end in `_usd`: policy budgets, replay savings, the spec's cost-analysis fields. */
export const USD_FIELDS: ReadonlySet<string> = new Set(['session_budget', 'run_budget', 'action_budget', 'cost_savings', 'cost', 'avg_cost_per_run', 'min_cost']);

/** `x` rounded half away from zero to `decimals` decimals (via the shortest decimal string, so 1.005 → 1.01 at 2). */
export function roundTo(x: number, decimals: number): number {
  if (!Number.isFinite(x) || Number.isInteger(x)) return x;
  const abs = Math.abs(x);
  const text = String(abs);
  // Shifting the decimal string avoids 1.005 * 100 = 100.49999999999999; exponent forms (below 1e-6) just scale.
  const r = text.includes('e') ? Math.round(abs * 10 ** decimals) / 10 ** decimals : Number(`${Math.round(Number(`${text}e${decimals}`))}e-${decimals}`);
  const out = x < 0 ? -r : r;
  return Number.isFinite(out) ? out + 0 : x;
}

/**
 * `usd`, an amount in US dollars, rounded half away from zero to {@link USD_DECIMALS} decimals (a micro-dollar,
 * 1e-6 USD): the platform's one rounding of money. Apply it once to a finished amount (a sum, a mean, a saving): a
 * running sum rounded at each step loses the costs below half a micro-dollar (a few tokens cost less), while one final
 * rounding keeps them and still removes the float noise of the sum (0.1 + 0.2 → 0.3). Every USD field of an answer is
 * rounded so ({@link roundNumbers}).
 */
export function roundUsd(usd: number): number {
  return roundTo(usd, USD_DECIMALS);
}

/** The decimals of the field named `key`: USD, ms, or null (left as it is). */
export function decimalsOf(key: string): number | null {
  if (key.endsWith('_usd') || USD_FIELDS.has(key)) return USD_DECIMALS;
  if (key.endsWith('_ms')) return MS_DECIMALS;
  return null;
}

/** What to round in a value of a schema: nothing, a number to `decimals`, an object's fields, array items, record values. */
type Plan = null | { kind: 'number'; decimals: number } | { kind: 'object'; fields: Map<string, Plan> } | { kind: 'items'; item: Plan };

/** Merge two object plans (the options of a union, the sides of an intersection); the first field plan wins. */
function merge(a: Plan, b: Plan): Plan {
  if (!a) return b;
  if (!b) return a;
  if (a.kind === 'object' && b.kind === 'object') {
    const fields = new Map(a.fields);
    for (const [k, p] of b.fields) fields.set(k, fields.has(k) ? merge(fields.get(k)!, p) : p);
    return { kind: 'object', fields };
  }
  if (a.kind === 'items' && b.kind === 'items') return { kind: 'items', item: merge(a.item, b.item) };
  return a;
}

/** The plan of a value of schema `s` found under the field `key` (null: nothing in it to round). */
function planOf(s: z.ZodType, key: string | null, depth: number): Plan {
  if (depth > 12) return null;
  const inner = unwrap(s);
  const d = defOf(inner);
  switch (d.type) {
    case 'number': {
      const decimals = key === null ? null : decimalsOf(key);
      return decimals === null ? null : { kind: 'number', decimals };
    }
    case 'object': {
      const fields = new Map<string, Plan>();
      for (const [k, v] of Object.entries(d.shape ?? {})) {
        const p = planOf(v, k, depth + 1);
        if (p) fields.set(k, p);
      }
      return fields.size ? { kind: 'object', fields } : null;
    }
    case 'array': {
      const item = d.element ? planOf(d.element, key, depth + 1) : null;
      return item ? { kind: 'items', item } : null;
    }
    case 'record': {
      // Record values keep the record's own name for their unit (`by_day: {date: cost_usd}` does not occur; records
      // of objects are the common case, whose fields carry their names).
      const item = d.valueType ? planOf(d.valueType, key, depth + 1) : null;
      return item ? { kind: 'items', item } : null;
    }
    case 'union':
      return (d.options ?? []).reduce<Plan>((acc, o) => merge(acc, planOf(o, key, depth + 1)), null);
    case 'intersection':
      return merge(d.left ? planOf(d.left, key, depth + 1) : null, d.right ? planOf(d.right, key, depth + 1) : null);
    default:
      return null;
  }
}

function apply(plan: Plan, value: unknown): unknown {
  if (!plan || value === null || value === undefined) return value;
  if (plan.kind === 'number') return typeof value === 'number' ? roundTo(value, plan.decimals) : value;
  if (typeof value !== 'object') return value;
  if (plan.kind === 'items') {
    if (Array.isArray(value)) {
      const mapped = value.map((v) => apply(plan.item, v));
      return mapped.some((v, i) => v !== value[i]) ? mapped : value;
    }
    let copy: Record<string, unknown> | null = null;
    for (const [k, v] of Object.entries(value)) {
      const after = apply(plan.item, v);
      if (after !== v) (copy ??= { ...(value as Record<string, unknown>) })[k] = after;
    }
    return copy ?? value;
  }
  if (Array.isArray(value)) return value;
  let out: Record<string, unknown> | null = null;
  for (const [k, p] of plan.fields) {
    if (!(k in value)) continue;
    const before = (value as Record<string, unknown>)[k];
    const after = apply(p, before);
    if (after !== before) (out ??= { ...(value as Record<string, unknown>) })[k] = after;
  }
  return out ?? value;
}

const plans = new WeakMap<z.ZodType, Plan>();

/**
 * `value` (a value of `schema`) with its USD amounts and ms durations rounded (see the file's comment); the input is
 * not modified (changed objects are copied) and a value with nothing to round is returned as it is. Fields the schema
 * does not type (unknown JSON) are never touched.
 */
export function roundNumbers<T>(schema: z.ZodType, value: T): T {
  let plan = plans.get(schema);
  if (plan === undefined) {
    plan = planOf(schema, null, 0);
    plans.set(schema, plan);
  }
  return apply(plan, value) as T;
}
