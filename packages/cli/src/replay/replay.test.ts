import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { actionCostUsd, bundleHashInput } from '@agp/contracts';
import { BundleVerificationError, replayBundle, replayStatus, sameOutput, submissionBody, submissionId, toHandlerModule, verifyBundle, type ReplayHandler } from './replay.js';

const action = (i: number, name: string, inputs: Record<string, unknown>, outputs: unknown, cost: { cost_usd?: number | null; actual_cost_usd?: number | null } = {}) => ({
  id: `a${i}`,
  run_id: 'r1',
  agent_id: 'ag',
  action_name: name,
  status: 'success',
  timestamp: `2026-03-01T10:00:0${i}.000Z`,
  cost_usd: cost.cost_usd ?? null,
  actual_cost_usd: cost.actual_cost_usd ?? null,
  duration_ms: 5,
  inputs,
  outputs,
  error: null,
  purpose: 'production' as const,
});

function makeBundle(actions: ReturnType<typeof action>[]) {
  const doc: Record<string, unknown> = {
    bundle_version: 1,
    generated_at: '2026-03-01T11:00:00.000Z',
    run: { id: 'r1', agent_id: 'ag', name: null, status: 'completed', started_at: '2026-03-01T10:00:00.000Z', ended_at: '2026-03-01T10:00:09.000Z', duration_ms: 9000, cost_usd: 1, estimated_cost_usd: 1, actual_cost_usd: 1, action_count: actions.length, error: null, purpose: 'production' },
    actions,
    interventions: [],
    policies: [],
  };
  doc.sha256 = createHash('sha256').update(bundleHashInput(doc as never)).digest('hex');
  return doc;
}

describe('verifyBundle', () => {
  it('accepts an intact bundle (sha256 and matching ETag) and refuses a tampered one or a wrong ETag', () => {
    const raw = makeBundle([action(0, 'add', { a: 1, b: 2 }, { sum: 3 })]);
    const parsed = verifyBundle(raw, `"${raw.sha256}"`);
    expect(parsed.sha256).toBe(raw.sha256);
    const tampered = structuredClone(raw) as { actions: Array<{ outputs: unknown }> };
    tampered.actions[0]!.outputs = { sum: 4 };
    expect(() => verifyBundle(tampered)).toThrow(/bundle hash mismatch/);
    expect(() => verifyBundle(raw, '"' + '0'.repeat(64) + '"')).toThrow(/bundle hash mismatch.*ETag/);
    // generated_at is outside the hash
    expect(() => verifyBundle({ ...raw, generated_at: '2030-01-01T00:00:00.000Z' })).not.toThrow();
    expect(() => verifyBundle({ ...raw, sha256: 'nope' })).toThrow(BundleVerificationError);
  });
});

describe('compare, cost and status', () => {
  it('compares by canonical JSON', () => {
    expect(sameOutput({ a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 })).toBe(true);
    expect(sameOutput({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameOutput(null, undefined)).toBe(true);
    expect(sameOutput([1, 2], [2, 1])).toBe(false);
  });
  it('cost: actual else estimate else 0 (the one rule of @agp/contracts)', () => {
    expect(actionCostUsd({ cost_usd: 1, actual_cost_usd: 2 })).toBe(2);
    expect(actionCostUsd({ cost_usd: 1, actual_cost_usd: null })).toBe(1);
    expect(actionCostUsd({ cost_usd: null, actual_cost_usd: null })).toBe(0);
    expect(actionCostUsd({ actual_cost_usd: 0 })).toBe(0);
  });
  it('status from the counts', () => {
    expect(replayStatus(0, 0)).toBe('failed');
    expect(replayStatus(3, 0)).toBe('completed');
    expect(replayStatus(3, 1)).toBe('partial');
    expect(replayStatus(3, 3)).toBe('diverged');
  });
  it('submission id is stable per run, handler path and start time', () => {
    expect(submissionId('r1', '/h.mjs', 't')).toBe(submissionId('r1', '/h.mjs', 't'));
    expect(submissionId('r1', '/h.mjs', 't')).not.toBe(submissionId('r1', '/h.mjs', 't2'));
    expect(submissionId('x'.repeat(400), '/h', 't').length).toBeLessThanOrEqual(256);
  });
});

describe('replayBundle', () => {
  it('replays in order: match, divergence, throw, no handler, non-deterministic (list and marker)', async () => {
    const clock: ReplayHandler = () => ({ now: Date.now() });
    clock.nondeterministic = true;
    const mod = toHandlerModule({
      handlers: {
        add: ({ a, b }: Record<string, unknown>) => ({ sum: (a as number) + (b as number) }),
        upper: async ({ text }: Record<string, unknown>) => ({ text: String(text).toUpperCase() }),
        boom: () => {
          throw new Error('kaput');
        },
        rnd: () => Math.random(),
        clock,
      },
      nondeterministic: ['rnd'],
    });
    const bundle = makeBundle([
      action(0, 'add', { a: 1, b: 2 }, { sum: 3 }, { cost_usd: 0.5, actual_cost_usd: 0.25 }),
      action(1, 'upper', { text: 'hi' }, { text: 'HI!' }, { cost_usd: 0.125 }),
      action(2, 'boom', {}, { ok: true }, { cost_usd: 1 }),
      action(3, 'unknown', {}, 1, { cost_usd: 100 }),
      action(4, 'rnd', {}, 0.5, { cost_usd: 100 }),
      action(5, 'clock', {}, { now: 1 }, { cost_usd: 100 }),
    ]);
    const steps: string[] = [];
    const r = await replayBundle(bundle as never, mod, (step, a, outcome) => steps.push(`${step}:${a.action_name}:${outcome}`));
    expect(steps).toEqual(['0:add:match', '1:upper:diverged', '2:boom:diverged', '3:unknown:skipped-no-handler', '4:rnd:skipped-nondeterministic', '5:clock:skipped-nondeterministic']);
    expect(r).toMatchObject({ actions_total: 6, actions_replayed: 3, skipped_no_handler: 1, skipped_nondeterministic: 2, divergences: 2, cost_savings: 1.375, status: 'partial' });
    expect(r.divergence_details).toEqual([
      { step: 1, action_name: 'upper', expected: { text: 'HI!' }, actual: { text: 'HI' } },
      { step: 2, action_name: 'boom', expected: { ok: true }, actual: { error: 'kaput' } },
    ]);
    const body = JSON.parse(submissionBody(r, { id: 's1', started_at: '2026-03-01T10:00:00.000Z', completed_at: '2026-03-01T10:00:01.000Z', client_version: 'agp-cli/0.1.0' }));
    expect(body).toMatchObject({ id: 's1', actions_replayed: 3, divergences: 2, status: 'partial', duration_ms: 1000, cost_savings: 1.375 });
  });
  it('nothing replayed → failed; a module without handlers is refused', async () => {
    const r = await replayBundle(makeBundle([action(0, 'x', {}, 1)]) as never, toHandlerModule({ default: { handlers: {} } }));
    expect(r).toMatchObject({ actions_replayed: 0, status: 'failed', cost_savings: 0 });
    expect(() => toHandlerModule({})).toThrow(/no `handlers`/);
    expect(() => toHandlerModule({ handlers: { a: 1 } })).toThrow(/not a function/);
  });
});
