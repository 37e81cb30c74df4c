/**
 * The PostgreSQL adapter and a catch-up subscription across database faults: backends terminated with
 * `pg_terminate_backend` (57P01) while a subscription's transaction holds a checked-out client, and the database
 * unreachable for a few seconds (a TCP proxy in front of the test database is stopped and started again: every
 * connection is cut, new ones are refused). No process crash (an unhandled 'error' event fails this file), the
 * subscription never dies and resumes from its checkpoint (every event projected exactly once), the outage is
 * reported once, and the failures classify as 503.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { readinessOf, toProblem } from '@agp/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/distributed.js';
import { createTestDatabase, runSuffix, skipIntegration } from '../../../test/support/infra.js';
import { createEventStore, createPgSql, type EventStore, type NewEvent, type Sql, type Subscription } from '../src/index.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** A TCP proxy to `target` that can be stopped (cutting every connection, refusing new ones) and started again. */
class Proxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}
  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = netConnect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', () => r()));
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server?.close(r));
    this.server = null;
  }
}

const app = `agp-outage-test-${runSuffix()}`;
const event = (i: number): NewEvent => ({ event_id: `ev-${app}-${i}`, type: 'Counted', data: { i }, metadata: { organization_id: 'acme', actor: 'system', schema_version: 1 } });

describe.skipIf(skipIntegration('postgres'))('PostgreSQL faults under a catch-up subscription', () => {
  let db: { url: string; drop(): Promise<void> };
  let admin: pg.Client;
  let proxy: Proxy;
  let sql: Sql;
  let store: EventStore;
  let sub: Subscription;
  const errors: unknown[] = [];
  const recoveries: number[] = [];
  /** Resolves the first handler call's pause (the terminate case holds its transaction open). */
  let holdFirst: Promise<void> | null = null;
  let releaseFirst: () => void = () => {};
  let handlerEntered: () => void = () => {};
  const entered = new Promise<void>((r) => (handlerEntered = r));
  let appended = 0;

  beforeAll(async () => {
    db = await createTestDatabase('agp_outage');
    const direct = new URL(db.url);
    proxy = new Proxy(await freePort(), { host: direct.hostname, port: Number(direct.port || 5432) });
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    sql = createPgSql(viaProxy.toString(), { applicationName: app, max: 4, connectionTimeoutMs: 1_000 });
    store = createEventStore(sql);
    await store.migrate();
    await sql.exec('CREATE TABLE counted (i int PRIMARY KEY)');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    holdFirst = new Promise((r) => (releaseFirst = r));
    sub = store.subscribe({
      name: 'counted',
      eventTypes: ['Counted'],
      batchSize: 50,
      idlePollMs: 50,
      handler: async (events, tx) => {
        if (holdFirst) {
          handlerEntered();
          await holdFirst;
          holdFirst = null;
        }
        // A duplicate would violate the primary key: each event must be applied exactly once.
        await tx.query('INSERT INTO counted SELECT (jsonb_array_elements($1::jsonb)->>0)::int', [JSON.stringify(events.map((e) => [e.data.i]))]);
      },
      onError: (err) => errors.push(err),
      onRecovered: (ms) => recoveries.push(ms),
    });
  });

  afterAll(async () => {
    await sub?.stop();
    await store?.close();
    await admin?.end();
    await proxy?.stop();
    await db?.drop();
  });

  async function append(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await store.append([{ stream_id: `counted-${appended + i}`, events: [event(appended + i)] }]);
    appended += n;
  }

  async function projected(): Promise<number> {
    const { rows } = await admin.query<{ n: string }>('SELECT count(*)::text AS n FROM counted');
    return Number(rows[0].n);
  }

  it('survives pg_terminate_backend while a transaction holds its client, and projects every event once', async () => {
    await append(20);
    await entered; // the subscription's transaction is open, its client checked out and idle
    const { rows } = await admin.query<{ n: number }>('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [app]);
    expect(rows[0].n).toBeGreaterThan(0);
    await sleep(100); // the FATAL 57P01 reaches the idle checked-out client as an 'error' event
    releaseFirst();
    await append(10);
    await expect.poll(projected, { timeout: 15_000, interval: 100 }).toBe(30);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(toProblem(errors[0]).status).toBe(503);
    expect(recoveries.length).toBe(1);
  });

  it('keeps retrying while the database is unreachable, reports the outage once, and resumes from its checkpoint', async () => {
    errors.length = 0;
    recoveries.length = 0;
    await proxy.stop();
    const down = Date.now();
    // A query during the outage is a transient failure: 503, and readiness names PostgreSQL.
    const queryErr = await sql.query('SELECT 1').catch((e: unknown) => e);
    expect(toProblem(queryErr)).toMatchObject({ status: 503 });
    await expect(readinessOf([{ name: 'postgres', check: async () => void (await sql.query('SELECT 1')) }])()).rejects.toThrow(/not ready: postgres: /);
    await sleep(4_000 - (Date.now() - down)); // several retries (100 ms doubling) happen meanwhile
    expect(errors.length).toBe(1);
    await proxy.start();
    const back = Date.now();
    await append(15);
    await expect.poll(projected, { timeout: 15_000, interval: 50 }).toBe(45);
    console.info(`[pg outage] 4 s outage: subscription caught up ${Date.now() - back} ms after the database was reachable again`);
    expect(recoveries.length).toBe(1);
    expect(errors.length).toBe(1);
  });
});
