import { describe, expect, it } from 'vitest';
import { chunkBatch } from './chunks.js';

describe('chunkBatch', () => {
  const ev = (id: string, pad: number) => ({ id, pad: 'x'.repeat(pad) });

  it('keeps a small batch in one chunk', () => {
    const { chunks, oversized } = chunkBatch([ev('a', 10), ev('b', 10)]);
    expect(chunks).toEqual([{ offset: 0, events: [ev('a', 10), ev('b', 10)] }]);
    expect(oversized).toEqual([]);
  });

  it('splits by serialized size, keeping order and offsets', () => {
    const batch = Array.from({ length: 10 }, (_, i) => ev(String(i), 300));
    const { chunks } = chunkBatch(batch, 1000, 900);
    expect(chunks.map((c) => c.offset)).toEqual([0, 2, 4, 6, 8]);
    expect(chunks.flatMap((c) => c.events)).toEqual(batch);
  });

  it('reports an oversized event and restarts offsets after it', () => {
    const { chunks, oversized } = chunkBatch([ev('a', 10), ev('big', 2000), ev('c', 10)], 1000, 900);
    expect(oversized).toEqual([{ index: 1, id: 'big', bytes: expect.any(Number) }]);
    expect(chunks).toEqual([
      { offset: 0, events: [ev('a', 10)] },
      { offset: 2, events: [ev('c', 10)] },
    ]);
  });

  it('keeps a body that fits one chunk whole without measuring each event', () => {
    const batch = [ev('a', 10), ev('b', 10)];
    expect(chunkBatch(batch, 1000, 900, 200).chunks).toEqual([{ offset: 0, events: batch }]);
    // A body too big for one chunk is split as usual.
    expect(chunkBatch(Array.from({ length: 10 }, (_, i) => ev(String(i), 300)), 1000, 900, 3500).chunks).toHaveLength(5);
    expect(chunkBatch([], 1000, 900, 20).chunks).toEqual([]);
  });
});
