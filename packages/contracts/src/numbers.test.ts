import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EvalSummarySchema } from './evals.js';
import { MS_DECIMALS, USD_DECIMALS, decimalsOf, roundNumbers, roundTo, roundUsd } from './numbers.js';
import { ReplayRunHistoryPageSchema } from './replay.js';
import { Wire } from './wire.js';

/** The precision of numbers in answers (docs/api.md, Numbers): USD to 6 decimals, ms to 1, by the reply schema. */
describe('roundTo', () => {
  it('rounds half away from zero on the decimal value, not the binary one', () => {
    expect(roundTo(17.900000000000002, MS_DECIMALS)).toBe(17.9);
    expect(roundTo(14.799999999999999, MS_DECIMALS)).toBe(14.8);
    expect(roundTo(383.02980000000004, USD_DECIMALS)).toBe(383.0298);
    expect(roundTo(1.005, 2)).toBe(1.01);
    expect(roundTo(-2.5, 0)).toBe(-3);
    expect(roundTo(0.1 + 0.2, USD_DECIMALS)).toBe(0.3);
  });

  it('keeps integers, non-finite values and tiny amounts sensible', () => {
    expect(roundTo(42, 1)).toBe(42);
    expect(roundTo(Number.NaN, 1)).toBeNaN();
    expect(roundTo(2.5e-7, USD_DECIMALS)).toBe(0);
    expect(roundTo(7.5e-7, USD_DECIMALS)).toBe(0.000001);
    expect(Object.is(roundTo(-1e-9, USD_DECIMALS), -0)).toBe(false);
  });

  it('roundUsd rounds an amount in USD to the micro-dollar, half away from zero', () => {
    expect([roundUsd(0.1 + 0.2), roundUsd(383.02980000000004), roundUsd(0.0000015), roundUsd(-0.0000015), roundUsd(4e-7)]).toEqual([0.3, 383.0298, 0.000002, -0.000002, 0]);
  });

  it('knows the unit of a field by its name', () => {
    expect(['total_cost_usd', 'cost_savings', 'run_budget', 'cost', 'duration_ms', 'avg_detection_time_ms', 'block_rate', 'total'].map(decimalsOf)).toEqual([6, 6, 6, 6, 1, 1, null, null]);
  });
});

describe('roundNumbers', () => {
  const schema = z.object({
    total_cost_usd: z.number(),
    avg_duration_ms: z.number().nullable(),
    success_rate: z.number(),
    rows: z.array(z.object({ cost_usd: z.number().optional(), inputs: z.unknown(), metadata: z.record(z.string(), z.unknown()) })),
    by_agent: z.record(z.string(), z.object({ cost_usd: z.number() })),
  });

  it('rounds USD and ms fields at every depth, leaves rates and caller JSON alone, and copies instead of mutating', () => {
    const value = {
      total_cost_usd: 383.02980000000004,
      avg_duration_ms: 17.900000000000002,
      success_rate: 0.30000000000000004,
      rows: [{ cost_usd: 0.1 + 0.2, inputs: { amount_usd: 0.1 + 0.2, took_ms: 1.23456 }, metadata: { cost_usd: 0.1 + 0.2 } }],
      by_agent: { a: { cost_usd: 1.0000001 } },
    };
    const before = structuredClone(value);
    const out = roundNumbers(schema, value);
    expect(out).toEqual({
      total_cost_usd: 383.0298,
      avg_duration_ms: 17.9,
      success_rate: 0.30000000000000004,
      rows: [{ cost_usd: 0.3, inputs: { amount_usd: 0.1 + 0.2, took_ms: 1.23456 }, metadata: { cost_usd: 0.1 + 0.2 } }],
      by_agent: { a: { cost_usd: 1 } },
    });
    expect(value).toEqual(before);
    const clean = { ...before, total_cost_usd: 1, avg_duration_ms: null, rows: [], by_agent: {} };
    expect(roundNumbers(schema, clean)).toBe(clean);
  });

  it('rounds the eval summary (avg_detection_time_ms), a run history page and a wire reply with its RawJson alternative', () => {
    const summary = EvalSummarySchema.parse({
      total: 3, adversarial: 3, blocked: 3, passed: 3, block_rate: 1, correctness_rate: 1,
      damage_prevented_usd: 10.123456789, avg_detection_time_ms: 14.799999999999999, grade: 'A', ci_status: null, threshold: 0.9,
      ci_baseline_id: null, regressions: 0, by_category: {},
    });
    expect(roundNumbers(EvalSummarySchema, summary)).toMatchObject({ damage_prevented_usd: 10.123457, avg_detection_time_ms: 14.8 });
    const page = { submissions: [{ id: 's', run_id: 'r', actions_replayed: 1, divergences: 1, cost_savings: 0.1 + 0.2, status: 'diverged', started_at: '', completed_at: '', duration_ms: 1500.04, client_version: 'x', submitted_at: '', divergence_details_count: 1, divergence_details: [{ step: 0, action_name: 'a', expected: 0.1 + 0.2, actual: null }] }], total: 1, skip: 0, limit: 50, aggregates: { submissions: 1, actions_replayed: 1, divergences: 1, cost_saved_usd: 0.1 + 0.2 } };
    const rounded = roundNumbers(ReplayRunHistoryPageSchema, page);
    expect(rounded.submissions[0]).toMatchObject({ cost_savings: 0.3, duration_ms: 1500 });
    expect(rounded.submissions[0].divergence_details[0].expected).toBe(0.1 + 0.2);
    expect(rounded.aggregates.cost_saved_usd).toBe(0.3);
    const raw = { $json: '{"agents":[]}' };
    expect(roundNumbers(Wire['agents.list'].reply, raw)).toBe(raw);
  });
});
