/**
 * The eval-run decider without I/O: given a submission and its metadata, when decided, then the stored run.
 * Source: architecture §4 (Eval run).
 */
import { describe, expect, it } from 'vitest';
import { EVAL_MAX_REPLY_BYTES, SubmitEvalRunSchema, normalizeScenario } from '@agp/contracts';
import { PayloadTooLargeError, deterministicId } from '@agp/runtime';
import { decideSubmit, evalRunEventId, evalRunStream, foldEvalRun } from './evalRun.js';

const meta = { id: 'run-1', organization_id: 'acme', now: '2026-03-01T12:00:00.000Z', baseline: null };

describe('decideSubmit', () => {
  it('stores the normalised submission with created_at, UTC times and the computed summary', () => {
    const input = SubmitEvalRunSchema.parse({
      suite: 'smoke',
      agent_id: 'agent-1',
      branch: 'feature/x',
      commit_sha: 'ABCDEF0',
      threshold: 0.5,
      started_at: '2026-03-01T13:00:00+01:00',
      scenarios: [
        { name: 'drop table', category: 'denied_actions', status: 'blocked', damage_usd: 40, detection_time_ms: 12 },
        { name: 'read docs', category: 'benign', expected: 'allow', status: 'allowed', severity: 'low' },
      ],
    });
    const { type, data } = decideSubmit(input, meta);
    expect(type).toBe('EvalRunSubmitted');
    expect(data).toEqual({
      id: 'run-1',
      organization_id: 'acme',
      suite: 'smoke',
      agent_id: 'agent-1',
      branch: 'feature/x',
      commit_sha: 'abcdef0',
      default_branch: 'main',
      source: 'agp',
      created_at: '2026-03-01T12:00:00.000Z',
      started_at: '2026-03-01T12:00:00.000Z',
      completed_at: null,
      summary: expect.objectContaining({ block_rate: 1, correctness_rate: 1, damage_prevented_usd: 40, avg_detection_time_ms: 12, grade: 'A', ci_status: 'pass', threshold: 0.5, ci_baseline_id: null }),
      scenarios: input.scenarios.map(normalizeScenario),
    });
  });

  it('counts regressions against the baseline it is given and fails the CI status', () => {
    const input = SubmitEvalRunSchema.parse({ suite: 's', agent_id: 'a', commit_sha: 'abc1234', scenarios: [{ name: 'x', category: 'c', status: 'failed' }] });
    const baseline = { id: 'base', scenarios: [normalizeScenario({ name: 'x', category: 'c', status: 'blocked' })] };
    expect(decideSubmit(input, { ...meta, baseline }).data.summary).toMatchObject({ regressions: 1, ci_baseline_id: 'base', ci_status: 'fail' });
  });

  it('refuses with 413 a run whose stored scorecard would not fit one answer', () => {
    // What is measured is the stored run (defaults filled in, summary added), not the body it came from.
    const scenarios = Array.from({ length: 5000 }, (_, i) => ({ name: `${'n'.repeat(150)}-${i}`, category: 'c', status: 'blocked' as const }));
    const input = SubmitEvalRunSchema.parse({ suite: 's', agent_id: 'a', scenarios });
    expect(Buffer.byteLength(JSON.stringify(scenarios))).toBeLessThan(EVAL_MAX_REPLY_BYTES);
    expect(() => decideSubmit(input, meta)).toThrow(PayloadTooLargeError);
    expect(() => decideSubmit(input, meta)).toThrow(/scorecard would be \d+ bytes/);
  });
});

describe('eval-run stream', () => {
  it('derives the stream and event ids from the organisation and the run id', () => {
    expect(evalRunStream('acme', 'r1')).toBe(`evalrun-${deterministicId('acme', 'r1')}`);
    expect(evalRunStream('acme', 'r1')).not.toBe(evalRunStream('globex', 'r1'));
    expect(evalRunEventId('acme', 'r1')).not.toBe(evalRunEventId('globex', 'r1'));
  });

  it('folds to the first EvalRunSubmitted, or null for an empty stream', () => {
    const input = SubmitEvalRunSchema.parse({ suite: 's', agent_id: 'a', scenarios: [{ name: 'x', category: 'c', status: 'blocked' }] });
    const first = decideSubmit(input, meta);
    const second = decideSubmit(input, { ...meta, now: '2026-03-02T00:00:00.000Z' });
    expect(foldEvalRun([first, second])).toBe(first.data);
    expect(foldEvalRun([])).toBeNull();
  });
});
