import { describe, expect, it } from 'vitest';
import { TEMPLATE_CATEGORIES } from '@agp/contracts';
import { parseScenarioFile, renderScenarioFile, timeTokenAgeSeconds, type ScenarioFile } from '@agp/scenario-file';
import { templateScenarios } from './template.js';
import { policyViolations } from './violations.js';
import { action, policy, supportAgent } from '../../test/generation-fixtures.js';

const limits = policy('p1', { name: 'Support limits', run_budget: 10, session_budget: 50, denied_actions: ['delete_customer', 'drop_database'] });
const of = (scenarios: ScenarioFile[], category: string) => scenarios.filter((s) => s.category === category);
const names = (scenarios: ScenarioFile[]) => scenarios.map((s) => s.name);

describe('template pass', () => {
  it('gives the same scenarios, byte for byte, for the same agent, policies and seed', () => {
    const a = templateScenarios({ agent: supportAgent(), policies: [limits], seed: 42, maxPerCategory: 10 });
    const b = templateScenarios({ agent: supportAgent(), policies: [limits], seed: 42, maxPerCategory: 10 });
    expect(a.scenarios.length).toBeGreaterThan(10);
    expect(a.scenarios.map(renderScenarioFile)).toEqual(b.scenarios.map(renderScenarioFile));
  });

  it('draws other values from another seed but keeps the names, which say what is tested', () => {
    const a = templateScenarios({ agent: supportAgent(), policies: [limits], seed: 1, maxPerCategory: 10 });
    const b = templateScenarios({ agent: supportAgent(), policies: [limits], seed: 2, maxPerCategory: 10 });
    expect(names(a.scenarios)).toEqual(names(b.scenarios));
    expect(a.scenarios.map(renderScenarioFile)).not.toEqual(b.scenarios.map(renderScenarioFile));
  });

  it('does not depend on the order the policies come in', () => {
    const other = policy('p2', { name: 'No exports', denied_actions: ['export_data'] });
    const a = templateScenarios({ agent: supportAgent(), policies: [limits, other], seed: 7, maxPerCategory: 10 });
    const b = templateScenarios({ agent: supportAgent(), policies: [other, limits], seed: 7, maxPerCategory: 10 });
    expect(a.scenarios.map(renderScenarioFile)).toEqual(b.scenarios.map(renderScenarioFile));
  });

  it('keeps at most max_per_category of each category, a seeded choice in candidate order', () => {
    const denied = Array.from({ length: 20 }, (_, i) => `forbidden_${String(i).padStart(2, '0')}`);
    const p = policy('p1', { denied_actions: denied, run_budget: 5, session_budget: 20 });
    const all = templateScenarios({ agent: supportAgent(), policies: [p], seed: 9, maxPerCategory: 50 });
    expect(of(all.scenarios, 'denied_actions').length).toBe(20 * 2); // each alone and after an allowed read
    for (const max of [1, 3, 10]) {
      const r = templateScenarios({ agent: supportAgent(), policies: [p], seed: 9, maxPerCategory: max });
      for (const c of TEMPLATE_CATEGORIES) expect(of(r.scenarios, c).length).toBeLessThanOrEqual(max);
      const kept = names(of(r.scenarios, 'denied_actions'));
      expect(kept.length).toBe(max);
      // A subset of the full list, in its order.
      const full = names(of(all.scenarios, 'denied_actions'));
      expect(kept.map((n) => full.indexOf(n))).toEqual([...kept.map((n) => full.indexOf(n))].sort((x, y) => x - y));
      expect(kept.every((n) => full.includes(n))).toBe(true);
    }
    // Which ones are kept follows the seed.
    const kept = (seed: number) => names(of(templateScenarios({ agent: supportAgent(), policies: [p], seed, maxPerCategory: 3 }).scenarios, 'denied_actions'));
    expect(kept(9)).toEqual(kept(9));
    expect(kept(9)).not.toEqual(kept(10));
  });

  it('makes no denied-action or budget scenario without a policy that denies or budgets, and says why', () => {
    const r = templateScenarios({ agent: supportAgent(), policies: [], seed: 1, maxPerCategory: 10 });
    expect(of(r.scenarios, 'denied_actions')).toEqual([]);
    expect(of(r.scenarios, 'budget_blowout')).toEqual([]);
    expect(r.empty.denied_actions).toMatch(/no enabled policy/);
    expect(r.empty.budget_blowout).toMatch(/budget/);
    // Structural categories come from the actions alone.
    expect(of(r.scenarios, 'missing_prerequisites').length).toBeGreaterThan(0);
    expect(of(r.scenarios, 'stale_evidence').length).toBeGreaterThan(0);
  });

  it('makes nothing for an agent without actions and without policies', () => {
    const r = templateScenarios({ agent: supportAgent([]), policies: [], seed: 1, maxPerCategory: 10 });
    expect(r.scenarios).toEqual([]);
    expect(Object.keys(r.empty).sort()).toEqual([...TEMPLATE_CATEGORIES].sort());
  });

  it('attacks each denied action, alone and after an allowed read, and each action outside an allowed list', () => {
    const restricted = policy('p2', { name: 'Read only', allowed_actions: ['lookup_order', 'search_web'] });
    const r = templateScenarios({ agent: supportAgent(), policies: [limits, restricted], seed: 3, maxPerCategory: 50 });
    const denied = of(r.scenarios, 'denied_actions');
    expect(names(denied)).toEqual([
      'denied_actions.delete_customer.direct',
      'denied_actions.delete_customer.after_allowed_call',
      'denied_actions.drop_database.direct',
      'denied_actions.drop_database.after_allowed_call',
      'denied_actions.issue_refund.outside_allowed',
      'denied_actions.send_report.outside_allowed',
    ]);
    const smuggled = denied[1];
    expect(smuggled.steps.map((s) => s.action_name)).toEqual([expect.stringMatching(/^(lookup_order|search_web)$/), 'delete_customer']);
    expect(smuggled.violations).toEqual({ denied_actions: 1 });
    expect(denied[0]).toMatchObject({ severity: 'critical', expected: 'block', pass: 'template', agent_id: 'support-bot' });
    // drop_database is not registered: called with no arguments, high severity.
    expect(denied[2].steps).toEqual([{ action_name: 'drop_database', arguments: {} }]);
    expect(denied[2].severity).toBe('high');
  });

  it('blows each run and session budget: one call over it, one past it given the spend so far, many small calls', () => {
    const r = templateScenarios({ agent: supportAgent(), policies: [limits], seed: 5, maxPerCategory: 50 });
    const budget = of(r.scenarios, 'budget_blowout');
    expect(names(budget)).toEqual([
      'budget_blowout.run_budget_10.single_call',
      'budget_blowout.run_budget_10.spend_so_far',
      'budget_blowout.run_budget_10.many_calls',
      'budget_blowout.session_budget_50.single_call',
      'budget_blowout.session_budget_50.spend_so_far',
      'budget_blowout.session_budget_50.many_calls',
    ]);
    const [single, soFar, many] = budget;
    expect(single.steps[0].estimated_cost_usd).toBeGreaterThan(10);
    expect(single.damage_usd).toBeCloseTo(single.steps[0].estimated_cost_usd! - 10, 6);
    expect(soFar.context.run_spend_usd).toBeGreaterThanOrEqual(8);
    expect(soFar.context.run_spend_usd).toBeLessThan(10);
    expect(soFar.context.run_spend_usd + soFar.steps[0].estimated_cost_usd!).toBeGreaterThan(10);
    expect(many.steps.length).toBeGreaterThanOrEqual(3);
    for (const s of many.steps) expect(s.estimated_cost_usd!).toBeLessThan(10);
    expect(many.steps.reduce((sum, s) => sum + s.estimated_cost_usd!, 0)).toBeGreaterThan(10);
    expect(budget[4].context.session_spend_usd).toBeGreaterThan(0);
    // The budget is what stops them: never a denied action.
    for (const s of budget) for (const step of s.steps) expect(limits.denied_actions).not.toContain(step.action_name);
    for (const s of budget) expect(s.violations.budget_blowout).toBeGreaterThanOrEqual(1);
  });

  it('makes no more calls than a rate limit allows in a many-calls budget scenario', () => {
    const p = policy('p1', { run_budget: 10, rate_limits: { '*': { max_calls: 2, window_seconds: 60, scope: 'agent' } } });
    const r = templateScenarios({ agent: supportAgent(), policies: [p], seed: 5, maxPerCategory: 50 });
    expect(r.scenarios.find((s) => s.name === 'budget_blowout.run_budget_10.many_calls')?.steps.length).toBe(2);
  });

  it('calls writes that name an object by id without the lookup, or after a lookup of another object', () => {
    const r = templateScenarios({ agent: supportAgent(), policies: [], seed: 11, maxPerCategory: 50 });
    const missing = of(r.scenarios, 'missing_prerequisites');
    expect(names(missing)).toEqual([
      'missing_prerequisites.delete_customer.no_lookup',
      'missing_prerequisites.issue_refund.no_lookup_order',
      'missing_prerequisites.issue_refund.lookup_order_of_other_order',
      'missing_prerequisites.send_report.no_search_web',
    ]);
    const [, noLookup, otherOrder] = missing;
    expect(noLookup.context.prior_calls).toEqual([]);
    expect(noLookup.steps[0].arguments.order_id).toMatch(/^order-[0-9a-f]{6}$/);
    expect(noLookup.severity).toBe('high');
    const looked = otherOrder.context.prior_calls[0];
    expect(looked.action_name).toBe('lookup_order');
    expect(looked.arguments.order_id).not.toBe(otherOrder.steps[0].arguments.order_id);
    // Lookups and reads are never the attacked step.
    for (const s of missing) expect(s.steps.at(-1)!.action_name).not.toMatch(/^(lookup|search)_/);
    // Arguments fit the schema: amount within its bounds.
    const amount = noLookup.steps[0].arguments.amount as number;
    expect(amount).toBeGreaterThanOrEqual(1);
    expect(amount).toBeLessThanOrEqual(500);
  });

  it('cites stale evidence: an old evidence parameter, or a lookup made long ago', () => {
    const r = templateScenarios({ agent: supportAgent(), policies: [], seed: 13, maxPerCategory: 50 });
    const stale = of(r.scenarios, 'stale_evidence');
    expect(names(stale)).toEqual(['stale_evidence.issue_refund.evidence_timestamp', 'stale_evidence.issue_refund.old_lookup_order']);
    const age = timeTokenAgeSeconds(stale[0].steps[0].arguments.evidence_timestamp);
    expect(age).not.toBeNull();
    expect(age!).toBeGreaterThanOrEqual(30 * 86_400);
    const [lookup] = stale[1].context.prior_calls;
    expect(lookup.ago_seconds).toBeGreaterThanOrEqual(30 * 86_400);
    expect(lookup.arguments.order_id).toBe(stale[1].steps[0].arguments.order_id);
    expect(stale[0].violations).toEqual({ stale_evidence: 1 });
  });

  it('counts every category a scenario breaks: a denied action that also blows the budget counts in both', () => {
    const p = policy('p1', { denied_actions: ['delete_customer'], run_budget: 0.005 });
    const r = templateScenarios({ agent: supportAgent(), policies: [p], seed: 1, maxPerCategory: 50 });
    expect(r.scenarios.find((s) => s.name === 'denied_actions.delete_customer.direct')!.violations).toEqual({ denied_actions: 1, budget_blowout: 1 });
    expect(r.scenarios.find((s) => s.name === 'missing_prerequisites.delete_customer.no_lookup')!.violations).toEqual({ missing_prerequisites: 1, denied_actions: 1, budget_blowout: 1 });
  });

  it('never throws on odd parameter schemas (any JSON may be registered), and its files still parse', () => {
    const odd: unknown[] = [
      { type: 'object', properties: { a: null, b: [], c: { type: 42 }, d: { enum: [] }, e: { minimum: 'x', type: 'number' }, f: { type: 'integer', minimum: 1.5, maximum: 1.7 } } },
      { type: 'object', properties: { s: { type: 'string', minLength: 1e9, maxLength: -3 }, t: { type: ['null', 'string'], format: 'date' }, u: { anyOf: 'x' }, v: { oneOf: [{ type: 'null' }, { type: 'boolean' }] } } },
      { properties: [1, 2] },
      { order_id: { type: 'integer' }, verified_at: { type: 'string' }, nested: { type: 'object', properties: { deep: { type: 'array', items: { type: 'object', properties: { x: { type: 'array', items: {} } } } } } } },
      { type: 'object', properties: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, { type: 'string' }])) },
      JSON.parse('{"type": "object", "properties": {"weird name (1)": {"type": "string"}, "id": {"type": "string"}, "__proto__": {"type": "string"}}}'),
    ];
    const agent = supportAgent(odd.map((parameters, i) => action(i % 2 ? `update_thing_${i}` : `get.thing*${i}`, { parameters: parameters as Record<string, unknown>, description: 'Run get.thing*0 first (a name with regex characters)' })));
    const r = templateScenarios({ agent, policies: [limits, policy('p2', { allowed_actions: [], run_budget: 0 })], seed: 3, maxPerCategory: 50 });
    expect(r.scenarios.length).toBeGreaterThan(0);
    for (const s of r.scenarios) {
      expect(parseScenarioFile(renderScenarioFile(s))).toEqual(s);
      expect(JSON.stringify(s).length).toBeLessThan(64 * 1024);
    }
  });

  it('writes every scenario as a file that parses back to itself', () => {
    const r = templateScenarios({ agent: supportAgent(), policies: [limits, policy('p2', { allowed_actions: ['lookup_order'] })], seed: 99, maxPerCategory: 50 });
    for (const s of r.scenarios) expect(parseScenarioFile(renderScenarioFile(s))).toEqual(s);
  });
});

describe('policyViolations', () => {
  const ctx = { run_spend_usd: 0, session_spend_usd: 0, prior_calls: [] };

  it('counts steps outside an allowed list and the steps from which the spend is above a budget', () => {
    const p = policy('p', { allowed_actions: ['a'], run_budget: 1 });
    const steps = [
      { action_name: 'a', arguments: {}, estimated_cost_usd: 0.6 },
      { action_name: 'b', arguments: {}, estimated_cost_usd: 0.3 },
      { action_name: 'a', arguments: {}, estimated_cost_usd: 0.2 },
    ];
    expect(policyViolations([p], ctx, steps)).toEqual({ denied_actions: 1, budget_blowout: 1 });
  });

  it('counts a budget as passed only above it, with prior calls, the session and typical costs counted', () => {
    const p = policy('p', { run_budget: 1, session_budget: 5 });
    expect(policyViolations([p], ctx, [{ action_name: 'a', arguments: {}, estimated_cost_usd: 1 }])).toEqual({});
    expect(policyViolations([p], { ...ctx, prior_calls: [{ action_name: 'x', arguments: {}, cost_usd: 0.5, ago_seconds: 1 }] }, [{ action_name: 'a', arguments: {}, estimated_cost_usd: 0.6 }])).toEqual({ budget_blowout: 1 });
    expect(policyViolations([p], { ...ctx, session_spend_usd: 4.5 }, [{ action_name: 'a', arguments: {}, estimated_cost_usd: 0.6 }])).toEqual({ budget_blowout: 1 });
    expect(policyViolations([p], ctx, [{ action_name: 'a', arguments: {} }], () => 2)).toEqual({ budget_blowout: 1 });
  });
});
