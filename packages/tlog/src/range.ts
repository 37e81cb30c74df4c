/**
 * Range proofs: that the leaves [start, end) of a tree of `size` leaves, given in full, are exactly those of the tree
 * whose root a checkpoint signed. The proof is the list of the roots of the ranges outside [start, end) that the RFC
 * 9162 recursion visits, left to right:
 *
 *     RangeRoot(lo, hi) = the next hash of the proof          when [lo, hi) and [start, end) are disjoint
 *                       = MTH(the leaves lo..hi)              when [lo, hi) ⊆ [start, end)
 *                       = nodeHash(RangeRoot(lo, lo + k), RangeRoot(lo + k, hi)) otherwise (k: the split of hi - lo)
 *
 * RangeRoot(0, size) must equal the signed root and the proof must be used up. Checking n leaves this way costs about
 * 2n hashes plus O(log size) for the proof, instead of an inclusion proof (log size hashes) per leaf. The disjoint
 * ranges are ranges the RFC 9162 recursion visits, so a log kept as stored subtree hashes computes each from at most
 * 2·log2(size) nodes (stored.ts). Pure and synchronous. Source: docs/audit.md (Range proofs).
 */
import { nodeHash, split, subtreeRoot, type Hash, type RangeRoot } from './merkle.js';

/** Why a range proof was refused. */
export class RangeProofError extends Error {}

const checkRange = (size: number, start: number, end: number) => {
  if (![size, start, end].every(Number.isSafeInteger) || start < 0 || start > end || end > size || size < 1)
    throw new RangeProofError(`leaves [${start}, ${end}) are not a range of a tree of ${size}`);
};

/**
 * The range proof of leaves [start, end) in the tree of `size` leaves, with the roots of subtrees from `root` (over
 * stored nodes: `(lo, hi) => rangeRootFromNodes(lo, hi, node)`).
 * @throws RangeProofError when [start, end) is not a range of the tree (or the tree is empty).
 */
export function rangeProofWith(size: number, start: number, end: number, root: RangeRoot): Hash[] {
  checkRange(size, start, end);
  const proof: Hash[] = [];
  const walk = (lo: number, hi: number): void => {
    if (hi <= start || lo >= end) proof.push(root(lo, hi));
    else if (lo >= start && hi <= end) return;
    else {
      const k = split(hi - lo);
      walk(lo, lo + k);
      walk(lo + k, hi);
    }
  };
  walk(0, size);
  return proof;
}

/**
 * The root of the tree of `size` leaves from the leaf hashes of [start, end) (`leaves[0]` is leaf `start`) and their
 * range proof. Compare it with a verified checkpoint's root.
 * @throws RangeProofError when the leaves do not number end - start, or the proof is too short, too long, or holds a
 *   hash that is not 32 bytes.
 */
export function rootFromRangeProof(size: number, start: number, end: number, leaves: readonly Hash[], proof: readonly Hash[]): Hash {
  checkRange(size, start, end);
  if (leaves.length !== end - start) throw new RangeProofError(`${leaves.length} leaves given for the range [${start}, ${end})`);
  let next = 0;
  const walk = (lo: number, hi: number): Hash => {
    if (hi <= start || lo >= end) {
      if (next >= proof.length) throw new RangeProofError('the range proof is too short');
      const h = proof[next++];
      if (h.length !== 32) throw new RangeProofError('a range proof hash is not 32 bytes');
      return h;
    }
    if (lo >= start && hi <= end) return subtreeRoot(leaves, lo - start, hi - start);
    const k = split(hi - lo);
    const left = walk(lo, lo + k);
    return nodeHash(left, walk(lo + k, hi));
  };
  const root = walk(0, size);
  if (next !== proof.length) throw new RangeProofError(`the range proof is too long: ${proof.length - next} hash(es) unused`);
  return root;
}
