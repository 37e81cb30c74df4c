import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bundleHashInput, REPLAY_BUNDLE_PART_BYTES, ReplayBundleSchema } from '@agp/contracts';
import { call, eventually, type BootedPlatform, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';

const uniq = () => Math.random().toString(36).slice(2, 10);

type Ev = { id: string; type: string; timestamp: string; body: Record<string, unknown> };
const ev = (type: string, body: Record<string, unknown>, timestamp = new Date().toISOString()): Ev => ({ id: `ev-${uniq()}`, type, timestamp, body });

/** POST a batch to the ingest endpoint and require every event accepted. */
async function ingest(p: BootedPlatform, batch: Ev[], key = p.writeKey) {
  const r = await call(p, 'POST', '/api/v1/ingest/', { key, body: { batch } });
  expect(r.status).toBe(207);
  expect(r.body.errors).toEqual([]);
}

/**
 * Ingest a completed run with `actions` actions (in batches of 1000 events) and wait until the stats service has all
 * of them; answers the run id. `pad` adds that many characters to each action's inputs.
 */
async function recordRun(p: BootedPlatform, actions: number, key = p.writeKey, startedAt = new Date(Date.now() - 60_000).toISOString(), pad = 0): Promise<string> {
  const run = `run-${uniq()}`;
  const agent = `agent-${uniq()}`;
  const t0 = Date.parse(startedAt);
  const batch = [ev('run.start', { run_id: run, agent_id: agent, name: 'replayable', started_at: startedAt })];
  for (let i = 0; i < actions; i++) {
    batch.push(ev('action.record', { run_id: run, agent_id: agent, action_name: `act_${i % 3}`, status: 'success', cost_usd: 0.25 * (i + 1), actual_cost_usd: 0.3, duration_ms: 10 + i, timestamp: new Date(t0 + (i + 1) * 1000).toISOString(), inputs: { i, nested: { b: 2, a: [1, 'x'] }, ...(pad ? { pad: 'p'.repeat(pad) } : {}) }, outputs: { ok: i } }));
  }
  batch.push(ev('run.end', { run_id: run, agent_id: agent, status: 'completed', ended_at: new Date(t0 + (actions + 1) * 1000).toISOString() }));
  for (let i = 0; i < batch.length; i += 1000) await ingest(p, batch.slice(i, i + 1000), key);
  await eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${run}`, { key });
    return r.status === 200 && r.body.status === 'completed' && r.body.action_count === actions;
  }, actions > 100 ? 60_000 : undefined);
  return run;
}

const summary = (extra: Record<string, unknown> = {}) => ({
  actions_replayed: 10,
  divergences: 2,
  cost_savings: 0.1,
  status: 'partial',
  started_at: '2026-03-01T10:00:00Z',
  completed_at: '2026-03-01T10:00:01.500Z',
  client_version: 'agp-cli/0.1.0',
  divergence_details: [
    { step: 1, action_name: 'act_1', expected: { ok: 1 }, actual: { ok: 2 } },
    { step: 2, action_name: 'act_2', expected: 'a', actual: null },
  ],
  ...extra,
});

/**
 * Replay submissions, history, run bundles and analysis over real HTTP, in both run modes (embedded; distributed on
 * real NATS and PostgreSQL), with exact values, and each bad input of the replay routes. Source: spec §Replay history; docs/replay.md; docs/mcp.md.
 */
describeModes('replay', (platform) => {
  const p = () => platform();
  const submit = (run: string, body: Record<string, unknown>, key = p().writeKey) => call(p(), 'POST', `/api/v1/replay/${run}/results`, { key, body });
  const get = (path: string, key = p().readKey, headers?: Record<string, string>) => call(p(), 'GET', path, { key, headers });

  describe('submit → history → per-run history → idempotent resubmission', () => {
    it('stores a submission (201), lists it, and a repeated submission id stores nothing (200)', async () => {
      const run = await recordRun(p(), 2);
      const id = `sub-${uniq()}`;
      const r = await submit(run, summary({ id, started_at: '2026-03-01T11:00:00+01:00' }));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.headers.get('location')).toBe(`/api/v1/replay/history/${run}`);
      expect(r.body).toEqual({
        id,
        run_id: run,
        actions_replayed: 10,
        divergences: 2,
        cost_savings: 0.1,
        status: 'partial',
        started_at: '2026-03-01T10:00:00.000Z',
        completed_at: '2026-03-01T10:00:01.500Z',
        duration_ms: 1500,
        client_version: 'agp-cli/0.1.0',
        submitted_at: expect.stringMatching(/Z$/),
        divergence_details_count: 2,
        divergence_details: summary().divergence_details,
      });
      const again = await submit(run, summary({ id, cost_savings: 99 }));
      expect(again.status).toBe(200);
      expect(again.body).toEqual(r.body);
      const second = await submit(run, summary({ status: 'completed', divergences: 0, divergence_details: [], cost_savings: 0.2, actions_replayed: 5 }));
      expect(second.status).toBe(201);
      const { divergence_details: _d, ...listed } = r.body;
      const hist = await get(`/api/v1/replay/history/${run}`);
      expect(hist.status).toBe(200);
      expect(hist.body.submissions.map((s: any) => s.id)).toEqual([second.body.id, id]);
      // One run's history carries each submission's divergence details, exactly as submitted (and as POST answered).
      expect(hist.body.submissions[1]).toEqual(r.body);
      expect(hist.body.submissions[1].divergence_details).toEqual(summary().divergence_details);
      expect(hist.body.submissions[0].divergence_details).toEqual([]);
      expect(hist.body).toMatchObject({ total: 2, skip: 0, limit: 50, aggregates: { submissions: 2, actions_replayed: 15, divergences: 2, cost_saved_usd: 0.3 } });
      const org = await get('/api/v1/replay/history/');
      expect(org.status).toBe(200);
      expect(org.body.submissions.map((s: any) => s.id)).toEqual(expect.arrayContaining([id, second.body.id]));
      // The organisation-wide list keeps the count only.
      expect(org.body.submissions.find((s: any) => s.id === id)).toEqual(listed);
      const never = await get(`/api/v1/replay/history/never-${uniq()}`);
      expect(never.body).toEqual({ submissions: [], total: 0, skip: 0, limit: 50, aggregates: { submissions: 0, actions_replayed: 0, divergences: 0, cost_saved_usd: 0 } });
    });

    it("computes the organisation's aggregates exactly, newest first (organisation globex, used only here)", async () => {
      const key = p().otherOrgWriteKey;
      const run = await recordRun(p(), 1, key);
      const ids: string[] = [];
      for (const [n, d, usd] of [[3, 1, 0.1], [4, 0, 0.2], [7, 7, 1.05]] as const) {
        const r = await submit(run, summary({ actions_replayed: n, divergences: d, cost_savings: usd, status: d === 0 ? 'completed' : d === n ? 'diverged' : 'partial', divergence_details: [] }), key);
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        ids.push(r.body.id);
      }
      const h = await call(p(), 'GET', '/api/v1/replay/history', { key });
      expect(h.body.submissions.map((s: any) => s.id)).toEqual([...ids].reverse());
      expect(h.body.aggregates).toEqual({ submissions: 3, actions_replayed: 14, divergences: 8, cost_saved_usd: 1.35 });
      const page = await call(p(), 'GET', '/api/v1/replay/history?skip=1&limit=1', { key });
      expect(page.body).toMatchObject({ total: 3, skip: 1, limit: 1, aggregates: { submissions: 3 } });
      expect(page.body.submissions.map((s: any) => s.id)).toEqual([ids[1]]);
    });

    it('pages at the 200 limit: limit=200 answers 200 submissions, skip continues, limit=201 is a 422', async () => {
      const run = await recordRun(p(), 0);
      const ids: string[] = [];
      for (let b = 0; b < 201; b += 25) {
        const rs = await Promise.all(Array.from({ length: Math.min(25, 201 - b) }, () => submit(run, summary({ status: 'completed', divergences: 0, divergence_details: [], actions_replayed: 1, cost_savings: 0.5 }))));
        for (const r of rs) expect(r.status).toBe(201);
        ids.push(...rs.map((r) => r.body.id));
      }
      const first = await get(`/api/v1/replay/history/${run}?limit=200`);
      expect(first.status).toBe(200);
      expect(first.body.submissions).toHaveLength(200);
      expect(first.body.aggregates).toEqual({ submissions: 201, actions_replayed: 201, divergences: 0, cost_saved_usd: 100.5 });
      const rest = await get(`/api/v1/replay/history/${run}?skip=200&limit=200`);
      expect(rest.body.submissions).toHaveLength(1);
      expect(new Set([...first.body.submissions, ...rest.body.submissions].map((s: any) => s.id))).toEqual(new Set(ids));
      const times = first.body.submissions.map((s: any) => s.submitted_at);
      expect([...times].sort().reverse()).toEqual(times);
      expectProblem(await get(`/api/v1/replay/history/${run}?limit=201`), 422, ['query.limit']);
      expectProblem(await get('/api/v1/replay/history?limit=201'), 422, ['query.limit']);
      expect((await get('/api/v1/replay/history?limit=200')).status).toBe(200);
    });

    it('the MCP tool get_replay_history answers the same page', async () => {
      const run = await recordRun(p(), 0);
      const r = await submit(run, summary({ status: 'failed', divergences: 0, divergence_details: [] }));
      const tool = await call(p(), 'POST', '/api/v1/mcp/call', { key: p().readKey, body: { tool_name: 'get_replay_history', arguments: { run_id: run } } });
      expect(tool.status, JSON.stringify(tool.body)).toBe(200);
      expect(tool.body.data).toEqual((await get(`/api/v1/replay/history/${run}`)).body);
      expect(tool.body.data.submissions.map((s: any) => s.id)).toEqual([r.body.id]);
    });
  });

  describe('bundle', () => {
    it("holds the recorded run exactly: every action in order, its interventions, the policy versions in force; its sha256 verifies; ETag and 304", async () => {
      const tag = uniq();
      const before = await call(p(), 'POST', '/api/v1/policies', { key: p().writeKey, body: { name: `in-force-${tag}`, denied_actions: ['drop_table'], run_budget: 5 } });
      expect(before.status, JSON.stringify(before.body)).toBe(201);
      await new Promise((r) => setTimeout(r, 20));
      const startedAt = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 20));
      const run = await recordRun(p(), 5, p().writeKey, startedAt);
      const patched = await call(p(), 'PATCH', `/api/v1/policies/${before.body.id}`, { key: p().writeKey, body: { run_budget: 50 }, headers: { 'if-match': before.headers.get('etag')! } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      const later = await call(p(), 'POST', '/api/v1/policies', { key: p().writeKey, body: { name: `later-${tag}` } });
      expect(later.status).toBe(201);
      const i1 = await call(p(), 'POST', '/api/v1/interventions', { key: p().writeKey, body: { type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', agent_id: 'a', run_id: run } });
      expect(i1.status, JSON.stringify(i1.body)).toBe(201);

      const r = await get(`/api/v1/replay/${run}/bundle`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const bundle = ReplayBundleSchema.parse(r.body);
      expect(r.headers.get('etag')).toBe(`"${bundle.sha256}"`);
      expect(createHash('sha256').update(bundleHashInput(r.body)).digest('hex')).toBe(bundle.sha256);
      const tampered = { ...r.body, actions: r.body.actions.map((a: any, i: number) => (i === 0 ? { ...a, outputs: { ok: 'x' } } : a)) };
      expect(createHash('sha256').update(bundleHashInput(tampered)).digest('hex')).not.toBe(bundle.sha256);

      const recorded = (await get(`/api/v1/runs/${run}`)).body;
      const { actions, actions_total: _t, actions_skip: _s, actions_limit: _l, ...runOnly } = recorded;
      expect(r.body.bundle_version).toBe(1);
      expect(r.body.run).toEqual(runOnly);
      expect(r.body.actions).toEqual(actions);
      expect(r.body.actions.map((a: any) => a.inputs.i)).toEqual([0, 1, 2, 3, 4]);
      const listed = (await get(`/api/v1/interventions?run_id=${run}`)).body.interventions;
      expect(listed.map((x: any) => x.id)).toEqual([i1.body.id]);
      expect(r.body.interventions).toEqual(listed);
      const v1 = (await get(`/api/v1/policies/${before.body.id}?version=1`)).body;
      expect(r.body.policies.find((x: any) => x.id === before.body.id)).toEqual(v1);
      expect(v1.run_budget).toBe(5);
      expect(r.body.policies.some((x: any) => x.id === later.body.id)).toBe(false);

      const cached = await get(`/api/v1/replay/${run}/bundle`, p().readKey, { 'if-none-match': r.headers.get('etag')! });
      expect(cached.status).toBe(304);
      expect(cached.body).toBeNull();
      const other = await get(`/api/v1/replay/${run}/bundle`, p().readKey, { 'if-none-match': '"nope"' });
      expect(other.status).toBe(200);
      expect(other.body.sha256).toBe(bundle.sha256);
    });

    it('holds every action of a run larger than one bus message, in order, fetched from the replay service in parts', async () => {
      // ~1100 actions of ~1 KiB: over one part (768 KiB) and over one page of runs.get (1000 actions).
      const run = await recordRun(p(), 1100, p().writeKey, undefined, 500);
      const r = await get(`/api/v1/replay/${run}/bundle`);
      expect(r.status).toBe(200);
      expect(Number(r.headers.get('content-length') ?? 0) || JSON.stringify(r.body).length).toBeGreaterThan(REPLAY_BUNDLE_PART_BYTES);
      const bundle = ReplayBundleSchema.parse(r.body);
      expect(bundle.actions.map((a: any) => a.inputs.i)).toEqual(Array.from({ length: 1100 }, (_, i) => i));
      expect(createHash('sha256').update(bundleHashInput(r.body)).digest('hex')).toBe(bundle.sha256);
      expect(r.headers.get('etag')).toBe(`"${bundle.sha256}"`);
    }, 120_000);

    it('answers a valid empty bundle for a run with no actions', async () => {
      const run = await recordRun(p(), 0);
      const r = await get(`/api/v1/replay/${run}/bundle`);
      expect(r.status).toBe(200);
      const bundle = ReplayBundleSchema.parse(r.body);
      expect(bundle.actions).toEqual([]);
      expect(bundle.interventions).toEqual([]);
      expect(bundle.run).toMatchObject({ id: run, action_count: 0 });
      expect(createHash('sha256').update(bundleHashInput(r.body)).digest('hex')).toBe(bundle.sha256);
    });
  });

  describe('analysis', () => {
    it('counts divergences by step and action, the rate and the trend over several submissions exactly', async () => {
      const run = await recordRun(p(), 3);
      const d = (step: number, action_name: string) => ({ step, action_name, expected: 1, actual: 2 });
      const subs = [
        summary({ actions_replayed: 3, divergences: 2, status: 'partial', divergence_details: [d(1, 'act_1'), d(2, 'act_2')] }),
        summary({ actions_replayed: 3, divergences: 1, status: 'partial', divergence_details: [d(1, 'act_1')] }),
        summary({ actions_replayed: 3, divergences: 0, status: 'completed', divergence_details: [] }),
        summary({ actions_replayed: 2, divergences: 2, status: 'diverged', divergence_details: [d(1, 'act_1'), d(0, 'act_0')] }),
      ];
      const ids: string[] = [];
      for (const s of subs) ids.push((await submit(run, s)).body.id);
      const r = await get(`/api/v1/replay/${run}/analysis`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({
        run_id: run,
        aggregates: { submissions: 4, actions_replayed: 11, divergences: 5, cost_saved_usd: 0.4 },
        divergence_rate: 5 / 11,
        by_status: { completed: 1, partial: 2, diverged: 1, failed: 0 },
        by_step: [
          { step: 1, action_name: 'act_1', divergences: 3, submissions: 3, share: 0.75 },
          { step: 0, action_name: 'act_0', divergences: 1, submissions: 1, share: 0.25 },
          { step: 2, action_name: 'act_2', divergences: 1, submissions: 1, share: 0.25 },
        ],
        by_action: [
          { action_name: 'act_1', divergences: 3, submissions: 3, share: 0.75 },
          { action_name: 'act_0', divergences: 1, submissions: 1, share: 0.25 },
          { action_name: 'act_2', divergences: 1, submissions: 1, share: 0.25 },
        ],
      });
      expect(r.body.trend.map((t: any) => [t.submission_id, t.divergences, t.rate])).toEqual([
        [ids[0], 2, 2 / 3],
        [ids[1], 1, 1 / 3],
        [ids[2], 0, 0],
        [ids[3], 2, 1],
      ]);
      expectProblem(await get(`/api/v1/replay/missing-${uniq()}/analysis`), 404);
    });
  });

  describe('bad input', () => {
    it('an unknown run: 404 on submit and bundle, and nothing is stored', async () => {
      const run = `missing-${uniq()}`;
      expectProblem(await submit(run, summary()), 404);
      expectProblem(await get(`/api/v1/replay/${run}/bundle`), 404);
      expect((await get(`/api/v1/replay/history/${run}`)).body.total).toBe(0);
    });

    it("another organisation's run: 404", async () => {
      const run = await recordRun(p(), 1);
      expectProblem(await submit(run, summary(), p().otherOrgWriteKey), 404);
      expectProblem(await call(p(), 'GET', `/api/v1/replay/${run}/bundle`, { key: p().otherOrgWriteKey }), 404);
      expectProblem(await call(p(), 'GET', `/api/v1/replay/${run}/analysis`, { key: p().otherOrgWriteKey }), 404);
    });

    describe('422 naming the field', () => {
      let run: string;
      it.each([
        ['negative actions_replayed', { actions_replayed: -1 }, 'body.actions_replayed'],
        ['negative divergences', { divergences: -1 }, 'body.divergences'],
        ['negative cost_savings', { cost_savings: -0.01 }, 'body.cost_savings'],
        ['divergences above actions_replayed', { actions_replayed: 1, divergences: 2, divergence_details: [] }, 'body.divergences'],
        ['an unknown status', { status: 'weird' }, 'body.status'],
        ['completed_at before started_at', { completed_at: '2026-02-01T00:00:00Z' }, 'body.completed_at'],
      ])('%s', async (_name, patch, field) => {
        run ??= await recordRun(p(), 0);
        const r = await submit(run, summary(patch));
        expectProblem(r, 422);
        expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(field);
        expect((await get(`/api/v1/replay/history/${run}`)).body.total).toBe(0);
      });
    });

    it('a read key submitting: 403, and nothing is stored', async () => {
      const run = await recordRun(p(), 0);
      expectProblem(await submit(run, summary(), p().readKey), 403);
      expect((await get(`/api/v1/replay/history/${run}`)).body.total).toBe(0);
    });
  });
});
