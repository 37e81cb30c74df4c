import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimulation, type SimulationReport } from '@agp/simulator';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { skipIntegration } from '../support/infra.js';
import { bootDistributed } from '../support/modes.js';

/**
 * Platform teams scale each service on its own (architecture §2): two processes of interventions, policies, stats and
 * ingest, started together on real NATS and PostgreSQL, share the ingest consumers (JetStream durable consumers), the
 * request/reply traffic (queue groups) and the projections (checkpoint rows), and every event is counted exactly once.
 */
describe.skipIf(skipIntegration())('two replicas of every service (distributed)', () => {
  let p: BootedPlatform;
  let report: SimulationReport;
  beforeAll(async () => {
    p = await bootDistributed({ replicas: { interventions: 2, policies: 2, stats: 2, ingest: 2 } });
    report = await runSimulation({ url: p.url, key: p.writeKey, agents: 8, rate: 4000, durationS: 0.75, batchSize: 250, seed: 23 });
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
  });
  const get = async (path: string) => (await call(p, 'GET', path, { key: p.readKey })).body;

  it('counts every simulated event exactly once across the replicas', async () => {
    expect(report.accepted).toBe(3000);
    await eventually(async () => (await get('/api/v1/stats/')).total_actions === report.by_event_type['action.record'], 20_000);
    await eventually(async () => (await get('/api/v1/interventions?limit=1')).total === report.by_event_type['intervention.create'], 20_000);
    await new Promise((r) => setTimeout(r, 500)); // anything counted twice would show by now
    const s = await get('/api/v1/stats/');
    expect(s.total_actions).toBe(report.by_event_type['action.record']);
    expect(s.total_runs).toBe(report.runs);
    expect(s.total_cost_usd).toBeCloseTo(report.ledger_total_cost_usd, 2);
    expect(s.total_estimated_cost_usd).toBeCloseTo(report.ledger_cost_usd, 2);
    expect((await get('/api/v1/interventions?limit=1')).total).toBe(report.by_event_type['intervention.create']);
    expect((await get('/api/v1/interventions/stats')).total_interventions).toBe(report.by_event_type['intervention.create']);
    expect((await get('/api/v1/approvals?status=pending&limit=1')).total).toBe(report.by_outcome.escalated);
    expect((await get('/api/v1/agents?limit=1')).total).toBe(8);
    const res = await fetch(`${p.url}/api/v1/ledger/export?format=jsonl`, { headers: { authorization: `Bearer ${p.readKey}` } });
    expect((await res.text()).trim().split('\n')).toHaveLength(report.by_event_type['action.record']);
  });

  it("reads its own writes from the gateway's cached list pages, whichever interventions replica took the write", async () => {
    // The gateway answers GET /api/v1/interventions in-process from a page cache tagged with the projection checkpoint
    // (docs/decisions.md, The read path); a page cached just before a write must never be served after the write's 201.
    const query = '/api/v1/interventions?agent_id=ryw-agent&limit=5';
    for (let i = 0; i < 12; i++) {
      const before = await get(query);
      expect(await get(query)).toEqual(before); // nothing moved: the same page again (the cache hit itself is asserted in services/gateway/test/list-read.pglite.test.ts)
      const created = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: 'ryw-agent', reason: `write ${i}` },
      });
      expect(created.status).toBe(201);
      const after = await get(query);
      expect(after.total).toBe(before.total + 1);
      expect(after.interventions.map((r: { id: string }) => r.id)).toContain(created.body.id);
    }
  });
});
