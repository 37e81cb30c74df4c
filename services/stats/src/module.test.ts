import 'reflect-metadata';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { of } from 'rxjs';
import { InProcessBroker, InProcessClient, InProcessServer, RemoteProblemError, call, callRpc } from '@agp/bus';
import { NotFoundError, type RpcRequest } from '@agp/runtime';
import type { EventStore } from '@agp/eventstore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatsModule } from './module.js';
import { StatsService, type StatsDeps } from './service.js';

const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet } as unknown as StatsDeps['logger'];
const ctx = { organization_id: 'acme', scope: 'read' as const, key_id: 'key-1', correlation_id: 'corr-1' };

/** A StatsService stand-in that records what each method was given (the queries are tested end to end). */
function recordingService() {
  const calls: Array<[string, ...unknown[]]> = [];
  const rec =
    (name: string, answer: unknown) =>
    (_ctx: unknown, ...args: unknown[]) => {
      calls.push([name, ...args]);
      return Promise.resolve(answer);
    };
  const service = {
    summary: rec('summary', { days: null }),
    daily: rec('daily', { days: [] }),
    estimationAccuracy: rec('estimationAccuracy', {}),
    agentStats: rec('agentStats', {}),
    listRuns: rec('listRuns', { runs: [], total: 0, skip: 0, limit: 50 }),
    getRun: rec('getRun', {}),
    exportPage: rec('exportPage', { format: 'csv', text: '', rows: 0, next_cursor: null }),
  };
  return { calls, service: service as unknown as StatsService };
}

describe('StatsModule', () => {
  let app: INestMicroservice;
  let client: InProcessClient;
  const { calls, service } = recordingService();
  beforeAll(async () => {
    const broker = new InProcessBroker();
    app = await NestFactory.createMicroservice(StatsModule.register(service, quiet), { strategy: new InProcessServer({ broker, queue: 'stats' }), logger: false });
    await app.listen();
    client = new InProcessClient({ broker });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('hands each service method the parsed parts of its request', async () => {
    await call(client, 'stats.summary', ctx, { query: { days: '7' } });
    await call(client, 'stats.daily', ctx, { query: {} });
    await call(client, 'stats.estimation-accuracy', ctx, { query: {} });
    await call(client, 'stats.agent', ctx, { path: { agent_id: 'a1' } });
    await call(client, 'runs.list', ctx, { query: { limit: '5' } });
    await call(client, 'runs.get', ctx, { path: { id: 'r1' }, query: { actions_skip: '2' } });
    await call(client, 'ledger.export-page', ctx, { query: { format: 'jsonl' }, cursor: null });
    expect(calls).toEqual([
      ['summary', { days: 7 }],
      ['daily'],
      ['estimationAccuracy'],
      ['agentStats', 'a1'],
      ['listRuns', { skip: 0, limit: 5 }],
      ['getRun', 'r1', { actions_skip: 2, actions_limit: 1000 }],
      ['exportPage', { format: 'jsonl' }, null],
    ]);
  });

  it('answers a bad request with a 422 naming the fields as the HTTP request parts (path.*, query.*)', async () => {
    const bad = async (subject: string, body: unknown) => ((await callRpc(client, subject, { ctx, body }).catch((e: unknown) => e)) as RemoteProblemError).problem;
    expect(await bad('runs.get', { path: { id: '' }, query: { actions_limit: '0' } })).toMatchObject({ status: 422, errors: [{ path: 'path.id' }, { path: 'query.actions_limit' }] });
    expect(await bad('stats.agent', { path: {} })).toMatchObject({ status: 422, errors: [{ path: 'path.agent_id' }] });
    expect(await bad('ledger.export-page', { query: { format: 'xml' }, cursor: null })).toMatchObject({ status: 422, errors: [{ path: 'query.format' }] });
    expect(await bad('stats.daily', { query: { days: '1' } })).toMatchObject({ status: 422, errors: [{ path: 'query.days' }] });
  });
});

describe('StatsService.agentStats', () => {
  /** A service whose store has no aggregates and whose bus answers interventions.agent-counts with `total`. */
  function serviceWith(total: number) {
    const sent: Array<{ pattern: string; request: RpcRequest }> = [];
    const bus = {
      send: (pattern: string, request: RpcRequest) => {
        sent.push({ pattern, request });
        return of({ ok: true, data: { total, by_type: total ? { block: total } : {}, by_outcome: {}, cost_prevented_usd: 0 } });
      },
    } as unknown as StatsDeps['bus'];
    // The sums of an agent without aggregates: one row of zeros (the aggregate query always answers one row).
    const store = { sql: { query: (text: string) => Promise.resolve({ rows: text.includes('sum(') ? [{ runs: '0', actions: '0' }] : [] }) } } as unknown as EventStore;
    return { sent, service: new StatsService({ store, bus, logger: quiet, ingestLog: {} as StatsDeps['ingestLog'], subjectPrefix: 'agp' }) };
  }

  it('asks the interventions service with {path: {agent_id}} and answers zero totals for an agent with only interventions', async () => {
    const { sent, service } = serviceWith(2);
    const stats = await service.agentStats(ctx, 'a1');
    expect(sent).toEqual([{ pattern: 'interventions.agent-counts', request: { ctx, body: { path: { agent_id: 'a1' } } } }]);
    expect(stats).toMatchObject({ agent_id: 'a1', total_runs: 0, total_actions: 0, top_actions: [], interventions: { total: 2, by_type: { block: 2 } } });
  });

  it('is a 404 for an agent with no runs, actions or interventions', async () => {
    const { service } = serviceWith(0);
    await expect(service.agentStats(ctx, 'ghost')).rejects.toBeInstanceOf(NotFoundError);
  });
});
