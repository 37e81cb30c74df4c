/**
 * A seeded pseudo-random generator with the draws the fleet simulator needs. Same seed, same sequence:
 * mulberry32 (32-bit state, period 2^32), which is plenty for test data and fits in a few lines.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** One key of `weights`, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Partial<Record<K, number>>>): K;
  /** Standard normal N(0, 1) (Box–Muller). */
  normal(): number;
  /** Log-normal with the given median and log-space standard deviation. */
  logNormal(median: number, sigma: number): number;
  /** `n` lowercase hex digits. */
  hex(n: number): string;
  /** A UUID-shaped string (version nibble 4) drawn from this generator. */
  uuid(): string;
}

/** Create a {@link Rng} from a seed; any integer works (it is reduced to 32 bits). */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
    weighted(weights) {
      const entries = Object.entries(weights) as Array<[never, number]>;
      let r = next() * entries.reduce((sum, [, w]) => sum + w, 0);
      for (const [k, w] of entries) {
        r -= w;
        if (r < 0) return k;
      }
      return entries[entries.length - 1][0];
    },
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
    logNormal: (median, sigma) => median * Math.exp(sigma * rng.normal()),
    hex: (n) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join(''),
    uuid: () => {
      const h = rng.hex(32);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[rng.int(0, 3)]}${h.slice(17, 20)}-${h.slice(20)}`;
    },
  };
  return rng;
}
