import { expect, it, describe } from 'vitest';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { parseCsv } from '../support/csv.js';

const uniq = () => Math.random().toString(36).slice(2, 10);
const DAY = 86_400_000;
const today = Date.parse(new Date().toISOString().slice(0, 10));
/** An ISO time `days` UTC days before today's midnight, plus `seconds`. */
const at = (days: number, seconds = 1) => new Date(today - days * DAY + seconds * 1000).toISOString();
const dayOf = (days: number) => at(days).slice(0, 10);

type Ev = { id: string; type: string; timestamp: string; body: Record<string, unknown> };
const ev = (type: string, body: Record<string, unknown>, timestamp = new Date().toISOString(), id = `ev-${uniq()}`): Ev => ({ id, type, timestamp, body });

/** POST a batch to the ingest endpoint and require every event to be accepted (207, all 201). */
async function ingest(p: BootedPlatform, batch: Ev[], key = p.writeKey) {
  const r = await call(p, 'POST', '/api/v1/ingest/', { key, body: { batch } });
  expect(r.status).toBe(207);
  expect(r.body.errors).toEqual([]);
  expect(r.body.successes).toHaveLength(batch.length);
}

const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
};

const getRun = (p: BootedPlatform, id: string, key = p.readKey) => call(p, 'GET', `/api/v1/runs/${encodeURIComponent(id)}`, { key });

describeModes('stats, runs, agent stats and the ledger export', (platform) => {
  describe('org-wide stats (organisation globex, used only here)', () => {
    it('computes /stats, /stats/daily and /stats/estimation-accuracy exactly from ingested runs and actions', async () => {
      const p = platform();
      const key = p.otherOrgWriteKey;
      const a = (run: string, name: string, days: number, s: number, extra: Record<string, unknown>) =>
        ev('action.record', { run_id: run, agent_id: 'g-agent', action_name: name, status: 'success', timestamp: at(days, s), ...extra }, at(days, s));
      await ingest(
        p,
        [
          ev('run.start', { run_id: 'g1', agent_id: 'g-agent', started_at: at(2, 10) }),
          a('g1', 'search', 2, 20, { cost_usd: 1, actual_cost_usd: 1.2, duration_ms: 100 }),
          a('g1', 'search', 2, 30, { cost_usd: 2, actual_cost_usd: 1, duration_ms: 300 }),
          ev('run.end', { run_id: 'g1', agent_id: 'g-agent', status: 'completed', ended_at: at(2, 40) }),
          ev('run.start', { run_id: 'g2', agent_id: 'g-agent', started_at: at(0, 1) }),
          a('g2', 'llm_call', 0, 2, { cost_usd: 0.5, actual_cost_usd: 1.5, duration_ms: 200 }),
          a('g2', 'llm_call', 0, 3, { cost_usd: 1 }),
          ev('run.end', { run_id: 'g2', agent_id: 'g-agent', status: 'failed', ended_at: at(0, 4) }),
          ev('run.start', { run_id: 'g3', agent_id: 'g-agent', started_at: at(40, 1) }),
          a('g3', 'search', 40, 2, { cost_usd: 4, actual_cost_usd: 4, duration_ms: 400 }),
        ],
        key,
      );
      const all = await eventually(async () => {
        const r = await call(p, 'GET', '/api/v1/stats/', { key });
        return r.body.total_actions === 5 && r.body.runs_by_status.running === 1 && r.body.runs_by_status.failed === 1 ? r : null;
      });
      expect(all.status).toBe(200);
      expect(all.body).toEqual({
        total_runs: 3,
        runs_by_status: { running: 1, completed: 1, failed: 1 },
        success_rate: 0.5,
        total_actions: 5,
        // Per action the actual cost where reported, else the estimate (docs/decisions.md, Run cost): 1.2 + 1 + 1.5 + 1 + 4.
        total_cost_usd: 8.7,
        total_estimated_cost_usd: 8.5,
        total_actual_cost_usd: 7.7,
        avg_cost_per_action_usd: 1.74,
        avg_duration_ms: 250,
        period: { days: null, start_date: null, end_date: dayOf(0) },
      });
      const one = await call(p, 'GET', '/api/v1/stats?days=1', { key });
      expect(one.body).toMatchObject({ total_runs: 1, runs_by_status: { running: 0, completed: 0, failed: 1 }, total_actions: 2, total_cost_usd: 2.5, total_estimated_cost_usd: 1.5, total_actual_cost_usd: 1.5, avg_cost_per_action_usd: 1.25, avg_duration_ms: 200, period: { days: 1, start_date: dayOf(0), end_date: dayOf(0) } });
      const three = await call(p, 'GET', '/api/v1/stats/?days=3', { key });
      expect(three.body).toMatchObject({ total_runs: 2, total_actions: 4, total_cost_usd: 4.7, total_estimated_cost_usd: 4.5, total_actual_cost_usd: 3.7, avg_cost_per_action_usd: 1.175, avg_duration_ms: 200, period: { days: 3, start_date: dayOf(2) } });

      const daily = await call(p, 'GET', '/api/v1/stats/daily', { key });
      expect(daily.status).toBe(200);
      expect(daily.body.days).toHaveLength(30);
      expect(daily.body.days[0].date).toBe(dayOf(29));
      expect(daily.body.days[29]).toEqual({ date: dayOf(0), cost_usd: 2.5, estimated_cost_usd: 1.5, actual_cost_usd: 1.5, runs: 1, actions: 2 });
      expect(daily.body.days[27]).toEqual({ date: dayOf(2), cost_usd: 2.2, estimated_cost_usd: 3, actual_cost_usd: 2.2, runs: 1, actions: 2 });
      const others = daily.body.days.filter((_: unknown, i: number) => i !== 27 && i !== 29);
      expect(others.every((d: any) => d.cost_usd === 0 && d.estimated_cost_usd === 0 && d.runs === 0 && d.actions === 0 && d.actual_cost_usd === 0)).toBe(true);

      const acc = await call(p, 'GET', '/api/v1/stats/estimation-accuracy', { key });
      expect(acc.status).toBe(200);
      // skews: search 0.2, -0.5, 0; llm_call 2.0 (the second llm_call has no actual cost and is not compared)
      expect(acc.body).toEqual({
        actions_compared: 4,
        mean_skew: 0.425,
        p50_skew: 0,
        p95_skew: 2,
        worst_offenders: [
          { action_name: 'llm_call', mean_abs_skew: 2, mean_skew: 2, count: 1 },
          { action_name: 'search', mean_abs_skew: 0.233333, mean_skew: -0.1, count: 3 },
        ],
        histograms: [
          {
            action_name: 'llm_call',
            buckets: [
              { bucket: '<=-50%', count: 0 },
              { bucket: '-50%..-10%', count: 0 },
              { bucket: '-10%..10%', count: 0 },
              { bucket: '10%..50%', count: 0 },
              { bucket: '50%..100%', count: 0 },
              { bucket: '>100%', count: 1 },
            ],
          },
          {
            action_name: 'search',
            buckets: [
              { bucket: '<=-50%', count: 1 },
              { bucket: '-50%..-10%', count: 0 },
              { bucket: '-10%..10%', count: 1 },
              { bucket: '10%..50%', count: 1 },
              { bucket: '50%..100%', count: 0 },
              { bucket: '>100%', count: 0 },
            ],
          },
        ],
      });
    });
  });

  describe('runs', () => {
    it('moves a run from running to completed, with its cost the sum of its actions and its actions oldest first', async () => {
      const p = platform();
      const run = `run-${uniq()}`;
      const agent = `agent-${uniq()}`;
      await ingest(p, [ev('run.start', { run_id: run, agent_id: agent, name: 'nightly', started_at: at(0, 100) })]);
      const started = await eventually(async () => {
        const r = await getRun(p, run);
        return r.status === 200 ? r : null;
      });
      expect(started.body).toMatchObject({ id: run, agent_id: agent, name: 'nightly', status: 'running', started_at: at(0, 100), ended_at: null, duration_ms: null, cost_usd: 0, action_count: 0, actions: [] });
      await ingest(p, [
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'b_second', status: 'error', cost_usd: 0.25, actual_cost_usd: 0.3, duration_ms: 50, timestamp: at(0, 120), error: 'boom', inputs: { q: 1 }, outputs: ['x'] }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'a_first', status: 'success', cost_usd: 0.5, timestamp: at(0, 110) }),
        ev('run.end', { run_id: run, agent_id: agent, status: 'completed', ended_at: at(0, 130) }),
      ]);
      const done = await eventually(async () => {
        const r = await getRun(p, run);
        return r.body.status === 'completed' && r.body.action_count === 2 ? r : null;
      });
      expect(done.body).toMatchObject({ status: 'completed', ended_at: at(0, 130), duration_ms: 30_000, cost_usd: 0.8, estimated_cost_usd: 0.75, actual_cost_usd: 0.3, action_count: 2, error: null, actions_total: 2, actions_skip: 0, actions_limit: 1000 });
      expect(done.body.actions.map((x: any) => x.action_name)).toEqual(['a_first', 'b_second']);
      expect(done.body.actions[1]).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        run_id: run,
        agent_id: agent,
        action_name: 'b_second',
        status: 'error',
        timestamp: at(0, 120),
        cost_usd: 0.25,
        actual_cost_usd: 0.3,
        duration_ms: 50,
        inputs: { q: 1 },
        outputs: ['x'],
        error: 'boom',
        purpose: 'production',
      });
      const page = await call(p, 'GET', `/api/v1/runs/${run}?actions_skip=1&actions_limit=1`, { key: p.readKey });
      expect(page.body.actions.map((x: any) => x.action_name)).toEqual(['b_second']);
    });

    it('builds a consistent run from out-of-order events: action and run.end before run.start', async () => {
      const p = platform();
      const run = `run-${uniq()}`;
      const agent = `agent-${uniq()}`;
      await ingest(p, [
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'fetch', status: 'success', cost_usd: 2, timestamp: at(0, 200) }),
        ev('run.end', { run_id: run, agent_id: agent, status: 'failed', ended_at: at(0, 300), error: 'timeout' }),
      ]);
      const ended = await eventually(async () => {
        const r = await getRun(p, run);
        return r.body?.status === 'failed' ? r : null;
      });
      expect(ended.body).toMatchObject({ status: 'failed', started_at: null, ended_at: at(0, 300), duration_ms: null, cost_usd: 2, action_count: 1, error: 'timeout' });
      await ingest(p, [ev('run.start', { run_id: run, agent_id: agent, started_at: at(0, 150) })]);
      const full = await eventually(async () => {
        const r = await getRun(p, run);
        return r.body.started_at ? r : null;
      });
      expect(full.body).toMatchObject({ status: 'failed', started_at: at(0, 150), duration_ms: 150_000, cost_usd: 2, action_count: 1 });
      const stats = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
      expect(stats.body).toMatchObject({ total_runs: 1, runs_by_status: { running: 0, completed: 0, failed: 1 }, total_actions: 1, total_cost_usd: 2 });
    });

    it('counts a repeated event id once', async () => {
      const p = platform();
      const run = `run-${uniq()}`;
      const agent = `agent-${uniq()}`;
      const action = ev('action.record', { run_id: run, agent_id: agent, action_name: 'pay', status: 'success', cost_usd: 3 }, at(0, 400));
      await ingest(p, [ev('run.start', { run_id: run, agent_id: agent }, at(0, 390)), action]);
      await ingest(p, [action]);
      await ingest(p, [action, ev('run.end', { run_id: run, agent_id: agent, status: 'completed' }, at(0, 410))]);
      const r = await eventually(async () => {
        const x = await getRun(p, run);
        return x.body?.status === 'completed' ? x : null;
      });
      expect(r.body).toMatchObject({ action_count: 1, cost_usd: 3 });
      expect(r.body.actions).toHaveLength(1);
      const stats = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
      expect(stats.body).toMatchObject({ total_runs: 1, total_actions: 1, total_cost_usd: 3, top_actions: [{ action: 'pay', count: 1, cost: 3 }] });
    });

    it('lists runs newest first with the status, min_cost and agent_id filters, skip and limit', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      const runs = ['r1', 'r2', 'r3'].map((r) => `${r}-${uniq()}`);
      await ingest(p, [
        ev('run.start', { run_id: runs[0], agent_id: agent, started_at: at(1, 10) }),
        ev('action.record', { run_id: runs[0], agent_id: agent, action_name: 'x', status: 'success', cost_usd: 5, timestamp: at(1, 11) }),
        ev('run.end', { run_id: runs[0], agent_id: agent, status: 'completed', ended_at: at(1, 12) }),
        ev('run.start', { run_id: runs[1], agent_id: agent, started_at: at(1, 20) }),
        ev('action.record', { run_id: runs[1], agent_id: agent, action_name: 'x', status: 'success', cost_usd: 1, timestamp: at(1, 21) }),
        ev('run.start', { run_id: runs[2], agent_id: agent, started_at: at(1, 30) }),
        ev('run.end', { run_id: runs[2], agent_id: agent, status: 'failed', ended_at: at(1, 31) }),
      ]);
      const all = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}`, { key: p.readKey });
        return r.body.total === 3 && r.body.runs.some((x: any) => x.status === 'failed') && r.body.runs.some((x: any) => x.status === 'completed') ? r : null;
      });
      expect(all.body).toMatchObject({ total: 3, skip: 0, limit: 50 });
      expect(all.body.runs.map((x: any) => x.id)).toEqual([runs[2], runs[1], runs[0]]);
      const failed = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&status=failed`, { key: p.readKey });
      expect(failed.body.runs.map((x: any) => x.id)).toEqual([runs[2]]);
      const costly = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&min_cost=1`, { key: p.readKey });
      expect(costly.body.runs.map((x: any) => x.id)).toEqual([runs[1], runs[0]]);
      const combined = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&min_cost=2&status=completed`, { key: p.readKey });
      expect(combined.body).toMatchObject({ total: 1, runs: [{ id: runs[0], cost_usd: 5, status: 'completed' }] });
      const paged = await call(p, 'GET', `/api/v1/runs/?agent_id=${agent}&skip=1&limit=1`, { key: p.readKey });
      expect(paged.body).toMatchObject({ total: 3, skip: 1, limit: 1 });
      expect(paged.body.runs.map((x: any) => x.id)).toEqual([runs[1]]);
    });

    it('walks the runs of a filter by next_cursor, each exactly once and in order; a bad cursor or one with skip is a 400', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      // Seven runs, three of them started in the same instant (the run id breaks the tie), and one of another agent.
      const runs = Array.from({ length: 7 }, (_, i) => `c${i}-${uniq()}`);
      await ingest(p, [
        ...runs.map((run_id, i) => ev('run.start', { run_id, agent_id: agent, started_at: at(2, Math.min(i, 4)) })),
        ev('run.start', { run_id: `other-${uniq()}`, agent_id: `other-${agent}`, started_at: at(2, 3) }),
      ]);
      const whole = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&limit=1000`, { key: p.readKey });
        return r.body.total === runs.length ? r.body : null;
      });
      expect(whole.next_cursor).toBeNull();
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let n = 0; n < 10; n++) {
        const r = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: p.readKey });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ total: runs.length, skip: 0, limit: 2 });
        seen.push(...r.body.runs.map((x: any) => x.id));
        cursor = r.body.next_cursor;
        if (!cursor) break;
      }
      expect(seen).toEqual(whole.runs.map((x: any) => x.id));
      expect(new Set(seen)).toEqual(new Set(runs));
      const first = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&limit=1`, { key: p.readKey });
      for (const query of [`cursor=${first.body.next_cursor}&skip=1`, 'cursor=%E2%9C%93', `cursor=${Buffer.from('["yesterday","r"]').toString('base64url')}`]) {
        const r = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&${query}`, { key: p.readKey });
        expectProblem(r, 400);
        expect(r.body.detail, query).toMatch(/query\.cursor/);
      }
    });

    it('costs a run per action at the actual cost where reported, else the estimate, and min_cost filters on it', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      const [doubled, estimates, mixed] = ['doubled', 'estimates', 'mixed'].map((r) => `${r}-${uniq()}`);
      const n = 3;
      const act = (run: string, s: number, cost: Record<string, number>) => ev('action.record', { run_id: run, agent_id: agent, action_name: 'llm_call', status: 'success', timestamp: at(1, s), ...cost });
      await ingest(p, [
        // Estimated at 1 USD each, charged 2 each by the provider.
        ev('run.start', { run_id: doubled, agent_id: agent, started_at: at(1, 100) }),
        ...Array.from({ length: n }, (_, i) => act(doubled, 101 + i, { cost_usd: 1, actual_cost_usd: 2 })),
        ev('run.start', { run_id: estimates, agent_id: agent, started_at: at(1, 200) }),
        act(estimates, 201, { cost_usd: 1 }),
        act(estimates, 202, { cost_usd: 1 }),
        ev('run.start', { run_id: mixed, agent_id: agent, started_at: at(1, 300) }),
        act(mixed, 301, { cost_usd: 1, actual_cost_usd: 2 }),
        act(mixed, 302, { cost_usd: 1 }),
        act(mixed, 303, { actual_cost_usd: 0.5 }),
      ]);
      const all = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}`, { key: p.readKey });
        return r.body.total === 3 && r.body.runs.reduce((c: number, x: any) => c + x.action_count, 0) === n + 5 ? r : null;
      });
      const byId = Object.fromEntries(all.body.runs.map((r: any) => [r.id, r]));
      expect(byId[doubled]).toMatchObject({ cost_usd: 2 * n, estimated_cost_usd: n, actual_cost_usd: 2 * n, action_count: n });
      expect(byId[estimates]).toMatchObject({ cost_usd: 2, estimated_cost_usd: 2, actual_cost_usd: 0, action_count: 2 });
      expect(byId[mixed]).toMatchObject({ cost_usd: 3.5, estimated_cost_usd: 2, actual_cost_usd: 2.5, action_count: 3 });
      expect((await getRun(p, doubled)).body).toMatchObject({ cost_usd: 2 * n, estimated_cost_usd: n });
      // The doubled run's estimates (3) are below 5; what was spent (6) is not.
      const min = async (usd: number) => (await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&min_cost=${usd}`, { key: p.readKey })).body.runs.map((x: any) => x.id);
      expect(await min(5)).toEqual([doubled]);
      expect(await min(2.5)).toEqual([mixed, doubled]);
      expect(await min(2)).toEqual([mixed, estimates, doubled]);
      // list_runs over MCP filters the same way.
      const tool = await call(p, 'POST', '/api/v1/mcp/call', { key: p.readKey, body: { tool_name: 'list_runs', arguments: { agent_id: agent, min_cost: 5 } } });
      expect(tool.body.data.runs.map((x: any) => x.id)).toEqual([doubled]);
      const stats = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
      expect(stats.body).toMatchObject({ total_cost_usd: 2 * n + 2 + 3.5, total_estimated_cost_usd: n + 2 + 2, total_actual_cost_usd: 2 * n + 2.5 });
    });

    it('counts only the actions that ran in a run\'s cost and the stats; a blocked entry\'s estimate stays in the ledger and the prevented figure is its own', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      const run = `blocked-${uniq()}`;
      const act = (name: string, s: number, status: string, cost: Record<string, number>) =>
        ev('action.record', { run_id: run, agent_id: agent, action_name: name, status, timestamp: at(0, s), ...cost }, at(0, s));
      await ingest(p, [
        ev('run.start', { run_id: run, agent_id: agent, started_at: at(0, 600) }),
        act('search', 601, 'success', { cost_usd: 0.02 }),
        act('search', 602, 'success', { cost_usd: 0.02, actual_cost_usd: 0.02 }),
        act('send_email', 603, 'error', { cost_usd: 0.02 }),
        // A client that records a blocked action with its estimate (and even a charge): it did not run, so it spent nothing.
        act('delete_db', 604, 'blocked', { cost_usd: 0.02, actual_cost_usd: 0.02 }),
        { id: `ev-${uniq()}`, type: 'intervention.create', timestamp: at(0, 604), body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_db', agent_id: agent, run_id: run, estimated_cost_usd: 0.02 } },
        ev('run.end', { run_id: run, agent_id: agent, status: 'completed', ended_at: at(0, 605) }),
      ]);
      const r = await eventually(async () => {
        const x = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
        return x.status === 200 && x.body.total_actions === 4 && x.body.runs_by_status.completed === 1 && x.body.interventions.total === 1 ? x : null;
      });
      expect(r.body).toMatchObject({ total_runs: 1, total_actions: 4, total_cost_usd: 0.06, total_estimated_cost_usd: 0.06, total_actual_cost_usd: 0.02, avg_cost_per_run_usd: 0.06 });
      expect(r.body.top_actions).toEqual([
        { action: 'search', count: 2, cost: 0.04 },
        { action: 'delete_db', count: 1, cost: 0 },
        { action: 'send_email', count: 1, cost: 0.02 },
      ]);
      expect(r.body.interventions).toMatchObject({ total: 1, cost_prevented_usd: 0.02 });
      // The window reads the ledger rows themselves: the same rule.
      const window = await call(p, 'GET', `/api/v1/agents/${agent}/stats?days=1`, { key: p.readKey });
      expect(window.body).toMatchObject({ total_actions: 4, total_cost_usd: 0.06, total_estimated_cost_usd: 0.06, total_actual_cost_usd: 0.02 });
      const detail = await getRun(p, run);
      expect(detail.body.cost_usd).toBeCloseTo(0.06, 9);
      expect(detail.body.estimated_cost_usd).toBeCloseTo(0.06, 9);
      expect(detail.body.actual_cost_usd).toBeCloseTo(0.02, 9);
      expect(detail.body.action_count).toBe(4);
      expect(detail.body.actions.find((a: any) => a.status === 'blocked')).toMatchObject({ action_name: 'delete_db', cost_usd: 0.02 });
      const min = async (usd: number) => (await call(p, 'GET', `/api/v1/runs?agent_id=${agent}&min_cost=${usd}`, { key: p.readKey })).body.runs.map((x: any) => x.id);
      expect(await min(0.07)).toEqual([]);
      expect(await min(0.06)).toEqual([run]);
    });
  });

  describe('GET /api/v1/agents/{id}/stats', () => {
    it('answers per-agent totals, top actions and the intervention counts of the interventions service', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      const run = `run-${uniq()}`;
      await ingest(p, [
        ev('run.start', { run_id: run, agent_id: agent, started_at: at(0, 500) }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'send_email', status: 'success', cost_usd: 1, actual_cost_usd: 1, duration_ms: 10, timestamp: at(0, 501) }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'send_email', status: 'success', cost_usd: 1, duration_ms: 30, timestamp: at(0, 502) }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'search', status: 'success', cost_usd: 0.5, timestamp: at(0, 503) }),
        ev('run.end', { run_id: run, agent_id: agent, status: 'completed', ended_at: at(0, 504) }),
      ]);
      for (const body of [
        { type: 'hard_block', outcome: 'blocked', action_name: 'delete_db', agent_id: agent, estimated_cost_usd: 10 },
        { type: 'warning', outcome: 'warned', action_name: 'send_email', agent_id: agent },
      ]) {
        expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body })).status).toBe(201);
      }
      const r = await eventually(async () => {
        const x = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
        return x.status === 200 && x.body.total_actions === 3 && x.body.runs_by_status.completed === 1 ? x : null;
      });
      expect(r.body).toMatchObject({
        agent_id: agent,
        total_runs: 1,
        runs_by_status: { running: 0, completed: 1, failed: 0 },
        total_actions: 3,
        total_cost_usd: 2.5,
        total_estimated_cost_usd: 2.5,
        total_actual_cost_usd: 1,
        avg_cost_per_run_usd: 2.5,
        avg_duration_ms: 20,
        top_actions: [
          { action: 'send_email', count: 2, cost: 2 },
          { action: 'search', count: 1, cost: 0.5 },
        ],
      });
      expect(r.body.interventions).toMatchObject({ total: 2, cost_prevented_usd: 10 });
      expect(r.body.interventions.by_type).toMatchObject({ hard_block: 1, warning: 1, rate_limited: 0 });
      expect(r.body.interventions.by_outcome).toMatchObject({ blocked: 1, warned: 1, escalated: 0 });
    });

    it('computes runs, actions, costs, top actions and interventions over the last days=N UTC days, and all time without days', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      const [old, mid, now] = ['old', 'mid', 'now'].map((r) => `${r}-${uniq()}`);
      const a = (run: string, name: string, days: number, s: number, extra: Record<string, unknown> = {}) =>
        ev('action.record', { run_id: run, agent_id: agent, action_name: name, status: 'success', timestamp: at(days, s), ...extra }, at(days, s));
      await ingest(p, [
        // Started 40 days ago: outside every window below, though one of its actions is inside (actions count by their own time).
        ev('run.start', { run_id: old, agent_id: agent, started_at: at(40, 1) }),
        a(old, 'search', 40, 2, { cost_usd: 4, actual_cost_usd: 4, duration_ms: 400 }),
        ev('run.end', { run_id: old, agent_id: agent, status: 'completed', ended_at: at(40, 3) }),
        a(old, 'late', 1, 5, { cost_usd: 0.25 }),
        ev('run.start', { run_id: mid, agent_id: agent, started_at: at(2, 10) }),
        a(mid, 'search', 2, 20, { cost_usd: 1, actual_cost_usd: 1.2, duration_ms: 100 }),
        a(mid, 'fetch', 2, 30, { cost_usd: 2, duration_ms: 300 }),
        ev('run.end', { run_id: mid, agent_id: agent, status: 'failed', ended_at: at(2, 40) }),
        ev('run.start', { run_id: now, agent_id: agent, started_at: at(0, 1) }),
        a(now, 'fetch', 0, 2, { cost_usd: 0.5, actual_cost_usd: 1.5, duration_ms: 200 }),
        a(now, 'fetch', 0, 3, { cost_usd: 1 }),
      ]);
      for (const body of [
        { type: 'hard_block', outcome: 'blocked', action_name: 'drop', agent_id: agent, estimated_cost_usd: 10, timestamp: at(0, 10) },
        { type: 'warning', outcome: 'warned', action_name: 'fetch', agent_id: agent, timestamp: at(40, 10) },
      ]) {
        expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body })).status).toBe(201);
      }
      const all = await eventually(async () => {
        const x = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
        return x.status === 200 && x.body.total_actions === 6 && x.body.runs_by_status.completed === 1 && x.body.runs_by_status.failed === 1 ? x : null;
      });
      expect(all.body).toMatchObject({
        total_runs: 3,
        runs_by_status: { running: 1, completed: 1, failed: 1 },
        // Per action the actual cost where reported, else the estimate: 4 + 0.25 + 1.2 + 2 + 1.5 + 1.
        total_cost_usd: 9.95,
        total_estimated_cost_usd: 8.75,
        total_actual_cost_usd: 6.7,
        avg_cost_per_run_usd: 3.316667,
        avg_duration_ms: 250,
        top_actions: [
          { action: 'fetch', count: 3, cost: 4.5 },
          { action: 'search', count: 2, cost: 5.2 },
          { action: 'late', count: 1, cost: 0.25 },
        ],
        interventions: { total: 2, cost_prevented_usd: 10 },
        period: { days: null, start_date: null, end_date: dayOf(0) },
      });

      const three = await call(p, 'GET', `/api/v1/agents/${agent}/stats?days=3`, { key: p.readKey });
      expect(three.status).toBe(200);
      expect(three.body).toEqual({
        agent_id: agent,
        total_runs: 2,
        runs_by_status: { running: 1, completed: 0, failed: 1 },
        total_actions: 5,
        total_cost_usd: 5.95,
        total_estimated_cost_usd: 4.75,
        total_actual_cost_usd: 2.7,
        avg_cost_per_run_usd: 2.975,
        avg_duration_ms: 200,
        interventions: expect.objectContaining({ total: 1, cost_prevented_usd: 10 }),
        top_actions: [
          { action: 'fetch', count: 3, cost: 4.5 },
          { action: 'late', count: 1, cost: 0.25 },
          { action: 'search', count: 1, cost: 1.2 },
        ],
        period: { days: 3, start_date: dayOf(2), end_date: dayOf(0) },
      });
      expect(three.body.interventions.by_type).toMatchObject({ hard_block: 1, warning: 0 });

      const one = await call(p, 'GET', `/api/v1/agents/${agent}/stats?days=1`, { key: p.readKey });
      expect(one.body).toMatchObject({
        total_runs: 1,
        runs_by_status: { running: 1, completed: 0, failed: 0 },
        total_actions: 2,
        total_cost_usd: 2.5,
        total_estimated_cost_usd: 1.5,
        total_actual_cost_usd: 1.5,
        avg_cost_per_run_usd: 2.5,
        avg_duration_ms: 200,
        top_actions: [{ action: 'fetch', count: 2, cost: 2.5 }],
        interventions: { total: 1 },
        period: { days: 1, start_date: dayOf(0), end_date: dayOf(0) },
      });
      // The whole history is inside a long window: the same figures as all time.
      const long = await call(p, 'GET', `/api/v1/agents/${agent}/stats?days=3650`, { key: p.readKey });
      const { period: _all, ...allFigures } = all.body;
      expect(long.body).toEqual({ ...allFigures, period: { days: 3650, start_date: dayOf(3649), end_date: dayOf(0) } });
    });

    it('answers zeros (not 404) for an agent with data only outside the window, and 404 for one with none at all', async () => {
      const p = platform();
      const runner = `agent-${uniq()}`;
      const run = `run-${uniq()}`;
      await ingest(p, [
        ev('run.start', { run_id: run, agent_id: runner, started_at: at(40, 1) }),
        ev('action.record', { run_id: run, agent_id: runner, action_name: 'x', status: 'success', cost_usd: 1, timestamp: at(40, 2) }),
      ]);
      await eventually(async () => (await getRun(p, run)).body?.action_count === 1);
      const zero = {
        total_runs: 0,
        runs_by_status: { running: 0, completed: 0, failed: 0 },
        total_actions: 0,
        total_cost_usd: 0,
        total_estimated_cost_usd: 0,
        total_actual_cost_usd: 0,
        avg_cost_per_run_usd: 0,
        avg_duration_ms: 0,
        top_actions: [],
      };
      const r = await call(p, 'GET', `/api/v1/agents/${runner}/stats?days=7`, { key: p.readKey });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ agent_id: runner, ...zero, interventions: { total: 0 }, period: { days: 7, start_date: dayOf(6), end_date: dayOf(0) } });

      // Only an intervention, 40 days ago: still an agent.
      const blocked = `agent-${uniq()}`;
      expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'hard_block', outcome: 'blocked', action_name: 'x', agent_id: blocked, timestamp: at(40, 5) } })).status).toBe(201);
      const b = await call(p, 'GET', `/api/v1/agents/${blocked}/stats?days=30`, { key: p.readKey });
      expect(b.status).toBe(200);
      expect(b.body).toMatchObject({ agent_id: blocked, ...zero, interventions: { total: 0 }, period: { days: 30 } });

      expectProblem(await call(p, 'GET', `/api/v1/agents/nope-${uniq()}/stats?days=7`, { key: p.readKey }), 404);
    });

    it('answers an agent that only has interventions, with zero runs', async () => {
      const p = platform();
      const agent = `agent-${uniq()}`;
      expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'hard_block', outcome: 'blocked', action_name: 'x', agent_id: agent } })).status).toBe(201);
      const r = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ agent_id: agent, total_runs: 0, total_actions: 0, top_actions: [], interventions: { total: 1 } });
    });
  });

  describe('GET /api/v1/ledger/export', () => {
    const seed = async (p: BootedPlatform) => {
      const agent = `agent-${uniq()}`;
      const run = `run-${uniq()}`;
      await ingest(p, [
        ev('run.start', { run_id: run, agent_id: agent, started_at: at(5, 0) }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'one', status: 'success', cost_usd: 1, timestamp: at(5, 10), inputs: { text: 'a, "quoted"\nline' } }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'two', status: 'error', cost_usd: 2, actual_cost_usd: 2.5, duration_ms: 7, timestamp: at(4, 10), error: 'failed, badly' }),
        ev('action.record', { run_id: run, agent_id: agent, action_name: 'three', status: 'blocked', timestamp: at(3, 10), outputs: 'text' }),
        ev('action.record', { run_id: `other-${uniq()}`, agent_id: `other-${uniq()}`, action_name: 'not-mine', status: 'success', timestamp: at(4, 20) }),
      ]);
      await eventually(async () => (await getRun(p, run)).body?.action_count === 3);
      return agent;
    };

    it('streams json, jsonl and csv that parse back to the same entries, oldest first, as an attachment', async () => {
      const p = platform();
      const agent = await seed(p);
      const res = await fetch(`${p.url}/api/v1/ledger/export?format=json&agent_id=${agent}`, { headers: { authorization: `Bearer ${p.readKey}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="ledger-\d{4}-\d{2}-\d{2}\.json"$/);
      const json = (await res.json()) as any[];
      expect(json.map((e) => e.action_name)).toEqual(['one', 'two', 'three']);
      expect(json[0]).toMatchObject({ agent_id: agent, status: 'success', cost_usd: 1, actual_cost_usd: null, inputs: { text: 'a, "quoted"\nline' }, timestamp: at(5, 10) });
      expect(json[2]).toMatchObject({ outputs: 'text', inputs: null });

      const jl = await fetch(`${p.url}/api/v1/ledger/export?format=jsonl&agent_id=${agent}`, { headers: { authorization: `Bearer ${p.readKey}` } });
      expect(jl.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      const lines = (await jl.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
      expect(lines).toEqual(json);

      const csv = await fetch(`${p.url}/api/v1/ledger/export?format=csv&agent_id=${agent}`, { headers: { authorization: `Bearer ${p.readKey}` } });
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      const rows = parseCsv(await csv.text());
      expect(rows[0]).toEqual(['id', 'timestamp', 'run_id', 'agent_id', 'action_name', 'status', 'cost_usd', 'actual_cost_usd', 'duration_ms', 'inputs', 'outputs', 'error', 'purpose']);
      expect(rows).toHaveLength(4);
      expect(rows.slice(1).map((r) => r[0])).toEqual(json.map((e) => e.id));
      expect(JSON.parse(rows[1][9])).toEqual({ text: 'a, "quoted"\nline' });
      expect(rows[2].slice(4)).toEqual(['two', 'error', '2', '2.5', '7', '', '', 'failed, badly', 'production']);
    });

    it('restricts the export to a date range (a date-only end_date includes that day)', async () => {
      const p = platform();
      const agent = await seed(p);
      const r = await call(p, 'GET', `/api/v1/ledger/export?format=json&agent_id=${agent}&start_date=${dayOf(4)}&end_date=${dayOf(4)}`, { key: p.readKey });
      expect(r.status).toBe(200);
      expect(r.body.map((e: any) => e.action_name)).toEqual(['two']);
      const from = await call(p, 'GET', `/api/v1/ledger/export?format=jsonl&agent_id=${agent}&start_date=${at(4, 10)}`, { key: p.readKey });
      expect(String(from.body).trim().split('\n').map((l) => JSON.parse(l).action_name)).toEqual(['two', 'three']);
    });

    it('exports an empty ledger as an empty array', async () => {
      const p = platform();
      const r = await call(p, 'GET', `/api/v1/ledger/export?format=json&agent_id=nobody-${uniq()}`, { key: p.readKey });
      expect(r.status).toBe(200);
      expect(r.body).toEqual([]);
    });
  });

  describe('bad input', () => {
    it('answers 404 for an unknown run', async () => {
      expectProblem(await getRun(platform(), `nope-${uniq()}`), 404);
    });

    it('answers 404 for an unknown agent', async () => {
      const p = platform();
      expectProblem(await call(p, 'GET', `/api/v1/agents/nope-${uniq()}/stats`, { key: p.readKey }), 404);
    });

    it("answers 404 for another organisation's run and agent", async () => {
      const p = platform();
      const run = `run-${uniq()}`;
      const agent = `agent-${uniq()}`;
      await ingest(p, [ev('run.start', { run_id: run, agent_id: agent })]);
      await eventually(async () => (await getRun(p, run)).status === 200);
      expectProblem(await getRun(p, run, p.otherOrgWriteKey), 404);
      expectProblem(await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.otherOrgWriteKey }), 404);
      const list = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}`, { key: p.otherOrgWriteKey });
      expect(list.body).toMatchObject({ runs: [], total: 0 });
    });

    for (const path of ['/api/v1/stats/', '/api/v1/agents/agent-1/stats']) {
      for (const days of ['0', '-1', 'abc', '1.5', '3651']) {
        it(`rejects days=${days} with 422 naming query.days: ${path}`, async () => {
          const p = platform();
          const r = await call(p, 'GET', `${path}?days=${days}`, { key: p.readKey });
          expectProblem(r, 422);
          expect(r.body.errors.map((e: any) => e.path)).toEqual(['query.days']);
        });
      }
    }

    it('rejects format=xml with 422 listing json, jsonl and csv', async () => {
      const p = platform();
      const r = await call(p, 'GET', '/api/v1/ledger/export?format=xml', { key: p.readKey });
      expectProblem(r, 422);
      expect(r.body.errors).toEqual([expect.objectContaining({ path: 'query.format', allowed: ['json', 'jsonl', 'csv'] })]);
    });

    it('rejects an export without a format with 422', async () => {
      const p = platform();
      const r = await call(p, 'GET', '/api/v1/ledger/export', { key: p.readKey });
      expectProblem(r, 422);
      expect(r.body.errors.map((e: any) => e.path)).toEqual(['query.format']);
    });

    it('rejects an end_date before start_date with 422', async () => {
      const p = platform();
      const r = await call(p, 'GET', '/api/v1/ledger/export?format=csv&start_date=2026-03-10&end_date=2026-03-01', { key: p.readKey });
      expectProblem(r, 422);
      expect(r.body.errors.map((e: any) => e.path)).toEqual(['query.end_date']);
    });

    it('rejects an unparseable start_date with 422', async () => {
      const p = platform();
      const r = await call(p, 'GET', '/api/v1/ledger/export?format=json&start_date=yesterday', { key: p.readKey });
      expectProblem(r, 422);
      expect(r.body.errors.map((e: any) => e.path)).toEqual(['query.start_date']);
    });

    for (const path of ['/api/v1/stats/?colour=red', '/api/v1/agents/agent-1/stats?colour=red', '/api/v1/stats/daily?days=7', '/api/v1/stats/estimation-accuracy?x=1', '/api/v1/runs?colour=red', '/api/v1/ledger/export?format=json&colour=red']) {
      it(`rejects an unknown query parameter with 422: ${path}`, async () => {
        const p = platform();
        const r = await call(p, 'GET', path, { key: p.readKey });
        expectProblem(r, 422);
        expect(r.body.errors[0].message).toBe('unknown field');
      });
    }

    it('rejects runs filters with bad values with 422 naming each field', async () => {
      const p = platform();
      const r = await call(p, 'GET', '/api/v1/runs?status=paused&min_cost=-1&limit=1001', { key: p.readKey });
      expectProblem(r, 422);
      expect(r.body.errors.map((e: any) => e.path).sort()).toEqual(['query.limit', 'query.min_cost', 'query.status']);
      expect(r.body.errors.find((e: any) => e.path === 'query.status').allowed).toEqual(['running', 'completed', 'failed']);
    });
  });
});
