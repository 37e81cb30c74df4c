/**
 * The Merkle tree of a transparency log, as RFC 9162 §2.1 defines it (the tree of Certificate Transparency, Trillian and
 * Sigstore's Rekor): SHA-256, a leaf hashed with the prefix 0x00 and an interior node with 0x01, so no leaf can pass for
 * a node. The tree of n leaves splits at k, the largest power of two below n. Given the leaf hashes in log order, these
 * functions compute tree heads (MTH), inclusion proofs (PATH) and consistency proofs (PROOF), and verify both kinds of
 * proof with the algorithms of RFC 9162 §2.1.3.2 and §2.1.4.2, so a verifier needs nothing but this module.
 * Pure and synchronous; hashes are 32-byte `Uint8Array`s. Source: RFC 9162 §2.1; the verifiable audit trail's design.
 */
import { createHash, hash } from 'node:crypto';

/** A SHA-256 hash, 32 bytes. */
export type Hash = Uint8Array;

/** The length of a hash, bytes. */
export const HASH_BYTES = 32;

/** The root of the empty tree: SHA-256 of the empty string (RFC 9162 §2.1.1). */
export const EMPTY_ROOT: Hash = new Uint8Array(createHash('sha256').digest());

/** The hash of a leaf: SHA-256(0x00 || data); a string `data` is hashed as its UTF-8 bytes (no copy of it made first). */
export function leafHash(data: Uint8Array | string): Hash {
  return typeof data === 'string' ? hash('sha256', '\0' + data, 'buffer') : hash('sha256', Buffer.concat([LEAF_PREFIX, data]), 'buffer');
}

const LEAF_PREFIX = Uint8Array.of(0);
const NODE_INPUT = Buffer.alloc(1 + 2 * HASH_BYTES, 1);

/** The hash of an interior node: SHA-256(0x01 || left || right). */
export function nodeHash(left: Hash, right: Hash): Hash {
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 1 + HASH_BYTES);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** The largest power of two strictly below `n` (n ≥ 2): where the tree of n leaves splits. */
export function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The tree head MTH(D[lo:hi]) of `leaves[lo..hi)` (hi > lo), recursing as RFC 9162 §2.1.1 does. */
export function subtreeRoot(leaves: readonly Hash[], lo: number, hi: number): Hash {
  const n = hi - lo;
  if (n === 1) return leaves[lo];
  const k = split(n);
  return nodeHash(subtreeRoot(leaves, lo, lo + k), subtreeRoot(leaves, lo + k, hi));
}

/** The tree head (root hash) of the tree whose leaf hashes are `leaves`, in log order. */
export function rootOf(leaves: readonly Hash[]): Hash {
  return leaves.length === 0 ? EMPTY_ROOT : subtreeRoot(leaves, 0, leaves.length);
}

/**
 * The root MTH(D[lo:hi]) of a range of leaves, given a way to compute the root of any range the RFC 9162 recursion
 * visits. The proof functions below are written against this so that the same algorithm runs over leaves in memory
 * ({@link inclusionProof}) or over stored subtree hashes (./stored.ts).
 */
export type RangeRoot = (lo: number, hi: number) => Hash;

/**
 * The inclusion proof (audit path, RFC 9162 §2.1.3.1) of leaf `index` in the tree of `size` leaves, with the roots of
 * subtrees from `root`: the sibling hashes from the leaf up to the root.
 * @throws RangeError when `index` is not a leaf of the tree.
 */
export function inclusionProofWith(size: number, index: number, root: RangeRoot): Hash[] {
  if (!Number.isInteger(index) || index < 0 || index >= size) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const path: Hash[] = [];
  const walk = (m: number, lo: number, hi: number): void => {
    const n = hi - lo;
    if (n === 1) return;
    const k = split(n);
    if (m < k) {
      walk(m, lo, lo + k);
      path.push(root(lo + k, hi));
    } else {
      walk(m - k, lo + k, hi);
      path.push(root(lo, lo + k));
    }
  };
  walk(index, 0, size);
  return path;
}

/**
 * The inclusion proof (audit path, RFC 9162 §2.1.3.1) of leaf `index` in the tree of `leaves`: the sibling hashes from
 * the leaf up to the root.
 * @throws RangeError when `index` is not a leaf of the tree.
 */
export function inclusionProof(leaves: readonly Hash[], index: number): Hash[] {
  return inclusionProofWith(leaves.length, index, (lo, hi) => subtreeRoot(leaves, lo, hi));
}

/**
 * The consistency proof (RFC 9162 §2.1.4.1) between the tree of the first `oldSize` leaves and the tree of `size`
 * leaves, with the roots of subtrees from `root`. Empty when the sizes are equal or `oldSize` is 0.
 * @throws RangeError when `oldSize` is not between 0 and `size`.
 */
export function consistencyProofWith(oldSize: number, size: number, root: RangeRoot): Hash[] {
  const n = size;
  if (!Number.isInteger(oldSize) || oldSize < 0 || oldSize > n) throw new RangeError(`a tree of ${oldSize} is not a prefix of a tree of ${n}`);
  if (oldSize === 0 || oldSize === n) return [];
  const proof: Hash[] = [];
  // SUBPROOF(m, D[lo:hi], b): b is true while the old tree's root is a node of this subtree.
  const sub = (m: number, lo: number, hi: number, whole: boolean): void => {
    const size = hi - lo;
    if (m === size) {
      if (!whole) proof.push(root(lo, hi));
      return;
    }
    const k = split(size);
    if (m <= k) {
      sub(m, lo, lo + k, whole);
      proof.push(root(lo + k, hi));
    } else {
      sub(m - k, lo + k, hi, false);
      proof.push(root(lo, lo + k));
    }
  };
  sub(oldSize, 0, n, true);
  return proof;
}

/**
 * The consistency proof (RFC 9162 §2.1.4.1) between the tree of the first `oldSize` leaves and the tree of all of
 * `leaves`: the hashes a verifier needs to compute both roots. Empty when the sizes are equal or `oldSize` is 0.
 * @throws RangeError when `oldSize` is not between 0 and the tree's size.
 */
export function consistencyProof(leaves: readonly Hash[], oldSize: number): Hash[] {
  return consistencyProofWith(oldSize, leaves.length, (lo, hi) => subtreeRoot(leaves, lo, hi));
}

const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Whether `proof` shows the leaf with hash `leaf` at `index` in the tree of `treeSize` leaves whose root is `root`
 * (RFC 9162 §2.1.3.2). False for any index outside the tree, a proof of the wrong length, or a mismatch.
 */
export function verifyInclusion(leaf: Hash, index: number, treeSize: number, proof: readonly Hash[], root: Hash): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (p.length !== HASH_BYTES || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(r, root);
}

/**
 * Whether `proof` shows that the tree of `oldSize` leaves with root `oldRoot` is a prefix of the tree of `newSize`
 * leaves with root `newRoot` (RFC 9162 §2.1.4.2): the log only appended. Equal sizes need an empty proof and equal
 * roots; an old size of 0 is consistent with anything (an empty proof).
 */
export function verifyConsistency(oldSize: number, newSize: number, proof: readonly Hash[], oldRoot: Hash, newRoot: Hash): boolean {
  if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 0 || oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && equal(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (proof.length === 0 || proof.some((p) => p.length !== HASH_BYTES)) return false;
  // A power-of-two old size: the old root itself is the first node of the path.
  const path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
}
