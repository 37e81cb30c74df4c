/**
 * The tree kept as stored subtree hashes, so that a log of millions of leaves appends, answers its tree head and
 * answers inclusion and consistency proofs by reading O(log n) hashes instead of every leaf.
 *
 * A node `(level, index)` is the root of the perfect subtree of 2^level leaves that starts at leaf index·2^level: level
 * 0 holds the leaf hashes, and a node is stored once both its children are. Every range the RFC 9162 recursion visits
 * (`MTH(D[lo:hi])` in a tree head, an audit path or a consistency proof) splits into such aligned perfect subtrees, so
 * {@link rangeRootFromNodes} computes it from at most 2·log2(n) stored nodes. Appending leaf n needs only the "right
 * frontier" of the tree of n leaves ({@link frontier}: one node per set bit of n). Callers that read nodes from a
 * database first ask which nodes a computation needs ({@link nodesNeeded}), read them in one query, then compute.
 * Pure and synchronous. Source: RFC 9162 §2.1; docs/audit.md (How the tree is stored).
 */
import { rangeProofWith } from './range.js';
import { EMPTY_ROOT, consistencyProofWith, inclusionProofWith, nodeHash, split, type Hash } from './merkle.js';

/** A stored node: the root of leaves [index·2^level, (index+1)·2^level). */
export interface TreeNode {
  level: number;
  index: number;
}

/** A stored node with its hash. */
export interface TreeNodeHash extends TreeNode {
  hash: Hash;
}

/** Reads a stored node's hash. @throws whatever the caller's store throws for a node it lacks. */
export type NodeReader = (level: number, index: number) => Hash;

const isPowerOfTwo = (n: number) => n > 0 && Number.isInteger(Math.log2(n));

/**
 * MTH(D[lo:hi]) from stored nodes: a stored node when the range is one aligned perfect subtree, else the RFC 9162
 * split of the range. `lo..hi` must be a range the recursion visits (as every range of a tree head or proof is).
 */
export function rangeRootFromNodes(lo: number, hi: number, node: NodeReader): Hash {
  const n = hi - lo;
  if (isPowerOfTwo(n) && lo % n === 0) return node(Math.log2(n), lo / n);
  const k = split(n);
  return nodeHash(rangeRootFromNodes(lo, lo + k, node), rangeRootFromNodes(lo + k, hi, node));
}

/** The tree head of the first `size` leaves from stored nodes (the empty tree: SHA-256 of nothing). */
export function treeHeadFromNodes(size: number, node: NodeReader): Hash {
  return size === 0 ? EMPTY_ROOT : rangeRootFromNodes(0, size, node);
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves, from stored nodes. @throws RangeError */
export function inclusionProofFromNodes(size: number, index: number, node: NodeReader): Hash[] {
  return inclusionProofWith(size, index, (lo, hi) => rangeRootFromNodes(lo, hi, node));
}

/** The consistency proof between the trees of `oldSize` and `size` leaves, from stored nodes. @throws RangeError */
export function consistencyProofFromNodes(oldSize: number, size: number, node: NodeReader): Hash[] {
  return consistencyProofWith(oldSize, size, (lo, hi) => rangeRootFromNodes(lo, hi, node));
}

/** The range proof (range.ts) of leaves [start, end) in the tree of `size` leaves, from stored nodes. @throws RangeProofError */
export function rangeProofFromNodes(size: number, start: number, end: number, node: NodeReader): Hash[] {
  return rangeProofWith(size, start, end, (lo, hi) => rangeRootFromNodes(lo, hi, node));
}

/**
 * The nodes `compute` reads: it is run once with a reader that records each node asked for and answers a dummy hash
 * (which nodes a tree head or proof reads depends on the sizes only, never on the hashes). Deduplicated, in first-read
 * order. @throws what `compute` throws (e.g. RangeError for a leaf outside the tree).
 */
export function nodesNeeded(compute: (node: NodeReader) => unknown): TreeNode[] {
  const seen = new Map<string, TreeNode>();
  const dummy = new Uint8Array(32);
  compute((level, index) => {
    seen.set(`${level}/${index}`, { level, index });
    return dummy;
  });
  return [...seen.values()];
}

/** The right frontier of the tree of `size` leaves: the stored node of each set bit of `size`, largest first. */
export function frontier(size: number): TreeNode[] {
  const out: TreeNode[] = [];
  for (let level = Math.floor(Math.log2(Math.max(size, 1))); level >= 0; level--) {
    const width = 2 ** level;
    if (Math.floor(size / width) % 2 === 1) out.push({ level, index: Math.floor(size / width) - 1 });
  }
  return out;
}

/**
 * Append `leaves` (leaf hashes) to the tree of `size` leaves: the nodes that become complete, each leaf's level-0 node
 * included, in the order they complete. `node` is asked only for nodes of the tree's {@link frontier}.
 * @throws RangeError for a size that is not a whole number.
 */
export function appendLeaves(size: number, leaves: readonly Hash[], node: NodeReader): TreeNodeHash[] {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`a tree size is a whole number: ${size}`);
  const made = new Map<string, Hash>();
  const get = (level: number, index: number) => made.get(`${level}/${index}`) ?? node(level, index);
  const out: TreeNodeHash[] = [];
  leaves.forEach((leaf, i) => {
    let index = size + i;
    let level = 0;
    let hash = leaf;
    for (;;) {
      made.set(`${level}/${index}`, hash);
      out.push({ level, index, hash });
      if (index % 2 === 0) break;
      hash = nodeHash(get(level, index - 1), hash);
      level += 1;
      index = (index - 1) / 2;
    }
  });
  return out;
}
