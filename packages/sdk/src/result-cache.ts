/**
 * The result cache of the idempotency guardrail: the result of each executed call of an action named by a policy's
 * idempotency guardrail, kept for the guardrail's TTL under the call's idempotency key (the caller's
 * `idempotencyKey`, else the hash of the canonical arguments). The decision step asks it whether a call repeats one
 * whose result is still cached (`idempotency_records` of the decision context); an `idempotent_replay` decision
 * answers the cached result without running the action again. Bounded: the oldest entry goes past
 * {@link RESULT_CACHE_MAX_ENTRIES}. Source: docs/sdk.md §Idempotency; spec §Guardrail context payload (idempotency).
 */

/** Most results kept; past it the oldest is dropped (a replay of it then runs the action again). */
export const RESULT_CACHE_MAX_ENTRIES = 10_000;

/** One cached result: what the call returned, when (ms since the epoch), its ledger report id, and when it expires (ms). */
export interface CachedResult {
  result: unknown;
  at: number;
  ref: string;
  expiresAt: number;
}

/** See the module docs. Keys are (action name, idempotency key). */
export class ResultCache {
  private readonly entries = new Map<string, CachedResult>();

  /** The live entry of `name` under `key` at `now` (ms), or undefined when none was kept or it expired. */
  get(name: string, key: string, now: number = Date.now()): CachedResult | undefined {
    const e = this.entries.get(`${name}\u0000${key}`);
    return e !== undefined && e.expiresAt > now ? e : undefined;
  }

  /** Keep `result` of `name` under `key` for `ttlMs`; `ref` is the ledger report id of the call that produced it. */
  set(name: string, key: string, result: unknown, ref: string, ttlMs: number): void {
    const now = Date.now();
    this.entries.set(`${name}\u0000${key}`, { result, at: now, ref, expiresAt: now + ttlMs });
    if (this.entries.size > RESULT_CACHE_MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Entries kept (expired ones included until they are replaced or pushed out). */
  get size(): number {
    return this.entries.size;
  }
}
