import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { AUDIT_CSV_COLUMNS } from '@agp/contracts';
import { call, eventually, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { signInSession, startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { parseCsv } from '../support/csv.js';

/**
 * The log of administrative changes, in both run modes, over the real HTTP API: changes of every kind (a policy, a
 * kill switch, an agent, a registered MCP server with a secret header, a key, a member and its role) made with an admin
 * key and by a signed-in person, read back with each filter, keyset pages and both exports; secrets never in it;
 * read and write keys refused; another organisation sees none of it; bad filters are 422 naming the field.
 * Source: docs/auth.md (Audit log).
 */
const PUBLIC_URL = 'http://agp.test';
const HEADER_SECRET = `Bearer ghp_${randomBytes(12).toString('hex')}`;
const uniq = () => Math.random().toString(36).slice(2, 8);
let provider: TestProvider;

interface Entry {
  id: string;
  organization_id: string;
  at: string;
  actor: { type: string; id: string | null; name: string | null };
  object: { type: string; id: string };
  type: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

describeModes(
  'Audit log of administrative changes',
  (platform) => {
    const LOG = '/api/v1/audit-log';
    const admin = (method: string, path: string, body?: unknown) => call(platform(), method, path, { key: platform().adminKey, body });
    const log = async (query = '', key = platform().adminKey) => {
      const r = await call(platform(), 'GET', `${LOG}${query}`, { key });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { entries: Entry[]; total: number; skip: number; limit: number; next_cursor: string | null };
    };
    const made: { policyId?: string; server?: string; keyId?: string; keySecret?: string; memberId?: string; adminKeyId?: string; userId?: string; all?: Entry[] } = {};

    it('records each kind of change with its actor, object, before and after; never a secret', async () => {
      const p = platform();
      made.adminKeyId = (await call(p, 'GET', '/api/v1/auth/key', { key: p.adminKey })).body.id;
      // With the admin key: a policy created and renamed, the organisation's kill switch engaged, an agent registered,
      // an MCP server with a secret header registered, patched and deleted, a key created and revoked, a member
      // invited, promoted and removed.
      const policy = await admin('POST', '/api/v1/policies', { name: 'audit-before' });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      made.policyId = policy.body.id;
      expect((await admin('PATCH', `/api/v1/policies/${made.policyId}`, { name: 'audit-after' })).status).toBe(200);
      expect((await admin('PUT', '/api/v1/kill-switches/organization', { engaged: true, reason: 'audit drill' })).status).toBe(200);
      expect((await admin('PUT', '/api/v1/kill-switches/organization', { engaged: false })).status).toBe(200);
      expect([200, 201]).toContain((await admin('POST', '/api/v1/agents', { agent_id: 'audit-agent', name: 'Audit agent' })).status);
      made.server = `audit-${uniq()}`;
      expect((await admin('POST', '/api/v1/mcp/servers', { name: made.server, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: HEADER_SECRET } })).status).toBe(201);
      expect((await admin('PATCH', `/api/v1/mcp/servers/${made.server}`, { timeout_ms: 5000 })).status).toBe(200);
      expect((await admin('DELETE', `/api/v1/mcp/servers/${made.server}`)).status).toBe(204);
      const key = await admin('POST', '/api/v1/keys', { name: 'audit key', scope: 'read' });
      expect(key.status).toBe(201);
      made.keyId = key.body.id;
      made.keySecret = key.body.key;
      expect((await admin('DELETE', `/api/v1/keys/${made.keyId}`)).status).toBe(200);
      expect((await admin('DELETE', `/api/v1/keys/${made.keyId}`)).status).toBe(200); // again: changes nothing, records nothing
      const member = await admin('POST', '/api/v1/members', { email: 'audited@acme.test', role: 'viewer' });
      expect(member.status).toBe(201);
      made.memberId = member.body.id;
      expect((await admin('PATCH', `/api/v1/members/${made.memberId}`, { role: 'approver' })).status).toBe(200);
      expect((await admin('DELETE', `/api/v1/members/${made.memberId}`)).status).toBe(200);
      // A signed-in person (admin by AGP_ADMIN_EMAILS, recorded as made by the platform) engages an agent's switch.
      const cookie = await signInSession(p.url, PUBLIC_URL, provider, 'alice');
      made.userId = (await call(p, 'GET', '/api/v1/auth/me', { headers: { cookie } })).body.user.id;
      const engaged = await call(p, 'PUT', '/api/v1/kill-switches/agents/audit-agent', { headers: { cookie, origin: PUBLIC_URL }, body: { engaged: true, reason: 'by a person' } });
      expect(engaged.status, JSON.stringify(engaged.body)).toBe(200);

      const want = ['policy.created', 'policy.updated', 'kill_switch.engaged', 'kill_switch.released', 'agent.registered', 'mcp_server.registered', 'mcp_server.updated', 'mcp_server.deleted', 'key.created', 'key.revoked', 'member.invited', 'member.role_changed', 'member.removed', 'member.joined'];
      const page = await eventually(async () => {
        const b = await log('?limit=500');
        return want.every((t) => b.entries.some((e) => e.type === t)) && b.entries.some((e) => e.actor.type === 'user') ? b : null;
      }, 30_000);
      made.all = page.entries;
      const one = (type: string, objectId?: string) => page.entries.filter((e) => e.type === type && (objectId === undefined || e.object.id === objectId));
      const byAdminKey = { type: 'key', id: made.adminKeyId, name: 'test admin key' };

      const renamed = one('policy.updated', made.policyId);
      expect(renamed).toHaveLength(1);
      expect(renamed[0]).toMatchObject({ organization_id: 'acme', actor: byAdminKey, object: { type: 'policy', id: made.policyId }, before: { name: 'audit-before', version: 1 }, after: { name: 'audit-after', version: 2 } });
      expect(one('policy.created', made.policyId)[0]).toMatchObject({ before: null, after: { name: 'audit-before' } });
      expect(one('kill_switch.engaged', 'organization')[0]).toMatchObject({ actor: byAdminKey, before: { engaged: false }, after: { engaged: true, reason: 'audit drill' } });
      expect(one('kill_switch.released', 'organization')[0]).toMatchObject({ before: { engaged: true }, after: { engaged: false } });
      expect(one('agent.registered', 'audit-agent')[0]).toMatchObject({ before: null, after: { agent_id: 'audit-agent', name: 'Audit agent' } });
      expect(one('mcp_server.registered', made.server)[0]).toMatchObject({ before: null, after: { name: made.server, header_names: ['Authorization'] } });
      expect(one('mcp_server.updated', made.server)[0]).toMatchObject({ before: { version: 1 }, after: { timeout_ms: 5000, version: 2 } });
      expect(one('mcp_server.deleted', made.server)[0]).toMatchObject({ before: { timeout_ms: 5000 }, after: null });
      expect(one('key.created', made.keyId)[0]).toMatchObject({ actor: byAdminKey, before: null, after: { id: made.keyId, name: 'audit key', scope: 'read', status: 'active' } });
      expect(one('key.revoked', made.keyId)).toHaveLength(1);
      expect(one('key.revoked', made.keyId)[0]).toMatchObject({ before: { status: 'active' }, after: { status: 'revoked' } });
      expect(one('member.role_changed', made.memberId)[0]).toMatchObject({ actor: byAdminKey, before: { role: 'viewer' }, after: { role: 'approver' } });
      expect(one('member.removed', made.memberId)[0]).toMatchObject({ before: { email: 'audited@acme.test' }, after: null });
      expect(one('member.joined').find((e) => e.after?.email === 'alice@acme.test')).toMatchObject({ actor: { type: 'system', id: null } });
      expect(one('kill_switch.engaged', 'agents/audit-agent')[0]).toMatchObject({ actor: { type: 'user', id: made.userId, name: 'alice@acme.test' }, after: { engaged: true } });

      // Secrets: the key's plaintext and hash, the header's value, the sealed headers, the session cookie.
      const text = JSON.stringify(page);
      for (const secret of [made.keySecret!, HEADER_SECRET.slice(7), 'agp1.', 'key_hash', 'sealed_headers', cookie.split('=')[1]]) expect(text).not.toContain(secret);
      // The changes of keys and members are events in the event store, recorded with their actor.
      expect(await p.streamEventTypes(`api-key-${made.keyId}`)).toEqual(['ApiKeyCreated', 'ApiKeyRevoked']);
      expect(await p.streamEventTypes(`member-${made.memberId}`)).toEqual(['MemberInvited', 'MemberRoleChanged', 'MemberRemoved']);
      expect((await p.streamMetadata(`member-${made.memberId}`))[1]).toMatchObject({ organization_id: 'acme', actor: `key:${made.adminKeyId}`, actor_name: 'test admin key' });
    });

    it('filters compose; keyset pages walk the whole log; CSV and JSON Lines export the whole filtered range', async () => {
      const all = await log('?limit=500');
      expect(all.total).toBe(all.entries.length);
      // Newest first.
      expect(all.entries.map((e) => e.at)).toEqual([...all.entries.map((e) => e.at)].sort().reverse());
      expect((await log(`?type=policy.updated&object_id=${made.policyId}`)).entries.map((e) => e.type)).toEqual(['policy.updated']);
      const keysAndMembers = await log('?object_type=key,member&limit=500');
      expect(keysAndMembers.entries.length).toBeGreaterThanOrEqual(5);
      expect(new Set(keysAndMembers.entries.map((e) => e.object.type))).toEqual(new Set(['key', 'member']));
      const repeated = await log('?type=key.created&type=key.revoked&limit=500');
      expect(new Set(repeated.entries.map((e) => e.type))).toEqual(new Set(['key.created', 'key.revoked']));
      const byKey = await log(`?actor=key:${made.adminKeyId}&limit=500`);
      expect(byKey.entries.length).toBeGreaterThanOrEqual(13);
      expect(byKey.entries.every((e) => e.actor.id === made.adminKeyId)).toBe(true);
      expect((await log(`?actor=user:${made.userId}`)).entries.map((e) => e.object.id)).toEqual(['agents/audit-agent']);
      expect((await log('?actor=system&object_type=member')).entries.every((e) => e.actor.type === 'system')).toBe(true);
      expect((await log('?to=2000-01-01')).total).toBe(0);
      expect((await log(`?from=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}&limit=500`)).total).toBe(all.total);
      const lastAt = all.entries[0].at;
      expect((await log(`?from=${encodeURIComponent(lastAt)}&to=${encodeURIComponent(lastAt)}`)).entries.every((e) => e.at === lastAt)).toBe(true);

      // Keyset pages of 4: the same entries in the same order, then next_cursor null.
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await log(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.entries.length).toBeLessThanOrEqual(4);
        walked.push(...page.entries.map((e) => e.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(walked).toEqual(all.entries.map((e) => e.id));

      // Exports: the whole range whatever limit says, newest first.
      const csv = await fetch(`${platform().url}${LOG}?format=csv&limit=1`, { headers: { authorization: `Bearer ${platform().adminKey}` } });
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-log-\d{4}-\d{2}-\d{2}\.csv"$/);
      const csvText = await csv.text();
      const rows = parseCsv(csvText);
      expect(rows[0]).toEqual([...AUDIT_CSV_COLUMNS]);
      expect(rows.slice(1).map((r) => r[0])).toEqual(all.entries.map((e) => e.id));
      const renamedRow = rows.find((r) => r[8] === 'policy.updated' && r[7] === made.policyId)!;
      expect(JSON.parse(renamedRow[10])).toMatchObject({ name: 'audit-after' });
      const jsonl = await fetch(`${platform().url}${LOG}?object_type=key`, { headers: { authorization: `Bearer ${platform().adminKey}`, accept: 'application/jsonl' } });
      expect(jsonl.headers.get('content-type')).toMatch(/^application\/jsonl/);
      const lines = (await jsonl.text()).trim().split('\n').map((l) => JSON.parse(l) as Entry);
      expect(lines.map((e) => e.id)).toEqual(all.entries.filter((e) => e.object.type === 'key').map((e) => e.id));
      for (const secret of [made.keySecret!, HEADER_SECRET.slice(7)]) expect(csvText).not.toContain(secret);
    });

    it('admin only; another organisation sees none of it; bad filters are 422 naming the field; the MCP tool reads it', async () => {
      const p = platform();
      for (const key of [p.readKey, p.writeKey]) expectProblem(await call(p, 'GET', LOG, { key }), 403);
      expectProblem(await call(p, 'GET', `${LOG}?format=csv`, { key: p.writeKey }), 403);
      const other = await log('?limit=500', p.otherOrgAdminKey);
      expect(other.entries.filter((e) => e.organization_id !== 'globex')).toEqual([]);
      expect((await log(`?object_id=${made.policyId}`, p.otherOrgAdminKey)).total).toBe(0);
      expectProblem(await call(p, 'GET', `${LOG}?type=policy.exploded`, { key: p.adminKey }), 422, ['query.type']);
      const bad = await call(p, 'GET', `${LOG}?object_type=planet&from=yesterday&actor=root&limit=0&format=xml`, { key: p.adminKey });
      expectProblem(bad, 422);
      const paths = bad.body.errors.map((e: { path: string }) => e.path);
      for (const field of ['query.actor', 'query.from', 'query.limit', 'query.format']) expect(paths).toContain(field);
      expect(paths).toContain('query.object_type');
      expect(JSON.stringify(bad.body)).toContain('mcp_server');
      expectProblem(await call(p, 'GET', `${LOG}?from=2026-02-01&to=2026-01-01`, { key: p.adminKey }), 422, ['query.to']);
      expectProblem(await call(p, 'GET', `${LOG}?cursor=not-a-cursor`, { key: p.adminKey }), 400);
      const tool = (key: string) => call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: 'list_audit_log', arguments: { object_type: ['policy'], object_id: made.policyId } } });
      const viaTool = await tool(p.adminKey);
      expect(viaTool.body).toMatchObject({ success: true, data: { total: 2 } });
      expect(viaTool.body.data.entries.map((e: Entry) => e.type)).toEqual(['policy.updated', 'policy.created']);
      expect((await tool(p.readKey)).body).toMatchObject({ success: false, error: { code: 'forbidden' } });
    });
  },
  async () => {
    provider = await startTestProvider(`${PUBLIC_URL}/auth/callback`, { alice: { email: 'alice@acme.test', name: 'Alice Admin' } });
    return {
      env: {
        AGP_AUTH_MODE: 'both',
        AGP_PUBLIC_URL: PUBLIC_URL,
        AGP_OIDC_ISSUER: provider.issuer,
        AGP_OIDC_CLIENT_ID: provider.clientId,
        AGP_OIDC_CLIENT_SECRET: provider.clientSecret,
        AGP_ADMIN_EMAILS: 'alice@acme.test',
        AGP_INIT_ORG: 'acme',
        AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        AGP_SECRETS_KEY: randomBytes(32).toString('base64'),
      },
    };
  },
);

afterAll(async () => {
  await provider?.close().catch(() => undefined);
});
