import { z } from 'zod';
import { RISK_LEVELS, RiskLevelSchema, type InterventionEnrichedData, type InterventionRecord } from '@agp/contracts';

/** Longest `reason` / `agent_intent` accepted from the model, in characters (the creation limit). */
const MAX_TEXT = 10_000;
/** Longest `suggested_rewrite` accepted from the model (the record's limit). */
const MAX_REWRITE = 20_000;

/**
 * The model's answer as the prompt asks for it (prompt.ts). `risk_level` is checked apart (see
 * {@link decideEnrichment}) so an out-of-range value rejects only that field; extra keys are ignored.
 */
export const EnrichmentAnswerSchema = z.object({
  reason: z.string().trim().min(1).max(MAX_TEXT),
  agent_intent: z.string().trim().min(1).max(MAX_TEXT),
  risk_level: z.unknown(),
  suggested_rewrite: z.string().trim().max(MAX_REWRITE).nullable().optional(),
});
export type EnrichmentAnswer = z.infer<typeof EnrichmentAnswerSchema>;

/** A parsed answer, or why the content is not one (this counts as a failed attempt). */
export type ParsedAnswer = { ok: true; answer: EnrichmentAnswer } | { ok: false; error: string };

/**
 * Parse the assistant message content: JSON (a ```json fence around it is tolerated), then the schema.
 * Never throws. Source: docs/decisions.md (Enrichment; validated with zod).
 */
export function parseAnswer(content: string | null | undefined): ParsedAnswer {
  if (!content || !content.trim()) return { ok: false, error: 'empty answer' };
  const text = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `answer is not JSON: ${(err as Error).message}` };
  }
  const parsed = EnrichmentAnswerSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, error: `answer does not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
  }
  return { ok: true, answer: parsed.data };
}

/**
 * Decide what an answer changes on the current record: each of the four fields whose new value differs
 * (a `null`/absent `suggested_rewrite` keeps the current one). A `risk_level` outside the five wire values
 * (after trimming and lower-casing) is rejected and recorded in `rejected`; the current level stays.
 * Pure. Source: spec §Intervention record (Enrichment); docs/decisions.md (Enrichment).
 */
export function decideEnrichment(current: InterventionRecord, answer: EnrichmentAnswer): Pick<InterventionEnrichedData, 'changes' | 'rejected'> {
  const changes: InterventionEnrichedData['changes'] = {};
  const rejected: NonNullable<InterventionEnrichedData['rejected']> = [];
  if (answer.reason !== current.reason) changes.reason = { from: current.reason, to: answer.reason };
  if (answer.agent_intent !== current.agent_intent) changes.agent_intent = { from: current.agent_intent, to: answer.agent_intent };
  const risk = RiskLevelSchema.safeParse(typeof answer.risk_level === 'string' ? answer.risk_level.trim().toLowerCase() : answer.risk_level);
  if (!risk.success) {
    rejected.push({ field: 'risk_level', value: answer.risk_level ?? null, reason: `not one of ${RISK_LEVELS.join(', ')}; the original is kept` });
  } else if (risk.data !== current.risk_level) {
    changes.risk_level = { from: current.risk_level, to: risk.data };
  }
  const rewrite = answer.suggested_rewrite;
  if (rewrite && rewrite !== current.remediation_payload.suggested_rewrite) {
    changes.suggested_rewrite = { from: current.remediation_payload.suggested_rewrite, to: rewrite };
  }
  return rejected.length ? { changes, rejected } : { changes };
}
