/**
 * The Python engine (sdks/python/agp/engine) beside this one on the parts the decision vectors do not carry: the PII
 * guardrail on results (`reviewResult` ~ `review_result`) and the fleet-wide limit functions the SDKs' leases use
 * (`quotaNeeds`, `quotaWindow`, `quotaLimitOf` ~ `quota_needs`, `quota_window`, `quota_limit_of`). Seeded cases go
 * through both, python3 answering over stdin/stdout, and the canonical JSON must be equal. Skips with one reason
 * without python3. Source: docs/sdk-python.md; docs/decisions.md (The Python SDK mirrors the TypeScript one).
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '@agp/contracts';
import { askPython, pythonMissing as missing, rng } from '../../../test/support/python-parity.js';
import { quotaLimitOf, quotaNeeds, quotaWindow, reviewResult, type EnginePolicy } from '../src/index.js';

if (missing) console.warn(`[python parity] skipped: ${missing}`);

const PY = `
import json, sys
from agp.engine import review_result
from agp.engine.quotas import quota_needs, quota_window, quota_limit_of
out = []
for c in json.load(sys.stdin):
    if c["kind"] == "review":
        out.append(review_result(c["policies"], c["agent"], c["action"], c["result"]))
    else:
        p = c["policies"]
        w = [quota_window(x, l, c["now"]) for x in p for l in c["limits"]]
        out.append({"needs": quota_needs(p, c["agent"], c["action"], c["cost"], c.get("run"), c.get("session")),
                    "windows": [None if v is None else ("none" if v is False else {"start": v[0], "end": v[1]}) for v in w],
                    "limits": [None if v is None else {"value": v[0], "unit": v[1], "scope": v[2]} for v in (quota_limit_of(x, l) for x in p for l in c["limits"])]})
print(json.dumps(out))
`;

const python = (cases: unknown[]): unknown[] => askPython(PY, cases);

const base = (i: number, extra: Partial<EnginePolicy>): EnginePolicy =>
  ({
    id: `p${i}`,
    name: `policy ${i}`,
    enabled: true,
    agent_ids: [],
    created_at: `2026-01-0${1 + (i % 9)}T00:00:00.000Z`,
    denied_actions: [],
    allowed_actions: null,
    approval_required_actions: [],
    session_budget: null,
    run_budget: null,
    action_budget: null,
    rate_limits: {},
    ...extra,
  }) as EnginePolicy;

const PII_TEXT = ['ada@example.com', '4111 1111 1111 1111', '+44 20 7946 0958', '123-45-6789', 'GB82 WEST 1234 5698 7654 32', '10.0.0.1', 'sk_live_51HxYzAbCdEfGhIjKlMnOpQr', 'nothing personal', 'order A-1001'];
const CATS = ['email', 'payment_card', 'phone', 'us_ssn', 'iban', 'ip_address', 'secret'] as const;

describe.skipIf(missing !== null)('the Python engine beside the TypeScript one', () => {
  it('reviews results as reviewResult does (200 seeded cases)', () => {
    const r = rng(35);
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    const cases = Array.from({ length: 200 }, (_, n) => {
      const policies = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) =>
        base(i, {
          enabled: r() > 0.1,
          agent_ids: r() > 0.8 ? ['other'] : [],
          guardrails: { pii: { mode: 'block', ...(r() > 0.2 ? { results: pick(['block', 'redact', 'warn'] as const) } : {}), ...(r() > 0.5 ? { categories: [pick(CATS), pick(CATS)].filter((c, j, a) => a.indexOf(c) === j) } : {}) } },
        } as Partial<EnginePolicy>),
      );
      const text = () => `${pick(['note: ', 'call ', ''])}${pick(PII_TEXT)}${pick(['', ' thanks', ` and ${pick(PII_TEXT)}`])}`;
      const result = n % 10 === 0 ? text() : { id: n, customer: { email: text(), notes: [text(), text(), { deep: text() }] }, ok: true, '2': text() };
      return { kind: 'review', policies, agent: 'bot', action: 'lookup', result };
    });
    const got = python(cases);
    const outcomes = new Set<string>();
    cases.forEach((c, i) => {
      const want = reviewResult(c.policies, c.agent, c.action, c.result);
      outcomes.add(want.outcome);
      expect(canonicalJson(got[i]), `case ${i}`).toBe(canonicalJson(want));
    });
    expect([...outcomes].sort()).toEqual(['block', 'pass', 'redact', 'warn']); // the cases reach every outcome
  });

  it('computes quota needs, windows and limits as quotaNeeds, quotaWindow and quotaLimitOf do (200 seeded cases)', () => {
    const r = rng(7);
    const limitsOf = ['run_budget', 'session_budget', 'period_budget:agent:hour', 'period_budget:organization:day', 'period_budget:agent:month', 'rate_limit:charge', 'rate_limit:*', 'rate_limit:other'];
    const cases = Array.from({ length: 200 }, (_, n) => {
      const policies = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) =>
        base(i, {
          enabled: r() > 0.1,
          agent_ids: r() > 0.8 ? ['other'] : [],
          run_budget: r() > 0.5 ? Math.round(r() * 100) / 10 : null,
          session_budget: r() > 0.5 ? 1 : null,
          period_budgets: r() > 0.5 ? [{ scope: r() > 0.5 ? 'agent' : 'organization', period: (['hour', 'day', 'month'] as const)[Math.floor(r() * 3)], max_usd: 5 }] : [],
          rate_limits: {
            ...(r() > 0.5 ? { charge: { max_calls: 10, window_seconds: [1, 60, 3600, 0.25, 86400][Math.floor(r() * 5)], scope: (['agent', 'organization', 'process'] as const)[Math.floor(r() * 3)] } } : {}),
            ...(r() > 0.5 ? { '*': { max_calls: 100, window_seconds: 60, scope: 'organization' as const } } : {}),
          },
        } as Partial<EnginePolicy>),
      );
      // Clocks across years, month ends (Dec → Jan, February of a leap year) and hour edges.
      const now = [Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2028, 1, 29, 12), Date.UTC(2026, 0, 1), 1_767_225_600_000 + Math.floor(r() * 1e10)][n % 4];
      return { kind: 'quota', policies, agent: 'bot', action: r() > 0.3 ? 'charge' : 'other', cost: r() > 0.2 ? 0.01 : 0, run: r() > 0.3 ? 'run-1' : null, session: r() > 0.3 ? 's-1' : null, now, limits: limitsOf };
    });
    const got = python(cases);
    let kinds = 0;
    cases.forEach((c, i) => {
      const want = {
        needs: quotaNeeds(c.policies, c.agent, c.action, c.cost, { runId: c.run, sessionId: c.session }),
        windows: c.policies.flatMap((p) => c.limits.map((l) => {
          const w = quotaWindow(p, l, c.now);
          return w === undefined ? 'none' : w;
        })),
        limits: c.policies.flatMap((p) => c.limits.map((l) => quotaLimitOf(p, l) ?? null)),
      };
      expect(canonicalJson(got[i]), `case ${i}`).toBe(canonicalJson(want));
      kinds += want.needs.length;
    });
    expect(kinds).toBeGreaterThan(200); // the cases have needs to compare, not only empty lists
  });
});
