/**
 * How an assembled run bundle is handed out over the bus: its actions split into parts that each fit one bus message,
 * and a short-lived store of the bundles assembled lately, so a caller fetching the parts one by one does not make the
 * replay service assemble the bundle again for each. Source: spec §Replay history (run bundle); architecture §1
 * (services over NATS, 1 MiB messages).
 */
import type { LedgerEntry } from '@agp/contracts';

/**
 * Split `actions` into consecutive parts of at most `maxBytes` bytes of JSON each (the array's brackets and commas
 * counted), keeping order; a part holds at least one action, so an action larger than `maxBytes` is a part alone.
 * An empty list gives no part. Pure.
 */
export function splitActions(actions: readonly LedgerEntry[], maxBytes: number): LedgerEntry[][] {
  const parts: LedgerEntry[][] = [];
  let current: LedgerEntry[] = [];
  let size = 2;
  for (const action of actions) {
    const bytes = Buffer.byteLength(JSON.stringify(action)) + 1;
    if (current.length && size + bytes > maxBytes) {
      parts.push(current);
      current = [];
      size = 2;
    }
    current.push(action);
    size += bytes;
  }
  if (current.length) parts.push(current);
  return parts;
}

/** A bundle held for its parts: its hash and its actions already split. */
export interface HeldBundle {
  sha256: string;
  parts: LedgerEntry[][];
}

/**
 * The bundles assembled lately, by organisation, run and hash: at most `capacity` of them (the oldest goes first),
 * each for `ttlMs` after it was assembled. A bundle not held any more (expired, evicted, or assembled by another
 * replica of the replay service) is assembled again by the caller.
 */
export class RecentBundles {
  private readonly held = new Map<string, HeldBundle & { expires: number }>();

  /**
   * @param capacity most bundles held at once. @default 8
   * @param ttlMs how long a bundle is held after it was assembled, in ms. @default 60000
   * @param now clock in ms since the epoch; injectable for tests.
   */
  constructor(
    private readonly capacity = 8,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Hold `bundle` for the run `runId` of organisation `org`. */
  put(org: string, runId: string, bundle: HeldBundle): void {
    const key = RecentBundles.key(org, runId, bundle.sha256);
    this.held.delete(key);
    this.held.set(key, { ...bundle, expires: this.now() + this.ttlMs });
    for (const [k, v] of this.held) if (this.held.size > this.capacity || v.expires <= this.now()) this.held.delete(k);
  }

  /** The bundle with hash `sha256` of that run, while it is held; else undefined. */
  get(org: string, runId: string, sha256: string): HeldBundle | undefined {
    const key = RecentBundles.key(org, runId, sha256);
    const entry = this.held.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.held.delete(key);
      return undefined;
    }
    return entry;
  }

  private static key(org: string, runId: string, sha256: string): string {
    return JSON.stringify([org, runId, sha256]);
  }
}
