import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_MS, RETRY_JITTER, nextAttemptAt, parseRetrySchedule, shouldDisable } from './schedule.js';

describe('webhook retry schedule', () => {
  it('spends under 24 h in all, even with the largest jitter', () => {
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0) * (1 + RETRY_JITTER);
    expect(total).toBeLessThan(24 * 3_600_000);
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([...DEFAULT_RETRY_SCHEDULE_MS].sort((a, b) => a - b));
  });

  it('backs off by the schedule with ±20 % jitter, and stops when it is spent', () => {
    const schedule = [1000, 4000];
    expect(nextAttemptAt(schedule, 1, 0, () => 0)).toBe(800);
    expect(nextAttemptAt(schedule, 1, 0, () => 0.5)).toBe(1000);
    expect(nextAttemptAt(schedule, 2, 10_000, () => 0.999999)).toBe(14_800);
    expect(nextAttemptAt(schedule, 3, 0)).toBeNull();
  });

  it('parses AGP_WEBHOOK_RETRY_SCHEDULE_MS and names bad entries', () => {
    expect(parseRetrySchedule(undefined)).toEqual(DEFAULT_RETRY_SCHEDULE_MS);
    expect(parseRetrySchedule(' 200, 400 ,800')).toEqual([200, 400, 800]);
    expect(() => parseRetrySchedule('200,x,0,90000000')).toThrow('x, 0, 90000000');
  });

  it('disables a subscription only after N failures spanning the window', () => {
    const rule = { failures: 3, windowMs: 60_000 };
    expect(shouldDisable(rule, 2, 0, 120_000)).toBe(false);
    expect(shouldDisable(rule, 3, 0, 30_000)).toBe(false);
    expect(shouldDisable(rule, 3, 0, 60_000)).toBe(true);
  });
});
