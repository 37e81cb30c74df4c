/**
 * Value helpers shared by the deciders: deep equality of JSON values (object key order ignored) and the
 * field-by-field diff that PolicyUpdated / AgentUpdated carry.
 */
import { canonicalJson } from '@agp/contracts';

/** True when two JSON values are equal (object key order ignored, array order significant). */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * The fields of `fields` whose value differs between `before` and `after`, each as `{from, to}`.
 * Only fields present in `after` are compared (a patch).
 */
export function diff<F extends string>(fields: readonly F[], before: Record<F, unknown>, after: Partial<Record<F, unknown>>): Partial<Record<F, { from: unknown; to: unknown }>> {
  const changes: Partial<Record<F, { from: unknown; to: unknown }>> = {};
  for (const f of fields) {
    if (!(f in after) || after[f] === undefined) continue;
    if (!sameValue(before[f], after[f])) changes[f] = { from: before[f], to: after[f] };
  }
  return changes;
}
