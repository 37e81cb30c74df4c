/**
 * Read-model answers tagged with the projection position they were read at. An answer is served again only while
 * the projection is still at that position, so a hit is never staler than a query made at the same moment; any
 * event the projection applies makes every older answer a miss. Used for list pages and stats answers, which
 * dashboards ask for repeatedly between changes. Source: docs/decisions.md (position-tagged caches).
 */
export class ProjectionAnswerCache<V = unknown> {
  private readonly entries = new Map<string, { position: bigint; value: V }>();

  /** @param maxEntries most answers kept; when full, the cache starts over (answers are cheap to recompute); 0 turns caching off. */
  constructor(private readonly maxEntries = 256) {}

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
}
