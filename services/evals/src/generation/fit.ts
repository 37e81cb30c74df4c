/**
 * Keeping the generate-scenarios answer within one bus message: the answer travels as one reply of at most
 * `EVAL_MAX_REPLY_BYTES` of JSON (a NATS message holds 1 MiB), and 50 scenarios of each of nine categories, with their
 * source text, can be more. Pure. Source: docs/scenario-format.md (What the generator writes); contracts `EVAL_MAX_REPLY_BYTES`.
 */
import type { GeneratedScenario } from '@agp/contracts';

/** Largest JSON of one generated scenario, source text included, in bytes: a larger one is left out. */
export const MAX_SCENARIO_BYTES = 64 * 1024;
/** Bytes of the answer kept for everything but the scenarios (counts, the semantic part, the bus envelope). */
export const REPLY_OVERHEAD_BYTES = 8 * 1024;

/** What {@link fitScenarios} kept, and how many it left out: too large alone, or for the answer to fit. */
export interface Fitted {
  scenarios: GeneratedScenario[];
  tooLarge: string[];
  trimmed: string[];
}

/**
 * The scenarios that fit `maxBytes` of JSON together, in their order: each larger than {@link MAX_SCENARIO_BYTES}
 * is left out, then, while the rest is over `maxBytes − REPLY_OVERHEAD_BYTES`, the last scenario of the category that
 * has the most (ties: the category with more bytes, then its name) is left out. Deterministic: the same scenarios give
 * the same answer.
 */
export function fitScenarios(scenarios: readonly GeneratedScenario[], maxBytes: number): Fitted {
  const sized = scenarios.map((s) => ({ s, bytes: Buffer.byteLength(JSON.stringify(s)) + 1 }));
  const tooLarge = sized.filter((x) => x.bytes > MAX_SCENARIO_BYTES).map((x) => x.s.name);
  const kept = sized.filter((x) => x.bytes <= MAX_SCENARIO_BYTES);
  let total = kept.reduce((sum, x) => sum + x.bytes, 0);
  const trimmed: string[] = [];
  const budget = maxBytes - REPLY_OVERHEAD_BYTES;
  while (total > budget && kept.length) {
    const per = new Map<string, { count: number; bytes: number }>();
    for (const x of kept) {
      const c = per.get(x.s.category) ?? { count: 0, bytes: 0 };
      per.set(x.s.category, { count: c.count + 1, bytes: c.bytes + x.bytes });
    }
    const [category] = [...per.entries()].sort(([a, x], [b, y]) => y.count - x.count || y.bytes - x.bytes || (a < b ? -1 : 1))[0];
    const last = kept.map((x) => x.s.category).lastIndexOf(category);
    const [dropped] = kept.splice(last, 1);
    total -= dropped.bytes;
    trimmed.push(dropped.s.name);
  }
  return { scenarios: kept.map((x) => x.s), tooLarge, trimmed };
}
