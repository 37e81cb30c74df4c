import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '@agp/auth';
import { InProcessBroker, InProcessClient } from '@agp/bus';
import { createEventStore, createPgliteSql, openEventStore, type EventStore, type Sql } from '@agp/eventstore';
import { createLogger, ServiceUnavailableError } from '@agp/runtime';
import { freePort } from '../../../test/support/distributed.js';
import { createGateway, type Gateway } from '../src/gateway.js';

/**
 * The gateway's `/readyz`: 503 while a required dependency (the bus) is down; 200 `degraded` while only the database
 * (or KurrentDB, when it holds the events) is down, because ingest goes on accepting through it (docs/reliability.md);
 * `ready` when all answer.
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

describe('gateway /readyz with the KurrentDB event store', () => {
  let sql: Sql;
  let store: EventStore;
  let gateway: Gateway;
  let port: number;
  beforeAll(async () => {
    sql = await createPgliteSql();
    const keys = new KeyStore(sql);
    await keys.migrate();
    // KURRENTDB_URL at a loopback port nothing listens on (a free port: bound, then released): the server is down.
    port = await freePort();
    store = await openEventStore(sql, { AGP_EVENT_STORE: 'kurrentdb', KURRENTDB_URL: `kurrentdb://127.0.0.1:${port}?tls=false` });
    gateway = await createGateway({ bus: new InProcessClient({ broker: new InProcessBroker() }), keys, sql, store, logger: createLogger('gateway', 'silent'), readiness: [] });
  });
  afterAll(async () => {
    await gateway?.close();
    await store?.close();
    await sql?.close();
  });

  it('is degraded naming kurrentdb while the server does not answer (PostgreSQL answers)', async () => {
    const gatewayPort = await gateway.listen(0, '127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${gatewayPort}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; detail: string };
    expect(body).toMatchObject({ status: 'degraded', service: 'gateway' });
    expect(body.detail).toMatch(new RegExp(`^not ready: kurrentdb: KurrentDB at 127\\.0\\.0\\.1:${port} did not answer`));
    expect(body.detail).not.toMatch(/postgres/);
  });
});
