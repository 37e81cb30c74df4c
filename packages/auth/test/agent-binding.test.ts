import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteSql, type Sql } from '@agp/eventstore';
import { ForbiddenError, ValidationError } from '@agp/runtime';
import { HTTP_ROUTES } from '@agp/contracts';
import { AGENT_ID_HEADER, agentIdOf, boundAgentRefusal, boundKeyRefusal, checkBoundAgent, KeyStore } from '../src/index.js';

/**
 * Agent-bound keys: which agent a request acts as (`agentIdOf`: the bound agent, else the `AGP-Agent-Id` header, else
 * the fallback), the refusal of a bound key naming another agent, and the key store on PGlite bringing a table made
 * before `agent_id` up to date (its keys unbound). The PostgreSQL migration: key-store.int.test.ts.
 * Source: docs/decisions.md (Agent-bound keys).
 */
describe('boundKeyRefusal', () => {
  const bound = { agent_id: 'support-bot' };
  const row = (method: string, path: string) => HTTP_ROUTES.find((r) => r.method === method && r.path === path)!;

  it('holds a bound key to its agent in the path, the body, and every item of a body list', () => {
    expect(boundKeyRefusal(bound, row('PUT', '/api/v1/kill-switches/agents/{agent_id}'), { path: { agent_id: 'billing-bot' } })).toContain('path.agent_id');
    expect(boundKeyRefusal(bound, row('PUT', '/api/v1/kill-switches/agents/{agent_id}'), { path: { agent_id: 'support-bot' } })).toBeNull();
    expect(boundKeyRefusal(bound, row('POST', '/api/v1/policies/evaluate'), { body: { agent_id: 'billing-bot' } })).toContain('body.agent_id');
    const acquire = (...agents: string[]) => ({ body: { acquire: agents.map((agent_id) => ({ agent_id })) } });
    expect(boundKeyRefusal(bound, row('POST', '/api/v1/quotas/leases'), acquire('support-bot', 'billing-bot'))).toContain('body.acquire.1.agent_id');
    expect(boundKeyRefusal(bound, row('POST', '/api/v1/quotas/leases'), acquire('support-bot'))).toBeNull();
    expect(boundKeyRefusal(bound, row('POST', '/api/v1/quotas/leases'), { body: { acquire: 'nope' } })).toBeNull(); // left to the route's 422
  });

  it('refuses the writes that name no agent unless the row allows bound keys; reads and unbound keys pass', () => {
    expect(boundKeyRefusal(bound, row('POST', '/api/v1/policies'), { body: {} })).toContain('POST /api/v1/policies acts for the whole organisation');
    expect(boundKeyRefusal(bound, row('PUT', '/api/v1/kill-switches/organization'), { body: {} })).toContain('bound to agent support-bot');
    expect(boundKeyRefusal(bound, row('POST', '/api/v1/approvals/{id}/approve'), { path: { id: 'apr-1' } })).toBeNull(); // the service checks the approval's agent
    expect(boundKeyRefusal(bound, row('GET', '/api/v1/policies'), {})).toBeNull();
    expect(boundKeyRefusal({ agent_id: null }, row('POST', '/api/v1/policies'), { body: {} })).toBeNull();
  });
});

describe('agentIdOf', () => {
  const bound = { agent_id: 'support-bot' };
  const unbound = { agent_id: null };

  it('a bound key acts as its agent, whatever the fallback; a header naming it is accepted, another is a 403', () => {
    expect(agentIdOf(bound, undefined, 'client-name')).toBe('support-bot');
    expect(agentIdOf(bound, 'support-bot', 'client-name')).toBe('support-bot');
    expect(() => agentIdOf(bound, 'billing-bot', 'client-name')).toThrow(ForbiddenError);
    expect(() => agentIdOf(bound, 'billing-bot')).toThrow(`header.${AGENT_ID_HEADER}: this key is bound to agent support-bot`);
  });

  it('an unbound key: the header when given (trimmed), else the fallback, else null', () => {
    expect(agentIdOf(unbound, ' billing-bot ', 'client-name')).toBe('billing-bot');
    expect(agentIdOf({}, undefined, 'client-name')).toBe('client-name');
    expect(agentIdOf(unbound, '  ', 'client-name')).toBe('client-name');
    expect(agentIdOf(unbound, null)).toBeNull();
    expect(() => agentIdOf(unbound, 'x'.repeat(257))).toThrow(ValidationError);
  });

  it('the refusal names the field, the bound agent and the one named; an unbound key or a non-string passes', () => {
    expect(boundAgentRefusal(bound, 'billing-bot', 'body.agent_id')).toBe('body.agent_id: this key is bound to agent support-bot and acts only as that agent; it cannot name agent billing-bot');
    expect(boundAgentRefusal(bound, 'support-bot', 'body.agent_id')).toBeNull();
    expect(boundAgentRefusal(bound, 42, 'body.agent_id')).toBeNull();
    expect(boundAgentRefusal(unbound, 'billing-bot', 'body.agent_id')).toBeNull();
    expect(() => checkBoundAgent(bound, 'billing-bot', 'path.agent_id')).toThrow(ForbiddenError);
  });
});

describe('KeyStore on PGlite: agent_id', () => {
  let sql: Sql;
  let store: KeyStore;

  beforeAll(async () => {
    sql = await createPgliteSql();
    // The key table as it was before agent_id.
    await sql.exec(`
      CREATE TABLE agp_organizations (id text PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE agp_api_keys (
        id text PRIMARY KEY, organization_id text NOT NULL REFERENCES agp_organizations(id), key_hash text NOT NULL UNIQUE,
        prefix text NOT NULL, scope text NOT NULL, name text, created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz, revoked_at timestamptz, last_used_at timestamptz,
        CONSTRAINT agp_api_keys_scope_check CHECK (scope IN ('read', 'write', 'admin')));
      INSERT INTO agp_organizations (id, name) VALUES ('acme', 'acme');
      INSERT INTO agp_api_keys (id, organization_id, key_hash, prefix, scope, name) VALUES ('old-1', 'acme', 'h', 'agp_old', 'write', 'old key')`);
    store = new KeyStore(sql);
    await store.migrate();
  });
  afterAll(async () => {
    await sql?.close();
  });

  it('keeps older keys unbound and stores, lists and resolves a bound key', async () => {
    expect((await store.list('acme')).find((k) => k.id === 'old-1')!.agent_id).toBeNull();
    const k = await store.createKey({ organizationId: 'acme', scope: 'read', name: 'reader', agentId: 'support-bot' });
    expect(k).toMatchObject({ scope: 'read', agent_id: 'support-bot' });
    expect(await store.resolve(k.key)).toMatchObject({ key_id: k.id, agent_id: 'support-bot' });
    const unbound = await store.createKey({ organizationId: 'acme', scope: 'write', name: 'free' });
    expect(await store.resolve(unbound.key)).toMatchObject({ key_id: unbound.id, agent_id: null });
  });
});
