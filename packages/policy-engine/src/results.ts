/**
 * The PII guardrail on an action's result (its `results` mode): what the agent may see of a result that holds
 * personal data. Pure; the same scanner ({@link scanPii}) and masking ({@link redactPii}) as the arguments' check.
 * Source: architecture §1 (packages/policy-engine); docs/mcp-proxy.md (results).
 */
import { PII_CATEGORIES, type GuardrailContext, type PiiCategory, type PiiResultMode } from '@agp/contracts';
import { appliesTo, type EnginePolicy, type PreparedPolicies } from './decide.js';
import { redactPii, scanPii, walkStrings, type StringPlace } from './pii.js';

/**
 * The verdict on one result:
 * - `pass`: no enabled policy applying to the agent scans results, or none found personal data of its categories;
 *   `result` is the input unchanged.
 * - `block` / `redact` / `warn`: the most restrictive (block, redact, warn; ties by the oldest policy) `results`
 *   mode whose categories matched. `result` is the input with every match of the redacting policies' categories
 *   replaced by `[REDACTED:<category>]` for `redact`, the input unchanged for `warn` and `block` (withhold it).
 *   `policy_id`/`policy_name` name that policy, `reason` says what was found (masked, never the raw text), and
 *   `guardrail_context` is the pii context payload (spec §Guardrail context payload) of that policy's matches.
 */
export interface ResultReview {
  outcome: 'pass' | PiiResultMode;
  result: unknown;
  policy_id: string | null;
  policy_name: string | null;
  reason: string | null;
  guardrail_context: GuardrailContext | null;
}

const RANK: Readonly<Record<PiiResultMode, number>> = { block: 0, redact: 1, warn: 2 };
const ALL: ReadonlySet<PiiCategory> = new Set(PII_CATEGORIES);

/**
 * Review an action's result against the `results` mode of the PII guardrails of the enabled policies applying to
 * `agentId`. Pure and deterministic; never throws for JSON-like input (the scan is bounded as {@link scanPii}).
 * @param policies the organisation's policies (any order; disabled and other agents' ones are skipped), or prepared.
 * @param agentId the acting agent; @param actionName the action the result belongs to (named in the reason).
 * @param result the result as the agent would see it (any JSON value: an MCP tool result's content included).
 */
export function reviewResult(policies: readonly EnginePolicy[] | PreparedPolicies, agentId: string, actionName: string, result: unknown): ResultReview {
  const list = Array.isArray(policies) ? (policies as readonly EnginePolicy[]) : (policies as PreparedPolicies).policies;
  const scanning = list
    .filter((p) => p.enabled && p.guardrails?.pii?.results !== undefined && appliesTo(p, agentId))
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  const pass: ResultReview = { outcome: 'pass', result, policy_id: null, policy_name: null, reason: null, guardrail_context: null };
  if (scanning.length === 0 || result === null || typeof result !== 'object') return pass;
  const scan = scanPii(result, ALL);
  if (scan.matches.length === 0) return pass;
  let best: { p: EnginePolicy; mode: PiiResultMode; context: GuardrailContext; found: string } | null = null;
  const redacting = new Set<PiiCategory>();
  for (const p of scanning) {
    const g = p.guardrails!.pii!;
    const mode = g.results!;
    const matches = g.categories === undefined ? scan.matches : scan.matches.filter((m) => g.categories!.includes(m.category));
    if (matches.length === 0) continue;
    if (mode === 'redact') for (const c of g.categories ?? PII_CATEGORIES) redacting.add(c);
    if (best !== null && RANK[best.mode] <= RANK[mode]) continue;
    const categories = [...new Set(matches.map((m) => m.category))];
    const fields = [...new Set(matches.map((m) => m.field_path))];
    const found = `${matches.length} personal-data match${matches.length === 1 ? '' : 'es'} (${categories.join(', ')}) in ${fields.slice(0, 5).join(', ')}${fields.length > 5 ? ', …' : ''}`;
    best = { p, mode, context: { guardrail_schema_version: 1, guardrail: 'pii', matches: matches.map((m) => ({ ...m })), categories, fields }, found };
  }
  if (best === null) return pass;
  const verb = best.mode === 'block' ? 'withheld' : best.mode === 'redact' ? 'redacted' : 'warned';
  return {
    outcome: best.mode,
    result: best.mode === 'redact' ? redactStrings(result, redacting.size === PII_CATEGORIES.length ? ALL : redacting) : result,
    policy_id: best.p.id,
    policy_name: best.p.name,
    reason: `${actionName} result holds ${best.found}; ${verb} by the PII guardrail of policy "${best.p.name}"`,
    guardrail_context: best.context,
  };
}

/** A copy of `value` with every string's PII of the `wanted` categories masked (containers copied on the way). */
function redactStrings(value: unknown, wanted: ReadonlySet<PiiCategory>): unknown {
  const edits: Array<{ place: StringPlace; text: string }> = [];
  walkStrings(value, (text, place) => {
    const masked = redactPii(text, wanted);
    if (masked !== text) edits.push({ place, text: masked });
    return true;
  });
  if (edits.length === 0) return value;
  const root = structuredClone(value) as Record<string, unknown>;
  for (const { place, text } of edits) {
    const keys: string[] = [];
    for (let n: StringPlace | null = place; n !== null; n = n.parent) keys.push(n.key);
    keys.reverse();
    let at: Record<string, unknown> = root;
    for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
    at[keys[keys.length - 1]] = text;
  }
  return root;
}
