/**
 * The Python SDK's moderation step (sdks/python/agp/moderation.py, agp/_decider.py) beside this one on its pure
 * parts: which texts of an action's arguments the provider is asked for and how its answer becomes the engine's
 * `moderation_scores` (`scoreArguments` ~ `score_arguments`, over `walkStrings`/`fieldPathOf` ~ `walk_strings`/
 * `field_path_of`), how a provider's category names map to the guardrail's (`moderationCategory` ~
 * `moderation_category`), and the decision when no scores could be had (`moderationUnavailable` ~
 * `moderation_unavailable`). Seeded cases go through both, python3 answering over stdin/stdout, and the canonical
 * JSON must be equal. Skips with one reason without python3.
 * Source: docs/sdk-python.md §Moderation provider; docs/sdk.md §Moderation provider.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, MODERATION_CATEGORIES, POLICY_DECISIONS } from '@agp/contracts';
import { askPython, pythonMissing as missing, rng } from '../../../test/support/python-parity.js';
import { moderationUnavailable, type ModerationGuardrailOf } from '../src/decider.js';
import type { GovernanceDecision } from '../src/errors.js';
import { moderationCategory } from '../src/moderation.js';
import { scoreArguments } from '../src/moderation-scores.js';

if (missing) console.warn(`[python moderation parity] skipped: ${missing}`);

const PY = `
import json, sys
from agp.engine.jsnum import canonical_json
from agp.moderation import score_arguments, moderation_category
from agp._decider import moderation_unavailable

class Provider:
    def __init__(self, c):
        self.c = c
        self.asked = []
    def moderate(self, texts):
        self.asked.append(list(texts))
        how = self.c["how"]
        if how == "throw":
            raise Exception(self.c["message"])
        out = [self.c["default"] if self.c["table"].get(t) is None else self.c["table"][t] for t in texts]  # JS: table[t] ?? default
        return out[:-1] if how == "short" else out

out = []
for c in json.load(sys.stdin):
    if c["kind"] == "score":
        p = None if c["how"] == "none" else Provider(c)
        r = score_arguments(p, c["args"])
        out.append(canonical_json({"result": r, "asked": p.asked if p else []}))
    elif c["kind"] == "category":
        out.append(canonical_json([moderation_category(n) for n in c["names"]]))
    else:
        out.append(canonical_json(moderation_unavailable(c["d"], c["guardrails"], c["name"], c["error"], c["estimated"], c["risk"])))
print(json.dumps(out))
`;

const python = (cases: unknown[]): string[] => askPython<string>(PY, cases);

/** Texts that differ between the languages' notions of blank, Unicode width and key order. */
const TEXTS = ['hello', 'I will hurt myself', ' ', '', '\t\n', '\ufeff', '\u001c', '\u0085', '\u00a0\u3000', 'héllo wörld', '😀 emoji', '日本語のテキスト', 'T-100', 'a'.repeat(70), ' padded '];
const KEYS = ['text', 'to', '10', '2', 'b', 'a', 'ключ', 'emoji😀', 'x.y', ''];
const SCORE_VALUES = [0, 1, 0.5, 0.123456789, 1e-7, 0.999, 1.5, -0.2, true, '0.5', null];
const NAMES = ['violence', 'hate', 'self-harm/intent', 'custom', 'k'.repeat(129), 'k'.repeat(128), '😀'.repeat(64), '😀'.repeat(65), '3'];

describe.skipIf(missing !== null)('the Python moderation step beside the TypeScript one', () => {
  it('collects the same texts and turns the answers into the same scores (300 seeded cases)', async () => {
    const r = rng(35_2);
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    const value = (depth: number): unknown => {
      const x = r();
      if (depth > 3 || x < 0.45) return pick(TEXTS);
      if (x < 0.55) return pick([1, 2.5, true, null, false]);
      if (x < 0.75) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => [pick(KEYS), value(depth + 1)]));
    };
    const record = (): unknown => {
      const x = r();
      if (x < 0.04) return pick([null, 'flagged', 7, 0.5, true]);
      if (x < 0.08) return [0.5, 2, 0.1];
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => [pick(NAMES), pick(SCORE_VALUES)]));
    };
    const cases: Array<Record<string, unknown>> = Array.from({ length: 300 }, (_, n) => {
      const args = Object.fromEntries(Array.from({ length: 1 + Math.floor(r() * 4) }, () => [pick(KEYS), value(0)]));
      const how = n < 5 ? 'none' : pick(['ok', 'ok', 'ok', 'ok', 'throw', 'short']);
      return { kind: 'score', args, how, message: `provider failed #${n}`, table: Object.fromEntries(TEXTS.map((t) => [t, record()])), default: { violence: 0.01 } };
    });
    // The bounds: more fields than the guardrail checks, more text than it reads, and a deep path cut from the front.
    cases.push({ kind: 'score', args: { many: Array.from({ length: 1001 }, (_, i) => `t${i % 7}`) }, how: 'ok', table: {}, default: { hate: 0.2 } });
    cases.push({ kind: 'score', args: { big: ['x'.repeat(600_000), 'y'.repeat(600_000)] }, how: 'ok', table: {}, default: { hate: 0.2 } });
    cases.push({ kind: 'score', args: { [`${'k'.repeat(300)}😀`]: { [`${'😀'.repeat(400)}`]: { deep: 'text at the end' } } }, how: 'ok', table: {}, default: { hate: 0.2 } });

    const ts = [];
    for (const c of cases) {
      const asked: string[][] = [];
      const provider = c.how === 'none' ? undefined : {
        async moderate(texts: string[]) {
          asked.push([...texts]);
          if (c.how === 'throw') throw new Error(c.message as string);
          const out = texts.map((t) => (c.table as Record<string, unknown>)[t] ?? c.default);
          return (c.how === 'short' ? out.slice(0, -1) : out) as Array<Record<string, number>>;
        },
      };
      ts.push(canonicalJson({ result: await scoreArguments(provider, c.args as Record<string, unknown>), asked }));
    }
    const py = python(cases);
    for (let i = 0; i < cases.length; i++) expect(py[i], `case ${i}: ${JSON.stringify(cases[i]).slice(0, 400)}`).toBe(ts[i]);
    // The cases reach every branch: scores, each error, a provider never asked.
    const kinds = new Set(ts.map((t) => { const v = JSON.parse(t).result; return 'scores' in v ? (v.scores.length ? 'scores' : 'none-asked') : v.error.split(' ').slice(0, 4).join(' '); }));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['scores', 'none-asked', 'no moderation provider was', 'the moderation provider answered', 'the arguments hold more']));
  });

  it('maps category names and decides without scores as the TypeScript SDK does', () => {
    const r = rng(35_3);
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    const spell = (c: string) => {
      const sep = pick(['/', '-', '_', ' ', '--', '/_ ']);
      const s = c.replace(/[/-]/g, sep);
      return pick([s, s.toUpperCase(), s[0].toUpperCase() + s.slice(1), ` ${s}`, `${s}s`]);
    };
    const names = [...MODERATION_CATEGORIES, ...Array.from({ length: 300 }, () => spell(pick(MODERATION_CATEGORIES))), 'spam', '', 'self harm intent', 'SELF/HARM', 'violence graphic extra'];
    const cases: Array<Record<string, unknown>> = [{ kind: 'category', names }];
    const ts = [canonicalJson(names.map((n) => moderationCategory(n)))];
    for (let n = 0; n < 200; n++) {
      const decision = pick(POLICY_DECISIONS);
      const d = { decision, intervention_type: 'x', outcome: 'y', rule: 'deny_list', policy_id: 'p0', policy_name: 'other', reason: 'r', risk_level: 'low', estimated_cost_usd: 0.5, cost_prevented_usd: 0 } as unknown as GovernanceDecision;
      const guardrails: ModerationGuardrailOf[] = Array.from({ length: Math.floor(r() * 3) }, (_, i) => ({ policy_id: `p${i + 1}`, policy_name: `moderation ${i + 1}`, mode: r() < 0.5 ? 'block' : 'warn' }));
      const c = { kind: 'unavailable', d, guardrails, name: pick(['post_reply', 'send_email']), error: `HTTP ${500 + n}`, estimated: pick([0, 0.01, 2.5]), risk: pick([null, 'low', 'critical']) };
      cases.push(c);
      ts.push(canonicalJson(moderationUnavailable(d, guardrails, c.name, c.error, c.estimated, c.risk as GovernanceDecision['risk_level'] | null)));
    }
    const py = python(cases);
    for (let i = 0; i < cases.length; i++) expect(py[i], `case ${i}: ${JSON.stringify(cases[i]).slice(0, 400)}`).toBe(ts[i]);
  });
});
