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
  it('getChecked: asks the committed position only for a kept answer, and keeps each answer with the position it was read at', async () => {
    const cache = new ProjectionAnswerCache<string>();
    let committed: bigint | undefined = 5n;
    let positionReads = 0;
    let reads = 0;
    const position = async () => (positionReads++, committed);
    const read = async () => ({ value: `v${++reads}@${committed}`, position: committed });
    expect(await cache.getChecked('k', position, read)).toBe('v1@5');
    expect(positionReads).toBe(0); // a miss is one read, which brings its own position
    expect(await cache.getChecked('k', position, read)).toBe('v1@5');
    expect(positionReads).toBe(1);
    committed = 6n; // a write committed: the kept answer is stale
    expect(await cache.getChecked('k', position, read)).toBe('v2@6');
    expect(await cache.getChecked('k', position, read)).toBe('v2@6');
    committed = undefined; // no checkpoint: nothing is kept
    expect(await cache.getChecked('n', position, read)).toBe('v3@undefined');
    expect(await cache.getChecked('n', position, read)).toBe('v4@undefined');
    await expect(cache.getChecked('k', async () => Promise.reject(new Error('db down')), read)).rejects.toThrow('db down');
  });
});
