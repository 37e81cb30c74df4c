import { describe, expect, it } from 'vitest';
import { RunEvaluationSchema, RunsEvaluationSchema } from '@agp/contracts';
import { call, eventually, type BootedPlatform, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';

const uniq = () => Math.random().toString(36).slice(2, 10);

type Res = { status: number; headers: Headers; body: any };
type Ev = { id: string; type: string; timestamp: string; body: Record<string, unknown> };
const ev = (type: string, body: Record<string, unknown>, timestamp = new Date().toISOString()): Ev => ({ id: `ev-${uniq()}`, type, timestamp, body });

/** One recorded action: its name, estimated cost and (optionally) the actual cost the provider reported, USD. */
type Act = { name: string; cost: number; actual?: number };

/** Ingest a completed run of `agent` with `actions` (1 s apart) and wait until the stats service has all of them. */
async function recordRun(p: BootedPlatform, agent: string, actions: Act[], key = p.writeKey): Promise<string> {
  const run = `run-${uniq()}`;
  const t0 = Date.now() - 600_000;
  const batch = [ev('run.start', { run_id: run, agent_id: agent, name: 'counterfactual', started_at: new Date(t0).toISOString() })];
  actions.forEach((a, i) => {
    batch.push(ev('action.record', { run_id: run, agent_id: agent, action_name: a.name, status: 'success', cost_usd: a.cost, ...(a.actual === undefined ? {} : { actual_cost_usd: a.actual }), timestamp: new Date(t0 + (i + 1) * 1000).toISOString() }));
  });
  batch.push(ev('run.end', { run_id: run, agent_id: agent, status: 'completed', ended_at: new Date(t0 + (actions.length + 1) * 1000).toISOString() }));
  const r = await call(p, 'POST', '/api/v1/ingest/', { key, body: { batch } });
  expect(r.status).toBe(207);
  expect(r.body.errors).toEqual([]);
  await eventually(async () => {
    const got = await call(p, 'GET', `/api/v1/runs/${run}`, { key });
    return got.status === 200 && got.body.status === 'completed' && got.body.action_count === actions.length;
  });
  return run;
}

/** `by_decision` with every decision kind: 0 unless given. */
const byDecision = (n: Record<string, number>) => ({
  block: 0,
  pii_blocked: 0,
  content_blocked: 0,
  idempotent_replay: 0,
  escalate: 0,
  budget_exceeded: 0,
  rate_limited: 0,
  loop_detected: 0,
  downgrade: 0,
  warn: 0,
  allow: 0,
  ...n,
});

/** The run of the main scenario: step 1 costs 2 USD actual (0.5 estimated), the others their estimates. Σ 5 USD. */
const FOUR: Act[] = [
  { name: 'search', cost: 1 },
  { name: 'delete_db', cost: 0.5, actual: 2 },
  { name: 'send_email', cost: 1.5 },
  { name: 'delete_db', cost: 0.5 },
];

/**
 * Counterfactual evaluation over real HTTP in both run modes: a recorded run decided again by today's policies, by a
 * candidate policy (never stored), by a patch on a stored policy (never applied), over many runs, and each bad input
 * of counterfactual evaluation. Source: docs/replay.md (Counterfactual evaluation).
 */
describeModes('replay evaluate', (platform) => {
  const p = () => platform();
  const post = (path: string, body: unknown, key = p().writeKey) => call(p(), 'POST', path, { key, body });
  const decisions = (r: Res) => r.body.steps.map((s: any) => s.decision);

  /** An agent of its own (policies are scoped to it, so no other test's policy decides), its run, and a policy denying delete_db. */
  async function scenario() {
    const agent = `agent-${uniq()}`;
    const run = await recordRun(p(), agent, FOUR);
    const created = await post('/api/v1/policies', { name: `no-deletes-${uniq()}`, denied_actions: ['delete_db'], agent_ids: [agent] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { agent, run, policy: created.body.id as string, policyName: created.body.name as string };
  }

  describe('one run', () => {
    it("today's policies: the two delete_db steps are blocked, 2.5 USD prevented (actual cost where reported)", async () => {
      const { agent, run, policy, policyName } = await scenario();
      const r = await post(`/api/v1/replay/${run}/evaluate`, {}, p().readKey);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(RunEvaluationSchema.safeParse(r.body).success).toBe(true);
      expect(r.body).toMatchObject({ run_id: run, agent_id: agent, policy_set: { source: 'today', policy_ids: expect.arrayContaining([policy]) }, steps_truncated: false });
      expect(decisions(r)).toEqual(['allow', 'block', 'allow', 'block']);
      expect(r.body.steps[1]).toMatchObject({ step: 1, action_name: 'delete_db', cost_usd: 2, recorded_status: 'success', decision: 'block', rule: 'denied_action', policy_id: policy, policy_name: policyName, prevented_usd: 2 });
      expect(r.body.steps[1].reason).toContain('delete_db is a denied action');
      expect(r.body.steps[0]).toMatchObject({ policy_id: null, prevented_usd: 0, cost_usd: 1 });
      expect(r.body.totals).toEqual({ steps: 4, by_decision: byDecision({ block: 2, allow: 2 }), prevented_usd: 2.5, actually_spent_usd: 5, would_spend_usd: 2.5, difference_usd: -2.5 });
    });

    it('a candidate policy (not stored) changes the result; the policy count is unchanged', async () => {
      const { agent, run } = await scenario();
      const before = (await call(p(), 'GET', '/api/v1/policies?limit=1', { key: p().readKey })).body.total;
      const r = await post(`/api/v1/replay/${run}/evaluate`, { candidate_policy: { name: 'no-mail', denied_actions: ['send_email'], agent_ids: [agent] } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.policy_set.source).toBe('candidate');
      expect(r.body.policy_set.policy_ids).toContain('candidate');
      expect(decisions(r)).toEqual(['allow', 'block', 'block', 'block']);
      expect(r.body.steps[2]).toMatchObject({ policy_id: 'candidate', policy_name: 'no-mail', prevented_usd: 1.5 });
      expect(r.body.totals).toMatchObject({ prevented_usd: 4, actually_spent_usd: 5, would_spend_usd: 1, difference_usd: -4 });
      expect((await call(p(), 'GET', '/api/v1/policies?limit=1', { key: p().readKey })).body.total).toBe(before);
    });

    it('a patch on the stored policy (deny nothing, run_budget 3 USD) caps the run at step 2; the policy is not changed', async () => {
      const { run, policy } = await scenario();
      const r = await post(`/api/v1/replay/${run}/evaluate`, { policy_patch: { policy_id: policy, patch: { denied_actions: [], run_budget: 3 } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.policy_set.source).toBe('patch');
      // spend 0+1 ≤ 3 allow; 1+2 = 3 (the budget, allowed) past 80% warn; 3+1.5 and 3+0.5 over it.
      expect(decisions(r)).toEqual(['allow', 'warn', 'budget_exceeded', 'budget_exceeded']);
      expect(r.body.steps[2]).toMatchObject({ rule: 'run_budget', policy_id: policy, prevented_usd: 1.5 });
      expect(r.body.totals).toEqual({ steps: 4, by_decision: byDecision({ allow: 1, warn: 1, budget_exceeded: 2 }), prevented_usd: 2, actually_spent_usd: 5, would_spend_usd: 3, difference_usd: -2 });
      const stored = await call(p(), 'GET', `/api/v1/policies/${policy}`, { key: p().readKey });
      expect(stored.body).toMatchObject({ version: 1, denied_actions: ['delete_db'], run_budget: null });
    });
  });

  describe('many runs', () => {
    it('by agent: per-run totals and overall totals; by run ids; by a date range', async () => {
      const { agent, run, policy } = await scenario();
      const second = await recordRun(p(), agent, [
        { name: 'search', cost: 1 },
        { name: 'delete_db', cost: 0.25 },
      ]);
      const r = await post('/api/v1/replay/evaluate', { agent_id: agent }, p().readKey);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(RunsEvaluationSchema.safeParse(r.body).success).toBe(true);
      expect(r.body).toMatchObject({ policy_source: 'today', runs_matched: 2, runs_evaluated: 2, truncated: false });
      const byRun = Object.fromEntries(r.body.runs.map((x: any) => [x.run_id, x.totals.prevented_usd]));
      expect(byRun).toEqual({ [run]: 2.5, [second]: 0.25 });
      expect(r.body.totals).toEqual({ steps: 6, by_decision: byDecision({ block: 3, allow: 3 }), prevented_usd: 2.75, actually_spent_usd: 6.25, would_spend_usd: 3.5, difference_usd: -2.75 });

      const ids = await post('/api/v1/replay/evaluate', { run_ids: [second, `unknown-${uniq()}`], policy_patch: { policy_id: policy, patch: { enabled: false } } });
      expect(ids.status, JSON.stringify(ids.body)).toBe(200);
      expect(ids.body).toMatchObject({ policy_source: 'patch', runs_matched: 1, runs_evaluated: 1, truncated: false, totals: { steps: 2, prevented_usd: 0, would_spend_usd: 1.25 } });

      const future = await post('/api/v1/replay/evaluate', { agent_id: agent, start_date: '2999-01-01' }, p().readKey);
      expect(future.body).toMatchObject({ runs_matched: 0, runs_evaluated: 0, runs: [], totals: { steps: 0, prevented_usd: 0 } });
      const today = new Date().toISOString().slice(0, 10);
      const dated = await post('/api/v1/replay/evaluate', { agent_id: agent, start_date: '2000-01-01', end_date: today }, p().readKey);
      expect(dated.body.runs_matched).toBe(2);
    });
  });

  describe('MCP tools', () => {
    it('evaluate_run and evaluate_policy_change answer what REST answers; a read key with a candidate is forbidden', async () => {
      const { agent, run } = await scenario();
      const mcp = (tool_name: string, args: Record<string, unknown>, key = p().readKey) => call(p(), 'POST', '/api/v1/mcp/call', { key, body: { tool_name, arguments: args } });
      const one = await mcp('evaluate_run', { run_id: run });
      expect(one.status, JSON.stringify(one.body)).toBe(200);
      expect(one.body.data.steps.map((s: any) => s.decision)).toEqual(['allow', 'block', 'allow', 'block']);
      expect(one.body.data.totals.prevented_usd).toBe(2.5);
      const many = await mcp('evaluate_policy_change', { agent_id: agent, candidate_policy: { name: 'no-search', denied_actions: ['search'], agent_ids: [agent] } }, p().writeKey);
      expect(many.status, JSON.stringify(many.body)).toBe(200);
      expect(many.body.data).toMatchObject({ policy_source: 'candidate', runs_matched: 1, totals: { prevented_usd: 3.5, would_spend_usd: 1.5 } });
      const refused = await mcp('evaluate_run', { run_id: run, candidate_policy: { name: 'x' } });
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(JSON.stringify(refused.body)).toMatch(/write key/);
    });
  });

  describe('bad input', () => {
    it('unknown run 404, another organisation’s run 404, unknown patched policy 404', async () => {
      expectProblem(await post(`/api/v1/replay/unknown-${uniq()}/evaluate`, {}, p().readKey), 404);
      const theirs = await recordRun(p(), `agent-${uniq()}`, [{ name: 'search', cost: 1 }], p().otherOrgWriteKey);
      expectProblem(await post(`/api/v1/replay/${theirs}/evaluate`, {}), 404);
      const { run } = await scenario();
      expectProblem(await post(`/api/v1/replay/${run}/evaluate`, { policy_patch: { policy_id: `nope-${uniq()}`, patch: { run_budget: 1 } } }), 404);
    });

    it('a read key with a candidate or a patch: 403', async () => {
      const { run, policy } = await scenario();
      expectProblem(await post(`/api/v1/replay/${run}/evaluate`, { candidate_policy: { name: 'x' } }, p().readKey), 403);
      expectProblem(await post('/api/v1/replay/evaluate', { policy_patch: { policy_id: policy, patch: { run_budget: 1 } } }, p().readKey), 403);
    });

    it('more than 100 run ids, both a candidate and a patch, a bad candidate, an unknown field: 422 naming the field', async () => {
      expectProblem(await post('/api/v1/replay/evaluate', { run_ids: Array.from({ length: 101 }, (_, i) => `r${i}`) }), 422, ['body.run_ids']);
      expectProblem(await post('/api/v1/replay/evaluate', { start_date: 'yesterday' }), 422, ['body.start_date']);
      expectProblem(await post('/api/v1/replay/x/evaluate', { candidate_policy: { name: 'x' }, policy_patch: { policy_id: 'p', patch: { enabled: false } } }), 422, ['body.policy_patch']);
      expectProblem(await post('/api/v1/replay/x/evaluate', { candidate_policy: { name: 'x', run_budget: -1 } }), 422, ['body.candidate_policy.run_budget']);
      expectProblem(await post('/api/v1/replay/x/evaluate', { colour: 'red' }), 422, ['body.colour']);
    });
  });
});
