/**
 * The decision API `POST /api/v1/policies/evaluate` over real HTTP, in both run modes
 * (docs/api.md, Policy decisions): policies created through the API, kill switches engaged through it, runs and actions ingested, then
 * exact decisions — allow, block, escalate, budget_exceeded, rate_limited and warn — and those of the action budget,
 * downgrades and guardrails (a policy created with them, patched, its history diffed, then downgrade, pii_blocked,
 * content_blocked, budget_exceeded, and loop_detected / idempotent_replay against a run's recorded inputs). Bad input
 * is a 422 naming each field; another organisation's policies and runs never count; evaluating records nothing.
 */
import { describe, expect, it } from 'vitest';
import { describeModes } from '../support/modes.js';
import { call, eventually } from '../support/http.js';

type Res = { status: number; headers: Headers; body: any };
const expectProblem = (r: Res, status: number, paths: string[] = []) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  if (paths.length) expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([...paths].sort());
};

const AGENT = 'eval-agent';
const OTHER_AGENT = 'eval-other-agent';
/** Run A: two emails (5 USD each), one blocked email (never executed), one search (6 USD): 16 USD. */
const RUN_A = 'eval-run-a';
/** Run B: three emails (1 USD each): 3 USD. */
const RUN_B = 'eval-run-b';

type Ev = { id: string; type: string; timestamp: string; body: Record<string, unknown> };
let seq = 0;
/** An ISO time `secondsAgo` seconds before now. */
const ago = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
/** An ingest event stamped `secondsAgo` seconds before now. */
const ev = (type: string, body: Record<string, unknown>, secondsAgo: number): Ev => ({ id: `eval-ev-${++seq}-${Math.random().toString(36).slice(2, 8)}`, type, timestamp: ago(secondsAgo), body });
const start = (run: string) => ev('run.start', { run_id: run, agent_id: AGENT, started_at: ago(120) }, 120);
/** An action of AGENT in `run`, at `secondsAgo` seconds before now (the time its rate-limit window sees). */
const act = (run: string, name: string, secondsAgo: number, extra: Record<string, unknown>) =>
  ev('action.record', { run_id: run, agent_id: AGENT, action_name: name, timestamp: ago(secondsAgo), ...extra }, secondsAgo);

describeModes('POST /api/v1/policies/evaluate', (platform) => {
  const p = () => platform();
  const evaluate = (body: unknown, key = p().writeKey) => call(p(), 'POST', '/api/v1/policies/evaluate', { key, body });
  const decision = async (body: Record<string, unknown>, key = p().writeKey) => {
    const r = await evaluate(body, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const createPolicy = async (body: Record<string, unknown>, key = p().writeKey) => {
    const r = await call(p(), 'POST', '/api/v1/policies', { key, body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body as { id: string; name: string };
  };
  const killSwitch = async (path: string, engaged: boolean, reason?: string) => {
    const r = await call(p(), 'PUT', `/api/v1/kill-switches/${path}`, { key: p().writeKey, body: { engaged, ...(reason ? { reason } : {}) } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };

  /** The guard policy of AGENT, created once by the first test. */
  let guard: { id: string; name: string };

  it('sets up: an agent with declared actions, its policies (one disabled, one for another agent) and two ingested runs', async () => {
    const reg = await call(p(), 'POST', '/api/v1/agents', {
      key: p().writeKey,
      body: { agent_id: AGENT, actions: [{ name: 'refund_payment', risk_level: 'critical', typical_cost_usd: 3 }, { name: 'search' }] },
    });
    expect(reg.status).toBe(201);
    guard = await createPolicy({
      name: 'Eval guard',
      agent_ids: [AGENT],
      denied_actions: ['delete_records'],
      approval_required_actions: ['refund_payment'],
      run_budget: 20,
      rate_limits: { send_email: { max_calls: 3, window_seconds: 3600 } },
    });
    await createPolicy({ name: 'Disabled', agent_ids: [AGENT], enabled: false, denied_actions: ['search'] });
    await createPolicy({ name: 'Someone else', agent_ids: [OTHER_AGENT], denied_actions: ['search'] });

    const batch = [
      start(RUN_A),
      act(RUN_A, 'send_email', 90, { status: 'success', cost_usd: 5 }),
      act(RUN_A, 'send_email', 80, { status: 'success', cost_usd: 5 }),
      act(RUN_A, 'send_email', 70, { status: 'blocked' }),
      act(RUN_A, 'search', 60, { status: 'success', cost_usd: 6 }),
      start(RUN_B),
      act(RUN_B, 'send_email', 50, { status: 'success', cost_usd: 1 }),
      act(RUN_B, 'send_email', 40, { status: 'error', cost_usd: 1 }),
      act(RUN_B, 'send_email', 30, { status: 'success', cost_usd: 1 }),
    ];
    const r = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch } });
    expect(r.status).toBe(207);
    expect(r.body.errors).toEqual([]);
    for (const [run, actions, cost] of [
      [RUN_A, 4, 16],
      [RUN_B, 3, 3],
    ] as const) {
      await eventually(async () => {
        const got = await call(p(), 'GET', `/api/v1/runs/${run}`, { key: p().readKey });
        return got.status === 200 && got.body.action_count === actions && got.body.cost_usd === cost;
      }, 20_000);
    }
  });

  describe('decisions', () => {
    it('allows an action no policy stops (the disabled policy and the other agent’s do not count), for a read key too', async () => {
      const got = await decision({ agent_id: AGENT, action_name: 'search', estimated_cost_usd: 1 }, p().readKey);
      expect(got).toEqual({
        decision: 'allow',
        intervention_type: null,
        outcome: null,
        rule: null,
        policy_id: null,
        policy_name: null,
        reason: 'no kill switch is engaged and none of the 1 applicable policies stops search',
        risk_level: 'minimal',
        estimated_cost_usd: 1,
        cost_prevented_usd: 0,
        policies_evaluated: 1,
        triggered: [],
        modified_inputs: null,
        guardrail_context: null,
        arguments_hash: null,
        approval: null,
        context: { now: expect.any(String), run_spend_usd: 0, session_spend_usd: 0, recent_calls: 0, run_found: null, quotas: [] },
        reservations: [],
      });
      expect(Math.abs(Date.parse(got.context.now) - Date.now())).toBeLessThan(60_000);
    });

    it('blocks a denied action (hard_block) and counts its estimated cost as prevented', async () => {
      const got = await decision({ agent_id: AGENT, action_name: 'delete_records', estimated_cost_usd: 2.5, arguments: { table: 'users' } });
      expect(got).toMatchObject({
        decision: 'block',
        intervention_type: 'hard_block',
        outcome: 'blocked',
        rule: 'denied_action',
        policy_id: guard.id,
        policy_name: 'Eval guard',
        reason: 'delete_records is a denied action of policy "Eval guard"',
        risk_level: 'high',
        estimated_cost_usd: 2.5,
        cost_prevented_usd: 2.5,
      });
      expect(got.triggered).toEqual([{ policy_id: guard.id, policy_name: 'Eval guard', decision: 'block', rule: 'denied_action', reason: got.reason }]);
    });

    it('escalates an approval-required action with the risk and typical cost its agent registered, preventing nothing yet', async () => {
      const got = await decision({ agent_id: AGENT, action_name: 'refund_payment' });
      expect(got).toMatchObject({
        decision: 'escalate',
        intervention_type: 'approval_required',
        outcome: 'escalated',
        rule: 'approval_required',
        policy_id: guard.id,
        risk_level: 'critical',
        estimated_cost_usd: 3,
        cost_prevented_usd: 0,
      });
    });

    it("stops an action that would take the run's spend past its budget (budget_exceeded)", async () => {
      const got = await decision({ agent_id: AGENT, run_id: RUN_A, action_name: 'search', estimated_cost_usd: 5 });
      expect(got).toMatchObject({
        decision: 'budget_exceeded',
        intervention_type: 'budget_exceeded',
        outcome: 'blocked',
        rule: 'run_budget',
        policy_id: guard.id,
        reason: 'run spend 16 USD + search 5 USD would exceed the run budget of 20 USD of policy "Eval guard"',
        risk_level: 'medium',
        cost_prevented_usd: 5,
        context: { run_spend_usd: 16, session_spend_usd: 16, recent_calls: 3, run_found: true },
      });
    });

    it('warns when the run would pass 80% of its budget', async () => {
      const got = await decision({ agent_id: AGENT, run_id: RUN_A, action_name: 'search', estimated_cost_usd: 1 });
      expect(got).toMatchObject({ decision: 'warn', intervention_type: 'warning', outcome: 'warned', rule: 'budget_warning', policy_id: guard.id, risk_level: 'low', cost_prevented_usd: 0 });
      expect(got.reason).toBe('run spend would reach 17 USD, 85% of the run budget of 20 USD of policy "Eval guard" (warned past 80%)');
    });

    it("rate-limits the call past the limit in the run's window, counting failed calls but not blocked ones", async () => {
      const limited = await decision({ agent_id: AGENT, run_id: RUN_B, action_name: 'send_email', estimated_cost_usd: 1 });
      expect(limited).toMatchObject({
        decision: 'rate_limited',
        intervention_type: 'rate_limited',
        outcome: 'blocked',
        rule: 'rate_limit',
        policy_id: guard.id,
        reason: '3 calls of send_email in the last 3600 s reach the limit of 3 of policy "Eval guard"',
        cost_prevented_usd: 1,
        context: { run_spend_usd: 3, recent_calls: 3, run_found: true },
      });
      // Run A made two emails and had one blocked: a third is still within the limit (16 USD is exactly 80%: no warning).
      const allowed = await decision({ agent_id: AGENT, run_id: RUN_A, action_name: 'send_email', estimated_cost_usd: 0 });
      expect(allowed).toMatchObject({ decision: 'allow', context: { run_spend_usd: 16, recent_calls: 3 } });
    });

    it("counts the run's spend at the actual cost where the provider reported one, else the estimate", async () => {
      const run = 'eval-run-actual';
      // Three calls estimated at 1 USD that cost 2 each, and one with only its 0.5 USD estimate: 6.5 USD spent.
      const batch = [start(run), ...[50, 40, 30].map((s) => act(run, 'search', s, { status: 'success', cost_usd: 1, actual_cost_usd: 2 })), act(run, 'search', 20, { status: 'success', cost_usd: 0.5 })];
      const r = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch } });
      expect(r.body.errors).toEqual([]);
      await eventually(async () => (await call(p(), 'GET', `/api/v1/runs/${run}`, { key: p().readKey })).body?.action_count === 4);
      const got = await decision({ agent_id: AGENT, run_id: run, action_name: 'search', estimated_cost_usd: 14 });
      expect(got).toMatchObject({ decision: 'budget_exceeded', context: { run_spend_usd: 6.5, run_found: true } });
      expect(got.reason).toBe('run spend 6.5 USD + search 14 USD would exceed the run budget of 20 USD of policy "Eval guard"');
    });

    it('counts an unknown run as no spend and says it was not found', async () => {
      const got = await decision({ agent_id: AGENT, run_id: 'no-such-run', action_name: 'search', estimated_cost_usd: 5 });
      expect(got).toMatchObject({ decision: 'allow', context: { run_spend_usd: 0, recent_calls: 0, run_found: false } });
    });

    it("applies a policy only to the agents it is scoped to", async () => {
      expect(await decision({ agent_id: OTHER_AGENT, action_name: 'delete_records' })).toMatchObject({ decision: 'allow', policies_evaluated: 1 });
      expect(await decision({ agent_id: OTHER_AGENT, action_name: 'search' })).toMatchObject({ decision: 'block', rule: 'denied_action', policy_name: 'Someone else' });
    });

    it('records nothing: no intervention, no policy change', async () => {
      const before = await call(p(), 'GET', '/api/v1/interventions', { key: p().readKey });
      const version = (await call(p(), 'GET', `/api/v1/policies/${guard.id}`, { key: p().readKey })).body.version;
      await decision({ agent_id: AGENT, action_name: 'delete_records', estimated_cost_usd: 1 });
      expect((await call(p(), 'GET', '/api/v1/interventions', { key: p().readKey })).body.total).toBe(before.body.total);
      expect((await call(p(), 'GET', `/api/v1/policies/${guard.id}`, { key: p().readKey })).body.version).toBe(version);
    });

    it('answers at the trailing-slash spelling too', async () => {
      const r = await call(p(), 'POST', '/api/v1/policies/evaluate/', { key: p().readKey, body: { agent_id: AGENT, action_name: 'delete_records' } });
      expect(r.status).toBe(200);
      expect(r.body.decision).toBe('block');
    });
  });

  describe('another organisation', () => {
    it("never applies this organisation's policies, kill switches or runs, and this one never sees its policies", async () => {
      const globex = p().otherOrgWriteKey;
      await createPolicy({ name: 'Globex no search', denied_actions: ['search'] }, globex);
      // Globex: its own policy applies; acme's guard does not; acme's run is unknown to it.
      expect(await decision({ agent_id: AGENT, action_name: 'search' }, globex)).toMatchObject({ decision: 'block', policy_name: 'Globex no search', policies_evaluated: 1 });
      expect(await decision({ agent_id: AGENT, action_name: 'delete_records', run_id: RUN_A, estimated_cost_usd: 50 }, globex)).toMatchObject({
        decision: 'allow',
        context: { run_spend_usd: 0, run_found: false },
      });
      // Acme: globex's unscoped policy does not apply.
      expect(await decision({ agent_id: AGENT, action_name: 'search' })).toMatchObject({ decision: 'allow', policies_evaluated: 1 });
    });
  });

  describe('kill switches', () => {
    it("blocks every action of an agent whose kill switch is engaged, before any policy, and only that agent's", async () => {
      await killSwitch(`agents/${AGENT}`, true, 'eval incident');
      try {
        const got = await decision({ agent_id: AGENT, action_name: 'refund_payment' });
        expect(got).toMatchObject({
          decision: 'block',
          intervention_type: 'hard_block',
          rule: 'agent_kill_switch',
          policy_id: null,
          policy_name: null,
          reason: "agent eval-agent's kill switch is engaged: eval incident",
          risk_level: 'critical',
          cost_prevented_usd: 3,
        });
        expect(got.triggered.map((t: { rule: string }) => t.rule)).toEqual(['agent_kill_switch', 'approval_required']);
        expect(await decision({ agent_id: OTHER_AGENT, action_name: 'delete_records' })).toMatchObject({ decision: 'allow' });
      } finally {
        await killSwitch(`agents/${AGENT}`, false);
      }
      expect(await decision({ agent_id: AGENT, action_name: 'search' })).toMatchObject({ decision: 'allow' });
    });

    it("blocks every agent of the organisation while its kill switch is engaged (the organisation's first), and no other organisation's", async () => {
      await killSwitch(`agents/${AGENT}`, true);
      await killSwitch('organization', true, 'freeze');
      try {
        const got = await decision({ agent_id: AGENT, action_name: 'search' });
        expect(got).toMatchObject({ decision: 'block', rule: 'organization_kill_switch', policy_id: null, reason: "the organisation's kill switch is engaged: freeze" });
        expect(got.triggered.map((t: { rule: string }) => t.rule)).toEqual(['organization_kill_switch', 'agent_kill_switch']);
        expect(await decision({ agent_id: OTHER_AGENT, action_name: 'anything' })).toMatchObject({ decision: 'block', rule: 'organization_kill_switch' });
        expect(await decision({ agent_id: OTHER_AGENT, action_name: 'anything' }, p().otherOrgWriteKey)).toMatchObject({ decision: 'allow' });
      } finally {
        await killSwitch('organization', false);
        await killSwitch(`agents/${AGENT}`, false);
      }
    });
  });

  describe('action budget, downgrades and guardrails', () => {
    const GR_AGENT = 'guardrail-agent';
    const GR_RUN = 'guardrail-run';
    const grAct = (name: string, secondsAgo: number, inputs: Record<string, unknown>) =>
      ev('action.record', { run_id: GR_RUN, agent_id: GR_AGENT, action_name: name, timestamp: ago(secondsAgo), status: 'success', cost_usd: 0.01, inputs }, secondsAgo);
    let gr: { id: string };

    it('creates a policy with action_budget, downgrades and guardrails (defaults filled in), patches it, and its history diffs each field', async () => {
      const created = await call(p(), 'POST', '/api/v1/policies', {
        key: p().writeKey,
        body: {
          name: 'Guardrails',
          agent_ids: [GR_AGENT],
          action_budget: 5,
          downgrades: [
            { action: 'refund_payment', argument: 'amount', max: 100 },
            { action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } },
          ],
          guardrails: {
            pii: { categories: ['email', 'phone', 'payment_card', 'iban', 'us_ssn', 'ip_address', 'secret'] },
            moderation: { threshold: 0.8, categories: ['harassment', 'hate', 'self-harm', 'sexual', 'violence', 'illicit'] },
            loop: { threshold: 5, window_seconds: 600 },
            idempotency: { actions: ['send_email'], ttl_seconds: 3600 },
          },
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      gr = created.body;
      expect(created.body).toMatchObject({ action_budget: 5, guardrails: { pii: { mode: 'block' }, moderation: { mode: 'block', threshold: 0.8 }, loop: { mode: 'block', threshold: 5 } } });
      expect(created.body.downgrades).toHaveLength(2);

      const guardrails = { ...created.body.guardrails, loop: { mode: 'block', threshold: 3, window_seconds: 600 } };
      const patched = await call(p(), 'PATCH', `/api/v1/policies/${gr.id}`, { key: p().writeKey, body: { action_budget: 4, guardrails } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({ version: 2, action_budget: 4, guardrails: { loop: { threshold: 3 } } });

      const h = await call(p(), 'GET', `/api/v1/policies/${gr.id}/history`, { key: p().readKey });
      expect(h.status).toBe(200);
      expect(h.body.history[0].changes).toMatchObject({ action_budget: { from: null, to: 5 }, downgrades: { from: null, to: created.body.downgrades }, guardrails: { from: null, to: created.body.guardrails } });
      expect(h.body.history[1]).toMatchObject({ event: 'PolicyUpdated', changes: { action_budget: { from: 5, to: 4 }, guardrails: { from: created.body.guardrails, to: guardrails } } });
      expect(Object.keys(h.body.history[1].changes).sort()).toEqual(['action_budget', 'guardrails']);
      expect((await call(p(), 'GET', `/api/v1/policies/${gr.id}?version=1`, { key: p().readKey })).body.action_budget).toBe(5);
    });

    it('downgrades: the amount capped and the model substituted, in modified_inputs', async () => {
      const got = await decision({ agent_id: GR_AGENT, action_name: 'refund_payment', arguments: { invoice: 'inv_1', amount: 120, model: 'gpt-4o' }, estimated_cost_usd: 0.02 });
      expect(got).toMatchObject({ decision: 'downgrade', intervention_type: 'downgrade', outcome: 'modified', rule: 'downgrade', policy_id: gr.id, cost_prevented_usd: 0 });
      expect(got.modified_inputs).toEqual({ invoice: 'inv_1', amount: 100, model: 'gpt-4o-mini' });
    });

    it('pii_blocked with the spec context payload, the matched text masked', async () => {
      const got = await decision({ agent_id: GR_AGENT, action_name: 'send_message', arguments: { messages: [{ content: 'hi' }, { content: 'reach me at jane.doe@example.com' }] } });
      expect(got).toMatchObject({ decision: 'pii_blocked', intervention_type: 'pii_blocked', outcome: 'blocked', rule: 'pii_guardrail', risk_level: 'high' });
      expect(got.guardrail_context).toEqual({
        guardrail_schema_version: 1,
        guardrail: 'pii',
        matches: [{ category: 'email', field_path: 'messages.1.content', matched_text: 'ja************om' }],
        categories: ['email'],
        fields: ['messages.1.content'],
      });
      expect(JSON.stringify(got)).not.toContain('jane.doe@example.com');
    });

    it('content_blocked from the moderation scores passed in, budget_exceeded above the action budget', async () => {
      const flagged = await decision({ agent_id: GR_AGENT, action_name: 'post', arguments: { body: 'you are awful' }, moderation_scores: [{ field_path: 'body', scores: { 'harassment/threatening': 0.93 } }] });
      expect(flagged).toMatchObject({ decision: 'content_blocked', outcome: 'blocked', guardrail_context: { guardrail: 'moderation', categories: ['harassment/threatening'], fields: ['body'] } });
      const costly = await decision({ agent_id: GR_AGENT, action_name: 'search', arguments: { q: 'x' }, estimated_cost_usd: 4.5 });
      expect(costly).toMatchObject({ decision: 'budget_exceeded', rule: 'action_budget', cost_prevented_usd: 4.5 });
      expect(await decision({ agent_id: GR_AGENT, action_name: 'search', arguments: { q: 'x' }, estimated_cost_usd: 4 })).toMatchObject({ decision: 'allow' });
    });

    it("loop_detected and idempotent_replay against the run's recorded inputs (key order ignored)", async () => {
      const batch = [
        ev('run.start', { run_id: GR_RUN, agent_id: GR_AGENT, started_at: ago(120) }, 120),
        grAct('search', 50, { q: 'status', page: 1 }),
        grAct('search', 40, { page: 1, q: 'status' }),
        grAct('search', 30, { q: 'status', page: 1 }),
        grAct('send_email', 20, { to: 'ops', subject: 'daily' }),
      ];
      const r = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch } });
      expect(r.status).toBe(207);
      expect(r.body.errors).toEqual([]);
      await eventually(async () => (await call(p(), 'GET', `/api/v1/runs/${GR_RUN}`, { key: p().readKey })).body.action_count === 4, 20_000);
      const loop = await decision({ agent_id: GR_AGENT, run_id: GR_RUN, action_name: 'search', arguments: { page: 1, q: 'status' } });
      expect(loop).toMatchObject({ decision: 'loop_detected', outcome: 'blocked', guardrail_context: { guardrail: 'loop', action_name: 'search', repeat_count: 4, threshold: 3, window_seconds: 600 } });
      expect(await decision({ agent_id: GR_AGENT, run_id: GR_RUN, action_name: 'search', arguments: { q: 'other', page: 1 } })).toMatchObject({ decision: 'allow' });
      const replay = await decision({ agent_id: GR_AGENT, run_id: GR_RUN, action_name: 'send_email', arguments: { subject: 'daily', to: 'ops' } });
      expect(replay).toMatchObject({ decision: 'idempotent_replay', intervention_type: 'idempotent_replay', guardrail_context: { guardrail: 'idempotency' } });
      expect(replay.guardrail_context.cached_result_ref).toMatch(/^action:/);
    });

    it('rejects bad guardrail and downgrade settings with 422 naming each field and the allowed values; nothing is written', async () => {
      const r = await call(p(), 'POST', '/api/v1/policies', {
        key: p().writeKey,
        body: {
          name: 'Bad guardrails',
          action_budget: -1,
          downgrades: [{ action: 'x', argument: 'a..b', max: 1 }, { action: 'x', argument: 'a' }],
          guardrails: { pii: { mode: 'shout', categories: ['names'] }, moderation: { threshold: 1.5 }, loop: { threshold: 0, window_seconds: 60 }, spam: {} },
        },
      });
      expectProblem(r, 422, [
        'body.action_budget',
        'body.downgrades.0.argument',
        'body.downgrades.1.max',
        'body.guardrails.spam',
        'body.guardrails.pii.mode',
        'body.guardrails.pii.categories',
        'body.guardrails.moderation.threshold',
        'body.guardrails.loop.threshold',
      ]);
      const text = JSON.stringify(r.body.errors);
      expect(text).toContain('payment_card');
      expect(text).toContain('redact');
      const list = await call(p(), 'GET', '/api/v1/policies?name=Bad%20guardrails', { key: p().readKey });
      expect(list.body.total).toBe(0);
    });

    it('rejects bad moderation scores and idempotency keys on evaluate with 422 naming each field', async () => {
      const r = await evaluate({ agent_id: GR_AGENT, action_name: 'post', idempotency_key: '', moderation_scores: [{ field_path: '', scores: { harassment: 1.2 } }, { scores: {} }] });
      expectProblem(r, 422, ['body.idempotency_key', 'body.moderation_scores.0.field_path', 'body.moderation_scores.0.scores.harassment', 'body.moderation_scores.1.field_path']);
    });
  });

  describe('bad input', () => {
    it('rejects a missing agent_id and action_name with 422 naming both', async () => {
      expectProblem(await evaluate({}), 422, ['body.agent_id', 'body.action_name']);
    });

    it('rejects wrong values and an unknown field with 422 naming each', async () => {
      const r = await evaluate({ agent_id: '', action_name: 'x'.repeat(300), run_id: 7, estimated_cost_usd: -1, arguments: [1], colour: 'red' });
      expectProblem(r, 422, ['body.colour', 'body.agent_id', 'body.action_name', 'body.run_id', 'body.estimated_cost_usd', 'body.arguments']);
    });

    it('rejects a body that is not JSON with 400 and one without a key with 401', async () => {
      const bad = await call(p(), 'POST', '/api/v1/policies/evaluate', { key: p().writeKey, rawBody: '{"agent_id":', contentType: 'application/json' });
      expectProblem(bad, 400);
      expectProblem(await call(p(), 'POST', '/api/v1/policies/evaluate', { body: { agent_id: AGENT, action_name: 'search' } }), 401);
    });
  });
});
