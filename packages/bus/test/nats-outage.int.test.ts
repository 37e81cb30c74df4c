/**
 * A NATS outage longer than nats.js's default reconnect budget (10 attempts 2 s apart): the request/reply server and
 * client, against their own nats-server that is killed for 25 s and started again on the same port, answer again
 * without a restart; while it is down a call fails with a 503 (ServiceUnavailableError), never a 500, and both
 * connections report themselves unhealthy (readiness).
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { readinessOf, ServiceUnavailableError, startOpsServer, toProblem } from '@agp/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/distributed.js';
import { missingNatsServer, OwnNats } from './own-nats.js';
import { callRpc, PrefixedNatsClient, PrefixedNatsServer, serveRpc, type NatsLogger, type WireHandlers } from '../src/index.js';

const OUTAGE_MS = 25_000;

/** Keeps every log line, so the test can count the transitions logged. */
class Lines implements NatsLogger {
  readonly lines: Array<{ level: string; msg?: string }> = [];
  info = (_o: object, msg?: string) => void this.lines.push({ level: 'info', msg });
  warn = (_o: object, msg?: string) => void this.lines.push({ level: 'warn', msg });
  error = (_o: object, msg?: string) => void this.lines.push({ level: 'error', msg });
  /** Log lines whose message contains `part`. */
  count(part: string): number {
    return this.lines.filter((l) => l.msg?.includes(part)).length;
  }
}

const ctx = { organization_id: 'acme', scope: 'read' as const, key_id: 'key-1', correlation_id: 'corr-1' };
const nothing = () => ({}) as never;
const handlers: WireHandlers<'stats'> = {
  'stats.agent': (_c, { path }) => ({ id: path.agent_id }) as never,
  'runs.get': nothing,
  'stats.summary': nothing,
  'stats.daily': nothing,
  'stats.estimation-accuracy': nothing,
  'runs.list': nothing,
  'ledger.export-page': nothing,
  'stats.retry-projection-dead-letter': nothing,
};
const ask = (id: string) => callRpc<{ id: string }>(client, 'stats.agent', { ctx, body: { path: { agent_id: id } } }, 2_000);

let nats: OwnNats | undefined;
let server: PrefixedNatsServer;
let client: PrefixedNatsClient;
let app: INestMicroservice | undefined;
let ops: Awaited<ReturnType<typeof startOpsServer>> | undefined;
/** GET /readyz of the ops server: its status and body. */
const readyz = async () => {
  const res = await fetch(`http://127.0.0.1:${ops!.port}/readyz`);
  return { status: res.status, body: (await res.json()) as { detail?: string } };
};
let dir = '';
let port = 0;
const logs = new Lines();
const closed: string[] = [];

if (missingNatsServer) console.warn(missingNatsServer);

describe.skipIf(missingNatsServer !== '')('request/reply across a NATS outage longer than 20 s', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agp-nats-outage-'));
    port = await freePort();
    nats = new OwnNats(port, dir);
    await nats.start();
    const servers = `nats://127.0.0.1:${port}`;
    server = new PrefixedNatsServer({ servers, prefix: 'outage', queue: 'stats', logger: logs, onClosed: () => closed.push('server') });
    app = await NestFactory.createMicroservice(serveRpc('stats', handlers, { error: () => {} }), { strategy: server, logger: false });
    await app.listen();
    client = new PrefixedNatsClient({ servers, prefix: 'outage', logger: logs, onClosed: () => closed.push('client') });
    await client.connect();
    // The readiness a service process builds (service-process.ts): both NATS connections must be up.
    ops = await startOpsServer({ port: 0, host: '127.0.0.1', service: 'outage-test', readiness: readinessOf([{ name: 'nats', check: () => (server.health.check(), client.health.check()) }]) });
  });

  afterAll(async () => {
    await client?.close();
    await app?.close();
    await ops?.close();
    await nats?.stop('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 while NATS is down and answers again after it returns, without a restart', { timeout: 60_000 }, async () => {
    expect(await ask('before')).toEqual({ id: 'before' });
    expect(() => server.health.check()).not.toThrow();
    expect((await readyz()).status).toBe(200);

    await nats!.stop('SIGKILL');
    const down = Date.now();
    // Seen as down at once (the socket closed); requests fail fast as 503, not 500.
    await expect.poll(() => client.health.state, { timeout: 5_000 }).toBe('disconnected');
    await expect.poll(() => server.health.state, { timeout: 5_000 }).toBe('disconnected');
    const err = await ask('during').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(toProblem(err).status).toBe(503);
    expect(() => server.health.check()).toThrow(/NATS \(rpc server\) disconnected/);
    const notReady = await readyz();
    expect(notReady.status).toBe(503);
    expect(notReady.body.detail).toMatch(/^not ready: nats: NATS \(rpc server\) disconnected/);

    await new Promise((r) => setTimeout(r, OUTAGE_MS - (Date.now() - down)));
    // Another request half-way through the outage: still a 503.
    expect(toProblem(await ask('still down').catch((e: unknown) => e)).status).toBe(503);
    await nats!.start();
    const back = Date.now();
    let answer: { id: string } | undefined;
    while (!answer && Date.now() - back < 15_000) {
      answer = await ask('after').catch(() => undefined);
      if (!answer) await new Promise((r) => setTimeout(r, 100));
    }
    const recoveryMs = Date.now() - back;
    console.info(`[nats outage] ${OUTAGE_MS / 1000} s outage: first answer ${recoveryMs} ms after nats-server restarted`);
    expect(answer).toEqual({ id: 'after' });
    expect(server.health.state).toBe('connected');
    expect(client.health.state).toBe('connected');
    expect(closed).toEqual([]);
    expect((await readyz()).status).toBe(200);
    // One line per transition and connection, not one per reconnect attempt.
    expect(logs.count('rpc server disconnected')).toBe(1);
    expect(logs.count('bus client disconnected')).toBe(1);
    expect(logs.count('rpc server reconnected')).toBe(1);
    expect(logs.count('bus client reconnected')).toBe(1);
  });
});
