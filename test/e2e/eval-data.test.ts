import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { call, eventually, expectProblem, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * Eval data kept apart from the organisation's real data, in both run modes: a production run (with an intervention)
 * recorded through ingest, then two scenarios played by the built CLI (`agp evals run`, which records each scenario's
 * run through ingest with `purpose: "eval"`), plus an action with a provider cost and an intervention on one of those
 * runs, sent with `purpose: "eval"` as an SDK under evaluation would. Every surface that reads runs, actions or
 * interventions answers by default exactly what it answered before the eval (the stats totals unchanged) and shows the
 * eval data with `?purpose=eval`: the stats, daily figures, estimation accuracy, agent stats, `GET /api/v1/runs`, the
 * ledger export (json and csv), the intervention list and stats, the dashboard resource and tool,
 * `platform://runs/latest` and `list_runs`, and counterfactual evaluation's run selection. The eval run uploaded from
 * the results file links each scenario to its run. Source: docs/api.md (Eval data); docs/decisions.md (Eval data).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'packages/cli/dist/cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'agp-eval-data-'));
const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** Run the built CLI with `args` (no CI or AGP variables from the test's environment). */
function agp(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(GITHUB_|GITLAB_|CI_|CIRCLE|BUILDKITE|AGP_)/.test(k) && k !== 'CI') env[k] = v;
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd: tmp }, (error, out, err) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out, err }));
  });
}

/** Two scenario files of `agent`: a denied action after one prior call (blocked), a benign lookup after 3 USD spent. */
const scenarios = (agent: string) => ({
  'denied.agp.yaml': `agp_scenario: 1
name: denied_actions.delete_records.direct
category: denied_actions
agent_id: ${agent}
context:
  prior_calls:
    - action_name: lookup_invoice
      cost_usd: 0.25
      ago_seconds: 60
steps:
  - action_name: delete_records
    arguments:
      customer_id: c-1
`,
  'benign.agp.yaml': `agp_scenario: 1
name: benign.lookup
category: benign
expected: allow
agent_id: ${agent}
context:
  run_spend_usd: 3
steps:
  - action_name: lookup_invoice
    arguments:
      invoice_id: inv-1
    estimated_cost_usd: 0.1
`,
});

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: ROOT });
}, 120_000);

describeModes('eval data is kept out of the organisation’s figures by default and shown with ?purpose=eval', (platform, mode) => {
  const agent = `billing-${uniq()}`;
  const prodRun = `run-${uniq()}`;
  const dir = join(tmp, mode, 'scenarios');
  const results = join(tmp, mode, 'results.json');
  /** What every surface answered before the eval ran (default purpose). */
  let before: Awaited<ReturnType<typeof surfaces>>;
  let evalRuns: string[];

  const get = async (path: string) => {
    const r = await call(platform(), 'GET', path, { key: platform().readKey });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };
  const tool = async (tool_name: string, args: Record<string, unknown> = {}) => {
    const r = await call(platform(), 'POST', '/api/v1/mcp/call', { key: platform().readKey, body: { tool_name, arguments: args } });
    expect(r.body?.success, JSON.stringify(r.body)).toBe(true);
    return r.body.data;
  };
  const resource = async (uri: string) => (await get(`/api/v1/mcp/resources/${encodeURIComponent(uri)}`)).data;
  const evaluate = async (body: Record<string, unknown>) => {
    const r = await call(platform(), 'POST', '/api/v1/replay/evaluate', { key: platform().readKey, body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const csv = async (query: string) => {
    const p = platform();
    const res = await fetch(`${p.url}/api/v1/ledger/export?format=csv&${query}`, { headers: { authorization: `Bearer ${p.readKey}` } });
    expect(res.status).toBe(200);
    return (await res.text()).trim().split('\r\n');
  };

  /** Every surface that keeps eval data apart, asked with `q` (`''` = the default purpose, or `purpose=…`). */
  async function surfaces(q: string) {
    const and = q ? `&${q}` : '';
    return {
      summary: await get(`/api/v1/stats/?${q}`),
      daily: await get(`/api/v1/stats/daily?${q}`),
      accuracy: await get(`/api/v1/stats/estimation-accuracy?${q}`),
      agentStats: await get(`/api/v1/agents/${agent}/stats?${q}`),
      runs: await get(`/api/v1/runs?agent_id=${agent}${and}`),
      ledger: await get(`/api/v1/ledger/export?format=json&agent_id=${agent}${and}`),
      interventions: await get(`/api/v1/interventions?agent_id=${agent}${and}`),
      interventionStats: await get(`/api/v1/interventions/stats?${q}`),
    };
  }

  beforeAll(async () => {
    const p = platform();
    const created = (r: { status: number; body: unknown }) => expect(r.status, JSON.stringify(r.body)).toBe(201);
    created(
      await call(p, 'POST', '/api/v1/agents', {
        key: p.writeKey,
        body: { agent_id: agent, actions: [{ name: 'lookup_invoice', typical_cost_usd: 0.1 }, { name: 'delete_records', risk_level: 'critical' }] },
      }),
    );
    created(await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `guard ${agent}`, denied_actions: ['delete_records'], agent_ids: [agent] } }));

    // The organisation's real work: one run with two actions (one with a provider cost) and one intervention.
    const now = new Date().toISOString();
    const ingest = async (batch: unknown[]) => {
      const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch } });
      expect(r.status, JSON.stringify(r.body)).toBe(207);
      expect(r.body.errors, JSON.stringify(r.body)).toEqual([]);
    };
    await ingest([
      { id: `${prodRun}:start`, type: 'run.start', timestamp: now, body: { run_id: prodRun, agent_id: agent } },
      { id: `${prodRun}:a1`, type: 'action.record', timestamp: now, body: { run_id: prodRun, agent_id: agent, action_name: 'lookup_invoice', status: 'success', cost_usd: 1.5, actual_cost_usd: 2 } },
      { id: `${prodRun}:a2`, type: 'action.record', timestamp: now, body: { run_id: prodRun, agent_id: agent, action_name: 'lookup_invoice', status: 'success', cost_usd: 0.5 } },
      { id: `${prodRun}:end`, type: 'run.end', timestamp: now, body: { run_id: prodRun, agent_id: agent, status: 'completed' } },
      { id: `${prodRun}:i1`, type: 'intervention.create', timestamp: now, body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: agent, run_id: prodRun, estimated_cost_usd: 40 } },
    ]);
    await eventually(async () => {
      const runs = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}`, { key: p.readKey });
      const list = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey });
      return runs.body.runs?.[0]?.status === 'completed' && runs.body.runs[0].action_count === 2 && list.body.total === 1;
    }, 20_000);
    before = await surfaces('');

    // The eval: the real harness plays two scenarios; then an SDK under evaluation reports a provider cost and an intervention.
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(scenarios(agent))) writeFileSync(join(dir, name), text);
    const ran = await agp(['evals', 'run', '--scenarios', dir, '--out', results, '--url', p.url, '--key', p.writeKey]);
    expect(ran.code, ran.out + ran.err).toBe(0);
    const doc = JSON.parse(readFileSync(results, 'utf8'));
    expect(doc.scenarios.map((s: { name: string; status: string }) => [s.name, s.status]).sort()).toEqual([
      ['benign.lookup', 'allowed'],
      ['denied_actions.delete_records.direct', 'blocked'],
    ]);
    evalRuns = doc.scenarios.map((s: { run_id: string }) => s.run_id).sort();
    for (const id of evalRuns) expect(id).toMatch(/^eval-/);
    const denied = doc.scenarios.find((s: { status: string }) => s.status === 'blocked').run_id;
    await ingest([
      { id: `${denied}:llm`, type: 'action.record', timestamp: now, body: { run_id: denied, agent_id: agent, action_name: 'lookup_invoice', status: 'success', cost_usd: 1, actual_cost_usd: 3, purpose: 'eval' } },
      { id: `${denied}:i1`, type: 'intervention.create', timestamp: now, body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: agent, run_id: denied, estimated_cost_usd: 500, purpose: 'eval' } },
    ]);
    await eventually(async () => {
      const runs = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&purpose=eval`, { key: p.readKey });
      const list = await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}&purpose=eval`, { key: p.readKey });
      const done = runs.body.runs?.filter((r: { status: string }) => r.status === 'completed') ?? [];
      return done.length === 2 && done.reduce((n: number, r: { action_count: number }) => n + r.action_count, 0) === 4 && list.body.total === 1;
    }, 30_000);
  }, 180_000);

  it('the stats, daily figures, estimation accuracy and agent stats are unchanged by the eval; ?purpose=eval and =all show it', async () => {
    const now = await surfaces('');
    expect(now.summary).toEqual(before.summary);
    expect(now.daily).toEqual(before.daily);
    expect(now.accuracy).toEqual(before.accuracy);
    expect(now.agentStats).toEqual(before.agentStats);
    expect(now.agentStats).toMatchObject({ total_runs: 1, total_actions: 2, total_cost_usd: 2.5, interventions: { total: 1 } });

    const evals = await surfaces('purpose=eval');
    // 0.25 (prior call) + 3 (spend so far) + 0.1 (the allowed step) + 3 (the provider-reported action).
    expect(evals.summary).toMatchObject({ total_runs: 2, total_actions: 4, total_cost_usd: 6.35, runs_by_status: { completed: 2 } });
    expect(evals.daily.days.at(-1)).toMatchObject({ runs: 2, actions: 4, cost_usd: 6.35 });
    expect(evals.accuracy).toMatchObject({ actions_compared: 1, mean_skew: 2 });
    expect(evals.agentStats).toMatchObject({ total_runs: 2, total_actions: 4, total_cost_usd: 6.35, interventions: { total: 1, cost_prevented_usd: 500 } });

    const every = await surfaces('purpose=all');
    expect(every.summary.total_runs).toBe(before.summary.total_runs + 2);
    expect(every.summary.total_cost_usd).toBeCloseTo(before.summary.total_cost_usd + 6.35, 6);
    expect((await surfaces('purpose=production,eval')).summary).toEqual(every.summary);
  });

  it('GET /api/v1/runs and the ledger export (json, csv) leave the eval runs out; ?purpose=eval lists only them', async () => {
    const now = await surfaces('');
    expect(now.runs).toEqual(before.runs);
    expect(now.runs.runs.map((r: { id: string; purpose: string }) => [r.id, r.purpose])).toEqual([[prodRun, 'production']]);
    expect(now.ledger).toEqual(before.ledger);
    expect(new Set(now.ledger.map((e: { run_id: string }) => e.run_id))).toEqual(new Set([prodRun]));

    const evals = await surfaces('purpose=eval');
    expect(evals.runs.runs.map((r: { id: string }) => r.id).sort()).toEqual(evalRuns);
    expect(evals.runs.runs.every((r: { purpose: string }) => r.purpose === 'eval')).toBe(true);
    expect(evals.ledger).toHaveLength(4);
    expect(evals.ledger.every((e: { purpose: string; run_id: string }) => e.purpose === 'eval' && evalRuns.includes(e.run_id))).toBe(true);

    const rows = await csv(`agent_id=${agent}`);
    expect(rows[0].split(',').at(-1)).toBe('purpose');
    expect(rows.slice(1).map((r) => r.split(',').at(-1))).toEqual(['production', 'production']);
    expect((await csv(`agent_id=${agent}&purpose=eval`)).slice(1)).toHaveLength(4);
    // A run is found by id whatever its purpose.
    for (const id of evalRuns) expect((await get(`/api/v1/runs/${id}`)).purpose).toBe('eval');
  });

  it('the intervention list and stats leave the eval’s intervention out; ?purpose=eval shows it, marked', async () => {
    const now = await surfaces('');
    expect(now.interventions).toEqual(before.interventions);
    expect(now.interventionStats).toEqual(before.interventionStats);
    expect(now.interventions.interventions.map((i: { run_id: string; purpose: string }) => [i.run_id, i.purpose])).toEqual([[prodRun, 'production']]);
    const evals = await surfaces('purpose=eval');
    expect(evals.interventions.total).toBe(1);
    expect(evals.interventions.interventions[0]).toMatchObject({ purpose: 'eval', cost_prevented_usd: 500 });
    expect(evalRuns).toContain(evals.interventions.interventions[0].run_id);
    expect(evals.interventionStats).toMatchObject({ total_interventions: 1, cost_prevented_usd: 500 });
    expect((await get(`/api/v1/interventions/${evals.interventions.interventions[0].id}`)).purpose).toBe('eval');
  });

  it('the dashboard resource and platform://runs/latest show production only; the tools take purpose', async () => {
    const dashboard = await resource('platform://stats/dashboard');
    expect(dashboard).toMatchObject({ total_runs: before.summary.total_runs, total_actions: before.summary.total_actions, total_cost_usd: before.summary.total_cost_usd });
    expect(await tool('get_dashboard_stats')).toEqual(dashboard);
    expect(await tool('get_dashboard_stats', { purpose: 'eval' })).toMatchObject({ total_runs: 2, total_actions: 4, total_cost_usd: 6.35, interventions_24h: 1 });
    // The eval runs are newer, yet the latest run is the production one.
    expect((await resource('platform://runs/latest')).run).toMatchObject({ id: prodRun, purpose: 'production' });
    expect((await tool('list_runs', { agent_id: agent })).runs.map((r: { id: string }) => r.id)).toEqual([prodRun]);
    expect((await tool('list_runs', { agent_id: agent, purpose: 'eval' })).runs.map((r: { id: string }) => r.id).sort()).toEqual(evalRuns);
    expect((await tool('list_interventions', { agent_id: agent, purpose: 'all' })).total).toBe(2);
    expect(await tool('get_agent_stats', { agent_id: agent, purpose: 'eval' })).toMatchObject({ total_runs: 2 });
    expect((await tool('export_ledger', { format: 'json', agent_id: agent, purpose: 'eval' })).row_count).toBe(4);
  });

  it('counterfactual evaluation selects production runs unless purpose asks; runs named by id are taken whatever their purpose', async () => {
    expect(await evaluate({ agent_id: agent })).toMatchObject({ runs_matched: 1, runs: [{ run_id: prodRun }] });
    const evals = await evaluate({ agent_id: agent, purpose: 'eval' });
    expect(evals.runs.map((r: { run_id: string }) => r.run_id).sort()).toEqual(evalRuns);
    expect((await evaluate({ agent_id: agent, purpose: 'all' })).runs_matched).toBe(3);
    expect((await evaluate({ run_ids: evalRuns })).runs_matched).toBe(2);
    expect((await evaluate({ run_ids: [...evalRuns, prodRun], purpose: 'production' })).runs_matched).toBe(1);
  });

  it('the eval run uploaded from the results file links each scenario to its run', async () => {
    const p = platform();
    const r = await call(p, 'POST', '/api/v1/evals/', { key: p.writeKey, body: JSON.parse(readFileSync(results, 'utf8')) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const detail = await get(`/api/v1/evals/${r.body.id}`);
    expect(detail.scenarios.map((s: { run_id: string }) => s.run_id).sort()).toEqual(evalRuns);
    for (const s of detail.scenarios) expect(await get(`/api/v1/runs/${s.run_id}`)).toMatchObject({ agent_id: agent, purpose: 'eval' });
  });

  it('a bad purpose is a 422 naming the field and the allowed values; nothing else changes', async () => {
    const p: BootedPlatform = platform();
    for (const path of ['/api/v1/runs?purpose=evals', '/api/v1/stats/?purpose=', '/api/v1/interventions?purpose=production,test', '/api/v1/ledger/export?format=json&purpose=x']) {
      const r = await call(p, 'GET', path, { key: p.readKey });
      expectProblem(r, 422, ['query.purpose']);
      expect(JSON.stringify(r.body)).toContain('production, eval');
    }
    const bad = await call(p, 'POST', '/api/v1/replay/evaluate', { key: p.readKey, body: { purpose: ['staging'] } });
    expectProblem(bad, 422, ['body.purpose']);
    const ingest = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch: [{ id: `bad-${uniq()}`, type: 'run.start', timestamp: new Date().toISOString(), body: { run_id: 'r', agent_id: agent, purpose: 'test' } }] } });
    expect(ingest.body.errors).toHaveLength(1);
    expect(ingest.body.errors[0].message).toContain('purpose');
  });
});
