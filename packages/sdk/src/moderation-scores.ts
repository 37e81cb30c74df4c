/**
 * The moderation scores of one action's arguments, as the decision step takes them: `run.act` asks the agent's
 * moderation provider (./moderation.ts) only while a policy that applies has a moderation guardrail. Source:
 * docs/sdk.md §Moderation provider; spec §Guardrail context payload.
 */
import type { ModerationScores } from '@agp/contracts';
import { fieldPathOf, walkStrings } from '@agp/policy-engine';
import type { ModerationProvider } from './moderation.js';

/** Most string fields of one action's arguments the moderation guardrail scores (the engine's `ModerationScoresSchema` bound). */
export const MAX_MODERATED_FIELDS = 1000;

/** The moderation provider's scores of an action's arguments, or why there are none. */
export type Moderated = { scores: ModerationScores } | { error: string };

/**
 * Score the arguments' strings with the moderation provider: every non-blank string (nested objects and
 * arrays included), each distinct text asked once, at most {@link MAX_MODERATED_FIELDS} fields. Never rejects: a
 * missing provider, a provider error, an answer of the wrong length or too many strings give `{error}`.
 */
export async function scoreArguments(provider: ModerationProvider | undefined, args: Record<string, unknown>): Promise<Moderated> {
  if (!provider) return { error: 'no moderation provider was given to Governor.connect (option moderation)' };
  const fields: Array<{ field_path: string; text: number }> = [];
  const texts: string[] = [];
  const index = new Map<string, number>();
  let tooMany = false;
  const truncated = walkStrings(args, (text, place) => {
    if (text.trim() === '') return true;
    if (fields.length >= MAX_MODERATED_FIELDS) {
      tooMany = true;
      return false;
    }
    let i = index.get(text);
    if (i === undefined) index.set(text, (i = texts.push(text) - 1));
    fields.push({ field_path: fieldPathOf(place), text: i });
    return true;
  });
  if (truncated || tooMany) return { error: `the arguments hold more strings than the moderation guardrail checks (at most ${MAX_MODERATED_FIELDS} fields, 1 MiB of text)` };
  if (texts.length === 0) return { scores: [] };
  let results: Array<Record<string, number>>;
  try {
    results = await provider.moderate(texts);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
  if (!Array.isArray(results) || results.length !== texts.length) return { error: `the moderation provider answered ${Array.isArray(results) ? results.length : 'no'} result(s) for ${texts.length} text(s)` };
  const scores: ModerationScores = [];
  for (const f of fields) {
    const r = results[f.text];
    if (r === null || typeof r !== 'object') return { error: `the moderation provider answered ${JSON.stringify(r)} for a text, not a record of scores` };
    const clean: Record<string, number> = {};
    for (const [k, v] of Object.entries(r)) if (typeof v === 'number' && v >= 0 && v <= 1 && k.length <= 128) clean[k] = v;
    scores.push({ field_path: f.field_path, scores: clean });
  }
  return { scores };
}
