import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '@agp/auth';
import { InProcessBroker, InProcessClient } from '@agp/bus';
import { createEventStore, createPgliteSql, type Sql } from '@agp/eventstore';
import { createLogger } from '@agp/runtime';
import { createGateway, type Gateway } from '../src/gateway.js';

/**
 * `/metrics` on the gateway's public port needs an admin key (docs/operations.md, Health, readiness and metrics): the
 * figures describe every organisation's traffic, so no key, a read key or a write key never see them.
 */
describe('the gateway’s /metrics', () => {
  let sql: Sql;
  let gateway: Gateway;
  let url: string;
  const KEYS = { writeKey: 'agp_metrics_write_key_001', readKey: 'agp_metrics_read_key_0001', adminKey: 'agp_metrics_admin_key_001' };
  beforeAll(async () => {
    sql = await createPgliteSql();
    const keys = new KeyStore(sql);
    await keys.migrate();
    await keys.ensureInit({ org: 'acme', ...KEYS });
    gateway = await createGateway({ bus: new InProcessClient({ broker: new InProcessBroker() }), keys, sql, store: createEventStore(sql), logger: createLogger('gateway', 'silent') });
    url = `http://127.0.0.1:${await gateway.listen(0, '127.0.0.1')}`;
  });
  afterAll(async () => {
    await gateway?.close();
    await sql?.close();
  });

  const scrape = (key?: string, path = '/metrics') => fetch(url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  it('answers 401 without a key and 403 to a read or write key, with problem details and no figure', async () => {
    for (const [key, status] of [[undefined, 401], [KEYS.readKey, 403], [KEYS.writeKey, 403], ['agp_no_such_key_000000001', 401]] as const) {
      for (const path of ['/metrics', '/metrics/']) {
        const res = await scrape(key, path);
        expect(res.status, `${path} with ${key}`).toBe(status);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await res.text()).not.toContain('agp_http_requests_total');
      }
    }
  });

  it('answers the Prometheus text to an admin key', async () => {
    const res = await scrape(KEYS.adminKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toMatch(/^agp_http_requests_total\{/m);
  });
});
