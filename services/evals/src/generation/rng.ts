/**
 * The seeded generator of the template pass: mulberry32 (32-bit state), the same algorithm as the fleet simulator's
 * `createRng` in packages/simulator/src/prng.ts (not imported: a service does not depend on the simulator, a client
 * package). Same seed, same draws. Source: docs/scenario-format.md (What the generator writes: same request and seed, same scenarios).
 */
export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** One element, uniformly (undefined for an empty list). */
  pick<T>(items: readonly T[]): T;
  /** `n` lowercase hex digits. */
  hex(n: number): string;
  /** A copy of `items` in a random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

/** A {@link SeededRandom} from `seed` (any integer; reduced to 32 bits). */
export function seededRandom(seed: number): SeededRandom {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let z = Math.imul(s ^ (s >>> 15), s | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: (items) => items[Math.floor(next() * items.length)],
    hex: (n) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join(''),
    shuffle(items) {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
  };
}
