import 'reflect-metadata';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NotFoundError, ServiceUnavailableError, type RpcRequest } from '@agp/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infra, runSuffix, skipIntegration } from '../../../test/support/infra.js';
import {
  call,
  callRpc,
  createBusClient,
  createBusServer,
  InProcessBroker,
  RemoteProblemError,
  serveRpc,
  type BusClient,
  type BusServer,
  type RpcLogger,
  type WireHandlers,
} from '../src/index.js';

/** A logger that keeps what it is given, so tests can check that 5xx are logged. */
class CapturingLogger implements RpcLogger {
  readonly errors: Array<{ obj: object; msg?: string }> = [];
  error(obj: object, msg?: string): void {
    this.errors.push({ obj, msg });
  }
}

/**
 * The stats service's subjects answered by an echo: `stats.agent` echoes its agent id with the instance that answered
 * (404 for `missing`, an unexpected error for `boom`), `runs.get` answers after 1.5 s. The transport is under test
 * here, not the service, so the replies are not stats.
 */
function echoHandlers(instance: string): WireHandlers<'stats'> {
  const nothing = () => ({}) as never;
  return {
    'stats.agent': (ctx, { path }) => {
      if (path.agent_id === 'missing') throw new NotFoundError(`thing ${path.agent_id} not found`);
      if (path.agent_id === 'boom') throw new Error('database password is hunter2');
      return { id: path.agent_id, org: ctx.organization_id, instance, at: new Date(0) } as never;
    },
    'runs.get': async () => {
      await new Promise((r) => setTimeout(r, 1500));
      return 'late' as never;
    },
    'stats.summary': nothing,
    'stats.daily': nothing,
    'stats.estimation-accuracy': nothing,
    'runs.list': nothing,
    'ledger.export-page': nothing,
    'stats.retry-projection-dead-letter': nothing,
  };
}

/**
 * The ingest service's subjects answered by an echo of what arrived: `ingest.raw` (a body that is bytes, sent as the
 * NATS payload with the context in a header) answers one success whose id holds the bytes (hex), the caller's key
 * name and organisation, so a test sees both parts arrive unchanged.
 */
function bytesEchoHandlers(): WireHandlers<'ingest'> {
  return {
    'ingest.raw': (c, bytes) => ({ successes: [{ id: `${Buffer.from(bytes).toString('hex')}|${c.key_name}|${c.organization_id}|${bytes instanceof Uint8Array}`, status: 201, result: 'created' }], errors: [] }),
    'ingest.batch': () => ({ successes: [], errors: [] }),
  };
}

async function startService(strategy: BusServer, instance: string, logger: RpcLogger): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice(serveRpc('stats', echoHandlers(instance), logger), { strategy, logger: false });
  await app.listen();
  return app;
}

const ctx = { organization_id: 'acme', scope: 'read' as const, key_id: 'key-1', correlation_id: 'corr-1' };
const req = <T>(body: T): RpcRequest<T> => ({ ctx, body });
/** A `stats.agent` request for `id`. */
const agent = (id: string) => req({ path: { agent_id: id } });

interface TransportSetup {
  server(instance: string): BusServer;
  client(): BusClient;
  /** A client that reaches no server (another prefix / broker). */
  strangerClient(): BusClient;
}

function transportContract(name: string, setup: () => TransportSetup) {
  describe(name, () => {
    let t: TransportSetup;
    let logger: CapturingLogger;
    const apps: INestMicroservice[] = [];
    let client: BusClient;

    beforeAll(async () => {
      t = setup();
      logger = new CapturingLogger();
      apps.push(await startService(t.server('a'), 'a', logger));
      apps.push(await startService(t.server('b'), 'b', logger));
      const bytesApp = await NestFactory.createMicroservice(serveRpc('ingest', bytesEchoHandlers(), logger), { strategy: t.server('bytes'), logger: false });
      await bytesApp.listen();
      apps.push(bytesApp);
      client = t.client();
      await client.connect();
    });

    afterAll(async () => {
      await client?.close();
      for (const app of apps) await app.close();
    });

    it('replies with the handler data, JSON round-tripped', async () => {
      const data = await callRpc<{ id: string; org: string; at: string }>(client, 'stats.agent', agent('x1'));
      expect(data).toMatchObject({ id: 'x1', org: 'acme', at: '1970-01-01T00:00:00.000Z' });
    });

    it('carries a body that is bytes unchanged (any byte, not only UTF-8), with the context beside it', async () => {
      const bytes = Buffer.from([0x7b, 0x00, 0xff, 0x0d, 0x0a, 0x22, 0x5c, 0xc3, 0x28, 0x7d]);
      const withName = { ...ctx, key_name: 'clé "ingest"\r\nline two' };
      const reply = await call(client, 'ingest.raw', withName, bytes);
      expect(reply.successes[0].id).toBe(`${bytes.toString('hex')}|${withName.key_name}|acme|true`);
      const empty = await call(client, 'ingest.raw', ctx, new Uint8Array(0));
      expect(empty.successes[0].id).toBe('|undefined|acme|true');
    });

    it('turns a thrown NotFoundError into a RemoteProblemError carrying the 404 problem', async () => {
      const err = await callRpc(client, 'stats.agent', agent('missing')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RemoteProblemError);
      const remote = err as RemoteProblemError;
      expect(remote.status).toBe(404);
      expect(remote.problem).toEqual({ type: 'https://agp.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'thing missing not found' });
    });

    it('replies 500 without internals to an unexpected error, and logs it', async () => {
      const before = logger.errors.length;
      const err = (await callRpc(client, 'stats.agent', agent('boom')).catch((e: unknown) => e)) as RemoteProblemError;
      expect(err).toBeInstanceOf(RemoteProblemError);
      expect(err.problem.status).toBe(500);
      expect(JSON.stringify(err.problem)).not.toContain('hunter2');
      expect(logger.errors.length).toBe(before + 1);
      expect((logger.errors.at(-1)!.obj as { err: Error }).err.message).toContain('hunter2');
    });

    it('fails fast with ServiceUnavailableError when no service handles the pattern', async () => {
      const started = Date.now();
      const err = await callRpc(client, 'echo.unknown', req({})).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceUnavailableError);
      expect((err as ServiceUnavailableError).status).toBe(503);
      expect((err as Error).cause).toBeDefined();
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('fails with ServiceUnavailableError when the reply does not come within the timeout', async () => {
      const err = await callRpc(client, 'runs.get', req({ path: { id: 'r1' }, query: {} }), 200).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceUnavailableError);
      expect((err as Error).message).toContain('within 200 ms');
    });

    it('does not reach services of another prefix or broker', async () => {
      const stranger = t.strangerClient();
      await stranger.connect();
      try {
        await expect(callRpc(stranger, 'stats.agent', agent('x'))).rejects.toBeInstanceOf(ServiceUnavailableError);
      } finally {
        await stranger.close();
      }
    });

    it('splits requests between two servers of one queue group', async () => {
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => callRpc<{ instance: string }>(client, 'stats.agent', agent(`q${i}`))));
      const counts = { a: 0, b: 0 } as Record<string, number>;
      for (const r of replies) counts[r.instance]++;
      expect(counts.a + counts.b).toBe(40);
      expect(counts.a).toBeGreaterThan(0);
      expect(counts.b).toBeGreaterThan(0);
    });
  });
}

describe('request/reply over the bus', () => {
  describe.skipIf(skipIntegration('nats'))('NATS', () => {
    const prefix = `t${runSuffix()}`;
    transportContract('PrefixedNatsServer + PrefixedNatsClient', () => {
      const servers = infra().natsUrl;
      return {
        server: (instance) => createBusServer('nats', { servers, prefix, queue: 'echo', name: `echo-${instance}` }),
        client: () => createBusClient('nats', { servers, prefix }),
        strangerClient: () => createBusClient('nats', { servers, prefix: `${prefix}x` }),
      };
    });
  });

  transportContract('in-process transport', () => {
    const broker = new InProcessBroker();
    return {
      server: () => createBusServer('in-process', { broker, queue: 'echo' }),
      client: () => createBusClient('in-process', { broker }),
      strangerClient: () => createBusClient('in-process', { broker: new InProcessBroker() }),
    };
  });
});
