/**
 * The retry schedule of webhook deliveries and the rule that disables a failing subscription. Pure: time comes in.
 * Source: docs/notifications.md (Retries).
 */

/**
 * Delays before each retry, in ms: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 6 h, 6 h (19 h 42 min 35 s in
 * all, under 24 h even with the +20 % jitter). The first attempt is made at once; after the last retry fails the
 * delivery is `failed`.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 21_600_000, 21_600_000];

/** Jitter of each delay: the delay is multiplied by a factor drawn evenly from [1 - JITTER, 1 + JITTER]. */
export const RETRY_JITTER = 0.2;

/**
 * Parse `AGP_WEBHOOK_RETRY_SCHEDULE_MS`: comma-separated delays in ms (e.g. `200,400,800`), each 1 ms to 24 h.
 * @throws Error naming the bad entries.
 */
export function parseRetrySchedule(value: string | undefined): number[] {
  if (value === undefined || value.trim() === '') return [...DEFAULT_RETRY_SCHEDULE_MS];
  const parts = value.split(',').map((p) => p.trim());
  const bad = parts.filter((p) => !/^[1-9][0-9]{0,7}$/.test(p) || Number(p) > 86_400_000);
  if (bad.length) throw new Error(`not a delay in ms between 1 and 86400000: ${bad.join(', ')}`);
  return parts.map(Number);
}

/**
 * When a delivery that failed its `attempt`-th attempt of the current round (from 1) is tried again, or null when the
 * schedule is spent (the delivery fails).
 * @param random a number in [0, 1) (Math.random by default) for the jitter.
 * @returns epoch ms of the next attempt, or null.
 */
export function nextAttemptAt(schedule: readonly number[], attempt: number, nowMs: number, random: () => number = Math.random): number | null {
  const delay = schedule[attempt - 1];
  if (delay === undefined) return null;
  return nowMs + Math.round(delay * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

/** When a failing subscription is disabled: `failures` consecutive failed attempts, the first at least `windowMs` ago. */
export interface DisableRule {
  failures: number;
  windowMs: number;
}

/** The default {@link DisableRule}: 10 consecutive failed attempts spanning at least 1 h. */
export const DEFAULT_DISABLE_RULE: DisableRule = { failures: 10, windowMs: 3_600_000 };

/**
 * Whether a subscription whose attempts have failed `consecutive` times in a row, since `failingSinceMs`, is disabled.
 */
export function shouldDisable(rule: DisableRule, consecutive: number, failingSinceMs: number, nowMs: number): boolean {
  return consecutive >= rule.failures && nowMs - failingSinceMs >= rule.windowMs;
}
