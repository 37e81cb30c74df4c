import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionCostUsd, type LedgerEntry } from '@agp/contracts';
import { REPO_ROOT, buildCliAndBootEmbedded, runCli as agp } from '../support/cli.js';
import { call, eventually, type BootedPlatform } from '../support/http.js';

/**
 * A simulated run replayed and evaluated as a newcomer runs it (docs/replay.md): a fresh embedded
 * platform filled by `agp simulate`, then `agp replay <a simulated run> --handlers examples/replay-handlers.mjs`, both
 * the built CLI as child processes. The example handlers reproduce every simulated output from its inputs except
 * generate_report's (non-deterministic, skipped): exit 0, status completed, and the organisation's history shows the
 * submission with aggregates equal to the run's replayed actions and their recorded cost (USD).
 */
const HANDLERS = join(REPO_ROOT, 'examples/replay-handlers.mjs');
/** A fixed seed, so the same runs come back on every machine; one of them mixes generate_report with other actions. */
const SEED = '20261124';

describe('agp simulate, then agp replay of a simulated run with the example handlers (built CLI, embedded platform)', () => {
  let p: BootedPlatform;
  const get = async (path: string) => {
    const r = await call(p, 'GET', path, { key: p.readKey });
    expect(r.status, path).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    p = await buildCliAndBootEmbedded();
  }, 180_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('replays with no divergence, skips generate_report as non-deterministic, and the history aggregates add up', async () => {
    const sim = await agp(['simulate', '--url', p.url, '--key', p.writeKey, '--agents', '4', '--rate', '2000', '--duration', '0.5', '--seed', SEED, '--backfill-days', '7', '--quiet', '--json']);
    expect(sim.code, sim.err).toBe(0);
    const report = JSON.parse(sim.out);
    expect(report).toMatchObject({ seed: Number(SEED), created: 1000, rejected: 0 });
    await eventually(async () => (await get('/api/v1/stats/')).total_actions === report.by_event_type['action.record'], 30_000);
    await eventually(async () => (await get('/api/v1/runs?status=completed&limit=1')).total + (await get('/api/v1/runs?status=failed&limit=1')).total === report.by_event_type['run.end'], 30_000);

    // The newest completed run that has a generate_report among other actions (the README takes the newest completed one).
    const completed = (await get('/api/v1/runs?status=completed&limit=1000')).runs as Array<{ id: string; action_count: number }>;
    let run: { id: string; actions: LedgerEntry[] } | undefined;
    for (const r of completed.filter((x) => x.action_count > 1)) {
      const detail = await get(`/api/v1/runs/${r.id}`);
      const names = detail.actions.map((a: LedgerEntry) => a.action_name);
      if (names.includes('generate_report') && names.some((n: string) => n !== 'generate_report')) {
        run = detail;
        break;
      }
    }
    expect(run, 'a completed simulated run with generate_report and another action').toBeDefined();
    const { id, actions } = run!;
    const replayed = actions.filter((a) => a.action_name !== 'generate_report');
    const skipped = actions.length - replayed.length;
    const saved = Math.round(replayed.reduce((s, a) => s + actionCostUsd(a), 0) * 1e6) / 1e6;

    const r = await agp(['replay', id, '--url', p.url, '--key', p.writeKey, '--handlers', HANDLERS, '--submission-id', `sim-${id}`]);
    expect(r.code, r.err + r.out).toBe(0);
    expect(r.err).toContain(`bundle of run ${id} verified`);
    expect(r.err).toMatch(/^step \d+ generate_report: skipped \(non-deterministic\)$/m);
    expect(r.err).not.toMatch(/DIVERGED|no handler/);
    expect(r.err.match(/: match$/gm)).toHaveLength(replayed.length);
    expect(r.out).toContain(`replay of run ${id}: completed`);
    expect(r.out).toContain(`actions: ${actions.length} (replayed ${replayed.length}, skipped 0 without handler, ${skipped} non-deterministic)`);
    expect(r.out).toContain(`submitted: sim-${id}`);

    const history = await eventually(async () => {
      const h = await get('/api/v1/replay/history/');
      return h.total === 1 ? h : null;
    });
    expect(history.aggregates).toEqual({ submissions: 1, actions_replayed: replayed.length, divergences: 0, cost_saved_usd: saved });
    expect(history.submissions[0]).toMatchObject({ id: `sim-${id}`, run_id: id, actions_replayed: replayed.length, divergences: 0, status: 'completed', cost_savings: saved });
    const perRun = await get(`/api/v1/replay/history/${id}`);
    expect(perRun).toMatchObject({ total: 1, aggregates: history.aggregates });
  }, 120_000);
});
