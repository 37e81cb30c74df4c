/**
 * The answer-size rules of the evals queries, without I/O: pages hold what fits one answer (at least one item), and a
 * comparison too large for one answer lists what fits and says what it left out. Source: spec §Evals; docs/decisions.md (Evals).
 */
import { describe, expect, it } from 'vitest';
import { SubmitEvalRunSchema, compareEvalRuns, evalRunOf, type EvalRunDetail } from '@agp/contracts';
import { fitComparison, fittingCount } from './queries.js';

describe('fittingCount', () => {
  it('takes the longest prefix within the budget (a comma after each), but always one', () => {
    expect(fittingCount(['aaaa', 'bbbb', 'cccc'], 10)).toBe(2);
    expect(fittingCount(['aaaa', 'bbbb', 'cccc'], 15)).toBe(3);
    expect(fittingCount(['a'.repeat(100), 'b'], 10)).toBe(1);
    expect(fittingCount([], 10)).toBe(0);
  });
});

describe('fitComparison', () => {
  const run = (id: string, names: string[], status: 'blocked' | 'failed'): EvalRunDetail =>
    evalRunOf(SubmitEvalRunSchema.parse({ suite: 's', agent_id: 'a', scenarios: names.map((name) => ({ name, category: 'c', status })) }), {
      id,
      organization_id: 'acme',
      created_at: '2026-01-01T00:00:00.000Z',
      baseline: null,
    });
  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

  it('leaves a comparison that fits unchanged', () => {
    const cmp = compareEvalRuns(run('b', names('x', 10), 'blocked'), run('c', names('x', 10), 'failed'));
    const before = JSON.stringify(cmp);
    expect(JSON.stringify(fitComparison(cmp, 100_000))).toBe(before);
  });

  it('drops scenarios on one side only first, keeps the regressions, and says how many of each list are shown', () => {
    const cmp = compareEvalRuns(run('b', [...names('r', 20), ...names('gone', 300)], 'blocked'), run('c', [...names('r', 20), ...names('new', 300)], 'failed'));
    expect(cmp.regressions).toHaveLength(20);
    const fitted = fitComparison(cmp, 12_000);
    expect(Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(12_000 + 1024);
    expect(fitted.regressions).toHaveLength(20);
    expect(fitted.only_in_baseline).toHaveLength(0);
    expect(fitted.only_in_current.length).toBeLessThan(300);
    expect(fitted.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^only 0 of the 300 entries of only_in_baseline are listed/),
        expect.stringMatching(new RegExp(`^only ${fitted.only_in_current.length} of the 300 entries of only_in_current are listed`)),
      ]),
    );
  });
});
