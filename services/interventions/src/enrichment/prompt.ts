import type { InterventionRecord } from '@agp/contracts';
import type { ChatMessage } from '@agp/runtime/llm';

/**
 * Version of the enrichment prompt below. Recorded on every InterventionEnriched / InterventionEnrichmentFailed
 * event (`prompt_version`), so an audit can tell which wording produced a rewrite. Bump it whenever the text or
 * the shape of the facts changes. Source: docs/decisions.md (Enrichment).
 */
export const PROMPT_VERSION = 'enrich-v1';

/** Longest JSON rendering of `original_inputs` / `modified_inputs` put in the prompt, in characters. */
export const MAX_INPUTS_CHARS = 4000;

const SYSTEM = `You rewrite records of an AI-agent governance platform for people who are not engineers.
A policy or guardrail stopped, escalated, limited or changed an action an AI agent tried to take.
You receive the record as JSON. Answer with ONE JSON object and nothing else, with exactly these four keys:
- "reason": one or two plain-English sentences saying why the action was stopped or changed, naming the policy or guardrail when known.
- "agent_intent": one plain-English sentence saying what the agent was trying to achieve.
- "risk_level": exactly one of "critical", "high", "medium", "low", "minimal" (lowercase), judging the harm the action could have done. Keep the given risk_level unless the facts clearly say otherwise.
- "suggested_rewrite": a plain-English suggestion for a safe way to reach the same goal, or null when none applies.
Use only the facts given; do not invent names, numbers or data. Never repeat masked values (text with *) or personal data.`;

/**
 * The facts of one intervention the model sees: the record's own fields (with the values as originally
 * recorded for the four fields it rewrites), its policy and its guardrail context. Inputs are cut to
 * {@link MAX_INPUTS_CHARS} each so one huge payload cannot blow the token budget.
 */
export function promptFacts(record: InterventionRecord): Record<string, unknown> {
  return {
    type: record.type,
    outcome: record.outcome,
    action_name: record.action_name,
    description: record.description,
    agent_id: record.agent_id,
    run_id: record.run_id,
    policy: record.policy_id || record.policy_name ? { id: record.policy_id, name: record.policy_name } : null,
    risk_level: record.risk_level,
    estimated_cost_usd: record.estimated_cost_usd,
    cost_prevented_usd: record.cost_prevented_usd,
    blast_radius: record.blast_radius,
    reason: record.reason,
    agent_intent: record.agent_intent,
    suggested_rewrite: record.remediation_payload.suggested_rewrite,
    original_inputs: clip(record.original_inputs),
    modified_inputs: record.modified_inputs === null ? null : clip(record.modified_inputs),
    guardrail_context: record.context ?? null,
  };
}

/**
 * The chat messages of the enrichment request: the fixed instructions (system) and the record's facts as
 * JSON (user). Pure; the same record always gives the same messages. Source: docs/decisions.md (Enrichment).
 */
export function buildPrompt(record: InterventionRecord): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Intervention record:\n${JSON.stringify(promptFacts(record), null, 2)}` },
  ];
}

/** The value itself when its JSON fits {@link MAX_INPUTS_CHARS}, else its JSON cut to that length with a marker. */
function clip(value: Record<string, unknown>): unknown {
  const json = JSON.stringify(value);
  return json.length <= MAX_INPUTS_CHARS ? value : `${json.slice(0, MAX_INPUTS_CHARS)}… (truncated)`;
}
