import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SubmitEvalRunSchema, evalRunOf, type EvalRunDetail } from '@agp/contracts';
import { startFakeGateway, unusedUrl, type FakeAnswer, type RecordedRequest } from '../../test/support/fake-gateway.js';
import { main } from '../program.js';

/**
 * `agp evals gate` through the CLI's `main`, in-process, against a loopback stand-in of the evals endpoints built on the
 * contract (`SubmitEvalRunSchema`, `evalRunOf`): exit codes 0–3, the upload (header, CI fields, idempotent id,
 * problem details on failure), `--baseline latest|<id>` (404 = no baseline yet), `--json`, and usage errors.
 * The same against the real platform, as a child process: test/e2e/evals-gate.test.ts.
 */
const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (name: string) => new URL(name, FIXTURES).pathname;
const dir = mkdtempSync(join(tmpdir(), 'agp-gate-'));
const GITHUB = { GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: 'feature/gate', GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567', GITHUB_RUN_ID: '4242', GITHUB_RUN_ATTEMPT: '1', GITHUB_JOB: 'evals' };

/** The stand-in's stored runs, newest last. */
let stored: EvalRunDetail[] = [];
/** Answer of the next POST instead of storing (a failure to report). */
let failNextPost: FakeAnswer | null = null;

function evalsLikeThePlatform(req: RecordedRequest): FakeAnswer {
  const url = new URL(req.url, 'http://x');
  if (req.headers['x-api-key'] !== 'agp_write' && req.headers.authorization !== 'Bearer agp_write') return { status: 401, body: { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'send an API key' } };
  if (req.method === 'POST' && url.pathname === '/api/v1/evals/') {
    if (failNextPost) return failNextPost;
    const parsed = SubmitEvalRunSchema.safeParse(JSON.parse(req.body));
    if (!parsed.success) return { status: 422, body: { type: 'about:blank', title: 'Unprocessable Content', status: 422, detail: 'invalid', errors: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) } };
    const run = parsed.data;
    const again = stored.find((r) => r.id === run.id);
    if (again) return { status: 200, body: again };
    const detail = evalRunOf(run, { id: run.id ?? `srv-${stored.length}`, organization_id: 'acme', created_at: new Date(Date.now() + stored.length).toISOString(), baseline: null });
    stored.push(detail);
    return { status: 201, body: detail };
  }
  if (req.method === 'GET' && url.pathname === '/api/v1/evals/latest') {
    const q = Object.fromEntries(url.searchParams);
    const hit = [...stored].reverse().find((r) => (!q.suite || r.suite === q.suite) && (!q.agent_id || r.agent_id === q.agent_id) && (!q.branch || r.branch === q.branch));
    return hit ? { status: 200, body: hit } : { status: 404, body: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no eval run matches' } };
  }
  if (req.method === 'GET' && url.pathname.startsWith('/api/v1/evals/')) {
    const hit = stored.find((r) => r.id === decodeURIComponent(url.pathname.slice('/api/v1/evals/'.length)));
    return hit ? { status: 200, body: hit } : { status: 404, body: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'unknown eval run' } };
  }
  return { status: 404, body: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no route' } };
}

let gateway: Awaited<ReturnType<typeof startFakeGateway>>;
beforeAll(async () => {
  gateway = await startFakeGateway(evalsLikeThePlatform);
});
afterAll(() => gateway.close());
beforeEach(() => {
  stored = [];
  failNextPost = null;
  gateway.requests.length = 0;
});

/** A directory outside any git work tree, where the gate finds no git branch. */
const noGit = mkdtempSync(join(tmpdir(), 'agp-gate-nogit-'));

/** Run `agp evals gate …` in-process (in `cwd`: no git checkout by default); returns the exit code and what it wrote. */
async function gate(args: string[], env: Record<string, string> = {}, cwd = noGit) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['evals', 'gate', ...args], { env, cwd, out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join(''), err: err.join('') };
}
const platform = () => ['--url', gateway.url, '--key', 'agp_write'];
/** A copy of our fixture with `statuses` replacing its scenarios' statuses by name. */
function agpFile(name: string, statuses: Record<string, string> = {}): string {
  const doc = JSON.parse(readFileSync(fixture('agp-run.json'), 'utf8'));
  for (const s of doc.scenarios) s.status = statuses[s.name] ?? s.status;
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

describe('agp evals gate (in-process, loopback platform)', () => {
  it('exit 0 at or above the threshold, exit 1 below it; prints the scorecard and the verdict', async () => {
    const pass = await gate(['--results', fixture('agp-run.json'), '--threshold', '75%']);
    expect(pass.code, pass.err).toBe(0);
    expect(pass.out).toContain('Eval scorecard: suite "support-bot-adversarial", agent support-bot (agp, 5 scenario(s))');
    expect(pass.out).toMatch(/PASS: /);
    const fail = await gate(['--results', fixture('agp-run.json')]);
    expect(fail.code).toBe(1);
    expect(fail.out).toContain('FAIL (exit 1): block rate 75.0% is below the threshold 80.0%');
    expect(gateway.requests).toHaveLength(0);
  });

  it('--upload posts the run with a Bearer token (--key), the CI branch and commit and a job-derived id; a retry is stored once', async () => {
    const first = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', ...platform()], GITHUB);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/Uploaded run ci-github-[0-9a-f]{24} to .* \(201 created\): grade C, block rate 75\.0%, CI status pass/);
    const [post] = gateway.requests;
    expect(post).toMatchObject({ method: 'POST', url: '/api/v1/evals/' });
    expect(post.headers.authorization).toBe('Bearer agp_write');
    expect(post.headers['x-api-key']).toBeUndefined();
    const body = JSON.parse(post.body);
    expect(body).toMatchObject({ suite: 'support-bot-adversarial', agent_id: 'support-bot', branch: 'feature/gate', commit_sha: GITHUB.GITHUB_SHA, threshold: 0.7, source: 'agp', default_branch: 'main' });
    const again = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', ...platform()], GITHUB);
    expect(again.code).toBe(0);
    expect(again.out).toContain('200 already stored');
    expect(JSON.parse(gateway.requests[1].body).id).toBe(body.id);
    expect(stored).toHaveLength(1);
  });

  it('AGP_URL and AGP_KEY (or AGP_API_KEY) stand in for the flags; --api-key is an alias of --key; --auth x-api-key sends X-API-Key', async () => {
    const env = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload'], { AGP_URL: gateway.url, AGP_KEY: 'agp_write', AGP_API_KEY: 'other' });
    expect(env.code, env.err).toBe(0);
    expect(gateway.requests[0].headers.authorization).toBe('Bearer agp_write');
    const legacyEnv = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload'], { AGP_URL: gateway.url, AGP_API_KEY: 'agp_write' });
    expect(legacyEnv.code, legacyEnv.err).toBe(0);
    expect(gateway.requests[1].headers.authorization).toBe('Bearer agp_write');
    const alias = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', '--url', gateway.url, '--api-key', 'agp_write', '--auth', 'x-api-key']);
    expect(alias.code, alias.err).toBe(0);
    expect(gateway.requests[2].headers['x-api-key']).toBe('agp_write');
    expect(gateway.requests[2].headers.authorization).toBeUndefined();
    const clash = await gate(['--results', fixture('agp-run.json'), '--upload', '--url', gateway.url, '--key', 'a', '--api-key', 'b']);
    expect([clash.code, clash.err]).toEqual([3, 'error: --key and --api-key (its alias) name different keys: pass one\n']);
  });

  it('an upload without a branch takes the checked-out git branch; with none it says the run cannot become a baseline', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'agp-gate-git-'));
    execFileSync('git', ['init', '-q', '-b', 'feature/from-git'], { cwd: repo });
    const sub = join(repo, 'evals');
    mkdirSync(sub);
    const inGit = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', ...platform()], {}, sub);
    expect(inGit.code, inGit.err).toBe(0);
    expect(JSON.parse(gateway.requests[0].body).branch).toBe('feature/from-git');
    expect(inGit.out).toContain('branch feature/from-git');
    expect(inGit.err).toContain('note: branch feature/from-git: the git branch checked out here');
    // --branch, the file's and the CI's branch win over git's.
    const flagged = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', '--branch', 'main', ...platform()], {}, sub);
    expect(JSON.parse(gateway.requests[1].body).branch).toBe('main');
    expect(flagged.err).not.toContain('git branch');
    await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', ...platform()], GITHUB, sub);
    expect(JSON.parse(gateway.requests[2].body).branch).toBe('feature/gate');

    const none = await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', ...platform()]);
    expect(none.code, none.err).toBe(0);
    expect(JSON.parse(gateway.requests[3].body).branch).toBeUndefined();
    expect(none.err).toContain('note: the run is stored without a branch');
    expect(none.err).toContain('can never become a baseline');
    const json = JSON.parse((await gate(['--results', fixture('agp-run.json'), '--threshold', '0.7', '--upload', '--json', ...platform()])).out);
    expect(json.run.branch).toBeNull();
    expect(json.notes.join('\n')).toContain('stored without a branch');
  });

  it("promptfoo's XML output is refused naming the outputs to use; its JUnit report is read with a warning", async () => {
    const xml = join(dir, 'results.xml');
    writeFileSync(xml, '<?xml version="1.0" encoding="UTF-8"?>\n<promptfoo><evalId>eval-1</evalId><results/></promptfoo>\n');
    const refused = await gate(['--results', xml]);
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(/^error: .*results\.xml: line 2: this is promptfoo's own XML output .*-o results\.json.*-o results\.junit\.xml/);
    const junit = await gate(['--results', fixture('promptfoo.junit.xml'), '--threshold', '0.5']);
    expect(junit.code, junit.err).toBe(0);
    expect(junit.err).toMatch(/^warning: this is promptfoo's JUnit report, .*benign tests count as attacks.*JSON output/m);
    const json = JSON.parse((await gate(['--results', fixture('promptfoo.junit.xml'), '--threshold', '0.5', '--json'])).out);
    expect(json.warnings).toHaveLength(1);
  });

  it('an upload refused by the platform exits 3 with its problem details, after the scorecard', async () => {
    failNextPost = { status: 422, body: { type: 'https://agp.dev/problems/validation-failed', title: 'Unprocessable Content', status: 422, detail: 'the request is invalid', errors: [{ path: 'body.scenarios.0.status', message: 'Invalid option' }] } };
    const r = await gate(['--results', fixture('agp-run.json'), '--upload', ...platform()]);
    expect(r.code).toBe(3);
    expect(r.out).toContain('Eval scorecard');
    expect(r.err).toContain('error: upload to');
    expect(r.err).toContain('422 Unprocessable Content: the request is invalid\n  body.scenarios.0.status: Invalid option');
    expect(r.out).toContain('ERROR (exit 3): the upload failed; the gate alone would have exited 1');
    failNextPost = { status: 403, body: { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'a read key cannot submit' } };
    expect((await gate(['--results', fixture('agp-run.json'), '--threshold', '0', '--upload', ...platform()])).err).toContain('403 Forbidden: a read key cannot submit');
  });

  it('an unreachable platform exits 3', async () => {
    const r = await gate(['--results', fixture('agp-run.json'), '--upload', '--url', await unusedUrl(), '--api-key', 'k']);
    expect(r.code).toBe(3);
    expect(r.err).toContain('platform unreachable');
  });

  it('--baseline latest: no run yet is not an error; a regression against the stored run exits 2', async () => {
    const none = await gate(['--results', agpFile('base.json'), '--threshold', '0.7', '--baseline', 'latest', ...platform()]);
    expect(none.code, none.err).toBe(0);
    expect(none.err).toContain('note: no baseline yet: no run of suite "support-bot-adversarial" and agent support-bot on branch main');
    expect(gateway.requests[0].url).toBe('/api/v1/evals/latest?suite=support-bot-adversarial&agent_id=support-bot&branch=main');

    const up = await gate(['--results', agpFile('base.json'), '--threshold', '0.7', '--upload', '--branch', 'main', ...platform()]);
    expect(up.code, up.err).toBe(0);
    const worse = agpFile('worse.json', { 'refund over budget': 'failed', 'stale KYC evidence': 'blocked' });
    const r = await gate(['--results', worse, '--threshold', '0.7', '--baseline', 'latest', ...platform()]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.out).toContain(`Comparison with baseline ${stored[0].id}`);
    expect(r.out).toMatch(/refund over budget\s+budget_blowout\s+blocked\s+failed/);
    expect(r.out).toMatch(/Improvements: failed on the baseline, pass now \(1\):/);
    expect(r.out).toContain('FAIL (exit 2): 1 regression(s) against the baseline');

    const json = JSON.parse((await gate(['--results', worse, '--threshold', '0.7', '--baseline', stored[0].id, '--json', ...platform()])).out);
    expect(json).toMatchObject({ exit_code: 2, verdict: 'fail', baseline: { id: stored[0].id }, summary: { regressions: 1, ci_baseline_id: stored[0].id }, comparison: { regressions: [{ name: 'refund over budget' }], grade_change: { label: 'C→C' } } });
  });

  it('--baseline <unknown id> exits 3', async () => {
    const r = await gate(['--results', fixture('agp-run.json'), '--baseline', 'nope', ...platform()]);
    expect(r.code).toBe(3);
    expect(r.err).toContain('error: --baseline nope: no such eval run (404)');
  });

  it('usage errors exit 3: no --results, an unknown option, a bad threshold, --upload without the platform or an agent', async () => {
    expect((await gate([])).code).toBe(3);
    expect((await gate(['--results', 'x', '--frobnicate'])).code).toBe(3);
    expect((await gate(['--results', 'x', '--threshold', '1.5'])).code).toBe(3);
    const noUrl = await gate(['--results', fixture('agp-run.json'), '--upload']);
    expect([noUrl.code, noUrl.err]).toEqual([3, 'error: --upload needs the platform: pass --url and --key (or set AGP_URL and AGP_KEY)\n']);
    const noAgent = await gate(['--results', fixture('junit.xml'), '--upload', ...platform()]);
    expect(noAgent.code).toBe(3);
    expect(noAgent.err).toContain('pass --agent-id');
    expect((await gate(['--results', join(dir, 'missing.json')])).err).toContain('no such file');
  });

  it('a malformed file exits 3 naming the entry', async () => {
    const path = join(dir, 'bad.json');
    const doc = JSON.parse(readFileSync(fixture('promptfoo-eval.json'), 'utf8'));
    doc.results.results[3].gradingResult = 7;
    writeFileSync(path, JSON.stringify(doc));
    const r = await gate(['--results', path]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^error: .*bad\.json: results\.results\[3\]\.gradingResult: /);
  });

  it('--help exits 0 and documents the exit codes', async () => {
    const r = await gate(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Exit codes:');
    expect(r.out).toContain('3  usage, parse or upload error');
  });

  it('reads promptfoo and JUnit files; an upload of them names the agent with --agent-id and the source', async () => {
    for (const [file, source] of [
      ['promptfoo-redteam.json', 'promptfoo'],
      ['junit.xml', 'junit'],
    ]) {
      const r = await gate(['--results', fixture(file), '--threshold', '0.5', '--agent-id', 'support-bot', '--upload', ...platform()]);
      expect(r.code, r.err).toBe(0);
      expect(JSON.parse(gateway.requests.at(-1)!.body)).toMatchObject({ agent_id: 'support-bot', source });
    }
    expect(stored.map((s) => s.suite)).toEqual(['support-bot red team', 'support-bot adversarial']);
  });
});
