import 'reflect-metadata';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InProcessBroker, InProcessClient, InProcessServer, RemoteProblemError, call, callRpc } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InterventionsModule } from './module.js';
import type { InterventionsService } from './service.js';

const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet } as unknown as Logger;
const ctx = { organization_id: 'acme', scope: 'write' as const, key_id: 'key-1', correlation_id: 'corr-1' };

/** An InterventionsService stand-in that records what each method was given (the logic is tested end to end). */
function recordingService() {
  const calls: Array<[string, ...unknown[]]> = [];
  const rec =
    (name: string, answer: unknown) =>
    (_ctx: unknown, ...args: unknown[]) => {
      calls.push([name, ...args]);
      return Promise.resolve(answer);
    };
  const service = {
    create: rec('create', { id: 'i1' }),
    list: rec('list', { $json: '{"interventions":[],"total":0,"skip":0,"limit":50}' }),
    get: rec('get', { id: 'i1' }),
    stats: rec('stats', {}),
    delete: rec('delete', { id: 'i1', deleted: true }),
    agentCounts: rec('agentCounts', { total: 0, by_type: {}, by_outcome: {}, cost_prevented_usd: 0 }),
    enrichment: { enrich: rec('enrich', { id: 'i1', enrichment_status: 'pending' }) },
    approvals: {
      list: rec('approvals.list', { $json: '{"approvals":[],"total":0,"skip":0,"limit":50}' }),
      get: rec('approvals.get', { id: 'apr-i1' }),
      decide: rec('approvals.decide', { id: 'apr-i1' }),
    },
  };
  return { calls, service: service as unknown as InterventionsService };
}

describe('InterventionsModule', () => {
  let app: INestMicroservice;
  let client: InProcessClient;
  const { calls, service } = recordingService();
  beforeAll(async () => {
    const broker = new InProcessBroker();
    app = await NestFactory.createMicroservice(InterventionsModule.register(service, quiet), { strategy: new InProcessServer({ broker, queue: 'interventions' }), logger: false });
    await app.listen();
    client = new InProcessClient({ broker });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('hands each service method the parsed parts of its request', async () => {
    const body = { type: 'hard_block', outcome: 'blocked', action_name: 'send_email', agent_id: 'a1' } as const;
    await call(client, 'interventions.create', ctx, { body });
    await call(client, 'interventions.list', ctx, { query: { limit: '5', outcome: 'blocked,escalated' } });
    await call(client, 'interventions.get', ctx, { path: { id: 'i1' } });
    await call(client, 'interventions.stats', ctx, { query: {} });
    await call(client, 'interventions.delete', ctx, { path: { id: 'i1' } });
    await call(client, 'interventions.enrich', ctx, { path: { id: 'i1' } });
    await call(client, 'interventions.agent-counts', ctx, { path: { agent_id: 'a1' } });
    await call(client, 'approvals.list', ctx, { query: { status: 'pending' } });
    await call(client, 'approvals.get', ctx, { path: { id: 'apr-i1' } });
    await call(client, 'approvals.approve', ctx, { path: { id: 'apr-i1' }, body: { approver_email: 'a@example.com', notes: 'ok' } });
    await call(client, 'approvals.reject', ctx, { path: { id: 'apr-i1' }, body: { approver_email: 'b@example.com' } });
    expect(calls).toEqual([
      ['create', expect.objectContaining(body)],
      ['list', { skip: 0, limit: 5, outcome: ['blocked', 'escalated'] }],
      ['get', 'i1'],
      ['stats', {}],
      ['delete', 'i1'],
      ['enrich', 'i1'],
      ['agentCounts', 'a1'],
      ['approvals.list', { skip: 0, limit: 50, status: ['pending'] }],
      ['approvals.get', 'apr-i1'],
      ['approvals.decide', 'apr-i1', { approver_email: 'a@example.com', notes: 'ok' }, 'approve'],
      ['approvals.decide', 'apr-i1', { approver_email: 'b@example.com' }, 'reject'],
    ]);
  });

  it('answers a bad request with a 422 naming the fields as the HTTP request parts (path.*, query.*, body.*)', async () => {
    const bad = async (subject: string, body: unknown) => ((await callRpc(client, subject, { ctx, body }).catch((e: unknown) => e)) as RemoteProblemError).problem;
    expect(await bad('interventions.get', { path: { id: '' } })).toMatchObject({ status: 422, errors: [{ path: 'path.id' }] });
    expect(await bad('interventions.list', { query: { limit: '0' } })).toMatchObject({ status: 422, errors: [{ path: 'query.limit' }] });
    expect(await bad('interventions.create', { body: { type: 'hard_block', outcome: 'blocked', action_name: 'x' } })).toMatchObject({ status: 422, errors: [{ path: 'body.agent_id' }] });
    expect(await bad('interventions.agent-counts', { path: {} })).toMatchObject({ status: 422, errors: [{ path: 'path.agent_id' }] });
    expect(await bad('approvals.approve', { path: { id: 'apr-i1' }, body: { approver_email: 'nope' } })).toMatchObject({ status: 422, errors: [{ path: 'body.approver_email' }] });
    expect(await bad('approvals.list', { query: { status: 'maybe' } })).toMatchObject({ status: 422, errors: [{ path: 'query.status' }] });
  });
});
