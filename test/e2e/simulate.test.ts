import { expect, it } from 'vitest';
import { CLI_VERSION, main } from '@agp/cli';
import type { SimulationReport } from '@agp/simulator';
import { call, eventually } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * `agp simulate` against the real platform in both modes, driven through the CLI's `main` (docs/ingest.md, Simulated data):
 * a run without `--seed` picks a fresh seed and stores new events, the same `--seed` again reports every event as a
 * duplicate, the policies the interventions cite exist (created through the API, reused by name on a re-run), and the
 * CLI shows its seed, progress lines and version.
 */
describeModes('agp simulate: fresh seeds, duplicates, policies, progress', (platform) => {
  /** Run `agp simulate …` in-process against the booted platform; returns the exit code and what it wrote. */
  const simulate = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['simulate', '--url', platform().url, '--key', platform().writeKey, ...args], { env: {}, out: (t) => out.push(t), err: (t) => err.push(t) });
    return { code, out: out.join(''), err: err.join('') };
  };
  /** `agp simulate … --json`: the report. */
  const report = async (args: string[]): Promise<SimulationReport> => {
    const r = await simulate([...args, '--json']);
    expect(r.code, r.err).toBe(0);
    return JSON.parse(r.out) as SimulationReport;
  };
  const get = async (path: string) => {
    const r = await call(platform(), 'GET', path, { key: platform().readKey });
    expect(r.status, path).toBe(200);
    return r.body;
  };
  /** What the read models hold: interventions, ledger entries, runs (all, and ended), agents. */
  const counts = async () => ({
    interventions: (await get('/api/v1/interventions?limit=1')).total as number,
    actions: (await get('/api/v1/stats/')).total_actions as number,
    runs: (await get('/api/v1/runs?limit=1')).total as number,
    ended: ((await get('/api/v1/runs?status=completed&limit=1')).total as number) + ((await get('/api/v1/runs?status=failed&limit=1')).total as number),
    agents: (await get('/api/v1/agents?limit=1')).total as number,
  });
  // 500 events in a quarter of a second: agent registrations, runs, ledger entries, interventions.
  const SMALL = ['--agents', '4', '--rate', '2000', '--duration', '0.25', '--batch-size', '250'];
  let first: SimulationReport;

  it('stores new events on a second run (a fresh random seed), and the same --seed reports every event a duplicate', async () => {
    first = await report(SMALL);
    expect(first).toMatchObject({ sent: 500, created: 500, duplicate: 0, rejected: 0, accepted: 500, policies_created: 6, policies_reused: 0 });
    // Wait until every event of the first run is stored (each consumer: interventions, ledger and runs, agents).
    const want = { interventions: first.by_event_type['intervention.create'], actions: first.by_event_type['action.record'], runs: first.runs, ended: first.by_event_type['run.end'], agents: 4 };
    await eventually(async () => JSON.stringify(await counts()) === JSON.stringify(want), 30_000);

    const second = await report(SMALL);
    expect(second.seed).not.toBe(first.seed);
    expect(second).toMatchObject({ sent: 500, created: 500, duplicate: 0, rejected: 0, policies_created: 0, policies_reused: 6 });
    await eventually(
      async () => {
        const c = await counts();
        return c.interventions === want.interventions + second.by_event_type['intervention.create'] && c.actions === want.actions + second.by_event_type['action.record'];
      },
      30_000,
    );

    const before = await counts();
    const again = await report([...SMALL, '--seed', String(first.seed)]);
    expect(again).toMatchObject({ seed: first.seed, sent: 500, created: 0, duplicate: 500, rejected: 0, accepted: 500 });
    expect(again.by_event_type).toEqual(first.by_event_type);
    await new Promise((r) => setTimeout(r, 500));
    expect(await counts()).toEqual(before);
  });

  it('creates the policies its interventions cite, through the API; every cited policy_id resolves', async () => {
    const cited = new Map<string, string>();
    const total = (await get('/api/v1/interventions?limit=1')).total as number;
    for (let skip = 0; skip < total; skip += 1000) {
      for (const i of (await get(`/api/v1/interventions?limit=1000&skip=${skip}`)).interventions) cited.set(i.policy_id, i.policy_name);
    }
    expect(cited.size).toBeGreaterThan(1);
    expect(cited.size).toBeLessThanOrEqual(6);
    for (const [id, name] of cited) {
      const policy = await get(`/api/v1/policies/${id}`);
      expect(policy).toMatchObject({ id, name, enabled: true });
    }
    // Three runs, one policy per name: the re-runs reused them.
    const all = await get('/api/v1/policies?limit=1000');
    expect(all.total).toBe(6);
    expect((await get(`/api/v1/policies?name=${encodeURIComponent('Budget guard')}`)).policies[0]).toMatchObject({ run_budget: 50 });
    expect((await call(platform(), 'GET', '/api/v1/policies/pol-runaway-guard', { key: platform().readKey })).status).toBe(404);
  });

  it('prints the random seed in the header, progress lines at most once a second on stderr, and the summary on stdout; --quiet silences progress', async () => {
    const started = Date.now();
    const loud = await simulate(['--agents', '2', '--rate', '400', '--duration', '2.5']);
    const elapsedS = (Date.now() - started) / 1000;
    expect(loud.code, loud.err).toBe(0);
    expect(loud.err).toMatch(/^simulating 2 agents at 400 events\/s for 2\.5 s \(seed \d+, random; pass --seed to repeat this run\) -> http/);
    const progress = loud.err.split('\n').filter((l) => /^ {2}sent \d+\/1000 {2}created \d+ {2}duplicate \d+ {2}rejected \d+ {2}[\d.]+ events\/s$/.test(l));
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(Math.ceil(elapsedS));
    const seed = /\(seed (\d+),/.exec(loud.err)![1];
    expect(loud.out).toContain(`seed ${seed}`);
    expect(loud.out).toMatch(/^ {2}created {6}1000 /m);
    expect(loud.out).toMatch(/^ {2}duplicate {4}0 /m);
    expect(loud.out).toMatch(/^ {2}rejected {5}0$/m);
    expect(loud.out).toContain('policies 6 (0 created, 6 reused)');
    expect(loud.out).not.toMatch(/ sent \d+\//);

    const quiet = await simulate(['--agents', '2', '--rate', '400', '--duration', '1.5', '--quiet', '--seed', '7']);
    expect(quiet.code, quiet.err).toBe(0);
    expect(quiet.err).toMatch(/^simulating 2 agents at 400 events\/s for 1\.5 s \(seed 7\) -> http\S+\n$/);
    expect(quiet.err).not.toMatch(/ sent \d+\//);
  });

  it('prints its version with --version', async () => {
    const out: string[] = [];
    expect(await main(['--version'], { env: {}, out: (t) => out.push(t), err: () => {} })).toBe(0);
    expect(out.join('')).toBe(`${CLI_VERSION}\n`);
    expect(CLI_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});
