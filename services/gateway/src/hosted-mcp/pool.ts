/**
 * A bounded pool of things that are costly to open and must be closed (the hosted MCP proxy's upstream clients and
 * governors): at most `max` entries, the least recently used closed first when a new one would pass it, and every
 * entry unused for `idleMs` closed by a sweep. An entry whose opening fails is forgotten at once (the next caller
 * opens again). Source: docs/mcp-proxy.md (The hosted proxy: pools).
 */

/** How {@link IdlePool} opens, closes and bounds its entries. */
export interface IdlePoolOptions<V> {
  /** Most entries held; opening one more closes the least recently used. */
  max: number;
  /** An entry unused this long is closed by the next sweep, ms. */
  idleMs: number;
  /** Close one entry (its failures are the caller's to log; the pool forgets the entry either way). */
  close: (value: V, key: string) => Promise<void>;
  /** How often the sweep runs, ms. @default idleMs / 4, at least 1000 */
  sweepMs?: number;
}

interface Entry<V> {
  value: Promise<V>;
  used: number;
}

/** See the module's description. Keys are strings; values are opened by the `open` given to {@link IdlePool.get}. */
export class IdlePool<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly timer: NodeJS.Timeout;
  /** Values retired with a grace period, not closed yet: closed at once by {@link close}. */
  private readonly retired = new Set<() => Promise<void>>();

  constructor(private readonly o: IdlePoolOptions<V>) {
    this.timer = setInterval(() => void this.sweep(), o.sweepMs ?? Math.max(1000, Math.floor(o.idleMs / 4)));
    this.timer.unref();
  }

  /** How many entries are held (open or opening). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The entry of `key`, opened with `open` when there is none (marked used either way).
   * @throws whatever `open` throws (the entry is then forgotten).
   */
  get(key: string, open: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const held = this.entries.get(key);
    if (held) {
      held.used = now;
      // Most recently used last: the Map's order is the eviction order.
      this.entries.delete(key);
      this.entries.set(key, held);
      return held.value;
    }
    const value = open();
    const entry: Entry<V> = { value, used: now };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    while (this.entries.size > this.o.max) {
      const oldest = this.entries.keys().next().value as string;
      void this.drop(oldest);
    }
    return value;
  }

  /** The entry of `key` when there is one (marked used, as by {@link get}), else undefined: nothing is opened. */
  peek(key: string): Promise<V> | undefined {
    return this.entries.has(key) ? this.get(key, () => Promise.reject(new Error('unreachable'))) : undefined;
  }

  /** Forget `key` and close its value (when it opened). */
  async drop(key: string): Promise<void> {
    const held = this.entries.get(key);
    if (!held) return;
    this.entries.delete(key);
    const value = await held.value.catch(() => undefined);
    if (value !== undefined) await this.o.close(value, key).catch(() => {});
  }

  /**
   * Forget `key` (only while it still holds `expected`, when given) and close its value after `graceMs`, so requests
   * already using it can finish (a registration that changed; an upstream that closed by itself: 0).
   */
  async retire(key: string, expected?: V, graceMs = 0): Promise<void> {
    const held = this.entries.get(key);
    if (!held) return;
    const value = await held.value.catch(() => undefined);
    if (value === undefined || (expected !== undefined && value !== expected)) return;
    if (this.entries.get(key) === held) this.entries.delete(key);
    const closing = () => {
      this.retired.delete(closing);
      return this.o.close(value, key).catch(() => {});
    };
    this.retired.add(closing);
    setTimeout(() => void closing(), graceMs).unref();
  }

  /** Close every entry unused for `idleMs`. */
  async sweep(now = Date.now()): Promise<void> {
    const idle = [...this.entries].filter(([, e]) => now - e.used >= this.o.idleMs).map(([k]) => k);
    await Promise.all(idle.map((k) => this.drop(k)));
  }

  /** Stop the sweep and close every entry. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...[...this.entries.keys()].map((k) => this.drop(k)), ...[...this.retired].map((closing) => closing())]);
  }
}
