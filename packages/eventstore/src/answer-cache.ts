import { DEFAULT_ANSWER_CACHE_ENTRIES } from '@agp/runtime';

/**
 * Read-model answers tagged with the projection position they were read at. An answer is served again only while
 * the projection is still at that position, so a hit is never staler than a query made at the same moment; any
 * event the projection applies makes every older answer a miss. Used for list pages and stats answers, which
 * dashboards ask for repeatedly between changes. Source: docs/decisions.md (position-tagged caches).
 */
export class ProjectionAnswerCache<V = unknown> {
  private readonly entries = new Map<string, { position: bigint; value: V }>();

  /** @param maxEntries most answers kept; when full, the cache starts over (answers are cheap to recompute); 0 turns caching off. */
  constructor(private readonly maxEntries = DEFAULT_ANSWER_CACHE_ENTRIES) {}

  /**
   * The cached answer for `key` when it was read at `position`, else `read()`'s answer, kept under `position`.
   * Read `position` from the subscription *before* calling: an answer read while the projection moves is tagged
   * with the older position and so never served after the move. With `position` undefined (no projection
   * running) nothing is cached. Errors from `read` propagate and nothing is kept.
   */
  async get(key: string, position: bigint | undefined, read: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && position !== undefined && hit.position === position) return hit.value;
    const value = await read();
    if (position !== undefined && this.maxEntries > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { position, value });
    }
    return value;
  }

  /**
   * Like {@link get}, for a reader that is not the projection's own process (another replica, the gateway): the
   * position is asked of the database. When `key` has an answer, `position()` (the checkpoint as committed now) says
   * whether it still stands; otherwise, or when it moved, `read()` returns the answer together with the position it
   * was read at, from the same snapshot, and that pair is kept. A hit is therefore never staler than a query made
   * after the request arrived (read-your-writes holds for any writer whose write committed before). A `position` of
   * undefined (no checkpoint yet) is never cached. Errors from either function propagate and nothing is kept.
   */
  async getChecked(key: string, position: () => Promise<bigint | undefined>, read: () => Promise<{ value: V; position: bigint | undefined }>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.position === (await position())) return hit.value;
    const { value, position: at } = await read();
    if (at !== undefined && this.maxEntries > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { position: at, value });
    }
    return value;
  }
}
