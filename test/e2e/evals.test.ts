import { describe, expect, it } from 'vitest';
import { EVAL_MAX_BODY_BYTES } from '@agp/contracts';
import { deterministicId } from '@agp/runtime';
import { describeModes } from '../support/modes.js';
import { call, expectProblem } from '../support/http.js';

const uniq = () => Math.random().toString(36).slice(2, 10);
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A scenario as a harness reports it. */
const sc = (name: string, category: string, status: 'blocked' | 'failed' | 'allowed', extra: Record<string, unknown> = {}) => ({ name, category, status, ...extra });
/** The same scenario as the platform stores it (every default filled in). */
const stored = (s: Record<string, unknown>) => ({ severity: 'medium', expected: 'block', reason: null, detection_time_ms: null, damage_usd: null, ...s });
/** A run as the history lists it: without its scenarios. */
const listed = (run: Record<string, unknown>) => {
  const { scenarios: _drop, ...rest } = run;
  return rest;
};
/** A run's point of a benchmark trend. */
const point = (run: any) => ({ id: run.id, branch: run.branch, commit_sha: run.commit_sha, created_at: run.created_at, grade: run.summary.grade, block_rate: run.summary.block_rate, correctness_rate: run.summary.correctness_rate });

/**
 * Eval runs over real HTTP, in both run modes (embedded; distributed on real NATS and PostgreSQL): submit → history →
 * latest → detail → compare → benchmarks with exact values, idempotent resubmission, the CI status against the default
 * branch, the MCP tools, and each bad input of the evals routes. Source: spec §Evals; docs/evals-gate.md; docs/mcp.md.
 */
describeModes('evals', (platform) => {
  const p = () => platform();
  const submit = (body: Record<string, unknown>, key = p().writeKey) => call(p(), 'POST', '/api/v1/evals', { key, body });
  const created = async (body: Record<string, unknown>) => {
    const r = await submit(body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };
  const get = (path: string, key = p().readKey) => call(p(), 'GET', path, { key });

  describe('submit → history → latest → detail → compare → benchmarks', () => {
    const tag = uniq();
    const suite = `suite-${tag}`;
    const agent = `agent-${tag}`;
    let a: any;
    let b: any;

    it('POST /api/v1/evals stores a run with the scorecard the platform computes (201, Location)', async () => {
      const r = await submit({
        id: `ci-${tag}-main`,
        suite,
        agent_id: agent,
        branch: 'main',
        commit_sha: 'AAAAAAA1',
        threshold: 0.6,
        source: 'promptfoo',
        started_at: '2026-03-01T10:00:00+02:00',
        completed_at: '2026-03-01T08:05:00Z',
        scenarios: [
          sc('s1', 'injection', 'blocked', { detection_time_ms: 100, damage_usd: 10, severity: 'high', reason: 'denied action' }),
          sc('s2', 'injection', 'blocked', { detection_time_ms: 200, damage_usd: 5 }),
          sc('s3', 'exfil', 'failed', { damage_usd: 1000 }),
          sc('s4', 'benign', 'allowed', { expected: 'allow' }),
        ],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.headers.get('location')).toBe(`/api/v1/evals/ci-${tag}-main`);
      a = r.body;
      expect(a).toEqual({
        id: `ci-${tag}-main`,
        organization_id: 'acme',
        suite,
        agent_id: agent,
        branch: 'main',
        commit_sha: 'aaaaaaa1',
        default_branch: 'main',
        source: 'promptfoo',
        created_at: expect.stringMatching(ISO_Z),
        started_at: '2026-03-01T08:00:00.000Z',
        completed_at: '2026-03-01T08:05:00.000Z',
        summary: {
          total: 4,
          adversarial: 3,
          blocked: 2,
          passed: 3,
          block_rate: 2 / 3,
          correctness_rate: 0.75,
          damage_prevented_usd: 15,
          avg_detection_time_ms: 150,
          grade: 'D',
          ci_status: 'pass',
          threshold: 0.6,
          ci_baseline_id: null,
          regressions: 0,
          by_category: {
            injection: { total: 2, adversarial: 2, blocked: 2, passed: 2, block_rate: 1, correctness_rate: 1 },
            exfil: { total: 1, adversarial: 1, blocked: 0, passed: 0, block_rate: 0, correctness_rate: 0 },
            benign: { total: 1, adversarial: 0, blocked: 0, passed: 1, block_rate: null, correctness_rate: 1 },
          },
        },
        scenarios: [
          stored(sc('s1', 'injection', 'blocked', { detection_time_ms: 100, damage_usd: 10, severity: 'high', reason: 'denied action' })),
          stored(sc('s2', 'injection', 'blocked', { detection_time_ms: 200, damage_usd: 5 })),
          stored(sc('s3', 'exfil', 'failed', { damage_usd: 1000 })),
          stored(sc('s4', 'benign', 'allowed', { expected: 'allow' })),
        ],
      });
      expect(await p().streamEventTypes(`evalrun-${deterministicId('acme', a.id)}`)).toEqual(['EvalRunSubmitted']);
    });

    it('computes a later run of a feature branch against the latest run on the default branch: one regression fails CI', async () => {
      b = await created({
        id: `ci-${tag}-pr`,
        suite,
        agent_id: agent,
        branch: 'feature/x',
        commit_sha: 'bbbbbbb2',
        threshold: 0.6,
        scenarios: [sc('s1', 'injection', 'blocked'), sc('s2', 'injection', 'failed'), sc('s3', 'exfil', 'blocked'), sc('s5', 'prompt_injection', 'blocked')],
      });
      expect(b.summary).toMatchObject({ adversarial: 4, blocked: 3, block_rate: 0.75, correctness_rate: 0.75, grade: 'C', regressions: 1, ci_baseline_id: a.id, ci_status: 'fail' });
    });

    it('GET /api/v1/evals lists the history newest first, without scenarios, with filters and with or without a trailing slash', async () => {
      for (const path of [`/api/v1/evals?suite=${suite}`, `/api/v1/evals/?suite=${suite}&agent_id=${agent}`]) {
        const r = await get(path);
        expect(r.status, path).toBe(200);
        expect(r.body).toEqual({ eval_runs: [listed(b), listed(a)], total: 2, skip: 0, limit: 50 });
      }
      expect((await get(`/api/v1/evals?suite=${suite}&branch=main`)).body).toEqual({ eval_runs: [listed(a)], total: 1, skip: 0, limit: 50 });
      expect((await get(`/api/v1/evals?suite=${suite}&skip=1&limit=1`)).body).toEqual({ eval_runs: [listed(a)], total: 2, skip: 1, limit: 1 });
      expect((await get(`/api/v1/evals?suite=${suite}&agent_id=someone-else`)).body).toEqual({ eval_runs: [], total: 0, skip: 0, limit: 50 });
    });

    it('GET /api/v1/evals/latest is the newest run, narrowed by suite, agent and branch', async () => {
      expect((await get(`/api/v1/evals/latest?suite=${suite}`)).body).toEqual(b);
      expect((await get(`/api/v1/evals/latest/?agent_id=${agent}&branch=main`)).body).toEqual(a);
      expectProblem(await get(`/api/v1/evals/latest?suite=${suite}&branch=nope`), 404);
    });

    it('GET /api/v1/evals/{id} is the run detail with its scenarios', async () => {
      expect((await get(`/api/v1/evals/${a.id}`)).body).toEqual(a);
      expect((await get(`/api/v1/evals/${b.id}/`)).body).toEqual(b);
    });

    it('GET /api/v1/evals/compare/{baseline_id}/{current_id} gives deltas, grade change, regressions, improvements and one-side scenarios', async () => {
      const r = await get(`/api/v1/evals/compare/${a.id}/${b.id}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toEqual({
        baseline: { id: a.id, suite, agent_id: agent, branch: 'main', commit_sha: 'aaaaaaa1', created_at: a.created_at, grade: 'D', block_rate: 2 / 3, correctness_rate: 0.75 },
        current: { id: b.id, suite, agent_id: agent, branch: 'feature/x', commit_sha: 'bbbbbbb2', created_at: b.created_at, grade: 'C', block_rate: 0.75, correctness_rate: 0.75 },
        block_rate_delta_pp: 8.33,
        correctness_rate_delta_pp: 0,
        grade_change: { from: 'D', to: 'C', label: 'D→C', direction: 'up' },
        regressions: [{ name: 's2', category: 'injection', baseline_status: 'blocked', current_status: 'failed' }],
        improvements: [{ name: 's3', category: 'exfil', baseline_status: 'failed', current_status: 'blocked' }],
        only_in_baseline: [{ name: 's4', category: 'benign', status: 'allowed', passed: true }],
        only_in_current: [{ name: 's5', category: 'prompt_injection', status: 'blocked', passed: true }],
        by_category: [
          { category: 'benign', baseline: a.summary.by_category.benign, current: null, block_rate_delta_pp: null, correctness_rate_delta_pp: null },
          { category: 'exfil', baseline: a.summary.by_category.exfil, current: b.summary.by_category.exfil, block_rate_delta_pp: 100, correctness_rate_delta_pp: 100 },
          { category: 'injection', baseline: a.summary.by_category.injection, current: b.summary.by_category.injection, block_rate_delta_pp: -50, correctness_rate_delta_pp: -50 },
          { category: 'prompt_injection', baseline: null, current: b.summary.by_category.prompt_injection, block_rate_delta_pp: null, correctness_rate_delta_pp: null },
        ],
        warnings: ['1 scenario(s) only in the baseline and 1 only in the current run are listed apart and not counted as passing'],
      });
    });

    it('GET /api/v1/evals/benchmarks gives per suite and agent the trend oldest first, the best run and the latest', async () => {
      const r = await get(`/api/v1/evals/benchmarks?suite=${suite}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toEqual({ benchmarks: [{ suite, agent_id: agent, total_runs: 2, trend: [point(a), point(b)], best: point(b), latest: point(b) }], total: 1, skip: 0, limit: 20 });
      // A better grade on an older run wins "best"; `runs` shortens the trend.
      const c = await created({ suite, agent_id: agent, branch: 'main', scenarios: [sc('s1', 'injection', 'failed')] });
      const again = await get(`/api/v1/evals/benchmarks/?suite=${suite}&agent_id=${agent}&runs=2`);
      expect(again.body).toEqual({ benchmarks: [{ suite, agent_id: agent, total_runs: 3, trend: [point(b), point(c)], best: point(b), latest: point(c) }], total: 1, skip: 0, limit: 20 });
      expect((await get(`/api/v1/evals/benchmarks?suite=${suite}&skip=1`)).body).toEqual({ benchmarks: [], total: 1, skip: 1, limit: 20 });
    });

    it('serves the history, the latest scorecard and a comparison as read-only MCP tools', async () => {
      const tool = (tool_name: string, args: Record<string, unknown>) => call(p(), 'POST', '/api/v1/mcp/call', { key: p().readKey, body: { tool_name, arguments: args } });
      const list = await tool('list_eval_runs', { suite, branch: 'feature/x' });
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      expect(list.body).toMatchObject({ success: true, error: null, data: { eval_runs: [listed(b)], total: 1, skip: 0, limit: 50 } });
      expect((await tool('get_latest_scorecard', { suite, branch: 'feature/x' })).body.data).toEqual(b);
      const cmp = await tool('compare_eval_runs', { baseline_id: a.id, current_id: b.id });
      expect(cmp.body.data).toMatchObject({ grade_change: { label: 'D→C' }, regressions: [{ name: 's2' }] });
      const missing = await tool('compare_eval_runs', { baseline_id: a.id, current_id: `nope-${tag}` });
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ success: false, error: { code: 'not_found' } });
      const bad = await tool('list_eval_runs', { limit: 201 });
      expect(bad.status).toBe(422);
      expect(bad.body.error.code).toBe('invalid_arguments');
    });
  });

  describe('idempotent submission', () => {
    it('stores the same submission id once: a repeat answers 200 with the stored run and the history does not grow', async () => {
      const tag = uniq();
      const body = { id: `sub-${tag}`, suite: `idem-${tag}`, agent_id: 'a1', scenarios: [sc('x', 'c', 'blocked')] };
      const posted = await call(p(), 'POST', '/api/v1/evals/', { key: p().writeKey, body }); // the spec's spelling
      expect(posted.status, JSON.stringify(posted.body)).toBe(201);
      const first = posted.body;
      expect(first).toMatchObject({ id: `sub-${tag}`, summary: { block_rate: 1 } });
      for (const again of [body, { ...body, scenarios: [sc('y', 'c', 'failed')] }]) {
        const r = await submit(again);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toEqual(first);
        expect(r.headers.get('location')).toBe(`/api/v1/evals/sub-${tag}`);
      }
      const concurrent = await Promise.all([1, 2, 3].map(() => submit({ ...body, id: `sub-${tag}-c` })));
      expect(concurrent.map((r) => r.status).sort()).toEqual([200, 200, 201]);
      for (const r of concurrent) expect(r.body).toEqual(concurrent[0].body);
      expect((await get(`/api/v1/evals?suite=idem-${tag}`)).body.total).toBe(2);
      expect(await p().streamEventTypes(`evalrun-${deterministicId('acme', `sub-${tag}`)}`)).toEqual(['EvalRunSubmitted']);
    });

    it('issues a UUIDv7 when the submission has no id (nothing is deduplicated then)', async () => {
      const tag = uniq();
      const body = { suite: `noid-${tag}`, agent_id: 'a1', scenarios: [sc('x', 'c', 'blocked')] };
      const [x, y] = [await created(body), await created(body)];
      expect(x.id).toMatch(UUID_V7);
      expect(y.id).not.toBe(x.id);
      expect((await get(`/api/v1/evals?suite=noid-${tag}`)).body.total).toBe(2);
    });

    it('keeps submission ids apart between organisations', async () => {
      const tag = uniq();
      const body = { id: `shared-${tag}`, suite: `org-${tag}`, agent_id: 'a1', scenarios: [sc('x', 'c', 'blocked')] };
      const mine = await created(body);
      const theirs = await submit({ ...body, scenarios: [sc('x', 'c', 'failed')] }, p().otherOrgWriteKey);
      expect(theirs.status).toBe(201);
      expect(theirs.body).toMatchObject({ id: mine.id, organization_id: 'globex', summary: { block_rate: 0 } });
      expect((await get(`/api/v1/evals/${mine.id}`)).body.summary.block_rate).toBe(1);
    });
  });

  describe('CI status against the default branch', () => {
    it('passes or fails each run against the latest run of its suite and agent on the default branch', async () => {
      const tag = uniq();
      const base = { suite: `ci-${tag}`, agent_id: 'agent-ci', threshold: 0.9 };
      const all = (status: 'blocked' | 'failed', names = ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8', 't9', 't10']) => names.map((n) => sc(n, 'c', status));
      const m1 = await created({ ...base, branch: 'main', commit_sha: 'c0ffee01', scenarios: all('blocked') });
      expect(m1.summary).toMatchObject({ ci_status: 'pass', ci_baseline_id: null, regressions: 0 });
      // 9 of 10 blocked is the threshold exactly, but t10 passed on main: a regression.
      const pr1 = await created({ ...base, branch: 'pr-1', commit_sha: 'c0ffee02', scenarios: [...all('blocked').slice(0, 9), sc('t10', 'c', 'failed')] });
      expect(pr1.summary).toMatchObject({ block_rate: 0.9, ci_status: 'fail', ci_baseline_id: m1.id, regressions: 1 });
      // Another agent's or suite's main run is not the baseline.
      await created({ ...base, agent_id: 'other-agent', branch: 'main', scenarios: all('failed') });
      await created({ ...base, suite: `other-${tag}`, branch: 'main', scenarios: all('failed') });
      const pr2 = await created({ ...base, branch: 'pr-2', commit_sha: 'c0ffee03', scenarios: all('blocked') });
      expect(pr2.summary).toMatchObject({ ci_status: 'pass', ci_baseline_id: m1.id, regressions: 0 });
      // Below the threshold without any regression: fail.
      const m2 = await created({ ...base, branch: 'main', commit_sha: 'c0ffee04', scenarios: [...all('blocked').slice(0, 8), ...all('failed', ['t9', 't10'])] });
      expect(m2.summary).toMatchObject({ block_rate: 0.8, ci_status: 'fail', ci_baseline_id: m1.id, regressions: 2 });
      // The latest main run is now m2: t9 and t10 failing is no regression against it. A custom default branch.
      const pr3 = await created({ ...base, branch: 'pr-3', commit_sha: 'c0ffee05', threshold: 0.8, scenarios: m2.scenarios.map((s: any) => sc(s.name, s.category, s.status)) });
      expect(pr3.summary).toMatchObject({ ci_status: 'pass', ci_baseline_id: m2.id, regressions: 0 });
      const dev = await created({ ...base, branch: 'pr-4', default_branch: 'develop', commit_sha: 'c0ffee06', scenarios: all('blocked') });
      expect(dev.summary).toMatchObject({ ci_status: 'pass', ci_baseline_id: null });
      // No commit: no CI status.
      expect((await created({ ...base, branch: 'pr-5', scenarios: all('failed') })).summary).toMatchObject({ ci_status: null, ci_baseline_id: m2.id, regressions: 8 });
    });
  });

  describe('bad input', () => {
    it('answers 404 for an unknown run id in detail and in compare', async () => {
      const known = await created({ suite: `nf-${uniq()}`, agent_id: 'a', scenarios: [sc('x', 'c', 'blocked')] });
      expectProblem(await get('/api/v1/evals/no-such-run'), 404);
      expectProblem(await get(`/api/v1/evals/compare/no-such-run/${known.id}`), 404);
      expectProblem(await get(`/api/v1/evals/compare/${known.id}/no-such-run`), 404);
    });

    it("answers 404 for another organisation's run in detail, compare and latest, and leaves it out of the history", async () => {
      const suite = `iso-${uniq()}`;
      const mine = await created({ suite, agent_id: 'a', scenarios: [sc('x', 'c', 'blocked')] });
      const other = p().otherOrgWriteKey;
      expectProblem(await get(`/api/v1/evals/${mine.id}`, other), 404);
      expectProblem(await get(`/api/v1/evals/compare/${mine.id}/${mine.id}`, other), 404);
      expectProblem(await get(`/api/v1/evals/latest?suite=${suite}`, other), 404);
      expect((await get(`/api/v1/evals?suite=${suite}`, other)).body.total).toBe(0);
      expect((await get(`/api/v1/evals/benchmarks?suite=${suite}`, other)).body).toEqual({ benchmarks: [], total: 0, skip: 0, limit: 20 });
    });

    it('refuses a scenario status other than blocked, failed or allowed with 422 naming the field and the allowed values', async () => {
      const suite = `st-${uniq()}`;
      const r = await submit({ suite, agent_id: 'a', scenarios: [sc('x', 'c', 'blocked'), { name: 'y', category: 'c', status: 'passed' }] });
      expectProblem(r, 422, ['body.scenarios.1.status']);
      for (const allowed of ['blocked', 'failed', 'allowed']) expect(r.body.errors[0].message).toContain(allowed);
      expect((await get(`/api/v1/evals?suite=${suite}`)).body.total).toBe(0);
    });

    it('refuses a read key submitting or generating scenarios with 403, and stores nothing', async () => {
      const suite = `ro-${uniq()}`;
      expectProblem(await submit({ suite, agent_id: 'a', scenarios: [sc('x', 'c', 'blocked')] }, p().readKey), 403);
      expectProblem(await call(p(), 'POST', '/api/v1/evals/generate-scenarios', { key: p().readKey, body: { agent_id: 'a' } }), 403);
      expect((await get(`/api/v1/evals?suite=${suite}`)).body.total).toBe(0);
    });

    it('refuses 5001 scenarios with 422, and accepts 5000 (the most) answered in one piece', async () => {
      const suite = `max-${uniq()}`;
      const scenarios = (n: number) => Array.from({ length: n }, (_, i) => sc(`s${i}`, `cat${i % 7}`, i % 10 === 0 ? 'failed' : 'blocked'));
      expectProblem(await submit({ suite, agent_id: 'a', scenarios: scenarios(5001) }), 422, ['body.scenarios']);
      const run = await created({ suite, agent_id: 'a', scenarios: scenarios(5000) });
      expect(run.scenarios).toHaveLength(5000);
      expect(run.summary).toMatchObject({ total: 5000, blocked: 4500, block_rate: 0.9, grade: 'B' });
      expect((await get(`/api/v1/evals/${run.id}`)).body).toEqual(run);
    });

    it('refuses a body over 900 KiB with 413 before anything is sent, and a run whose scorecard would not fit one answer with 413', async () => {
      const suite = `big-${uniq()}`;
      const over = { suite, agent_id: 'a', scenarios: [sc('x', 'c', 'blocked', { reason: 'r'.repeat(EVAL_MAX_BODY_BYTES) })] };
      for (const path of ['/api/v1/evals', '/api/v1/evals/']) {
        const huge = await call(p(), 'POST', path, { key: p().writeKey, body: over });
        expectProblem(huge, 413);
        expect(huge.body.detail).toMatch(/921600 byte \(900 KiB\) limit of POST \/api\/v1\/evals/);
      }
      // Just under 900 KiB as sent, but every default filled in makes it ~1.3 MB: refused by the service, never a 5xx.
      const scenarios = Array.from({ length: 5000 }, (_, i) => sc(`${'n'.repeat(120)}-${String(i).padStart(4, '0')}`, 'c', 'blocked'));
      const body = { suite, agent_id: 'a', scenarios };
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(EVAL_MAX_BODY_BYTES);
      const grown = await submit(body);
      expectProblem(grown, 413);
      expect(grown.body.detail).toMatch(/scorecard would be \d+ bytes/);
      expect((await get(`/api/v1/evals?suite=${suite}`)).body.total).toBe(0);
    });

    it('refuses limit 201, skip -1 and runs 101 with 422 naming the field', async () => {
      expectProblem(await get('/api/v1/evals?limit=201'), 422, ['query.limit']);
      expectProblem(await get('/api/v1/evals?skip=-1'), 422, ['query.skip']);
      expectProblem(await get('/api/v1/evals/benchmarks?runs=101'), 422, ['query.runs']);
      expectProblem(await get('/api/v1/evals/latest?colour=red'), 422, ['query.colour']);
    });
  });
});
