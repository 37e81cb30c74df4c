import { expect, it } from 'vitest';
import { runSimulation, type SimulationReport } from '@agp/simulator';
import { actionCostUsd, type LedgerEntry } from '@agp/contracts';
import { call, eventually } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * Simulate, then query, in both run modes: `agp simulate` streams a fleet (agent registrations, runs, ledger entries,
 * interventions) through the public ingest API, and every read of the fleet data — runs, a run with its actions, the
 * ledger export, policies, kill switches, approvals and the three stats endpoints — agrees with what the simulator
 * reports it sent. (docs/walkthrough.md runs the same reads as a script: test/e2e/walkthrough.test.ts.)
 */
describeModes('fleet data: simulate, then query', (platform) => {
  let report: SimulationReport;
  const get = async (path: string) => {
    const r = await call(platform(), 'GET', path, { key: platform().readKey });
    expect(r.status, path).toBe(200);
    return r.body;
  };

  it('simulate streams the whole fleet and every event is accepted as new', async () => {
    const p = platform();
    report = await runSimulation({ url: p.url, key: p.writeKey, agents: 8, rate: 4000, durationS: 0.5, batchSize: 500, seed: 11 });
    expect(report.accepted).toBe(report.sent);
    expect(report).toMatchObject({ created: report.sent, duplicate: 0, policies_created: 6 });
    expect(report.sent).toBe(2000);
    for (const t of ['agent.register', 'run.start', 'action.record', 'intervention.create', 'run.end'] as const) expect(report.by_event_type[t], t).toBeGreaterThan(0);
    // Projections are asynchronous: wait until the ledger and the interventions are all queryable.
    await eventually(async () => (await get('/api/v1/stats/')).total_actions === report.by_event_type['action.record'], 20_000);
    await eventually(async () => (await get('/api/v1/interventions?limit=1')).total === report.by_event_type['intervention.create'], 20_000);
  });

  it('interventions: the date filters with the walkthrough\'s relative dates, and every cited policy exists', async () => {
    // As docs/walkthrough.md computes them: SINCE is 7 days ago, TODAY is today (UTC, YYYY-MM-DD).
    const since = new Date(Date.now() - 7 * 86400e3).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    const escalated = await get(`/api/v1/interventions?outcome=escalated&start_date=${since}&end_date=${today}`);
    expect(escalated.total).toBe(report.by_outcome.escalated);
    const csv = await fetch(`${platform().url}/api/v1/ledger/export?format=csv&start_date=${since}`, { headers: { authorization: `Bearer ${platform().readKey}` } });
    expect(csv.status).toBe(200);
    const rows = (await csv.text()).trim().split('\r\n');
    expect(rows).toHaveLength(1 + report.by_event_type['action.record']); // the header, then every entry
    // Simulate created the policies its interventions cite.
    const cited = new Set<string>((await get('/api/v1/interventions?limit=1000')).interventions.map((i: { policy_id: string }) => i.policy_id));
    expect(cited.size).toBe(report.policies);
    for (const id of cited) expect((await get(`/api/v1/policies/${id}`)).id).toBe(id);
  });

  it('stats: totals, the 30-day series and estimation accuracy match what was sent', async () => {
    const s = await get('/api/v1/stats/');
    expect(s.total_runs).toBe(report.runs);
    // Per action the actual cost where reported, else the estimate; the two sums beside it.
    expect(s.total_cost_usd).toBeCloseTo(report.ledger_total_cost_usd, 2);
    expect(s.total_estimated_cost_usd).toBeCloseTo(report.ledger_cost_usd, 2);
    expect(s.total_actual_cost_usd).toBeCloseTo(report.ledger_actual_cost_usd, 2);
    expect(s.avg_cost_per_action_usd).toBeCloseTo(s.total_cost_usd / s.total_actions, 6);
    expect(s.avg_duration_ms).toBeGreaterThan(0);
    expect((await get('/api/v1/stats/?days=1')).total_actions).toBe(s.total_actions);
    const daily = await get('/api/v1/stats/daily');
    expect(daily.days).toHaveLength(30);
    expect(daily.days.reduce((n: number, d: { actions: number }) => n + d.actions, 0)).toBe(s.total_actions);
    const acc = await get('/api/v1/stats/estimation-accuracy');
    expect(acc.actions_compared).toBeGreaterThan(s.total_actions * 0.6);
    expect(acc.actions_compared).toBeLessThan(s.total_actions);
    expect(acc.p95_skew).toBeGreaterThanOrEqual(acc.p50_skew);
    expect(acc.worst_offenders.length).toBeGreaterThan(0);
    const inHistograms = acc.histograms.flatMap((h: { buckets: Array<{ count: number }> }) => h.buckets).reduce((n: number, b: { count: number }) => n + b.count, 0);
    expect(inHistograms).toBe(acc.actions_compared);
  });

  it('runs: filters, one run with its ledger entries, and the streamed ledger export', async () => {
    const runs = await get('/api/v1/runs?limit=5');
    expect(runs.total).toBe(report.runs);
    const completed = await get('/api/v1/runs?status=completed&limit=1000');
    expect(completed.runs.every((r: { status: string }) => r.status === 'completed')).toBe(true);
    const withActions = completed.runs.find((r: { action_count: number }) => r.action_count > 0);
    const detail = await get(`/api/v1/runs/${withActions.id}`);
    expect(detail.actions).toHaveLength(withActions.action_count);
    expect(detail.actions.reduce((c: number, a: LedgerEntry) => c + actionCostUsd(a), 0)).toBeCloseTo(detail.cost_usd, 6);
    expect(detail.actions.reduce((c: number, a: LedgerEntry) => c + (a.cost_usd ?? 0), 0)).toBeCloseTo(detail.estimated_cost_usd, 6);
    const res = await fetch(`${platform().url}/api/v1/ledger/export?format=jsonl`, { headers: { authorization: `Bearer ${platform().readKey}` } });
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split('\n');
    expect(lines).toHaveLength(report.by_event_type['action.record']);
    expect(JSON.parse(lines[0])).toMatchObject({ run_id: expect.any(String), action_name: expect.any(String), cost_usd: expect.any(Number) });
  });

  it('agents: every simulated agent is registered with its actions, and has stats', async () => {
    const agents = await get('/api/v1/agents');
    expect(agents.total).toBe(8);
    const agent = agents.agents[0];
    expect(agent.actions.length).toBeGreaterThan(3);
    expect(agent.actions[0]).toMatchObject({ name: expect.any(String), parameters: { type: 'object' }, risk_level: expect.any(String), typical_cost_usd: expect.any(Number) });
    const stats = await get(`/api/v1/agents/${agent.agent_id}/stats`);
    expect(stats.total_actions).toBeGreaterThan(0);
    expect(stats.top_actions.length).toBeGreaterThan(0);
  });

  it('approvals: every escalated intervention is pending, and one can be approved', async () => {
    const pending = await get('/api/v1/approvals?status=pending&limit=1000');
    expect(pending.total).toBe(report.by_outcome.escalated);
    expect(pending.total).toBeGreaterThan(0);
    const p = platform();
    const r = await call(p, 'POST', `/api/v1/approvals/${pending.approvals[0].id}/approve`, { key: p.writeKey, body: { approver_email: 'lead@acme.test', notes: 'walkthrough' } });
    expect(r.status).toBe(200);
    expect((await get(`/api/v1/interventions/${pending.approvals[0].intervention_id}`)).outcome).toBe('approved_after_review');
  });

  it('policies and kill switches: create, change, read an old version, engage a switch', async () => {
    const p = platform();
    const created = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: 'Budget guard', run_budget: 5, denied_actions: ['delete_records'], rate_limits: { send_email: { max_calls: 10, window_seconds: 60 } } } });
    expect(created.status).toBe(201);
    const patched = await call(p, 'PATCH', `/api/v1/policies/${created.body.id}`, { key: p.writeKey, body: { run_budget: 10 } });
    expect(patched.body).toMatchObject({ version: 2, run_budget: 10 });
    expect((await get(`/api/v1/policies/${created.body.id}?version=1`)).run_budget).toBe(5);
    expect((await get(`/api/v1/policies/${created.body.id}/history`)).history.map((h: { event: string }) => h.event)).toEqual(['PolicyCreated', 'PolicyUpdated']);
    const agentId = (await get('/api/v1/agents?limit=1')).agents[0].agent_id;
    const ks = await call(p, 'PUT', `/api/v1/kill-switches/agents/${agentId}`, { key: p.writeKey, body: { engaged: true, reason: 'walkthrough' } });
    expect(ks.status).toBe(200);
    expect((await get(`/api/v1/agents/${agentId}`)).kill_switch).toMatchObject({ engaged: true, reason: 'walkthrough' });
  });
});
