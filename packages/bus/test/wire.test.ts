import 'reflect-metadata';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { SERVICES, Wire, wireKeysOf, type WireKey } from '@agp/contracts';
import { NotFoundError, ValidationError, metricsRegistry } from '@agp/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callUnchecked, InProcessBroker, InProcessClient, InProcessServer, RemoteProblemError, serveRpc, type WireHandlers } from '../src/index.js';

const quiet = { error: () => undefined };
const ctx = { organization_id: 'acme', scope: 'read' as const, key_id: 'key-1', correlation_id: 'corr-1' };

describe('the wire table', () => {
  it('gives every subject a zod request and reply schema, an owning service and a scope', () => {
    for (const [subject, row] of Object.entries(Wire)) {
      expect(row.request, subject).toBeInstanceOf(z.ZodType);
      expect(row.reply, subject).toBeInstanceOf(z.ZodType);
      expect(SERVICES, subject).toContain(row.service);
      expect(['read', 'write', 'admin'], subject).toContain(row.scope);
      expect(row.summary.length, subject).toBeGreaterThan(5);
      expect(subject).toMatch(/^[a-z-]+\.[a-z-]+$/);
    }
  });

  it('gives every service at least one subject, and every subject to exactly one service', () => {
    const all = SERVICES.flatMap((s) => wireKeysOf(s));
    expect(all.sort()).toEqual((Object.keys(Wire) as WireKey[]).sort());
    for (const s of SERVICES) expect(wireKeysOf(s).length, s).toBeGreaterThan(0);
  });
});

/** Handlers for the stats service's subjects that answer from plain data (the service logic is tested elsewhere). */
function statsHandlers(): WireHandlers<'stats'> {
  return {
    'stats.summary': (_ctx, body) => ({ days: body.query.days ?? null }) as never,
    'stats.daily': () => ({ days: [] }) as never,
    'stats.estimation-accuracy': () => ({}) as never,
    'stats.agent': (_ctx, body) => {
      throw new NotFoundError(`agent ${body.path.agent_id} not found`);
    },
    'runs.list': () => ({ $json: '{"runs":[],"total":0,"skip":0,"limit":50}' }),
    'runs.get': () => {
      throw new Error('database password is hunter2');
    },
    'ledger.export-page': () => ({ format: 'csv', text: '', rows: 0, next_cursor: null }),
    'stats.retry-projection-dead-letter': () => {
      throw new NotFoundError('no dead letter');
    },
  };
}

describe('serveRpc', () => {
  it('refuses a handler for a subject the table gives to another service, or not at all', () => {
    const foreign = { ...statsHandlers(), 'policies.create': () => ({}) } as unknown as WireHandlers<'stats'>;
    expect(() => serveRpc('stats', foreign, quiet)).toThrow(/policies\.create \(policies\)/);
    const unknown = { ...statsHandlers(), 'stats.secret': () => ({}) } as unknown as WireHandlers<'stats'>;
    expect(() => serveRpc('stats', unknown, quiet)).toThrow(/stats\.secret \(not in the table\)/);
  });

  it('refuses a handler map that misses a subject of the service', () => {
    const { 'stats.daily': _drop, ...rest } = statsHandlers();
    expect(() => serveRpc('stats', rest as WireHandlers<'stats'>, quiet)).toThrow(/no handler for stats\.daily/);
  });

  describe('served in process', () => {
    let app: INestMicroservice;
    let client: InProcessClient;
    let sent = 0;
    beforeAll(async () => {
      const broker = new InProcessBroker();
      app = await NestFactory.createMicroservice(serveRpc('stats', statsHandlers(), quiet), { strategy: new InProcessServer({ broker, queue: 'stats' }), logger: false });
      await app.listen();
      const inner = new InProcessClient({ broker });
      client = inner;
      const send = inner.send.bind(inner);
      inner.send = ((pattern: unknown, data: unknown) => {
        sent++;
        return send(pattern as string, data);
      }) as typeof inner.send;
    });
    afterAll(async () => {
      await app?.close();
    });

    it('validates and parses the request body: coerced query values reach the handler', async () => {
      await expect(call(client, 'stats.summary', ctx, { query: { days: '7' } })).resolves.toEqual({ days: 7 });
    });

    it('checks the body before sending: a 422 naming each bad field, nothing sent', async () => {
      const before = sent;
      const err = await callUnchecked(client, 'stats.summary', ctx, { query: { days: 'zero', nope: 1 } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).errors.map((e) => e.path).sort()).toEqual(['query.days', 'query.nope']);
      expect(sent).toBe(before);
    });

    it('answers a bad body sent around the caller with the same 422 from the service', async () => {
      const { callRpc } = await import('../src/index.js');
      const err = (await callRpc(client, 'stats.summary', { ctx, body: { query: { days: 'zero' } } }).catch((e: unknown) => e)) as RemoteProblemError;
      expect(err).toBeInstanceOf(RemoteProblemError);
      expect(err.problem).toMatchObject({ status: 422, errors: [{ path: 'query.days' }] });
    });

    it('maps a thrown AgpError to its problem and hides anything else behind a 500', async () => {
      const notFound = (await call(client, 'stats.agent', ctx, { path: { agent_id: 'a1' } }).catch((e: unknown) => e)) as RemoteProblemError;
      expect(notFound.problem).toMatchObject({ status: 404, detail: 'agent a1 not found' });
      const boom = (await call(client, 'runs.get', ctx, { path: { id: 'r1' }, query: {} }).catch((e: unknown) => e)) as RemoteProblemError;
      expect(boom.problem.status).toBe(500);
      expect(JSON.stringify(boom.problem)).not.toContain('hunter2');
    });

    it('counts every message by subject and outcome, and times it', async () => {
      await call(client, 'runs.list', ctx, { query: {} });
      const metrics = await metricsRegistry.metrics();
      expect(metrics).toMatch(/agp_rpc_messages_total\{subject="runs.list",outcome="ok"\} [1-9]/);
      expect(metrics).toMatch(/agp_rpc_messages_total\{subject="stats.agent",outcome="4xx"\} [1-9]/);
      expect(metrics).toMatch(/agp_rpc_messages_total\{subject="runs.get",outcome="5xx"\} [1-9]/);
      expect(metrics).toMatch(/agp_rpc_duration_seconds_count\{subject="runs.list"\} [1-9]/);
    });
  });
});
