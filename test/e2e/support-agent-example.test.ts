/**
 * examples/support-agent, run as a newcomer runs it (`node --import tsx examples/support-agent/agent.ts
 * --auto-approve`, what `npm run example:support-agent -- --auto-approve` runs) in a child process against an embedded
 * platform started here, its URL and write key in AGP_URL / AGP_KEY. The example is a Vercel AI SDK agent (generateText
 * with the framework's scripted test model) whose tools `@agp/sdk/ai` governs. Checks that it exits 0, prints one line
 * per decision (a stopped call reaching the model as its refusal) and the console URL, and that every decision it
 * promises is on the platform: the interventions of its
 * agent by type and outcome (warning, pii_blocked, downgrade, idempotent_replay, loop_detected, hard_block,
 * approval_required approved_after_review, budget_exceeded) and the allowed calls' ledger entries. One of its policies is
 * pre-created with another setting, so the run must bring it back (policies are ensured, not piled up). And without a
 * key it says how to get one. Source: docs/sdk.md §Example.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const AGENT = 'support-agent-example';
let p: BootedPlatform;

/** Run the example with `env` added; resolves its exit code and output. */
function runExample(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/support-agent/agent.ts', ...args], { cwd: root, env: { ...process.env, AGP_URL: '', AGP_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  p = await bootEmbedded();
}, 120_000);
afterAll(async () => {
  await p?.stop();
});

describe('examples/support-agent', () => {
  it('runs every decision against the platform with --auto-approve, exits 0, and the platform holds each intervention', async () => {
    // A policy of the example's, edited since (warn instead of block): the example must set it back.
    const edited = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `${AGENT}: payment data`, agent_ids: [AGENT], guardrails: { pii: { mode: 'warn', categories: ['payment_card'] } } } });
    expect(edited.status).toBe(201);

    const { code, stdout, stderr } = await runExample({ AGP_URL: p.url, AGP_KEY: p.writeKey }, ['--auto-approve']);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain(`"${AGENT}: payment data" updated`);
    for (const label of ['allow', 'warn', 'pii', 'downgrade', 'replay', 'loop', 'block', 'approval', 'approved', 'budget']) expect(stdout).toMatch(new RegExp(`^  ${label} +\\w+`, 'm'));
    expect(stdout).toMatch(/^  block +delete_customer_data +not executed: .*denied action.*\(the model got the refusal\)$/m);
    expect(stdout).toContain('agent:    I refunded 100 USD');
    expect(stdout).toContain(`The console shows this agent's interventions: ${p.url}/interventions?agent_id=${AGENT}`);
    const runId = /^run (\S+)$/m.exec(stdout)?.[1];
    expect(runId).toBeTruthy();

    const policy = await call(p, 'GET', `/api/v1/policies/${edited.body.id}`, { key: p.readKey });
    expect(policy.body.guardrails.pii).toEqual({ mode: 'block', categories: ['payment_card', 'iban', 'us_ssn', 'secret'] });

    // Every promised decision, as the platform stored it (the escalation becomes approved_after_review once approved).
    const expected: Array<[string, string, string]> = [
      ['warning', 'warned', 'add_ticket_note'],
      ['pii_blocked', 'blocked', 'add_ticket_note'],
      ['downgrade', 'modified', 'issue_refund'],
      ['idempotent_replay', 'blocked', 'send_email'],
      ['loop_detected', 'blocked', 'check_ticket_status'],
      ['hard_block', 'blocked', 'delete_customer_data'],
      ['approval_required', 'approved_after_review', 'close_account'],
      ['budget_exceeded', 'blocked', 'book_specialist_callback'],
    ];
    const recs = await eventually(async () => {
      const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${AGENT}&run_id=${runId}&limit=100`, { key: p.readKey });
      const list = r.body.interventions as any[];
      return expected.every(([type, outcome]) => list.some((i) => i.type === type && i.outcome === outcome)) ? list : null;
    }, 20_000);
    expect(recs.map((r) => [r.type, r.outcome, r.action_name]).sort()).toEqual([...expected].sort());
    expect(recs.find((r) => r.type === 'downgrade')).toMatchObject({ original_inputs: { amount: 250 }, modified_inputs: { amount: 100 } });
    expect(recs.find((r) => r.type === 'pii_blocked').context).toMatchObject({ guardrail_schema_version: 1, guardrail: 'pii', categories: ['payment_card'], fields: ['note'] });

    // Allowed calls ran and are in the run's ledger; stopped ones are recorded as blocked.
    const run = await eventually(async () => {
      const r = await call(p, 'GET', `/api/v1/runs/${runId}`, { key: p.readKey });
      return r.status === 200 && r.body.status === 'completed' && r.body.actions.length >= 12 ? r.body : null; // 13 calls; the replay runs nothing and records no ledger entry
    }, 20_000);
    const ledger = (run.actions as any[]).map((a) => `${a.action_name}:${a.status}`);
    for (const ok of ['lookup_order:success', 'send_email:success', 'issue_refund:success', 'close_account:success']) expect(ledger).toContain(ok);
    expect(ledger.filter((l) => l === 'check_ticket_status:success')).toHaveLength(3);
    expect(ledger).toContain('delete_customer_data:blocked');
  }, 180_000);

  it('without AGP_KEY and without the quickstart key file, it says how to get a key and exits 1', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agp-example-'));
    try {
      const { code, stderr } = await runExample({ AGP_DATA_DIR: empty });
      expect(code).toBe(1);
      expect(stderr).toContain('set AGP_KEY to a write key, or start the platform with `npm run quickstart`');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);
});
