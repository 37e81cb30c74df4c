/**
 * Readiness with the KurrentDB adapter, without a KurrentDB server: the store's `ready()` and the `kurrentdb` readiness
 * check fail with the client's refusal when KURRENTDB_URL points at a closed loopback port, and an ops server's
 * `/readyz` answers 503 naming `kurrentdb`; against a loopback server that accepts connections and never answers,
 * `ready()` gives up after its timeout. The SQL adapters' `ready()` is their database answering, and they
 * add no check of their own (the `postgres` check covers their database). The read-model database is PGlite.
 */
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readinessOf, startOpsServer } from '@agp/runtime';
import { createEventStore, createPgliteSql, eventStoreReadiness, openEventStore, type EventStore, type Sql } from '../src/index.js';
import { kurrentDbEndpoint } from '../src/kurrentdb.js';
import { freePort } from '../../../test/support/distributed.js';

describe('KurrentDB readiness without a server', () => {
  let db: Sql;
  let store: EventStore;
  let port: number;
  beforeAll(async () => {
    db = await createPgliteSql();
    port = await freePort(); // nothing listens on it: bound, then released
    store = await openEventStore(db, { AGP_EVENT_STORE: 'kurrentdb', KURRENTDB_URL: `kurrentdb://admin:changeit@127.0.0.1:${port}?tls=false` });
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
    await db?.close();
  });

  it('ready() rejects naming the server (not its credentials) and the client error', async () => {
    const err = (await store.ready().then(() => null, (e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(new RegExp(`^KurrentDB at 127\\.0\\.0\\.1:${port} did not answer a read of \\$all: \\w+`));
    expect(err.message).not.toMatch(/changeit|admin/);
  });

  it('adds a `kurrentdb` check; an ops server answers /readyz 503 naming it, from the refusal, not the probe timeout', async () => {
    const checks = eventStoreReadiness(store);
    expect(checks.map((c) => c.name)).toEqual(['kurrentdb']);
    const ops = await startOpsServer({
      port: 0,
      service: 'readiness-test',
      readiness: readinessOf([{ name: 'postgres', check: async () => void (await db.query('SELECT 1')) }, ...checks], 10_000),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { status: number; detail: string };
      expect(body.status).toBe(503);
      // The read-model database answers, so only KurrentDB is named; the client's refusal is reported, not a timeout.
      expect(body.detail).toMatch(new RegExp(`^not ready: kurrentdb: KurrentDB at 127\\.0\\.0\\.1:${port} did not answer`));
      expect(body.detail).not.toMatch(/postgres|no answer within/);
    } finally {
      await ops.close();
    }
  });
});

describe('KurrentDB readiness against a server that never answers', () => {
  it('ready() rejects after its timeout, naming the server', async () => {
    // A real TCP listener on loopback that accepts and stays silent (a hung server or a black-holing proxy).
    const sockets: Socket[] = [];
    const silent = createServer((s) => void sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const db = await createPgliteSql();
    const store = await openEventStore(db, { AGP_EVENT_STORE: 'kurrentdb', KURRENTDB_URL: `kurrentdb://127.0.0.1:${port}?tls=false` });
    try {
      await expect(store.ready(300)).rejects.toThrow(`KurrentDB at 127.0.0.1:${port} did not answer a read of $all: no answer within 300 ms`);
    } finally {
      // The silent server goes first, so the client's pending read fails and closing it does not wait on that read.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await store.close();
      await db.close();
    }
  });
});

describe('SQL adapters and readiness', () => {
  it('ready() resolves while the database answers, rejects once it is closed, and the store adds no check of its own', async () => {
    const db = await createPgliteSql();
    const store = createEventStore(db);
    await store.ready();
    expect(eventStoreReadiness(store)).toEqual([]);
    await store.close();
    await expect(store.ready()).rejects.toThrow();
  });
});

describe('kurrentDbEndpoint', () => {
  it('keeps the hosts and drops credentials, path and settings', () => {
    expect(kurrentDbEndpoint('kurrentdb://admin:secret@10.0.0.5:2113?tls=false')).toBe('10.0.0.5:2113');
    expect(kurrentDbEndpoint('kurrentdb+discover://node1:2113,node2:2113/?tls=true')).toBe('node1:2113,node2:2113');
    expect(kurrentDbEndpoint('esdb://127.0.0.1:2113')).toBe('127.0.0.1:2113');
  });
});
