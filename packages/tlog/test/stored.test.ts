import { describe, expect, it } from 'vitest';
import {
  appendLeaves,
  consistencyProof,
  consistencyProofFromNodes,
  frontier,
  inclusionProof,
  inclusionProofFromNodes,
  leafHash,
  nodesNeeded,
  rootOf,
  treeHeadFromNodes,
  type Hash,
} from '../src/index.js';

/**
 * The tree kept as stored subtree hashes against the tree computed from every leaf: appended in batches of uneven
 * sizes, every tree head, inclusion proof and consistency proof of every tree up to 70 leaves is byte-equal to the
 * in-memory one; appending reads only the frontier; a proof reads O(log n) nodes, all of them stored.
 */
const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');
const LEAVES: Hash[] = Array.from({ length: 70 }, (_, i) => leafHash(new TextEncoder().encode(`record ${i}`)));

/** A node store filled by appending LEAVES in batches of 1, 2, 3, …; records which nodes appending read. */
function build() {
  const nodes = new Map<string, Hash>();
  const reads: string[][] = [];
  let size = 0;
  for (let batch = 1; size < LEAVES.length; batch++) {
    const take = LEAVES.slice(size, size + batch);
    const read: string[] = [];
    const made = appendLeaves(size, take, (l, i) => {
      read.push(`${l}/${i}`);
      const h = nodes.get(`${l}/${i}`);
      if (!h) throw new Error(`node ${l}/${i} not stored`);
      return h;
    });
    for (const n of made) nodes.set(`${n.level}/${n.index}`, n.hash);
    reads.push(read.filter((k) => !frontier(size).some((f) => `${f.level}/${f.index}` === k)));
    size += take.length;
  }
  const node = (l: number, i: number) => {
    const h = nodes.get(`${l}/${i}`);
    if (!h) throw new Error(`node ${l}/${i} not stored`);
    return h;
  };
  return { nodes, node, reads };
}

describe('stored subtree hashes', () => {
  const { node, reads, nodes } = build();

  it('appending reads nothing but the frontier, and stores one node per complete subtree', () => {
    expect(reads.every((r) => r.length === 0)).toBe(true);
    // 70 leaves: 70 + 35 + 17 + 8 + 4 + 2 + 1 complete subtrees.
    expect(nodes.size).toBe(137);
    expect(frontier(70)).toEqual([{ level: 6, index: 0 }, { level: 2, index: 16 }, { level: 1, index: 34 }]);
    expect(frontier(0)).toEqual([]);
  });

  it('answers every tree head and proof exactly as the tree of all the leaves does', () => {
    for (let n = 0; n <= LEAVES.length; n++) {
      const leaves = LEAVES.slice(0, n);
      expect(hex(treeHeadFromNodes(n, node)), `head ${n}`).toBe(hex(rootOf(leaves)));
      for (let i = 0; i < n; i++) expect(inclusionProofFromNodes(n, i, node).map(hex), `inclusion ${i} of ${n}`).toEqual(inclusionProof(leaves, i).map(hex));
      for (let m = 0; m <= n; m++) expect(consistencyProofFromNodes(m, n, node).map(hex), `consistency ${m}→${n}`).toEqual(consistencyProof(leaves, m).map(hex));
    }
  });

  it('names the nodes a proof reads, few and all stored', () => {
    const needed = nodesNeeded((get) => inclusionProofFromNodes(70, 33, get));
    expect(needed.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(70)));
    expect(needed.every((n) => nodes.has(`${n.level}/${n.index}`))).toBe(true);
    expect(() => nodesNeeded((get) => inclusionProofFromNodes(70, 70, get))).toThrow(RangeError);
  });
});
