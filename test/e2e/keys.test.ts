import { describe, expect, it } from 'vitest';
import { KEY_SCOPES } from '@agp/contracts';
import { call, eventually, expectProblem, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

const uniq = () => Math.random().toString(36).slice(2, 10);

/**
 * API keys over HTTP and the names of the keys that acted, in both run modes: an admin key creates keys
 * (`POST /api/v1/keys`, the secret answered once), lists them (never a secret), revokes them (`DELETE`, refused at
 * once by the gateway that revoked it); read and write keys get 403 on every key route; another organisation's key
 * is a 404; `GET /api/v1/auth/key` names the calling key. Policy history, kill switches and approvals show the acting
 * key's name (`actor_name`) beside its id, captured when it acted (a revoked key keeps it). A key bound to an agent
 * shows it, acts as that agent (ingest, interventions, decisions, registration, governance) and is refused (403
 * naming the field and the bound agent, nothing written) where it names another; an admin key cannot be bound.
 * Source: architecture §4 (Auth); docs/api.md (Keys); docs/decisions.md (Actor names, Agent-bound keys).
 */
describeModes('API keys over HTTP', (platform) => {
  const create = (p: BootedPlatform, body: unknown, key = p.adminKey) => call(p, 'POST', '/api/v1/keys', { key, body });
  const listAll = async (p: BootedPlatform, key = p.adminKey) => (await call(p, 'GET', '/api/v1/keys?limit=1000', { key })).body;

  describe('managing keys with an admin key', () => {
    it('creates a key whose secret is answered once and works at once for its scope, and only its scope', async () => {
      const p = platform();
      const name = `ci-${uniq()}`;
      const w = await create(p, { name, scope: 'write' });
      expect(w.status).toBe(201);
      expect(w.headers.get('location')).toBe('/api/v1/keys');
      expect(w.body).toMatchObject({ name, scope: 'write', organization_id: 'acme', status: 'active', expires_at: null, revoked_at: null, last_used_at: null });
      expect(w.body.key).toMatch(/^agp_[0-9A-Za-z]{32}$/);
      expect(w.body.prefix).toBe(w.body.key.slice(0, 8));
      // The write secret writes at once; a read secret made the same way reads but may not write.
      const policy = await call(p, 'POST', '/api/v1/policies', { key: w.body.key, body: { name: `p-${uniq()}` } });
      expect(policy.status).toBe(201);
      const r = await create(p, { name: `reader-${uniq()}`, scope: 'read' });
      expect((await call(p, 'GET', '/api/v1/policies?limit=1', { key: r.body.key })).status).toBe(200);
      expectProblem(await call(p, 'POST', '/api/v1/policies', { key: r.body.key, body: { name: 'nope' } }), 403);
      // An admin key made over HTTP manages keys too.
      const a = await create(p, { name: `admin-${uniq()}`, scope: 'admin' });
      expect((await call(p, 'GET', '/api/v1/keys', { key: a.body.key })).status).toBe(200);
    });

    it('lists the organisation’s keys newest first, paginated, and never a secret', async () => {
      const p = platform();
      const made = [await create(p, { name: `l1-${uniq()}`, scope: 'read' }), await create(p, { name: `l2-${uniq()}`, scope: 'write', expires_at: '2099-01-01T00:00:00Z' })];
      const res = await call(p, 'GET', '/api/v1/keys?limit=1000', { key: p.adminKey });
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body);
      for (const m of made) expect(text).not.toContain(m.body.key);
      expect(text).not.toContain(p.writeKey);
      expect(res.body.keys.every((k: Record<string, unknown>) => !('key' in k))).toBe(true);
      expect(res.body.keys.every((k: Record<string, unknown>) => k.organization_id === 'acme')).toBe(true);
      const ids = res.body.keys.map((k: { id: string }) => k.id);
      expect(ids.indexOf(made[1].body.id)).toBeLessThan(ids.indexOf(made[0].body.id));
      expect(res.body.keys.find((k: { id: string }) => k.id === made[1].body.id)).toMatchObject({ scope: 'write', expires_at: '2099-01-01T00:00:00.000Z', status: 'active' });
      // The admin key that listed has been used.
      expect(res.body.keys.find((k: { name: string }) => k.name === 'test admin key').last_used_at).toEqual(expect.any(String));
      const page = await call(p, 'GET', '/api/v1/keys?limit=1&skip=1', { key: p.adminKey });
      expect(page.body).toMatchObject({ total: res.body.total, skip: 1, limit: 1 });
      expect(page.body.keys.map((k: { id: string }) => k.id)).toEqual([ids[1]]);
    });

    it('revokes a key: refused at once, listed as revoked, and revoking again answers the first revocation', async () => {
      const p = platform();
      const k = await create(p, { name: `gone-${uniq()}`, scope: 'write' });
      expect((await call(p, 'GET', '/api/v1/auth/key', { key: k.body.key })).status).toBe(200); // now in the key cache
      const del = await call(p, 'DELETE', `/api/v1/keys/${k.body.id}`, { key: p.adminKey });
      expect(del.status).toBe(200);
      expect(del.body).toMatchObject({ id: k.body.id, status: 'revoked', revoked_at: expect.any(String) });
      expect(del.body.key).toBeUndefined();
      expectProblem(await call(p, 'GET', '/api/v1/auth/key', { key: k.body.key }), 401);
      const again = await call(p, 'DELETE', `/api/v1/keys/${k.body.id}`, { key: p.adminKey });
      expect(again.body.revoked_at).toBe(del.body.revoked_at);
      expect((await listAll(p)).keys.find((x: { id: string }) => x.id === k.body.id).status).toBe('revoked');
    });

    it('answers bad input with problem details naming each field (the scope with its allowed values) and writes nothing', async () => {
      const p = platform();
      const before = (await listAll(p)).total;
      const bad = await create(p, { name: '', scope: 'owner', expires_at: 'tomorrow', color: 'red' });
      expectProblem(bad, 422);
      expect([...new Set(bad.body.errors.map((e: { path: string }) => e.path))].sort()).toEqual(['body.color', 'body.expires_at', 'body.name', 'body.scope']);
      expect(bad.body.errors.find((e: { path: string }) => e.path === 'body.scope').allowed).toEqual([...KEY_SCOPES]);
      expectProblem(await create(p, { name: 'past', scope: 'read', expires_at: '2001-01-01T00:00:00Z' }), 422, ['body.expires_at']);
      expectProblem(await create(p, { scope: 'read' }), 422, ['body.name']);
      expectProblem(await call(p, 'GET', '/api/v1/keys?limit=0', { key: p.adminKey }), 422, ['query.limit']);
      expect((await listAll(p)).total).toBe(before);
    });
  });

  describe('who may manage keys', () => {
    it('refuses read and write keys on every key route with 403 problem details', async () => {
      const p = platform();
      for (const key of [p.readKey, p.writeKey]) {
        expectProblem(await create(p, { name: 'x', scope: 'read' }, key), 403);
        expectProblem(await call(p, 'GET', '/api/v1/keys', { key }), 403);
        expectProblem(await call(p, 'DELETE', `/api/v1/keys/${(await listAll(p)).keys[0].id}`, { key }), 403);
      }
    });

    it('keeps organisations apart: another organisation’s admin key gets 404 and never sees the keys', async () => {
      const p = platform();
      const mine = await create(p, { name: `mine-${uniq()}`, scope: 'read' });
      expectProblem(await call(p, 'DELETE', `/api/v1/keys/${mine.body.id}`, { key: p.otherOrgAdminKey }), 404);
      const theirs = await listAll(p, p.otherOrgAdminKey);
      expect(theirs.keys.every((k: { organization_id: string }) => k.organization_id === 'globex')).toBe(true);
      expect(theirs.keys.some((k: { id: string }) => k.id === mine.body.id)).toBe(false);
      expect((await call(p, 'GET', '/api/v1/auth/key', { key: mine.body.key })).status).toBe(200);
    });
  });

  describe('agent-bound keys', () => {
    it('shows its agent, acts as it, and is refused naming another agent (403 naming the field, nothing written)', async () => {
      const p = platform();
      const mine = `bound-${uniq()}`;
      const other = `other-${uniq()}`;
      const k = await create(p, { name: `agent-${uniq()}`, scope: 'write', agent_id: mine });
      expect(k.status).toBe(201);
      expect(k.body.agent_id).toBe(mine);
      expect((await listAll(p)).keys.find((x: { id: string }) => x.id === k.body.id).agent_id).toBe(mine);
      const key = k.body.key as string;
      expect((await call(p, 'GET', '/api/v1/auth/key', { key })).body).toMatchObject({ id: k.body.id, scope: 'write', agent_id: mine });

      // As its own agent: registration, an intervention, a decision, the governance snapshot.
      expect((await call(p, 'POST', '/api/v1/agents', { key, body: { agent_id: mine, name: 'Mine' } })).status).toBe(201);
      const intervention = { type: 'budget_exceeded', outcome: 'blocked', action_name: 'search' };
      expect((await call(p, 'POST', '/api/v1/interventions', { key, body: { ...intervention, agent_id: mine } })).status).toBe(201);
      expect((await call(p, 'POST', '/api/v1/policies/evaluate', { key, body: { agent_id: mine, action_name: 'search' } })).status).toBe(200);
      expect((await call(p, 'GET', `/api/v1/agents/${mine}/governance`, { key })).status).toBe(200);

      // As another agent: 403 naming the field and the bound agent; nothing is written.
      const refused = (r: { status: number; headers: Headers; body: any }, field: string) => {
        expectProblem(r, 403);
        expect(r.body.detail).toContain(field);
        expect(r.body.detail).toContain(mine);
      };
      refused(await call(p, 'POST', '/api/v1/agents', { key, body: { agent_id: other, name: 'Other' } }), 'body.agent_id');
      refused(await call(p, 'POST', '/api/v1/interventions', { key, body: { ...intervention, agent_id: other } }), 'body.agent_id');
      refused(await call(p, 'POST', '/api/v1/policies/evaluate', { key, body: { agent_id: other, action_name: 'search' } }), 'body.agent_id');
      refused(await call(p, 'GET', `/api/v1/agents/${other}/governance`, { key }), 'path.agent_id');
      refused(await call(p, 'PUT', `/api/v1/kill-switches/agents/${other}`, { key, body: { engaged: true } }), 'path.agent_id');
      expectProblem(await call(p, 'GET', `/api/v1/agents/${other}`, { key: p.readKey }), 404);
      expect((await call(p, 'GET', `/api/v1/interventions?agent_id=${other}`, { key: p.readKey })).body.total).toBe(0);

      // Ingest answers per event: its own agent's event is created, another agent's refused alone with 403.
      const at = new Date().toISOString();
      const event = (agent: string) => ({ id: `ev-${uniq()}`, type: 'intervention.create', timestamp: at, body: { ...intervention, agent_id: agent } });
      const batch = [event(mine), event(other)];
      const ingest = await call(p, 'POST', '/api/v1/ingest', { key, body: { batch } });
      expect(ingest.status).toBe(207);
      expect(ingest.body.successes).toEqual([{ id: batch[0].id, status: 201, result: 'created' }]);
      expect(ingest.body.errors).toHaveLength(1);
      expect(ingest.body.errors[0]).toMatchObject({ id: batch[1].id, status: 403 });
      expect(ingest.body.errors[0].message).toContain('batch[1].body.agent_id');
      expect(ingest.body.errors[0].message).toContain(mine);
    });

    it('is refused on writes that act for the whole organisation, and on quota leases, approvals and MCP tools of another agent', async () => {
      const p = platform();
      const mine = `bound-${uniq()}`;
      const other = `other-${uniq()}`;
      const key = (await create(p, { name: `agent-${uniq()}`, scope: 'write', agent_id: mine })).body.key as string;
      const policiesBefore = (await call(p, 'GET', '/api/v1/policies?limit=1', { key: p.readKey })).body.total;
      const whole = async (method: string, path: string, body?: unknown) => {
        const r = await call(p, method, path, { key, body });
        expectProblem(r, 403);
        expect(r.body.detail).toContain(`bound to agent ${mine}`);
        expect(r.body.detail).toContain(`${method} `);
      };
      await whole('POST', '/api/v1/policies', { name: `p-${uniq()}` });
      await whole('PUT', '/api/v1/kill-switches/organization', { engaged: true });
      await whole('POST', '/api/v1/mcp/servers', { name: `s-${uniq()}`, url: 'https://mcp.example.com/mcp' });
      await whole('POST', '/api/v1/evals', {});
      expect((await call(p, 'GET', '/api/v1/policies?limit=1', { key: p.readKey })).body.total).toBe(policiesBefore);
      expect((await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey })).body.organization?.engaged ?? false).toBe(false);
      // Reads stay open to it.
      expect((await call(p, 'GET', '/api/v1/policies?limit=1', { key })).status).toBe(200);

      // Quota leases: every acquire item must name its agent.
      const lease = (agent: string) => ({ holder: `h-${uniq()}`, acquire: [{ policy_id: 'pol-none', limit: 'session_budget', agent_id: mine, session_id: 's1', need: 0.01 }, { policy_id: 'pol-none', limit: 'session_budget', agent_id: agent, session_id: 's1', need: 0.01 }], report: [] });
      const leased = await call(p, 'POST', '/api/v1/quotas/leases', { key, body: lease(other) });
      expectProblem(leased, 403);
      expect(leased.body.detail).toContain('body.acquire.1.agent_id');
      expect(leased.body.detail).toContain(mine);
      expectProblem(await call(p, 'POST', '/api/v1/quotas/leases', { key, body: lease(mine) }), 404); // its own agent: on to the service

      // Approvals: its own agent's, yes; another agent's, 403 and still pending.
      const escalate = async (agent: string) => {
        const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'approval_required', outcome: 'escalated', action_name: 'deploy', agent_id: agent } });
        expect(r.status).toBe(201);
        const id = `apr-${r.body.id}`;
        await eventually(async () => expect((await call(p, 'GET', `/api/v1/approvals/${id}`, { key: p.readKey })).status).toBe(200));
        return id;
      };
      const theirs = await escalate(other);
      const refused = await call(p, 'POST', `/api/v1/approvals/${theirs}/approve`, { key, body: { approver_email: 'dev@acme.test' } });
      expectProblem(refused, 403);
      expect(refused.body.detail).toContain(`bound to agent ${mine}`);
      expect((await call(p, 'GET', `/api/v1/approvals/${theirs}`, { key: p.readKey })).body.status).toBe('pending');
      const own = await escalate(mine);
      const approved = await call(p, 'POST', `/api/v1/approvals/${own}/approve`, { key, body: { approver_email: 'dev@acme.test' } });
      expect(approved.status).toBe(200);
      expect(approved.body.status).toBe('approved');

      // MCP tools: reads work; a tool that changes what is not the agent's own is forbidden, nothing written.
      expect((await call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: 'list_policies', arguments: {} } })).body.success).toBe(true);
      const tool = await call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: 'create_policy', arguments: { name: `p-${uniq()}` } } });
      expect(tool.status).toBe(403);
      expect(tool.body).toMatchObject({ success: false, error: { code: 'forbidden' } });
      expect(tool.body.error.message).toContain(`bound to agent ${mine}`);
      // A tool whose message has two routes follows the one its arguments name: its own agent's kill switch, yes;
      // the organisation's, no.
      const ownSwitch = await call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: 'set_kill_switch', arguments: { agent_id: mine, engaged: false } } });
      expect(ownSwitch.body.success, JSON.stringify(ownSwitch.body)).toBe(true);
      const orgSwitch = await call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: 'set_kill_switch', arguments: { engaged: true } } });
      expect(orgSwitch.body).toMatchObject({ success: false, error: { code: 'forbidden' } });
      expect((await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey })).body.organization?.engaged ?? false).toBe(false);
      const theirsViaTool = await call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: 'approve_action', arguments: { approval_id: theirs, approver_email: 'dev@acme.test' } } });
      expect(theirsViaTool.body.success).toBe(false);
      expect((await call(p, 'GET', `/api/v1/approvals/${theirs}`, { key: p.readKey })).body.status).toBe('pending');
      expect((await call(p, 'GET', '/api/v1/policies?limit=1', { key: p.readKey })).body.total).toBe(policiesBefore);
    });

    it('refuses to bind an admin key (422 naming agent_id), and unbound keys act for any agent as before', async () => {
      const p = platform();
      const before = (await listAll(p)).total;
      const admin = await create(p, { name: `bound-admin-${uniq()}`, scope: 'admin', agent_id: 'a1' });
      expectProblem(admin, 422, ['body.agent_id']);
      expect(admin.body.errors[0].message).toMatch(/admin key cannot be bound/);
      expect((await listAll(p)).total).toBe(before);
      const free = await create(p, { name: `free-${uniq()}`, scope: 'write' });
      expect(free.body.agent_id).toBeNull();
      for (const agent of [`free-a-${uniq()}`, `free-b-${uniq()}`]) {
        expect((await call(p, 'POST', '/api/v1/agents', { key: free.body.key, body: { agent_id: agent, name: agent } })).status).toBe(201);
      }
    });
  });

  describe('GET /api/v1/auth/key', () => {
    it('names the calling key: organisation, name, scope and expiry, for any scope', async () => {
      const p = platform();
      const read = await call(p, 'GET', '/api/v1/auth/key', { key: p.readKey });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ organization_id: 'acme', name: 'AGP_INIT_READ_KEY', scope: 'read', expires_at: null, id: expect.any(String) });
      const made = await create(p, { name: `exp-${uniq()}`, scope: 'write', expires_at: '2098-05-01T12:00:00Z' });
      expect((await call(p, 'GET', '/api/v1/auth/key', { key: made.body.key })).body).toEqual({ id: made.body.id, organization_id: 'acme', name: made.body.name, scope: 'write', expires_at: '2098-05-01T12:00:00.000Z', agent_id: null });
      expect((await call(p, 'GET', '/api/v1/auth/key', { key: p.otherOrgAdminKey })).body).toMatchObject({ organization_id: 'globex', scope: 'admin', name: 'globex admin key' });
      expectProblem(await call(p, 'GET', '/api/v1/auth/key', {}), 401);
    });
  });

  describe('who did what: actor_name beside the actor', () => {
    it('policy history, kill switches and approvals show the acting key’s name, kept after the key is revoked', async () => {
      const p = platform();
      const name = `ops-bot-${uniq()}`;
      const k = await create(p, { name, scope: 'write' });
      const actor = `key:${k.body.id}`;
      const key = k.body.key as string;

      const policy = await call(p, 'POST', '/api/v1/policies', { key, body: { name: `named-${uniq()}` } });
      expect((await call(p, 'PATCH', `/api/v1/policies/${policy.body.id}`, { key: p.writeKey, body: { description: 'by the init key' } })).status).toBe(200);

      const agent = `named-agent-${uniq()}`;
      expect((await call(p, 'POST', '/api/v1/agents', { key, body: { agent_id: agent, name: 'Named' } })).status).toBe(201);
      const ks = await call(p, 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key, body: { engaged: true, reason: 'drill' } });
      expect(ks.body).toMatchObject({ engaged: true, changed_by: actor, actor_name: name });

      const intervention = await call(p, 'POST', '/api/v1/interventions', { key, body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: agent } });
      const approvalId = `apr-${intervention.body.id}`;
      await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key })).status === 200);
      expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key })).body).toMatchObject({ status: 'pending', actor: null, actor_name: null });
      const decided = await call(p, 'POST', `/api/v1/approvals/${approvalId}/approve`, { key, body: { approver_email: 'ops@acme.test' } });
      expect(decided.body).toMatchObject({ status: 'approved', approver_email: 'ops@acme.test', actor, actor_name: name });

      // Revoked, the key's name stays on what it did.
      expect((await call(p, 'DELETE', `/api/v1/keys/${k.body.id}`, { key: p.adminKey })).status).toBe(200);
      const history = await call(p, 'GET', `/api/v1/policies/${policy.body.id}/history`, { key: p.readKey });
      expect(history.body.history.map((h: { actor: string; actor_name: string | null }) => [h.actor, h.actor_name])).toEqual([
        [actor, name],
        [expect.stringMatching(/^key:/), 'AGP_INIT_WRITE_KEY'],
      ]);
      expect((await call(p, 'GET', `/api/v1/agents/${agent}`, { key: p.readKey })).body.kill_switch).toMatchObject({ engaged: true, changed_by: actor, actor_name: name });
      const overview = await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey });
      expect(overview.body.agents.find((a: { agent_id: string }) => a.agent_id === agent)).toMatchObject({ changed_by: actor, actor_name: name });
      expect(overview.body.organization).toHaveProperty('actor_name');
      await eventually(async () => {
        const list = await call(p, 'GET', `/api/v1/approvals?agent_id=${agent}`, { key: p.readKey });
        return list.body.approvals[0]?.actor_name === name && list.body.approvals[0].actor === actor;
      });
    });
  });
});
