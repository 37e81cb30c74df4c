import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgSql, type Sql } from '@agp/eventstore';
import { NotFoundError, ValidationError } from '@agp/runtime';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { CachedKeyResolver, KeyStore } from '../src/index.js';

/**
 * The key store on real PostgreSQL: a table made before the admin scope, `last_used_at` and `agent_id` is brought up
 * to date by `migrate` with its keys kept (unbound); a key bound to an agent resolves with it, an admin key cannot be; `resolve` notes the use at most once a minute; pages and organisation-scoped revokes;
 * a revoke followed by `invalidate` is refused at once by a cache whose TTL has not passed.
 */
describe.skipIf(skipIntegration('postgres'))('KeyStore', () => {
  let db: { url: string; drop: () => Promise<void> };
  let sql: Sql;
  let store: KeyStore;

  beforeAll(async () => {
    db = await createTestDatabase('agp_keystore');
    sql = createPgSql(db.url, { max: 2 });
    // The tables as they were before the admin scope and last_used_at.
    await sql.exec(`
      CREATE TABLE agp_organizations (id text PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE agp_api_keys (
        id text PRIMARY KEY, organization_id text NOT NULL REFERENCES agp_organizations(id), key_hash text NOT NULL UNIQUE,
        prefix text NOT NULL, scope text NOT NULL CHECK (scope IN ('read', 'write')), name text,
        created_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz, revoked_at timestamptz);
      INSERT INTO agp_organizations (id, name) VALUES ('acme', 'acme');
      INSERT INTO agp_api_keys (id, organization_id, key_hash, prefix, scope, name) VALUES ('old-1', 'acme', 'h', 'agp_old', 'write', 'old key')`);
    store = new KeyStore(sql);
    await store.migrate();
    await store.migrate(); // a second start changes nothing
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop().catch(() => undefined);
  });

  it('widens an older table to the admin scope and adds last_used_at, keeping its keys', async () => {
    const admin = await store.createKey({ organizationId: 'acme', scope: 'admin', name: 'root' });
    expect(admin).toMatchObject({ scope: 'admin', name: 'root', status: 'active', last_used_at: null });
    expect((await store.list('acme')).find((k) => k.id === 'old-1')).toMatchObject({ scope: 'write', name: 'old key', last_used_at: null });
    await expect(sql.query(`INSERT INTO agp_api_keys (id, organization_id, key_hash, prefix, scope) VALUES ('x', 'acme', 'h2', 'p', 'owner')`)).rejects.toThrow(/agp_api_keys_scope_check/);
  });

  it('adds agent_id to an older table: its keys are unbound, a bound key resolves with its agent, an admin key cannot be bound', async () => {
    expect((await store.list('acme')).find((k) => k.id === 'old-1')!.agent_id).toBeNull();
    const bound = await store.createKey({ organizationId: 'acme', scope: 'write', name: 'agent key', agentId: 'support-bot' });
    expect(bound.agent_id).toBe('support-bot');
    expect(await store.resolve(bound.key)).toMatchObject({ key_id: bound.id, agent_id: 'support-bot' });
    expect((await store.list('acme')).find((k) => k.id === bound.id)!.agent_id).toBe('support-bot');
    await expect(store.createKey({ organizationId: 'acme', scope: 'admin', agentId: 'support-bot' })).rejects.toThrow(ValidationError);
    await expect(store.createKey({ organizationId: 'acme', scope: 'read', agentId: '' })).rejects.toThrow(ValidationError);
  });

  it('resolves a key with its name and notes its use at most once a minute', async () => {
    const k = await store.createKey({ organizationId: 'acme', scope: 'read', name: 'dashboards' });
    expect(await store.resolve(k.key)).toMatchObject({ key_id: k.id, scope: 'read', name: 'dashboards', expires_at: null });
    const first = (await store.list('acme')).find((x) => x.id === k.id)!.last_used_at;
    expect(first).toEqual(expect.any(String));
    await store.resolve(k.key);
    expect((await store.list('acme')).find((x) => x.id === k.id)!.last_used_at).toBe(first);
  });

  it('pages an organisation’s keys newest first and revokes only within the organisation', async () => {
    await store.createOrganization('globex');
    const g = await store.createKey({ organizationId: 'globex', scope: 'write', name: 'g' });
    const all = await store.page('acme', { skip: 0, limit: 100 });
    expect(all.total).toBe(all.keys.length);
    expect(all.keys.every((k) => k.organization_id === 'acme')).toBe(true);
    expect((await store.page('acme', { skip: 1, limit: 1 })).keys.map((k) => k.id)).toEqual([all.keys[1].id]);
    await expect(store.revoke(g.id, 'acme')).rejects.toThrow(NotFoundError);
    expect((await store.revoke(g.id, 'globex')).status).toBe('revoked');
  });

  it('refuses a revoked key at once in a cache that was told, and within its TTL in one that was not', async () => {
    const k = await store.createKey({ organizationId: 'acme', scope: 'write', name: 'soon gone' });
    const told = new CachedKeyResolver(store, 60_000);
    const other = new CachedKeyResolver(store, 60_000);
    expect(await told.resolve(k.key)).toMatchObject({ key_id: k.id });
    expect(await other.resolve(k.key)).toMatchObject({ key_id: k.id });
    await store.revoke(k.id, 'acme');
    told.invalidate(k.id);
    expect(await told.resolve(k.key)).toBeNull();
    expect(await other.resolve(k.key)).toMatchObject({ key_id: k.id }); // until its TTL passes: the documented window
  });
});
