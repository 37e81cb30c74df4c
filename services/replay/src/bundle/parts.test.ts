import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '@agp/contracts';
import { RecentBundles, splitActions } from './parts.js';

/** A ledger entry of about `bytes` bytes of JSON (only its size and order matter here). */
const entry = (i: number, bytes = 100) => ({ id: `a-${i}`, output: 'x'.repeat(bytes) }) as unknown as LedgerEntry;

describe('splitActions', () => {
  it('keeps order, fills parts up to the limit and never leaves an action out', () => {
    const actions = Array.from({ length: 25 }, (_, i) => entry(i));
    const parts = splitActions(actions, 1000);
    expect(parts.flat()).toEqual(actions);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(1000);
  });
  it('gives an action larger than the limit a part of its own, and no part for no action', () => {
    const parts = splitActions([entry(0), entry(1, 5000), entry(2)], 1000);
    expect(parts.map((p) => p.map((a) => a.id))).toEqual([['a-0'], ['a-1'], ['a-2']]);
    expect(splitActions([], 1000)).toEqual([]);
  });
});

describe('RecentBundles', () => {
  it('holds a bundle by organisation, run and hash until it expires or is evicted', () => {
    let t = 0;
    const recent = new RecentBundles(2, 100, () => t);
    recent.put('org', 'run', { sha256: 'a', parts: [[entry(0)]] });
    expect(recent.get('org', 'run', 'a')?.parts).toEqual([[entry(0)]]);
    expect(recent.get('other', 'run', 'a')).toBeUndefined();
    expect(recent.get('org', 'run', 'b')).toBeUndefined();
    recent.put('org', 'run', { sha256: 'b', parts: [] });
    recent.put('org', 'run', { sha256: 'c', parts: [] });
    expect(recent.get('org', 'run', 'a')).toBeUndefined();
    expect(recent.get('org', 'run', 'c')).toBeDefined();
    t = 100;
    expect(recent.get('org', 'run', 'c')).toBeUndefined();
  });
});
