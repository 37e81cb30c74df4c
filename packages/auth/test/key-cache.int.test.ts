import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPgSql, type Sql } from '@agp/eventstore';
import { metricsRegistry } from '@agp/runtime';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { CachedKeyResolver, KeyStore } from '../src/index.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Current value of the stale-serve counter. */
async function staleServes(): Promise<number> {
  const m = await metricsRegistry.getSingleMetric('agp_key_cache_stale_serves_total')!.get();
  return m.values.reduce((a, v) => a + v.value, 0);
}

/**
 * The key cache while PostgreSQL fails: a key store on a throw-away database that is dropped (its backends
 * terminated) after the first resolution. A recently resolved key keeps resolving within the serve-stale window, an
 * unknown key throws (the gateway's 503), and past the window the known key throws too.
 */
describe.skipIf(skipIntegration('postgres'))('CachedKeyResolver while the key store fails', () => {
  let db: { url: string; drop: () => Promise<void> };
  let sql: Sql;
  let store: KeyStore;
  let key: string;
  let revoked: string;

  beforeAll(async () => {
    db = await createTestDatabase('agp_keycache');
    sql = createPgSql(db.url, { max: 2 });
    store = new KeyStore(sql);
    await store.migrate();
    await store.createOrganization('acme');
    key = (await store.createKey({ organizationId: 'acme', scope: 'write' })).key;
    revoked = (await store.createKey({ organizationId: 'acme', scope: 'read' })).key;
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop().catch(() => undefined);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('serves a recently resolved key stale while the store fails, never an unknown one, and stops after the window', async () => {
    // Only the clock is fake (PostgreSQL I/O stays real), so a slow machine cannot push the outage past the window.
    vi.useFakeTimers({ toFake: ['Date'] });
    const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);
    const cache = new CachedKeyResolver(store, 50, { staleMs: 1_500, retryAfterFailureMs: 100 });
    const principal = await cache.resolve(key);
    expect(principal).toMatchObject({ organization_id: 'acme', scope: 'write' });
    // Revoked while the store answers: refused once the TTL has passed.
    const summaryId = (await store.list('acme')).find((k) => k.scope === 'read')!.id;
    expect(await cache.resolve(revoked)).toMatchObject({ scope: 'read' });
    await store.revoke(summaryId);
    advance(80);
    expect(await cache.resolve(revoked)).toBeNull();

    await db.drop(); // terminates the pool's backends and removes the database: every query fails from now on
    advance(80); // past the fresh TTL, 160 ms after the key resolved
    const before = await staleServes();
    await expect(cache.resolve(key)).resolves.toMatchObject({ key_id: principal!.key_id, organization_id: 'acme', scope: 'write' });
    await expect(cache.resolve(key)).resolves.toMatchObject({ scope: 'write' });
    expect(await staleServes()).toBeGreaterThanOrEqual(before + 2);
    await expect(cache.resolve('agp_unknownkeyunknownkeyunknownkey12')).rejects.toThrow();
    // A revoked key is never brought back by the outage (its negative answer, or 503, never a principal).
    expect(await cache.resolve(revoked).catch(() => null)).toBeNull();

    advance(1_500); // 1,660 ms after the key resolved: past the serve-stale window
    await expect(cache.resolve(key)).rejects.toThrow();
  });

  it('does not serve stale when the window is 0 (the behaviour before the window existed)', async () => {
    const cache = new CachedKeyResolver({ resolve: async () => ({ key_id: 'k', organization_id: 'acme', scope: 'read' as const }) }, 10, { staleMs: 0 });
    let fail = false;
    const flaky = new CachedKeyResolver({ resolve: (k) => (fail ? Promise.reject(new Error('store down')) : cache.resolve(k)) }, 10, { staleMs: 0 });
    await flaky.resolve('agp_x');
    fail = true;
    await sleep(20);
    await expect(flaky.resolve('agp_x')).rejects.toThrow('store down');
  });
});
