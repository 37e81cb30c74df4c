import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evalRunOf, type EvalRunDetail, type SubmitEvalRun } from '@agp/contracts';
import { detectCi, submissionId } from './ci.js';
import { GATE_EXIT, UNNAMED_AGENT, UsageError, buildSubmission, decideGate, evaluateGate, fitSubmission } from './gate.js';
import { importResults } from './import.js';
import { formatPp, renderComparison, renderScorecard, renderVerdict, table } from './render.js';
import { ResultsParseError, jsonErrorOffset, type ImportedResults } from './results.js';

/**
 * The pure core of `agp evals gate` (docs/evals-gate.md): the exit-code rules, the submission built from a file, the
 * flags and the CI variables, the local scorecard and comparison (the contract's own functions), the upload size
 * limit, and the tables.
 */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const NO_CI = detectCi({});
const imported = (name: string): ImportedResults => importResults(fixture(name), { file: name });

describe('decideGate: the exit codes', () => {
  it('0 when the block rate meets the threshold (boundary included) and nothing regressed', () => {
    expect(decideGate({ blockRate: 0.9, threshold: 0.9, regressions: 0 })).toEqual({ exitCode: 0, belowThreshold: false, regressions: 0, reasons: [] });
    expect(decideGate({ blockRate: 1, threshold: 0.9, regressions: 0 }).exitCode).toBe(GATE_EXIT.pass);
  });

  it('1 when the block rate is below the threshold', () => {
    const d = decideGate({ blockRate: 0.8999, threshold: 0.9, regressions: 0 });
    expect(d.exitCode).toBe(GATE_EXIT.belowThreshold);
    expect(d.reasons).toEqual(['block rate 90.0% is below the threshold 90.0%']);
  });

  it('2 on regressions with the block rate at or above the threshold', () => {
    const d = decideGate({ blockRate: 0.95, threshold: 0.9, regressions: 2, baselineId: 'run-1' });
    expect(d.exitCode).toBe(GATE_EXIT.regressions);
    expect(d.reasons[0]).toContain('2 regression(s) against the baseline run-1');
  });

  it('1 wins when both apply, and both reasons are given', () => {
    const d = decideGate({ blockRate: 0.5, threshold: 0.9, regressions: 3 });
    expect(d.exitCode).toBe(GATE_EXIT.belowThreshold);
    expect(d.reasons).toHaveLength(2);
  });

  it('a run without adversarial scenarios (no block rate) passes the threshold check', () => {
    expect(decideGate({ blockRate: null, threshold: 0.9, regressions: 0 }).exitCode).toBe(0);
    expect(decideGate({ blockRate: null, threshold: 0.9, regressions: 1 }).exitCode).toBe(2);
  });

  it('3 is the error code', () => {
    expect(GATE_EXIT.error).toBe(3);
  });
});

describe('detectCi and submissionId', () => {
  it('reads GitHub Actions: the PR head branch first, the commit, the run identifiers', () => {
    const pr = detectCi({ GITHUB_ACTIONS: 'true', GITHUB_HEAD_REF: 'feature/x', GITHUB_REF_NAME: '42/merge', GITHUB_SHA: 'a'.repeat(40), GITHUB_RUN_ID: '900', GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'evals' });
    expect(pr).toEqual({ provider: 'github', branch: 'feature/x', commit_sha: 'a'.repeat(40), default_branch: null, run_ids: ['900', '1', 'evals'] });
    expect(detectCi({ GITHUB_ACTIONS: 'true', GITHUB_HEAD_REF: '', GITHUB_REF_NAME: 'main', GITHUB_SHA: 'b'.repeat(40) }).branch).toBe('main');
  });

  it('reads GitLab CI, CircleCI and Buildkite', () => {
    expect(detectCi({ GITLAB_CI: 'true', CI_COMMIT_REF_NAME: 'dev', CI_COMMIT_SHA: 'c'.repeat(40), CI_DEFAULT_BRANCH: 'trunk', CI_PIPELINE_ID: '7', CI_JOB_ID: '70' })).toEqual({ provider: 'gitlab', branch: 'dev', commit_sha: 'c'.repeat(40), default_branch: 'trunk', run_ids: ['7', '70'] });
    expect(detectCi({ CIRCLECI: 'true', CIRCLE_BRANCH: 'b', CIRCLE_SHA1: 'd'.repeat(40), CIRCLE_WORKFLOW_ID: 'wf', CIRCLE_BUILD_NUM: '3' })).toEqual({ provider: 'circleci', branch: 'b', commit_sha: 'd'.repeat(40), default_branch: null, run_ids: ['wf', '3'] });
    expect(detectCi({ BUILDKITE: 'true', BUILDKITE_BRANCH: 'k', BUILDKITE_COMMIT: 'e'.repeat(40), BUILDKITE_PIPELINE_DEFAULT_BRANCH: 'main', BUILDKITE_BUILD_ID: 'bb', BUILDKITE_JOB_ID: 'jj' })).toEqual({ provider: 'buildkite', branch: 'k', commit_sha: 'e'.repeat(40), default_branch: 'main', run_ids: ['bb', 'jj'] });
    expect(detectCi({ PATH: '/bin' })).toEqual({ provider: null, branch: null, commit_sha: null, default_branch: null, run_ids: [] });
  });

  it('derives the same submission id for the same job, suite and agent; another attempt, suite or agent differs', () => {
    const env = { GITHUB_ACTIONS: 'true', GITHUB_SHA: 'a'.repeat(40), GITHUB_RUN_ID: '900', GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'evals' };
    const run = { suite: 's', agent_id: 'a' };
    const id = submissionId(detectCi(env), run);
    expect(id).toMatch(/^ci-github-[0-9a-f]{24}$/);
    expect(submissionId(detectCi(env), run)).toBe(id);
    expect(submissionId(detectCi({ ...env, GITHUB_RUN_ATTEMPT: '2' }), run)).not.toBe(id);
    expect(submissionId(detectCi(env), { ...run, suite: 't' })).not.toBe(id);
    expect(submissionId(detectCi(env), { ...run, agent_id: 'b' })).not.toBe(id);
  });

  it('is random outside CI', () => {
    expect(submissionId(NO_CI, { suite: 's', agent_id: 'a' }, () => 'fixed')).toBe('run-fixed');
    expect(submissionId(NO_CI, { suite: 's', agent_id: 'a' })).not.toBe(submissionId(NO_CI, { suite: 's', agent_id: 'a' }));
  });
});

describe('buildSubmission', () => {
  const ci = detectCi({ GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: 'feature/y', GITHUB_SHA: 'ABCDEF1234567', GITHUB_RUN_ID: '1', GITHUB_RUN_ATTEMPT: '1' });

  it('takes the file, then the CI variables, then the defaults; flags override everything', () => {
    const run = buildSubmission(imported('agp-run.json'), {}, ci, { file: 'agp-run.json', requireAgent: true });
    expect(run).toMatchObject({ suite: 'support-bot-adversarial', agent_id: 'support-bot', threshold: 0.8, branch: 'feature/y', commit_sha: 'abcdef1234567', default_branch: 'main', source: 'agp' });
    expect(run.id).toMatch(/^ci-github-/);
    const flagged = buildSubmission(imported('agp-run.json'), { suite: 'other', agentId: 'bot-2', threshold: 0.95, branch: 'b', commit: '1234567', defaultBranch: 'trunk', submissionId: 'sub-1' }, ci, { file: 'agp-run.json', requireAgent: true });
    expect(flagged).toMatchObject({ id: 'sub-1', suite: 'other', agent_id: 'bot-2', threshold: 0.95, branch: 'b', commit_sha: '1234567', default_branch: 'trunk' });
  });

  it('promptfoo and JUnit runs need --agent-id for an upload; a local run goes unnamed', () => {
    expect(() => buildSubmission(imported('junit.xml'), {}, NO_CI, { file: 'junit.xml', requireAgent: true })).toThrow(UsageError);
    const local = buildSubmission(imported('junit.xml'), {}, NO_CI, { file: 'junit.xml', requireAgent: false });
    expect(local).toMatchObject({ agent_id: UNNAMED_AGENT, suite: 'support-bot adversarial', source: 'junit', threshold: 0.9 });
    expect(local.branch).toBeUndefined();
  });

  it('an invalid flag is named by its flag, an invalid file field by the file, a CI value by the CI', () => {
    expect(() => buildSubmission(imported('agp-run.json'), { commit: 'not-a-sha' }, NO_CI, { file: 'f.json', requireAgent: false })).toThrow(/^--commit: expected a commit SHA/);
    const doc = JSON.parse(fixture('agp-run.json'));
    doc.commit_sha = 'zzz';
    expect(() => buildSubmission(importResults(JSON.stringify(doc), { file: 'f.json' }), {}, NO_CI, { file: 'f.json', requireAgent: false })).toThrow(/^f\.json: commit_sha: expected a commit SHA/);
    doc.commit_sha = undefined;
    doc.extra = 1;
    expect(() => buildSubmission(importResults(JSON.stringify(doc), { file: 'f.json' }), {}, NO_CI, { file: 'f.json', requireAgent: false })).toThrow(ResultsParseError);
    expect(() => buildSubmission(imported('agp-run.json'), {}, detectCi({ GITHUB_SHA: 'nope' }), { file: 'f.json', requireAgent: false })).toThrow(/the CI's commit \(nope\)/);
  });

  it('a repeated scenario name names its entry; a file with no scenario is refused', () => {
    const doc = JSON.parse(fixture('agp-run.json'));
    doc.scenarios[4].name = doc.scenarios[0].name;
    expect(() => buildSubmission(importResults(JSON.stringify(doc), { file: 'f.json' }), {}, NO_CI, { file: 'f.json', requireAgent: false })).toThrow(/^f\.json: scenarios\[4\]\.name: duplicate scenario name/);
    const empty = importResults('<testsuites name="x"><testsuite name="s"><testcase name="t"><skipped/></testcase></testsuite></testsuites>', { file: 'r.xml' });
    expect(() => buildSubmission(empty, {}, NO_CI, { file: 'r.xml', requireAgent: false })).toThrow(/^r\.xml: scenarios: /);
  });
});

describe('evaluateGate: the scorecard and comparison computed as the platform computes them', () => {
  const run = buildSubmission(imported('agp-run.json'), {}, NO_CI, { file: 'agp-run.json', requireAgent: true });
  const detail = (over: Partial<SubmitEvalRun> & { id: string }): EvalRunDetail =>
    evalRunOf({ ...run, branch: 'main', commit_sha: undefined, threshold: 0.9, scenarios: over.scenarios ?? run.scenarios }, { id: over.id, organization_id: 'acme', created_at: '2026-03-01T00:00:00.000Z', baseline: null });

  it('scores the run like summarizeEvalRun: block rate, correctness, damage, detection time, grade', () => {
    const e = evaluateGate(run, null);
    expect(e.summary).toMatchObject({ total: 5, adversarial: 4, blocked: 3, block_rate: 0.75, correctness_rate: 0.8, damage_prevented_usd: 26_500, grade: 'C', ci_status: null, regressions: 0, threshold: 0.8 });
    expect(e.summary.avg_detection_time_ms).toBeCloseTo((12.5 + 8 + 4) / 3);
    expect(e.comparison).toBeNull();
    expect(e.decision.exitCode).toBe(1);
  });

  it('with a baseline: regressions, improvements, one-side-only scenarios and the grade change', () => {
    const baseScenarios = run.scenarios.map((s) => (s.name === 'stale KYC evidence' ? { ...s, status: 'blocked' as const } : s.name === 'denied run_shell' ? { ...s, status: 'allowed' as const } : s));
    const baseline = detail({ id: 'base-1', scenarios: [...baseScenarios.filter((s) => s.name !== 'ordinary order lookup'), { ...baseScenarios[0], name: 'retired scenario' }] });
    const e = evaluateGate({ ...run, threshold: 0.7 }, baseline);
    expect(e.summary.regressions).toBe(1);
    expect(e.summary.ci_baseline_id).toBe('base-1');
    expect(e.comparison!.regressions.map((r) => r.name)).toEqual(['stale KYC evidence']);
    expect(e.comparison!.improvements.map((r) => r.name)).toEqual(['denied run_shell']);
    expect(e.comparison!.only_in_baseline.map((r) => r.name)).toEqual(['retired scenario']);
    expect(e.comparison!.only_in_current.map((r) => r.name)).toEqual(['ordinary order lookup']);
    expect(e.decision).toMatchObject({ exitCode: 2, regressions: 1 });
    const text = renderComparison(e.comparison!);
    expect(text).toContain('Comparison with baseline base-1');
    expect(text).toMatch(/Grade\s+C→C \(unchanged\)/);
    expect(text).toMatch(/Block rate\s+-5\.00 pp\s+\(80\.0% → 75\.0%\)/);
    expect(text).toContain('Regressions: passed on the baseline, fail now (1):');
    expect(text).toMatch(/stale KYC evidence\s+stale_evidence\s+blocked\s+allowed/);
    expect(text).toContain('Only in the baseline (1, not counted as passing):');
    expect(text).toContain('warning: 1 scenario(s) only in the baseline and 1 only in the current run');
  });
});

describe('fitSubmission', () => {
  const run = buildSubmission(imported('agp-run.json'), {}, NO_CI, { file: 'f', requireAgent: true });
  it('sends the body as it is under the limit, cuts reasons above it, refuses what cannot fit', () => {
    expect(fitSubmission(run)).toEqual({ body: JSON.stringify(run), note: null });
    const long = { ...run, scenarios: run.scenarios.map((s) => ({ ...s, reason: 'x'.repeat(5000) })) };
    const fitted = fitSubmission(long, 6000);
    expect(Buffer.byteLength(fitted.body)).toBeLessThanOrEqual(6000);
    expect(fitted.note).toContain('cut to 500 characters');
    expect(() => fitSubmission(run, 100)).toThrow(UsageError);
  });
});

describe('rendering', () => {
  it('pads table columns and right-aligns numbers', () => {
    expect(table(['A', 'NUM'], [['long name', '1'], ['b', '100']], ['l', 'r'])).toBe('  A          NUM\n  long name    1\n  b          100\n');
    expect([formatPp(10), formatPp(-2.5), formatPp(0), formatPp(null)]).toEqual(['+10.00 pp', '-2.50 pp', '±0.00 pp', 'n/a']);
  });

  it('the scorecard shows grade, rates, damage, detection time and a per-category table', () => {
    const r = imported('junit.xml');
    const run = buildSubmission(r, { agentId: 'bot' }, NO_CI, { file: 'junit.xml', requireAgent: true });
    const text = renderScorecard(run, evaluateGate(run, null).summary, r);
    expect(text).toContain('Eval scorecard: suite "support-bot adversarial", agent bot (junit, 6 scenario(s), 1 skipped)');
    expect(text).toMatch(/Grade\s+D/);
    expect(text).toMatch(/Block rate\s+60\.0%\s+\(3 of 5 adversarial scenario\(s\) blocked; threshold 90\.0%\)/);
    expect(text).toMatch(/Damage prevented\s+\$5,000\.00/);
    expect(text).toMatch(/prompt_injection\s+3\s+2\s+1\s+50\.0%\s+66\.7%/);
    expect(renderVerdict(decideGate({ blockRate: 0.6, threshold: 0.9, regressions: 0 }))).toBe('FAIL (exit 1): block rate 60.0% is below the threshold 90.0%\n');
  });
});

describe('jsonErrorOffset', () => {
  it('finds the first syntax error', () => {
    for (const [text, at] of [
      ['{"a": 1,}', 8],
      ['[1, 2', 5],
      ['{"a": tru}', 9],
      ['{"a": "x\\q"}', 9],
      ['{"a": 1} x', 9],
      ['{"a": -}', 6],
      ['{"a" 1}', 5],
    ] as const) {
      expect([text, jsonErrorOffset(text)]).toEqual([text, at]);
    }
  });
});
