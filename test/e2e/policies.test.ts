import { expect, it, describe } from 'vitest';
import { deterministicId } from '@agp/runtime';
import { describeModes } from '../support/modes.js';
import { call, eventually } from '../support/http.js';

const uniq = () => Math.random().toString(36).slice(2, 10);
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Res = { status: number; headers: Headers; body: any };
const expectProblem = (r: Res, status: number, paths: string[] = []) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, title: expect.any(String), type: expect.any(String), detail: expect.any(String) });
  if (paths.length) expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(paths));
};

/**
 * Policies, the agent registry and kill switches over real HTTP, in both run modes. Source: docs/api.md (Policies, Agents, Kill switches).
 */
describeModes('policies, agents and kill switches', (platform) => {
  const p = () => platform();
  const createPolicy = async (body: Record<string, unknown>) => {
    const r = await call(p(), 'POST', '/api/v1/policies', { key: p().writeKey, body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };
  const register = async (body: Record<string, unknown>, key = p().writeKey) => call(p(), 'POST', '/api/v1/agents', { key, body });
  const policyEvents = (id: string) => p().streamEventTypes(`policy-${id}`);
  const agentEvents = (org: string, agentId: string) => p().streamEventTypes(`agent-${deterministicId(org, agentId)}`);

  describe('POST /api/v1/policies', () => {
    it('creates version 1 with every field normalised, answers 201 with Location and ETag, and GET returns it', async () => {
      const name = `budget-${uniq()}`;
      const r = await call(p(), 'POST', '/api/v1/policies', {
        key: p().writeKey,
        body: { name, session_budget: 50, run_budget: 5.5, denied_actions: ['drop_table'], rate_limits: { '*': { max_calls: 100, window_seconds: 60 } }, agent_ids: ['a-1'] },
      });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({
        id: expect.stringMatching(UUID_V7),
        organization_id: expect.any(String),
        version: 1,
        created_at: expect.stringMatching(/Z$/),
        updated_at: r.body.created_at,
        name,
        description: null,
        enabled: true,
        session_budget: 50,
        run_budget: 5.5,
        denied_actions: ['drop_table'],
        allowed_actions: null,
        approval_required_actions: [],
        rate_limits: { '*': { max_calls: 100, window_seconds: 60, scope: 'agent' } },
        agent_ids: ['a-1'],
        action_budget: null,
        downgrades: [],
        guardrails: {},
        period_budgets: [],
        approvals_required: 1,
        separation_of_duties: false,
        auto_kill_switch: null,
      });
      expect(r.headers.get('location')).toBe(`/api/v1/policies/${r.body.id}`);
      expect(r.headers.get('etag')).toBe('"1"');
      const got = await call(p(), 'GET', `/api/v1/policies/${r.body.id}`, { key: p().readKey });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(r.body);
      expect(await policyEvents(r.body.id)).toEqual(['PolicyCreated']);
    });

    it('refuses a read key with 403 and creates nothing', async () => {
      const name = `ro-${uniq()}`;
      expectProblem(await call(p(), 'POST', '/api/v1/policies', { key: p().readKey, body: { name } }), 403);
      expect((await call(p(), 'GET', `/api/v1/policies?name=${name}`, { key: p().readKey })).body.total).toBe(0);
    });

    it('rejects an unknown field with 422 naming it, and creates nothing', async () => {
      const name = `unknown-${uniq()}`;
      expectProblem(await call(p(), 'POST', '/api/v1/policies', { key: p().writeKey, body: { name, colour: 'red' } }), 422, ['body.colour']);
      expect((await call(p(), 'GET', `/api/v1/policies?name=${name}`, { key: p().readKey })).body.total).toBe(0);
    });

    it('rejects fields of the wrong type with 422 naming each', async () => {
      const r = await call(p(), 'POST', '/api/v1/policies', {
        key: p().writeKey,
        body: { name: `t-${uniq()}`, session_budget: 'ten', enabled: 'yes', denied_actions: 'drop', rate_limits: { send: { max_calls: 0, window_seconds: 60 } } },
      });
      expectProblem(r, 422, ['body.session_budget', 'body.enabled', 'body.denied_actions', 'body.rate_limits.send.max_calls']);
    });

    it('rejects a missing name and a negative budget with 422', async () => {
      expectProblem(await call(p(), 'POST', '/api/v1/policies', { key: p().writeKey, body: { run_budget: -1 } }), 422, ['body.name', 'body.run_budget']);
    });
  });

  describe('GET /api/v1/policies', () => {
    it('filters by enabled, agent_id (scoped or unscoped policies) and name, with pagination', async () => {
      const tag = uniq();
      const agent = `agent-${tag}`;
      const scoped = await createPolicy({ name: `${tag}-scoped`, agent_ids: [agent] });
      const other = await createPolicy({ name: `${tag}-other`, agent_ids: ['someone-else'] });
      const all = await createPolicy({ name: `${tag}-all`, enabled: false });
      const list = async (q: string) => {
        const r = await call(p(), 'GET', `/api/v1/policies?${q}`, { key: p().readKey });
        expect(r.status, q).toBe(200);
        return r.body as { policies: Array<{ id: string }>; total: number; skip: number; limit: number };
      };
      const ids = (page: { policies: Array<{ id: string }> }) => page.policies.map((x) => x.id);
      expect((await list(`name=${tag}-scoped`)).policies).toEqual([scoped]);
      const forAgent = await list(`agent_id=${agent}&limit=1000`);
      expect(ids(forAgent)).toEqual(expect.arrayContaining([scoped.id, all.id]));
      expect(ids(forAgent)).not.toContain(other.id);
      expect(ids(await list(`agent_id=${agent}&enabled=false&limit=1000`))).toContain(all.id);
      expect(ids(await list(`agent_id=${agent}&enabled=true&limit=1000`))).not.toContain(all.id);
      expect(ids(await list(`name=${tag}-all&enabled=true`))).toEqual([]);
      const page = await list('limit=2&skip=1');
      expect(page).toMatchObject({ skip: 1, limit: 2 });
      expect(page.total).toBeGreaterThanOrEqual(3);
      expect(page.policies).toHaveLength(2);
      const first = await list('limit=3');
      expect(ids(first).slice(1)).toEqual(ids(page));
      expect(first.policies.map((x: any) => x.created_at)).toEqual([...first.policies.map((x: any) => x.created_at)].sort().reverse());
    });

    it('answers with and without a trailing slash', async () => {
      const created = await createPolicy({ name: `slash-${uniq()}` });
      expect((await call(p(), 'GET', '/api/v1/policies/?limit=1', { key: p().readKey })).status).toBe(200);
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}/`, { key: p().readKey })).body.id).toBe(created.id);
      expect((await call(p(), 'GET', '/api/v1/agents/', { key: p().readKey })).status).toBe(200);
      expect((await call(p(), 'GET', '/api/v1/kill-switches/', { key: p().readKey })).status).toBe(200);
    });

    it('rejects an unknown query parameter with 422', async () => {
      expectProblem(await call(p(), 'GET', '/api/v1/policies?colour=red', { key: p().readKey }), 422, ['query.colour']);
    });

    it('rejects bad filter values with 422 naming each', async () => {
      expectProblem(await call(p(), 'GET', '/api/v1/policies?enabled=maybe&limit=5000&skip=-1', { key: p().readKey }), 422, ['query.enabled', 'query.limit', 'query.skip']);
    });

    it('never lists another organisation\'s policies', async () => {
      const name = `iso-${uniq()}`;
      await createPolicy({ name });
      expect((await call(p(), 'GET', `/api/v1/policies?name=${name}`, { key: p().otherOrgWriteKey })).body).toMatchObject({ total: 0, policies: [] });
    });
  });

  describe('PATCH /api/v1/policies/{id} and versions', () => {
    it('keeps every version: ?version=1 after two PATCHes shows the original, and history lists each change with its actor', async () => {
      const created = await createPolicy({ name: `v-${uniq()}`, run_budget: 10, denied_actions: ['a'] });
      const p1 = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { run_budget: 20 } });
      expect(p1.status).toBe(200);
      expect(p1.body).toMatchObject({ version: 2, run_budget: 20, denied_actions: ['a'] });
      expect(p1.headers.get('etag')).toBe('"2"');
      const p2 = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { denied_actions: ['a', 'b'], description: 'tighter' } });
      expect(p2.body).toMatchObject({ version: 3, run_budget: 20, denied_actions: ['a', 'b'], description: 'tighter' });

      const v1 = await call(p(), 'GET', `/api/v1/policies/${created.id}?version=1`, { key: p().readKey });
      expect(v1.status).toBe(200);
      expect(v1.body).toEqual(created);
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}?version=2`, { key: p().readKey })).body).toMatchObject({ version: 2, run_budget: 20, description: null });
      const now = await call(p(), 'GET', `/api/v1/policies/${created.id}`, { key: p().readKey });
      expect(now.body).toEqual(p2.body);
      expect(now.headers.get('etag')).toBe('"3"');

      const h = await call(p(), 'GET', `/api/v1/policies/${created.id}/history`, { key: p().readKey });
      expect(h.status).toBe(200);
      expect(h.body.policy_id).toBe(created.id);
      expect(h.body.history).toEqual([
        expect.objectContaining({ version: 1, event: 'PolicyCreated', actor: expect.stringMatching(/^key:/), at: created.created_at, changes: expect.objectContaining({ run_budget: { from: null, to: 10 } }) }),
        { version: 2, event: 'PolicyUpdated', actor: expect.stringMatching(/^key:/), actor_name: expect.any(String), at: expect.any(String), changes: { run_budget: { from: 10, to: 20 } } },
        { version: 3, event: 'PolicyUpdated', actor: expect.stringMatching(/^key:/), actor_name: expect.any(String), at: expect.any(String), changes: { denied_actions: { from: ['a'], to: ['a', 'b'] }, description: { from: null, to: 'tighter' } } },
      ]);
    });

    it('emits PolicyDisabled and PolicyEnabled for enabled, and nothing for a PATCH that changes nothing', async () => {
      const created = await createPolicy({ name: `toggle-${uniq()}` });
      const off = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { enabled: false } });
      expect(off.body).toMatchObject({ enabled: false, version: 2 });
      const same = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { enabled: false, name: created.name } });
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ enabled: false, version: 2 });
      const on = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { enabled: true, run_budget: 3 } });
      expect(on.body).toMatchObject({ enabled: true, run_budget: 3, version: 4 });
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated', 'PolicyDisabled', 'PolicyUpdated', 'PolicyEnabled']);
      const h = await call(p(), 'GET', `/api/v1/policies/${created.id}/history`, { key: p().readKey });
      expect(h.body.history.map((e: any) => [e.event, e.changes])).toEqual([
        ['PolicyCreated', expect.any(Object)],
        ['PolicyDisabled', { enabled: { from: true, to: false } }],
        ['PolicyUpdated', { run_budget: { from: null, to: 3 } }],
        ['PolicyEnabled', { enabled: { from: false, to: true } }],
      ]);
      expect((await call(p(), 'GET', `/api/v1/policies?name=${created.name}&enabled=true`, { key: p().readKey })).body.total).toBe(1);
    });

    it('answers 409 when If-Match is not the current version, and applies it when it is', async () => {
      const created = await createPolicy({ name: `ifm-${uniq()}` });
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, headers: { 'if-match': '"7"' }, body: { run_budget: 1 } }), 409);
      const ok = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, headers: { 'if-match': '"1"' }, body: { run_budget: 1 } });
      expect(ok.status).toBe(200);
      expect(ok.body.version).toBe(2);
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, headers: { 'if-match': '1' }, body: { run_budget: 2 } }), 409);
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated', 'PolicyUpdated']);
    });

    it('rejects a malformed If-Match with 422', async () => {
      const created = await createPolicy({ name: `ifm-bad-${uniq()}` });
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, headers: { 'if-match': 'latest' }, body: { run_budget: 1 } }), 422, ['header.if-match']);
    });

    it('never loses an update: concurrent PATCHes either apply or get 409', async () => {
      const created = await createPolicy({ name: `race-${uniq()}` });
      const results = await Promise.all(
        [1, 2, 3, 4, 5].map((n) => call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, headers: { 'if-match': '"1"' }, body: { run_budget: n } })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(4);
      const winner = results.find((r) => r.status === 200)!.body;
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}`, { key: p().readKey })).body).toMatchObject({ version: 2, run_budget: winner.run_budget });
    });

    it('never loses an update without If-Match either: each concurrent PATCH is applied on the version it read, or gets 409', async () => {
      const created = await createPolicy({ name: `race2-${uniq()}` });
      const results = await Promise.all([1, 2, 3, 4, 5].map((n) => call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { run_budget: n } })));
      const statuses = results.map((r) => r.status);
      expect(statuses.every((s) => s === 200 || s === 409), JSON.stringify(statuses)).toBe(true);
      const applied = statuses.filter((s) => s === 200).length;
      expect(applied).toBeGreaterThanOrEqual(1);
      const h = await call(p(), 'GET', `/api/v1/policies/${created.id}/history`, { key: p().readKey });
      expect(h.body.history).toHaveLength(1 + applied);
      expect(results.filter((r) => r.status === 200).map((r) => r.body.version).sort()).toEqual(Array.from({ length: applied }, (_, i) => i + 2));
    });

    it('refuses a read key with 403 and changes nothing', async () => {
      const created = await createPolicy({ name: `ro-patch-${uniq()}` });
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().readKey, body: { enabled: false } }), 403);
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}`, { key: p().readKey })).body).toEqual(created);
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated']);
    });

    it('rejects an unknown field with 422 naming it and changes nothing', async () => {
      const created = await createPolicy({ name: `patch-unknown-${uniq()}` });
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { run_budget: 1, colour: 'red' } }), 422, ['body.colour']);
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated']);
    });

    it('rejects a field of the wrong type with 422 naming it', async () => {
      const created = await createPolicy({ name: `patch-type-${uniq()}` });
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { enabled: 'no', agent_ids: [1] } }), 422, ['body.enabled', 'body.agent_ids']);
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated']);
    });

    it('rejects an empty patch with 422', async () => {
      const created = await createPolicy({ name: `patch-empty-${uniq()}` });
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: {} }), 422);
    });

    it('answers 404 for an unknown policy id', async () => {
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/01900000-0000-7000-8000-00000000dead`, { key: p().writeKey, body: { enabled: false } }), 404);
    });
  });

  describe('period budgets and rate-limit scopes', () => {
    const DAY = { scope: 'agent', period: 'day', max_usd: 200 };
    const MONTH = { scope: 'organization', period: 'month', max_usd: 5000 };

    it('answers them back on create, the record, the list and the governance snapshot; a limit without a scope counts per agent', async () => {
      const agent = `fleet-bot-${uniq()}`;
      const name = `fleet-${uniq()}`;
      const created = await createPolicy({ name, agent_ids: [agent], period_budgets: [DAY, MONTH], rate_limits: { send_email: { max_calls: 100, window_seconds: 60, scope: 'organization' }, '*': { max_calls: 1000, window_seconds: 60 } } });
      expect(created).toMatchObject({
        version: 1,
        period_budgets: [DAY, MONTH],
        rate_limits: { send_email: { max_calls: 100, window_seconds: 60, scope: 'organization' }, '*': { max_calls: 1000, window_seconds: 60, scope: 'agent' } },
      });
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}`, { key: p().readKey })).body).toEqual(created);
      expect((await call(p(), 'GET', `/api/v1/policies?name=${name}`, { key: p().readKey })).body.policies).toEqual([created]);
      const snap = await call(p(), 'GET', `/api/v1/agents/${agent}/governance`, { key: p().readKey });
      expect(snap.status).toBe(200);
      expect(snap.body.policies.find((x: { id: string }) => x.id === created.id)).toEqual(created);
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}/history`, { key: p().readKey })).body.history[0].changes).toMatchObject({
        period_budgets: { from: null, to: [DAY, MONTH] },
        rate_limits: { from: null, to: created.rate_limits },
      });
    });

    it('refuses a second budget for one (scope, period) with 422 naming body.period_budgets.1.period, and creates nothing', async () => {
      const name = `dup-${uniq()}`;
      const r = await call(p(), 'POST', '/api/v1/policies', { key: p().writeKey, body: { name, period_budgets: [DAY, { ...DAY, max_usd: 1 }] } });
      expectProblem(r, 422, ['body.period_budgets.1.period']);
      expect(r.body.detail).toContain('body.period_budgets.1.period');
      expect((await call(p(), 'GET', `/api/v1/policies?name=${name}`, { key: p().readKey })).body.total).toBe(0);
    });

    it('refuses a bad period, a bad budget scope, a bad rate-limit scope and a negative max_usd with 422 naming each and the allowed values', async () => {
      const name = `bad-${uniq()}`;
      const r = await call(p(), 'POST', '/api/v1/policies', {
        key: p().writeKey,
        body: { name, period_budgets: [{ scope: 'agent', period: 'week', max_usd: 5 }, { scope: 'team', period: 'day', max_usd: 5 }, { scope: 'agent', period: 'hour', max_usd: -1 }], rate_limits: { a: { max_calls: 1, window_seconds: 1, scope: 'cluster' } } },
      });
      expectProblem(r, 422, ['body.period_budgets.0.period', 'body.period_budgets.1.scope', 'body.period_budgets.2.max_usd', 'body.rate_limits.a.scope']);
      const errors = r.body.errors as Array<{ path: string; message: string; allowed?: string[] }>;
      expect(errors.find((e) => e.path === 'body.period_budgets.0.period')).toMatchObject({ allowed: ['hour', 'day', 'month'], message: expect.stringContaining('hour, day, month') });
      expect(errors.find((e) => e.path === 'body.period_budgets.1.scope')?.allowed).toEqual(['agent', 'organization']);
      expect(errors.find((e) => e.path === 'body.rate_limits.a.scope')?.allowed).toEqual(['agent', 'organization', 'process']);
      expect((await call(p(), 'GET', `/api/v1/policies?name=${name}`, { key: p().readKey })).body.total).toBe(0);
    });

    it('PATCH replaces period_budgets whole and changes a scope; versions and the history show both', async () => {
      const created = await createPolicy({ name: `patch-${uniq()}`, period_budgets: [DAY], rate_limits: { search: { max_calls: 5, window_seconds: 60 } } });
      const hour = { scope: 'agent', period: 'hour', max_usd: 10 };
      const p1 = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { period_budgets: [hour, MONTH] } });
      expect(p1.status, JSON.stringify(p1.body)).toBe(200);
      expect(p1.body).toMatchObject({ version: 2, period_budgets: [hour, MONTH], rate_limits: created.rate_limits });
      const p2 = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { rate_limits: { search: { max_calls: 5, window_seconds: 60, scope: 'process' } } } });
      expect(p2.body).toMatchObject({ version: 3, period_budgets: [hour, MONTH], rate_limits: { search: { max_calls: 5, window_seconds: 60, scope: 'process' } } });
      const dup = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { period_budgets: [MONTH, MONTH] } });
      expectProblem(dup, 422, ['body.period_budgets.1.period']);
      const p3 = await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: p().writeKey, body: { period_budgets: [] } });
      expect(p3.body).toMatchObject({ version: 4, period_budgets: [] });

      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}?version=1`, { key: p().readKey })).body).toEqual(created);
      expect((await call(p(), 'GET', `/api/v1/policies/${created.id}?version=2`, { key: p().readKey })).body.period_budgets).toEqual([hour, MONTH]);
      const h = await call(p(), 'GET', `/api/v1/policies/${created.id}/history`, { key: p().readKey });
      expect(h.body.history.map((e: { version: number; changes: unknown }) => [e.version, e.changes])).toEqual([
        [1, expect.objectContaining({ period_budgets: { from: null, to: [DAY] } })],
        [2, { period_budgets: { from: [DAY], to: [hour, MONTH] } }],
        [3, { rate_limits: { from: { search: { max_calls: 5, window_seconds: 60, scope: 'agent' } }, to: { search: { max_calls: 5, window_seconds: 60, scope: 'process' } } } }],
        [4, { period_budgets: { from: [hour, MONTH], to: [] } }],
      ]);
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated', 'PolicyUpdated', 'PolicyUpdated', 'PolicyUpdated']);
    });
  });

  describe('GET /api/v1/policies/{id} errors', () => {
    it('answers 404 for an unknown id, on the record, a version and the history', async () => {
      for (const path of ['/api/v1/policies/nope', '/api/v1/policies/nope?version=1', '/api/v1/policies/nope/history']) {
        expectProblem(await call(p(), 'GET', path, { key: p().readKey }), 404);
      }
    });

    it('answers 404 for another organisation\'s policy everywhere, and its PATCH changes nothing', async () => {
      const created = await createPolicy({ name: `mine-${uniq()}` });
      const other = p().otherOrgWriteKey;
      expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}`, { key: other }), 404);
      expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}?version=1`, { key: other }), 404);
      expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}/history`, { key: other }), 404);
      expectProblem(await call(p(), 'PATCH', `/api/v1/policies/${created.id}`, { key: other, body: { enabled: false } }), 404);
      expect(await policyEvents(created.id)).toEqual(['PolicyCreated']);
    });

    it('answers 404 for a version the policy never had', async () => {
      const created = await createPolicy({ name: `ver-${uniq()}` });
      expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}?version=2`, { key: p().readKey }), 404);
    });

    it('rejects a bad version with 422', async () => {
      const created = await createPolicy({ name: `badver-${uniq()}` });
      for (const v of ['abc', '0', '-1', '1.5']) {
        expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}?version=${v}`, { key: p().readKey }), 422, ['query.version']);
      }
    });

    it('rejects unknown query parameters on the record and the history with 422', async () => {
      const created = await createPolicy({ name: `q-${uniq()}` });
      expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}?verison=1`, { key: p().readKey }), 422, ['query.verison']);
      expectProblem(await call(p(), 'GET', `/api/v1/policies/${created.id}/history?limit=1`, { key: p().readKey }), 422, ['query.limit']);
    });
  });

  describe('agents', () => {
    const actions = [
      { name: 'refund', description: 'Refund a charge', parameters: { type: 'object', properties: { amount_usd: { type: 'number' } }, required: ['amount_usd'] }, risk_level: 'high', typical_cost_usd: 0.03 },
      { name: 'lookup_invoice' },
    ];

    it('POST registers an agent (201), GET shows its actions and kill switch, an identical re-registration changes nothing (200), a changed one is AgentUpdated', async () => {
      const id = `billing-${uniq()}`;
      const r = await register({ agent_id: id, name: 'Billing bot', framework: 'langgraph', owner: 'payments', metadata: { team: 'fin' }, actions });
      expect(r.status).toBe(201);
      expect(r.headers.get('location')).toBe(`/api/v1/agents/${id}`);
      expect(r.body).toEqual({
        agent_id: id,
        organization_id: expect.any(String),
        name: 'Billing bot',
        description: null,
        framework: 'langgraph',
        owner: 'payments',
        metadata: { team: 'fin' },
        actions: [actions[0], { name: 'lookup_invoice', description: null, parameters: null, risk_level: null, typical_cost_usd: null }],
        registered_at: expect.stringMatching(/Z$/),
        updated_at: r.body.registered_at,
        version: 1,
        changed_by: expect.stringMatching(/^key:/),
        changed_by_name: 'AGP_INIT_WRITE_KEY',
        kill_switch: { engaged: false, reason: null, changed_at: null, changed_by: null, actor_name: null },
      });
      const got = await call(p(), 'GET', `/api/v1/agents/${id}`, { key: p().readKey });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(r.body);

      const again = await register({ agent_id: id, name: 'Billing bot', framework: 'langgraph', owner: 'payments', metadata: { team: 'fin' }, actions });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(r.body);
      const changed = await register({ agent_id: id, name: 'Billing bot', framework: 'langgraph', owner: 'payments', metadata: { team: 'fin' }, actions: [actions[1]] });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ version: 2, registered_at: r.body.registered_at, actions: [{ name: 'lookup_invoice' }] });
      expect((await call(p(), 'GET', `/api/v1/agents/${id}`, { key: p().readKey })).body.actions).toHaveLength(1);
      expect(await agentEvents(r.body.organization_id, id)).toEqual(['AgentRegistered', 'AgentUpdated']);
    });

    it('GET /api/v1/agents pages through the registry by agent_id', async () => {
      const tag = uniq();
      for (const n of ['c', 'a', 'b']) expect((await register({ agent_id: `zz-${tag}-${n}` })).status).toBe(201);
      const all = await call(p(), 'GET', '/api/v1/agents?limit=1000', { key: p().readKey });
      expect(all.status).toBe(200);
      const ids: string[] = all.body.agents.map((a: any) => a.agent_id);
      expect(ids).toEqual([...ids].sort());
      expect(ids.filter((x) => x.startsWith(`zz-${tag}`))).toEqual([`zz-${tag}-a`, `zz-${tag}-b`, `zz-${tag}-c`]);
      expect(all.body.total).toBe(ids.length);
      const page = await call(p(), 'GET', '/api/v1/agents?skip=1&limit=2', { key: p().readKey });
      expect(page.body).toMatchObject({ skip: 1, limit: 2, total: all.body.total });
      expect(page.body.agents.map((a: any) => a.agent_id)).toEqual(ids.slice(1, 3));
      expect(page.body.agents[0]).toHaveProperty('kill_switch.engaged', false);
      const def = await call(p(), 'GET', '/api/v1/agents', { key: p().readKey });
      expect(def.body).toMatchObject({ skip: 0, limit: 50 });
    });

    it('refuses a read key with 403 and registers nothing', async () => {
      const id = `ro-agent-${uniq()}`;
      expectProblem(await register({ agent_id: id }, p().readKey), 403);
      expectProblem(await call(p(), 'GET', `/api/v1/agents/${id}`, { key: p().readKey }), 404);
    });

    it('rejects an unknown field with 422 naming it', async () => {
      const id = `bad-${uniq()}`;
      expectProblem(await register({ agent_id: id, colour: 'red' }), 422, ['body.colour']);
      expectProblem(await call(p(), 'GET', `/api/v1/agents/${id}`, { key: p().readKey }), 404);
    });

    it('rejects fields of the wrong type with 422 naming each', async () => {
      expectProblem(await register({ agent_id: 5, actions: 'refund' }), 422, ['body.agent_id', 'body.actions']);
      expectProblem(await register({ agent_id: `x-${uniq()}`, actions: [{ name: 'a', risk_level: 'extreme' }] }), 422, ['body.actions.0.risk_level']);
    });

    it('answers 404 for an unknown agent', async () => {
      expectProblem(await call(p(), 'GET', `/api/v1/agents/never-registered-${uniq()}`, { key: p().readKey }), 404);
    });

    it('answers 404 for another organisation\'s agent, which may reuse the same agent_id independently', async () => {
      const id = `shared-${uniq()}`;
      expect((await register({ agent_id: id, name: 'acme bot' })).status).toBe(201);
      expectProblem(await call(p(), 'GET', `/api/v1/agents/${id}`, { key: p().otherOrgWriteKey }), 404);
      const theirs = await register({ agent_id: id, name: 'globex bot' }, p().otherOrgWriteKey);
      expect(theirs.status).toBe(201);
      expect((await call(p(), 'GET', `/api/v1/agents/${id}`, { key: p().readKey })).body.name).toBe('acme bot');
    });

    it('rejects bad list queries with 422', async () => {
      expectProblem(await call(p(), 'GET', '/api/v1/agents?limit=0&owner=x', { key: p().readKey }), 422, ['query.limit', 'query.owner']);
    });
  });

  describe('agent.register through POST /api/v1/ingest/', () => {
    const ev = (id: string, body: Record<string, unknown>) => ({ id, type: 'agent.register', timestamp: '2026-11-20T12:00:00Z', body });

    it('answers 207 and the agent becomes visible; the same event id twice is stored once', async () => {
      const agent = `ingested-${uniq()}`;
      const eventId = `evt-${uniq()}`;
      const r = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch: [ev(eventId, { agent_id: agent, name: 'from ingest', actions: [{ name: 'search', risk_level: 'low' }] })] } });
      expect(r.status).toBe(207);
      expect(r.body).toEqual({ successes: [{ id: eventId, status: 201, result: 'created' }], errors: [] });
      const got = await eventually(async () => {
        const g = await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey });
        return g.status === 200 ? g.body : null;
      });
      expect(got).toMatchObject({ agent_id: agent, name: 'from ingest', version: 1, actions: [{ name: 'search', risk_level: 'low' }] });

      // Same id again (with a different body): it is stored already, so the answer says duplicate (docs/ingest.md, Ingest answers). Then a
      // sentinel: once the sentinel is visible, anything the repeat could have changed would show.
      const again = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch: [ev(eventId, { agent_id: agent, name: 'changed' })] } });
      expect(again.status).toBe(207);
      expect(again.body).toEqual({ successes: [{ id: eventId, status: 200, result: 'duplicate' }], errors: [] });
      const sentinel = `sentinel-${uniq()}`;
      await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch: [ev(`evt-${uniq()}`, { agent_id: sentinel })] } });
      await eventually(async () => (await call(p(), 'GET', `/api/v1/agents/${sentinel}`, { key: p().readKey })).status === 200);
      expect((await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey })).body).toMatchObject({ name: 'from ingest', version: 1 });
      expect(await agentEvents(got.organization_id, agent)).toEqual(['AgentRegistered']);
    });

    it('applies a re-registration with a new event id as AgentUpdated', async () => {
      const agent = `reingest-${uniq()}`;
      await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch: [ev(`e1-${agent}`, { agent_id: agent, owner: 'a' }), ev(`e2-${agent}`, { agent_id: agent, owner: 'b' })] } });
      const got = await eventually(async () => {
        const g = await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey });
        return g.status === 200 && g.body.version === 2 ? g.body : null;
      });
      expect(got.owner).toBe('b');
      expect(await agentEvents(got.organization_id, agent)).toEqual(['AgentRegistered', 'AgentUpdated']);
    });

    it('reports an invalid registration as a 422 in the 207 answer, naming the field', async () => {
      const r = await call(p(), 'POST', '/api/v1/ingest/', { key: p().writeKey, body: { batch: [ev(`bad-${uniq()}`, { agent_id: 'x', colour: 'red' })] } });
      expect(r.status).toBe(207);
      expect(r.body.errors).toEqual([expect.objectContaining({ status: 422, message: expect.stringContaining('body.colour') })]);
    });
  });

  describe('kill switches', () => {
    it('engages and releases the organisation switch, recording the actor and reason', async () => {
      const before = await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey });
      expect(before.status).toBe(200);
      expect(before.body.organization).toMatchObject({ scope: 'organization', agent_id: null, engaged: false });
      const on = await call(p(), 'PUT', '/api/v1/kill-switches/organization', { key: p().writeKey, body: { engaged: true, reason: 'incident 42' } });
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ scope: 'organization', agent_id: null, engaged: true, reason: 'incident 42', changed_at: expect.stringMatching(/Z$/), changed_by: expect.stringMatching(/^key:/), actor_name: expect.any(String), version: before.body.organization.version + 1 });
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.organization).toEqual(on.body);
      const repeat = await call(p(), 'PUT', '/api/v1/kill-switches/organization', { key: p().writeKey, body: { engaged: true } });
      expect(repeat.body).toEqual(on.body);
      const off = await call(p(), 'PUT', '/api/v1/kill-switches/organization', { key: p().writeKey, body: { engaged: false, reason: 'resolved' } });
      expect(off.body).toMatchObject({ engaged: false, reason: 'resolved', version: on.body.version + 1 });
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.organization).toEqual(off.body);
      const org = (await createPolicy({ name: `org-${uniq()}` })).organization_id;
      expect((await p().streamEventTypes(`killswitch-${deterministicId(org, 'organization', '')}`)).slice(-2)).toEqual(['KillSwitchEngaged', 'KillSwitchReleased']);
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().otherOrgWriteKey })).body.organization.engaged).toBe(false);
    });

    it('engages and releases an agent switch, shown on the agent and in the list of engaged switches', async () => {
      const agent = `ks-${uniq()}`;
      const reg = await register({ agent_id: agent });
      const on = await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().writeKey, body: { engaged: true, reason: 'looping' } });
      expect(on.status).toBe(200);
      expect(on.body).toMatchObject({ scope: 'agent', agent_id: agent, engaged: true, reason: 'looping', changed_by: expect.stringMatching(/^key:/), version: 1 });
      expect((await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey })).body.kill_switch).toEqual({ engaged: true, reason: 'looping', changed_at: on.body.changed_at, changed_by: on.body.changed_by, actor_name: on.body.actor_name });
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.agents).toContainEqual(on.body);
      const off = await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().writeKey, body: { engaged: false } });
      expect(off.body).toMatchObject({ engaged: false, reason: null, version: 2 });
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.agents.map((a: any) => a.agent_id)).not.toContain(agent);
      expect(await p().streamEventTypes(`killswitch-${deterministicId(reg.body.organization_id, 'agent', agent)}`)).toEqual(['KillSwitchEngaged', 'KillSwitchReleased']);
    });

    it('engages the switch of an agent the registry does not know: listed, and its decisions blocked until released', async () => {
      const agent = `ghost-${uniq()}`;
      const decide = async () => {
        const r = await call(p(), 'POST', '/api/v1/policies/evaluate', { key: p().writeKey, body: { agent_id: agent, action_name: 'search' } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };
      expect(await decide()).toMatchObject({ decision: 'allow' });
      const on = await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().writeKey, body: { engaged: true, reason: 'unknown agent spending' } });
      expect(on.status, JSON.stringify(on.body)).toBe(200);
      expect(on.body).toMatchObject({ scope: 'agent', agent_id: agent, engaged: true, reason: 'unknown agent spending', version: 1 });
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.agents).toContainEqual(on.body);
      expect(await decide()).toMatchObject({ decision: 'block', rule: 'agent_kill_switch' });
      // The registry still does not know it: the switch did not register it.
      expectProblem(await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey }), 404);
      const off = await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().writeKey, body: { engaged: false } });
      expect(off.body).toMatchObject({ engaged: false, version: 2 });
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.agents.map((a: { agent_id: string }) => a.agent_id)).not.toContain(agent);
      expect(await decide()).toMatchObject({ decision: 'allow' });
    });

    it("sets only the caller's organisation's switch of an agent id another organisation registered", async () => {
      const agent = `theirs-${uniq()}`;
      expect((await register({ agent_id: agent })).status).toBe(201);
      const theirs = await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().otherOrgWriteKey, body: { engaged: true } });
      expect(theirs.status).toBe(200);
      try {
        expect((await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey })).body.kill_switch.engaged).toBe(false);
        expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body.agents.map((a: { agent_id: string }) => a.agent_id)).not.toContain(agent);
      } finally {
        await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().otherOrgWriteKey, body: { engaged: false } });
      }
    });
    it('refuses a read key with 403 and changes nothing', async () => {
      const agent = `ro-ks-${uniq()}`;
      expect((await register({ agent_id: agent })).status).toBe(201);
      const before = (await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body;
      expectProblem(await call(p(), 'PUT', '/api/v1/kill-switches/organization', { key: p().readKey, body: { engaged: !before.organization.engaged } }), 403);
      expectProblem(await call(p(), 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p().readKey, body: { engaged: true } }), 403);
      expect((await call(p(), 'GET', '/api/v1/kill-switches', { key: p().readKey })).body).toEqual(before);
      expect((await call(p(), 'GET', `/api/v1/agents/${agent}`, { key: p().readKey })).body.kill_switch.engaged).toBe(false);
    });

    it('rejects an unknown field and a wrong type with 422 naming each', async () => {
      expectProblem(await call(p(), 'PUT', '/api/v1/kill-switches/organization', { key: p().writeKey, body: { engaged: 'yes', colour: 'red' } }), 422, ['body.engaged', 'body.colour']);
      expectProblem(await call(p(), 'PUT', '/api/v1/kill-switches/organization', { key: p().writeKey, body: {} }), 422, ['body.engaged']);
    });

    it('rejects query parameters on the list with 422', async () => {
      expectProblem(await call(p(), 'GET', '/api/v1/kill-switches?scope=agent', { key: p().readKey }), 422, ['query.scope']);
    });
  });
});
