/**
 * The timing loop of `pnpm bench sdk` (./sdk.ts), shared by the bench and its Cedar worker (./sdk-cedar.ts) so that
 * every row is timed the same way.
 */
import { setImmediate as yieldLoop } from 'node:timers/promises';

/** Calls between two turns of the event loop. */
export const CHUNK = 100;

/** One measured function: a call on sample `i`. */
export type Fn = (i: number) => unknown;

/**
 * `n` calls of `fn`, each awaited and timed with `process.hrtime.bigint()` (ns), the event loop running after every
 * {@link CHUNK} calls (timers and I/O run there, as between an agent's actions). Also the process CPU time (µs, user +
 * system) they took.
 */
export async function sample(fn: Fn, n: number): Promise<{ samples: Float64Array; cpuUs: number }> {
  const out = new Float64Array(n);
  const c0 = process.cpuUsage();
  let i = 0;
  while (i < n) {
    const end = Math.min(n, i + CHUNK);
    for (; i < end; i++) {
      const t0 = process.hrtime.bigint();
      await fn(i);
      out[i] = Number(process.hrtime.bigint() - t0);
    }
    await yieldLoop();
  }
  const c = process.cpuUsage(c0);
  return { samples: out, cpuUs: c.user + c.system };
}

/**
 * `count` sequential awaited calls of `fn`, and more until `atLeastMs` have passed (1 s by default; 0: exactly `count`
 * calls, for a row whose every call leaves work behind, e.g. a report to deliver), the event loop running every
 * {@link CHUNK}: calls and ms.
 */
export async function rate(fn: Fn, count: number, atLeastMs = 1000): Promise<{ n: number; ms: number }> {
  const t0 = performance.now();
  let n = 0;
  while (n < count || performance.now() - t0 < atLeastMs) {
    for (let k = 0; k < CHUNK; k++) await fn(n++);
    await yieldLoop();
  }
  return { n, ms: performance.now() - t0 };
}
