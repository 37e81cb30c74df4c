import { describe, expect, it } from 'vitest';
import { ProjectionAnswerCache } from './answer-cache.js';

describe('ProjectionAnswerCache', () => {
  it('serves an answer again only while the projection position is unchanged', async () => {
    const cache = new ProjectionAnswerCache<number>();
    let reads = 0;
    const read = async () => ++reads;
    expect(await cache.get('k', 5n, read)).toBe(1);
    expect(await cache.get('k', 5n, read)).toBe(1);
    expect(await cache.get('k', 6n, read)).toBe(2);
    expect(await cache.get('other', 6n, read)).toBe(3);
    expect(reads).toBe(3);
  });
  it('caches nothing without a position, keeps nothing on error, and starts over when full', async () => {
    const cache = new ProjectionAnswerCache<string>(2);
    let reads = 0;
    const read = async () => `v${++reads}`;
    await cache.get('a', undefined, read);
    expect(await cache.get('a', undefined, read)).toBe('v2');
    await expect(cache.get('b', 1n, async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await cache.get('b', 1n, read)).toBe('v3');
    await cache.get('c', 1n, read);
    await cache.get('d', 1n, read); // full: starts over
    expect(await cache.get('b', 1n, read)).toBe('v6');
  });
  it('caches nothing with maxEntries 0', async () => {
    const cache = new ProjectionAnswerCache<number>(0);
    let reads = 0;
    await cache.get('k', 1n, async () => ++reads);
    expect(await cache.get('k', 1n, async () => ++reads)).toBe(2);
  });
});
