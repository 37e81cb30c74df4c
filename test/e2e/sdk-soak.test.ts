/**
 * Soak: one agent process (plain `node` on the built SDK, test/support/sdk-soak-agent.mjs) acts as fast as it can for
 * AGP_SOAK_MS (20 s by default; longer for a local run) against the embedded platform run as a user runs it, with a
 * durable spool bounded at 1 MiB: far faster than the platform acknowledges, so the spool reaches its bound and `act`
 * waits for acknowledgements (backpressure) instead of being refused.
 * Asserts: the process exits 0, no act was refused, acts did wait, and every ledger entry arrived (the run's
 * `action_count` through `GET /api/v1/runs/{id}` equals the acts the agent counted).
 * Source: docs/sdk.md (The spool's bound).
 */
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { call, eventually } from '../support/http.js';
import { startEmbeddedProcess, stopQuickstart } from '../support/quickstart.js';

const WRITE_KEY = 'agp_sdk_soak_write_001';
const READ_KEY = 'agp_sdk_soak_read_0001';
const SOAK_MS = Number(process.env.AGP_SOAK_MS ?? 20_000);
const MAX_SPOOL_BYTES = 1024 * 1024;

let platform: ChildProcess | undefined;
let url = '';
const spoolDir = mkdtempSync(join(tmpdir(), 'agp-sdk-soak-'));

beforeAll(async () => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'sdk,embedded', '--quiet'], { cwd: REPO_ROOT });
  ({ child: platform, url } = await startEmbeddedProcess({ AGP_INIT_ORG: 'soak', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY }));
}, 180_000);
afterAll(async () => {
  if (platform) await stopQuickstart(platform);
  rmSync(spoolDir, { recursive: true, force: true });
});

it(`an agent acting flat out for ${SOAK_MS} ms with a 1 MiB file spool lives, is never refused, and every report arrives`, async () => {
  const agentId = `soak-${Math.random().toString(36).slice(2, 10)}`;
  const runId = `${agentId}-run`;
  const { stdout } = await promisify(execFile)(process.execPath, ['test/support/sdk-soak-agent.mjs', url, WRITE_KEY, agentId, runId, spoolDir, String(SOAK_MS), String(MAX_SPOOL_BYTES)], { cwd: REPO_ROOT, timeout: SOAK_MS + 180_000 });
  const out = JSON.parse(stdout) as { acts: number; refused: number; waited: number; delivered: number; pending: number; bytesPerReport: number };
  console.log(`soak: ${JSON.stringify(out)}`);
  expect(out).toMatchObject({ refused: 0, pending: 0 });
  expect(out.acts).toBeGreaterThan(0);
  expect(out.waited).toBeGreaterThan(0);
  // run.start, one ledger entry per act, run.end.
  expect(out.delivered).toBe(out.acts + 2);
  const stored = await eventually(async () => {
    const r = await call({ url }, 'GET', `/api/v1/runs/${runId}`, { key: READ_KEY });
    return r.status === 200 && r.body.action_count === out.acts && r.body.status === 'completed' ? r.body : undefined;
  }, 120_000, 500);
  expect(stored.action_count).toBe(out.acts);
}, SOAK_MS + 360_000);
