import { afterEach, describe, expect, it } from 'vitest';
import { IdlePool } from './pool.js';

/** A pool of named values recording what it closed. */
function pool(o: { max?: number; idleMs?: number } = {}) {
  const closed: string[] = [];
  const p = new IdlePool<string>({ max: o.max ?? 2, idleMs: o.idleMs ?? 60_000, close: async (v) => void closed.push(v) });
  pools.push(p);
  return { p, closed };
}
const pools: IdlePool<string>[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('IdlePool (the hosted MCP proxy pools)', () => {
  it('opens once per key, closes the least recently used past max, and forgets a failed open', async () => {
    const { p, closed } = pool({ max: 2 });
    let opened = 0;
    const open = (v: string) => async () => (opened++, v);
    expect(await p.get('a', open('A'))).toBe('A');
    expect(await p.get('a', open('A2'))).toBe('A');
    await p.get('b', open('B'));
    await p.get('a', open('A3')); // a is now the most recently used
    await p.get('c', open('C'));
    await new Promise((r) => setImmediate(r));
    expect(closed).toEqual(['B']);
    expect(p.size).toBe(2);
    expect(opened).toBe(3);
    await expect(p.get('d', async () => Promise.reject(new Error('unreachable')))).rejects.toThrow('unreachable');
    await new Promise((r) => setImmediate(r));
    expect(await p.get('d', open('D'))).toBe('D');
  });

  it('closes entries idle past idleMs on a sweep, a retired one after its grace, and every one at close', async () => {
    const { p, closed } = pool({ max: 10, idleMs: 1000 });
    await p.get('a', async () => 'A');
    await p.get('b', async () => 'B');
    await p.sweep(Date.now() + 500);
    expect(closed).toEqual([]);
    await p.sweep(Date.now() + 1500);
    expect(closed.sort()).toEqual(['A', 'B']);
    await p.get('c', async () => 'C');
    await p.retire('c', 'other'); // not the value held: kept
    expect(p.size).toBe(1);
    await p.retire('c', 'C', 60_000);
    expect(p.size).toBe(0);
    expect(closed).not.toContain('C');
    await p.get('d', async () => 'D');
    await p.close();
    expect(closed).toEqual(expect.arrayContaining(['C', 'D']));
  });

  it('peek: the entry held, marked used (a sweep keeps it), without opening one', async () => {
    const { p, closed } = pool({ max: 10, idleMs: 1000 });
    expect(p.peek('a')).toBeUndefined();
    expect(p.size).toBe(0);
    await p.get('a', async () => 'A');
    await p.get('b', async () => 'B');
    await new Promise((r) => setTimeout(r, 30));
    const before = Date.now();
    expect(await p.peek('a')).toBe('A');
    // b was last used before a's peek: a sweep that makes b idle but not a closes b only.
    await p.sweep(before + 1000 - 1);
    expect(closed).toEqual(['B']);
    expect(await p.peek('a')).toBe('A');
  });
});
