import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '@agp/auth';
import { InProcessBroker, InProcessClient } from '@agp/bus';
import { createEventStore, createPgliteSql, type Sql } from '@agp/eventstore';
import { createLogger, ServiceUnavailableError } from '@agp/runtime';
import { createGateway, type Gateway } from '../src/gateway.js';

/**
 * The gateway's `/readyz`: 503 while a required dependency (the bus) is down; 200 `degraded` while only the database
 * is down, because ingest goes on accepting through it (docs/reliability.md); `ready` when both answer.
 */
describe('gateway /readyz follows its dependencies', () => {
  let sql: Sql;
  let gateway: Gateway;
  let url: string;
  let databaseDown = false;
  let busDown = false;
  beforeAll(async () => {
    sql = await createPgliteSql();
    const keys = new KeyStore(sql);
    await keys.migrate();
    // The database as the gateway sees it: the real PGlite, refusing every query while `databaseDown`, as a stopped server does.
    const flaky: Sql = {
      ...sql,
      query: (text, params, opts) => (databaseDown ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) : sql.query(text, params, opts)),
    };
    const readiness = [{ name: 'nats', check: () => {
      if (busDown) throw new ServiceUnavailableError('NATS (bus client) disconnected, reconnecting for 1.0 s');
    } }];
    gateway = await createGateway({ bus: new InProcessClient({ broker: new InProcessBroker() }), keys, sql: flaky, store: createEventStore(sql), logger: createLogger('gateway', 'silent'), readiness });
    url = `http://127.0.0.1:${await gateway.listen(0, '127.0.0.1')}/readyz`;
  });
  afterAll(async () => {
    await gateway?.close();
    await sql?.close();
  });

  it('is ready, degraded without the database, and not ready without the bus', async () => {
    let res = await fetch(url);
    expect([res.status, ((await res.json()) as { status: string }).status]).toEqual([200, 'ready']);

    databaseDown = true;
    res = await fetch(url);
    const degraded = (await res.json()) as { status: string; detail: string };
    expect(res.status).toBe(200);
    expect(degraded).toMatchObject({ status: 'degraded', service: 'gateway' });
    expect(degraded.detail).toMatch(/postgres/);

    busDown = true;
    res = await fetch(url);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/nats: NATS \(bus client\) disconnected/);

    databaseDown = busDown = false;
    res = await fetch(url);
    expect([res.status, ((await res.json()) as { status: string }).status]).toEqual([200, 'ready']);
  });
});
