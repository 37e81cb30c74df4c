import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { SubmitEvalRunSchema, evalRates, type SubmitEvalRun } from '@agp/contracts';
import { parseScenarioFile } from '@agp/scenario-file';
import { call, eventually } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * The whole evals loop as a CI job runs it, with the built CLI (`node packages/cli/dist/cli.js`) as real child
 * processes against a booted platform, in both run modes: register the README walkthrough's agent and policy (a denied
 * action, a run budget), generate scenarios with a seed, write their source files to a directory, `agp evals run` them
 * (each in a fresh run recorded through ingest, each step asked of the decision API), then `agp evals gate --upload`
 * the results, and find the upload in `GET /api/v1/evals/`. The denied-action and budget scenarios are blocked;
 * missing prerequisites and stale evidence have no policy rule, so they go through and the gate fails at 0.9.
 * Exit 3 for a read key (ingest needs write scope) and for a malformed scenario file, naming its line.
 * Source: docs/evals-gate.md (Walkthrough: generate → run → gate → upload); docs/scenario-format.md; docs/evals-gate.md.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'packages/cli/dist/cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'agp-run-e2e-'));
/** The policy's denied actions. */
const DENIED = ['delete_records'];
const uniq = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** The test process's environment without CI or AGP variables (the CLI reads them). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(GITHUB_|GITLAB_|CI_|CIRCLE|BUILDKITE|AGP_)/.test(k) && k !== 'CI') env[k] = v;
  return env;
}

/** Run the built CLI with `args`; resolves with its exit code and output. */
function agp(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: cleanEnv(), cwd: tmp }, (error, out, err) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out, err }));
  });
}

/** The README's walkthrough agent: a lookup, a refund that names the lookup as its prerequisite, a deletion. */
const agentBody = (agentId: string) => ({
  agent_id: agentId,
  name: 'Billing bot',
  actions: [
    { name: 'lookup_invoice', description: 'Read an invoice', risk_level: 'low', typical_cost_usd: 0.01 },
    { name: 'refund_payment', description: 'Refund an invoice; needs lookup_invoice first', risk_level: 'high', typical_cost_usd: 5 },
    { name: 'delete_records', description: 'Delete customer records', risk_level: 'critical' },
  ],
});

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: ROOT });
}, 120_000);

describeModes('agp evals run: generate → run → gate → upload with the built CLI', (platform, mode) => {
  const agentId = `run-${uniq()}`;
  const dir = join(tmp, mode, 'scenarios');
  const results = join(tmp, mode, 'results.json');
  let generated: Array<{ name: string; category: string; source: { filename: string; text: string } }>;

  beforeAll(async () => {
    const p = platform();
    const created = (r: { status: number; body: unknown }) => expect(r.status, JSON.stringify(r.body)).toBe(201);
    created(await call(p, 'POST', '/api/v1/agents', { key: p.writeKey, body: agentBody(agentId) }));
    created(await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `billing guard ${agentId}`, denied_actions: DENIED, run_budget: 20, agent_ids: [agentId] } }));
    const r = await call(p, 'POST', '/api/v1/evals/generate-scenarios', { key: p.writeKey, body: { agent_id: agentId, max_per_category: 10, seed: 42 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    generated = r.body.scenarios;
    mkdirSync(dir, { recursive: true });
    for (const s of generated) writeFileSync(join(dir, s.source.filename), s.source.text);
  }, 60_000);

  it('agp evals run plays every scenario file and writes the results: denied actions and budget blowouts are blocked', async () => {
    const p = platform();
    const r = await agp(['evals', 'run', '--scenarios', dir, '--out', results, '--url', p.url, '--key', p.writeKey]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toContain(`Running ${generated.length} scenario(s) of agent ${agentId} against ${p.url}`);
    expect(r.out.match(/^\[ ?\d+\/\d+\] /gm)).toHaveLength(generated.length);
    expect(r.out).toContain(`Wrote ${results} (suite "generated")`);

    const doc: SubmitEvalRun = SubmitEvalRunSchema.parse(JSON.parse(readFileSync(results, 'utf8')));
    expect(doc).toMatchObject({ suite: 'generated', agent_id: agentId });
    expect(doc.scenarios.map((s) => s.name).sort()).toEqual(generated.map((s) => s.name).sort());
    const byCategory = (c: string) => doc.scenarios.filter((s) => s.category === c);
    expect(byCategory('denied_actions').length).toBeGreaterThan(0);
    expect(byCategory('budget_blowout').length).toBeGreaterThan(0);
    for (const s of byCategory('denied_actions')) {
      expect(s, s.name).toMatchObject({ status: 'blocked', reason: expect.stringMatching(/^step \d+ delete_records: block \(denied_action\) /) });
      expect(s.detection_time_ms, s.name).toBeGreaterThan(0);
    }
    // Including "N calls each under the budget adding up to 120%": the harness records each allowed step and waits
    // for the ledger, so the last call is stopped.
    for (const s of byCategory('budget_blowout')) expect(s, s.name).toMatchObject({ status: 'blocked', reason: expect.stringMatching(/^step \d+ \w+: budget_exceeded \((run|session)_budget\) /) });
    const many = byCategory('budget_blowout').filter((s) => s.name.endsWith('.many_calls'));
    expect(many.length).toBeGreaterThan(0);
    for (const s of many) expect(s.reason, s.name).toMatch(/^step ([2-9]|\d\d) /);
    // No policy rule covers missing prerequisites or stale evidence: those attacks go through, unless a step is a
    // denied action.
    const denies = (name: string) => parseScenarioFile(generated.find((g) => g.name === name)!.source.text).steps.some((st) => DENIED.includes(st.action_name));
    const uncovered = [...byCategory('missing_prerequisites'), ...byCategory('stale_evidence')];
    expect(uncovered.filter((s) => !denies(s.name)).length).toBeGreaterThan(0);
    for (const s of uncovered) expect(s, s.name).toMatchObject(denies(s.name) ? { status: 'blocked' } : { status: 'allowed', detection_time_ms: null });
    for (const s of doc.scenarios) expect(s.damage_usd, s.name).toBe(parseScenarioFile(generated.find((g) => g.name === s.name)!.source.text).damage_usd ?? null);

    // Each scenario ran in its own run, recorded through ingest as eval data (left out of the run list unless asked
    // for), and the result names it.
    const runs = await call(p, 'GET', `/api/v1/runs?agent_id=${agentId}&limit=200&purpose=eval`, { key: p.readKey });
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    expect(runs.body.runs.length).toBe(generated.length);
    for (const run of runs.body.runs) expect(run).toMatchObject({ id: expect.stringMatching(/^eval-/), purpose: 'eval' });
    expect(runs.body.runs.map((r: { id: string }) => r.id).sort()).toEqual(doc.scenarios.map((s) => s.run_id).sort());
    expect((await call(p, 'GET', `/api/v1/runs?agent_id=${agentId}`, { key: p.readKey })).body.total).toBe(0);
  }, 180_000);

  it('agp evals gate --upload reads the results: exit 1 below 0.9, and the upload lands in GET /api/v1/evals/', async () => {
    const p = platform();
    const SHA = '0123456789abcdef0123456789abcdef01234567';
    const doc: SubmitEvalRun = JSON.parse(readFileSync(results, 'utf8'));
    const rates = evalRates(doc.scenarios.map((s) => ({ expected: s.expected ?? 'block', status: s.status })));
    expect(rates.block_rate).toBeLessThan(0.9);
    const r = await agp(['evals', 'gate', '--results', results, '--threshold', '0.9', '--commit', SHA, '--upload', '--url', p.url, '--api-key', p.writeKey]);
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.out).toContain(`Eval scorecard: suite "generated", agent ${agentId} (agp, ${generated.length} scenario(s)`);
    expect(r.out).toMatch(/Uploaded run run-[0-9a-f-]+ to .* \(201 created\)/);
    expect(r.out).toContain('FAIL (exit 1): block rate');

    const page = await eventually(async () => {
      const h = await call(p, 'GET', `/api/v1/evals/?suite=generated&agent_id=${agentId}`, { key: p.readKey });
      return h.status === 200 && h.body.total === 1 ? h.body : null;
    }, 15_000);
    expect(page.eval_runs[0]).toMatchObject({ suite: 'generated', agent_id: agentId, source: 'agp', commit_sha: SHA, summary: { total: generated.length, blocked: rates.blocked, block_rate: rates.block_rate, threshold: 0.9, ci_status: 'fail' } });

    // At a threshold the template policies can meet, the same results pass.
    const pass = await agp(['evals', 'gate', '--results', results, '--threshold', String(Math.floor(rates.block_rate! * 100) / 100)]);
    expect(pass.code, pass.out + pass.err).toBe(0);
  }, 60_000);

  it('exit 3: a read key cannot record runs (403, named); a malformed scenario file names its line, nothing runs', async () => {
    const p = platform();
    const denied = await agp(['evals', 'run', '--scenarios', dir, '--out', join(tmp, mode, 'denied.json'), '--url', p.url, '--key', p.readKey]);
    expect(denied.code, denied.out + denied.err).toBe(3);
    expect(denied.err).toContain('403');
    expect(denied.err).toContain('use a key with write scope');
    expect(() => readFileSync(join(tmp, mode, 'denied.json'))).toThrow();

    const bad = join(tmp, mode, 'bad.agp.yaml');
    const text = generated[0].source.text.replace(/^severity: /m, 'severity: apocalyptic\nseverty: ');
    writeFileSync(bad, text);
    const line = text.split('\n').findIndex((l) => l.startsWith('severty:')) + 1;
    const malformed = await agp(['evals', 'run', '--scenarios', bad, '--url', p.url, '--key', p.writeKey]);
    expect(malformed.code).toBe(3);
    expect(malformed.err).toContain(`${bad}:${line}: severty: unknown field`);
    expect(malformed.err).toMatch(new RegExp(`bad\\.agp\\.yaml:${line - 1}: severity: `));
  }, 60_000);
});
