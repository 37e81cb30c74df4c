import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { call, eventually } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';
import type { BootedPlatform } from '../support/http.js';

/**
 * The CI gate as a CI job runs it: the built CLI (`node packages/cli/dist/cli.js evals gate …`) as a real child
 * process against the booted embedded platform (docs/evals-gate.md). Exit codes 0, 1, 2 and 3;
 * the upload landing in `GET /api/v1/evals/` and `/latest` with the CI's branch and commit; a retried upload stored
 * once; `--baseline latest` exiting 2 on a regression; promptfoo and JUnit inputs uploaded; a read key refused (403,
 * exit 3, nothing stored); a malformed file naming its entry.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'packages/cli/src/evals/fixtures');
const dir = mkdtempSync(join(tmpdir(), 'agp-gate-e2e-'));

/** The test process's environment without any CI variables (the gate reads them), plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(GITHUB_|GITLAB_|CI_|CIRCLE|BUILDKITE|AGP_)/.test(k) && k !== 'CI') env[k] = v;
  return { ...env, ...extra };
}

/** Run the built CLI's `evals gate` with `args`; resolves with its exit code and output (never blocks the platform). */
function gate(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return runCli(['evals', 'gate', ...args], env, cleanEnv());
}

/** Our fixture as a new file: `suite` renamed, `statuses` replacing scenario statuses by name. */
function agpFile(suite: string, statuses: Record<string, string> = {}): string {
  const doc = JSON.parse(readFileSync(join(FIXTURES, 'agp-run.json'), 'utf8'));
  doc.suite = suite;
  for (const s of doc.scenarios) s.status = statuses[s.name] ?? s.status;
  const path = join(dir, `${suite}-${Object.keys(statuses).length}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const github = (runId: string, branch: string, sha: string) => ({ GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: branch, GITHUB_SHA: sha, GITHUB_RUN_ID: runId, GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'evals' });

describe('agp evals gate: the built CLI against the embedded platform', () => {
  let p: BootedPlatform;
  const platform = (key = p.writeKey) => ['--url', p.url, '--key', key];
  const history = async (query: string) => {
    const r = await call(p, 'GET', `/api/v1/evals/?${query}`, { key: p.readKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { eval_runs: Array<Record<string, any>>; total: number };
  };
  /** The history once it holds `total` runs (the platform answers a submission once its read model has it; this only absorbs a slow machine). */
  const historyOf = (query: string, total: number) => eventually(async () => {
    const page = await history(query);
    return page.total === total ? page : null;
  }, 10_000);

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: ROOT });
    p = await bootEmbedded();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('exit 0: uploads with a Bearer token (--key); the run lands in the history and /latest with the CI branch and commit, a retry stored once', async () => {
    const sha = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1';
    const file = agpFile('gate-pass');
    const r = await gate(['--results', file, '--threshold', '0.7', '--upload', ...platform()], github('101', 'feature/a', sha));
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/Uploaded run ci-github-[0-9a-f]{24} to .* \(201 created\): grade C, block rate 75\.0%, CI status pass/);
    expect(r.out).toContain('PASS');

    const page = await historyOf('suite=gate-pass', 1);
    expect(page.eval_runs[0]).toMatchObject({ suite: 'gate-pass', agent_id: 'support-bot', branch: 'feature/a', commit_sha: sha, source: 'agp', summary: { block_rate: 0.75, grade: 'C', ci_status: 'pass' } });
    const latest = await call(p, 'GET', '/api/v1/evals/latest?suite=gate-pass&agent_id=support-bot&branch=feature%2Fa', { key: p.readKey });
    expect(latest.status).toBe(200);
    expect(latest.body.scenarios).toHaveLength(5);

    const again = await gate(['--results', file, '--threshold', '0.7', '--upload', ...platform()], github('101', 'feature/a', sha));
    expect(again.code, again.out + again.err).toBe(0);
    expect(again.out).toContain('200 already stored');
    expect((await history('suite=gate-pass')).total).toBe(1);
  });

  it('exit 1: a block rate below the threshold fails the build, and the run is still uploaded (--api-key with X-API-Key works too)', async () => {
    const r = await gate(['--results', agpFile('gate-low'), '--threshold', '0.9', '--upload', '--auth', 'x-api-key', '--url', p.url, '--api-key', p.writeKey]);
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.out).toContain('FAIL (exit 1): block rate 75.0% is below the threshold 90.0%');
    await historyOf('suite=gate-low', 1);
  });

  it('exit 2: --baseline latest finds the run on the default branch and counts a regression', async () => {
    const base = await gate(['--results', agpFile('gate-regress'), '--threshold', '0.7', '--upload', ...platform()], github('201', 'main', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2'));
    expect(base.code, base.out + base.err).toBe(0);
    const baselineId = (await historyOf('suite=gate-regress', 1)).eval_runs[0].id as string;

    const worse = agpFile('gate-regress', { 'refund over budget': 'failed', 'stale KYC evidence': 'blocked' });
    const r = await gate(['--results', worse, '--threshold', '0.7', '--baseline', 'latest', '--upload', ...platform()], github('202', 'feature/b', 'ccccccccccccccccccccccccccccccccccccccc3'));
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.out).toContain(`Comparison with baseline ${baselineId}`);
    expect(r.out).toMatch(/refund over budget\s+budget_blowout\s+blocked\s+failed/);
    expect(r.out).toContain('FAIL (exit 2): 1 regression(s) against the baseline');
    // The platform's own CI status agrees: the run regressed against the latest run on main.
    const stored = (await historyOf('suite=gate-regress&branch=feature%2Fb', 1)).eval_runs[0];
    expect(stored.summary).toMatchObject({ regressions: 1, ci_status: 'fail', ci_baseline_id: baselineId });
  });

  it('numbers in the answers are rounded: avg_detection_time_ms to 0.1 ms, USD to 6 decimals (docs/api.md, Numbers)', async () => {
    const doc = JSON.parse(readFileSync(join(FIXTURES, 'agp-run.json'), 'utf8'));
    doc.suite = 'gate-numbers';
    // Three blocked scenarios whose mean detection time is 14.799999999999999 in binary floating point.
    doc.scenarios = [12.2, 17.8, 14.4].map((ms, i) => ({ name: `s${i}`, category: 'c', status: 'blocked', detection_time_ms: ms, damage_usd: 0.1 * (i + 1) }));
    const path = join(dir, 'numbers.json');
    writeFileSync(path, JSON.stringify(doc));
    const r = await gate(['--results', path, '--upload', '--json', '--branch', 'numbers', ...platform()]);
    expect(r.code, r.out + r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.summary).toMatchObject({ avg_detection_time_ms: 14.8, damage_prevented_usd: 0.6 });
    const stored = await call(p, 'GET', `/api/v1/evals/${report.upload.id}`, { key: p.readKey });
    expect(stored.status).toBe(200);
    expect(stored.body.summary).toMatchObject({ avg_detection_time_ms: 14.8, damage_prevented_usd: 0.6 });
    expect(stored.body.scenarios.map((s: any) => s.detection_time_ms)).toEqual([12.2, 17.8, 14.4]);
  });

  it('--baseline latest with no run yet is not an error', async () => {
    const r = await gate(['--results', agpFile('gate-first'), '--threshold', '0.7', '--baseline', 'latest', ...platform(p.readKey)]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.err).toContain('note: no baseline yet');
  });

  it('promptfoo (eval and red team) and JUnit results are uploaded with their source', async () => {
    for (const [file, source, suite] of [
      ['promptfoo-eval.json', 'promptfoo', 'support-bot guardrails'],
      ['promptfoo-redteam.json', 'promptfoo', 'support-bot red team'],
      ['junit.xml', 'junit', 'support-bot adversarial'],
    ]) {
      const r = await gate(['--results', join(FIXTURES, file), '--agent-id', 'support-bot', '--threshold', '0.5', '--upload', ...platform()]);
      expect(r.code, `${file}: ${r.out}${r.err}`).toBe(0);
      const page = await historyOf(`suite=${encodeURIComponent(suite)}`, 1);
      expect(page.eval_runs[0]).toMatchObject({ source, agent_id: 'support-bot' });
    }
  });

  it('exit 3: a read key cannot upload (403, nothing stored); a malformed file names its entry; usage errors', async () => {
    const denied = await gate(['--results', agpFile('gate-denied'), '--threshold', '0.7', '--upload', ...platform(p.readKey)]);
    expect(denied.code).toBe(3);
    expect(denied.err).toContain('403');
    expect((await history('suite=gate-denied')).total).toBe(0);

    const doc = JSON.parse(readFileSync(join(FIXTURES, 'promptfoo-eval.json'), 'utf8'));
    doc.results.results[3].gradingResult = 'passed';
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(doc));
    const malformed = await gate(['--results', bad]);
    expect(malformed.code).toBe(3);
    expect(malformed.err).toContain('bad.json: results.results[3].gradingResult: ');

    const xml = join(dir, 'bad.xml');
    writeFileSync(xml, '<testsuites>\n  <testsuite name="s">\n    <testcase classname="c"/>\n  </testsuite>\n</testsuites>\n');
    expect((await gate(['--results', xml])).err).toContain('bad.xml: line 3: <testcase> has no name attribute');

    expect((await gate(['--results', bad, '--upload'])).code).toBe(3);
    expect((await gate(['--nope'])).code).toBe(3);
  });
});
