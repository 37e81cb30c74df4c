/**
 * The Python SDK (sdks/python, distribution `agp-sdk`) against the real platform, in both run modes: its wheel is
 * built and installed into a fresh virtual environment (the system's packages visible, for pytest), then its
 * end-to-end suite (sdks/python/tests/e2e) runs with `AGP_URL` / `AGP_KEY` pointing at the booted platform and must
 * pass. The suite covers an allowed action read back from the run's ledger, a block (raised and returned), a
 * downgrade, an escalation approved and rejected over HTTP while the agent waits, a kill switch engaged while a run
 * is going, fail modes and max staleness with the platform unreachable, idempotent replay, the decorator and the
 * asyncio variant, a rate limit under concurrent threads, the durable spool (a restart delivers exactly once; a
 * corrupt file is quarantined), fleet-wide limits through leases (four agent processes of the installed package admit
 * exactly a shared session budget and an agent-scoped rate limit), the PII guardrail on results and argument schemas.
 * Without python3 and pytest the file skips with one printed reason; without a Python that can build wheels
 * (setuptools and wheel) the suite runs from the source tree (PYTHONPATH) and says so.
 * Source: docs/sdk-python.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeModes } from '../support/modes.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SDK = join(ROOT, 'sdks/python');

/** Whether `python` imports every module of `modules` (exit 0). */
const imports = (python: string, modules: string) => spawnSync(python, ['-c', `import ${modules}`], { stdio: 'ignore' }).status === 0;

/** Why the suite cannot run here (no python3, or no pytest for it), or null. */
const missing = (() => {
  const probe = spawnSync('python3', ['-c', 'import pytest'], { stdio: 'ignore' });
  if (probe.error) return 'python3 not found';
  return probe.status === 0 ? null : 'pytest is not installed for python3';
})();
if (missing) console.warn(`[python sdk] skipped: ${missing}`);

/** How the suite runs: the venv's python with the installed wheel, or python3 with the source tree on PYTHONPATH. */
let python = 'python3';
let extraEnv: Record<string, string> = {};
let work = '';

/** Run a command without blocking the event loop (the embedded platform answers from this process); its exit code and output. */
function run(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

describe.skipIf(missing !== null)('python sdk', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'agp-pysdk-'));
    // The wheel, built from a copy of the package (the checkout gets no build/ or egg-info), by a Python with setuptools and wheel.
    const builder = ['python3', '/usr/bin/python3'].find((p) => imports(p, 'setuptools, wheel'));
    if (!builder) {
      console.warn('[python sdk] no Python here has setuptools and wheel: the suite runs from the source tree (PYTHONPATH=sdks/python), not the installed wheel');
      extraEnv = { PYTHONPATH: SDK };
      return;
    }
    const src = join(work, 'src');
    cpSync(SDK, src, { recursive: true, filter: (f) => !/[/\\](build|tests|[^/\\]*\.egg-info|__pycache__)$/.test(f) });
    const t0 = performance.now();
    const built = await run(builder, ['-m', 'pip', 'wheel', '--no-index', '--no-deps', '--no-build-isolation', src, '-w', join(work, 'dist')]);
    expect(built.code, built.out).toBe(0);
    const venv = join(work, 'venv');
    const made = await run('python3', ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
    expect(made.code, made.out).toBe(0);
    const wheel = join(work, 'dist', readdirSync(join(work, 'dist')).find((f) => f.endsWith('.whl')) as string);
    const installed = await run(builder, ['-m', 'pip', '--python', join(venv, 'bin/python'), 'install', '--no-index', '--no-deps', wheel]);
    expect(installed.code, installed.out).toBe(0);
    python = join(venv, 'bin/python');
    extraEnv = { AGP_TEST_INSTALLED: '1' };
    console.log(`[python sdk] wheel built and installed into a fresh venv in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }, 180_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  describeModes('Governor end to end', (platform, mode) => {
    it('the pytest suite sdks/python/tests/e2e passes against the platform', async () => {
      const p = platform();
      const t0 = performance.now();
      const r = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-s', 'sdks/python/tests/e2e'], { AGP_URL: p.url, AGP_KEY: p.writeKey, ...extraEnv }, 170_000);
      const summary = r.out.trim().split('\n').filter((l) => /passed|failed|error|kill switch engaged|approve ->/.test(l));
      console.log(`[python sdk ${mode}] ${summary.join(' | ')} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      expect(r.code, r.out.slice(-6000)).toBe(0);
      expect(r.out).toMatch(/\b(1[5-9]|[2-9]\d) passed\b/);
      expect(r.out).not.toMatch(/\bskipped\b/);
    }, 180_000);

    it('examples/python-support-agent meets every decision it promises (--auto-approve)', async () => {
      const p = platform();
      const r = await run(python, ['examples/python-support-agent/agent.py', '--auto-approve'], { AGP_URL: p.url, AGP_KEY: p.writeKey, AGP_AGENT_ID: `py-example-${mode}-${Date.now()}`, ...extraEnv }, 120_000);
      expect(r.code, r.out.slice(-4000)).toBe(0);
      for (const label of ['allow', 'warn', 'pii', 'downgrade', 'replay', 'loop', 'block', 'approved', 'budget']) expect(r.out).toMatch(new RegExp(`^  ${label} +\\w+`, 'm'));
      expect(r.out).toMatch(/13 tool calls, decisions: allow, warn, pii, downgrade, replay, loop, block, approval, budget\./);
      expect(r.out).not.toMatch(/✗ expected/);
    }, 150_000);
  });
});
