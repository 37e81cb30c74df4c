import { describe, expect, it } from 'vitest';
import { DateFilterSchema, DateTimeSchema, UsdSchema } from './common.js';
import { ActionRecordSchema } from './fleet.js';

describe('stored ranges', () => {
  it('accepts date-times from 1000-01-01 to 9999-12-30 UTC only (what PostgreSQL and ISO strings agree on)', () => {
    expect(DateTimeSchema.safeParse('2026-11-23T10:00:00Z').success).toBe(true);
    expect(DateTimeSchema.safeParse('1000-01-01T00:00:00Z').success).toBe(true);
    expect(DateTimeSchema.safeParse('0000-06-01T00:00:00Z').success).toBe(false);
    expect(DateTimeSchema.safeParse('9999-12-31T23:59:59-01:00').success).toBe(false);
    expect(DateFilterSchema.safeParse('9999-12-31').success).toBe(false);
    expect(DateFilterSchema.safeParse('0000-01-01').success).toBe(false);
    expect(DateFilterSchema.safeParse('9999-12-30').success).toBe(true);
  });
  it('caps money and durations so that sums cannot overflow', () => {
    expect(UsdSchema.safeParse(1e9).success).toBe(true);
    expect(UsdSchema.safeParse(1e308).success).toBe(false);
    const action = { run_id: 'r', agent_id: 'a', action_name: 'x', status: 'success' };
    expect(ActionRecordSchema.safeParse({ ...action, duration_ms: 1e308 }).success).toBe(false);
    expect(ActionRecordSchema.safeParse({ ...action, duration_ms: 60_000 }).success).toBe(true);
  });
});
