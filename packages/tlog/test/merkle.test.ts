import { describe, expect, it } from 'vitest';
import { EMPTY_ROOT, consistencyProof, inclusionProof, leafHash, nodeHash, rootOf, verifyConsistency, verifyInclusion, type Hash } from '../src/index.js';

/**
 * The RFC 9162 Merkle tree against the reference vectors of Certificate Transparency (the eight inputs, their tree
 * heads for sizes 0..8, and published inclusion and consistency proofs), then every proof of every tree up to 40
 * leaves, which must verify, and altered proofs, which must not.
 */
const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');
const unhex = (s: string): Hash => new Uint8Array(Buffer.from(s, 'hex'));

const INPUTS = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(unhex);
const LEAVES = INPUTS.map(leafHash);
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

describe('RFC 9162 Merkle tree', () => {
  it('matches the reference tree heads for sizes 0 to 8', () => {
    expect(hex(EMPTY_ROOT)).toBe(ROOTS[0]);
    for (let n = 0; n <= 8; n++) expect(hex(rootOf(LEAVES.slice(0, n))), `size ${n}`).toBe(ROOTS[n]);
  });

  it('gives the reference inclusion proofs, and they verify', () => {
    const cases: Array<[number, number, string[]]> = [
      [0, 8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
      [5, 8, ['bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
      [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
    ];
    for (const [index, size, proof] of cases) {
      const leaves = LEAVES.slice(0, size);
      expect(inclusionProof(leaves, index).map(hex), `${index} in ${size}`).toEqual(proof);
      expect(verifyInclusion(LEAVES[index], index, size, proof.map(unhex), unhex(ROOTS[size]))).toBe(true);
    }
  });

  it('gives the reference consistency proofs, and they verify', () => {
    const cases: Array<[number, number, string[]]> = [
      [1, 1, []],
      [1, 8, ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4']],
      [6, 8, ['0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7']],
      [2, 5, ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
    ];
    for (const [m, n, proof] of cases) {
      expect(consistencyProof(LEAVES.slice(0, n), m).map(hex), `${m} → ${n}`).toEqual(proof);
      expect(verifyConsistency(m, n, proof.map(unhex), unhex(ROOTS[m]), unhex(ROOTS[n])), `${m} → ${n}`).toBe(true);
    }
  });

  const many = Array.from({ length: 40 }, (_, i) => leafHash(Uint8Array.of(i, (i * 7) & 0xff)));
  const flip = (h: Hash) => {
    const c = new Uint8Array(h);
    c[0] ^= 1;
    return c;
  };

  it('verifies every leaf of every tree up to 40 leaves, and refuses a changed leaf, proof, index, size or root', () => {
    for (let n = 1; n <= many.length; n++) {
      const leaves = many.slice(0, n);
      const root = rootOf(leaves);
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(leaves, i);
        expect(verifyInclusion(leaves[i], i, n, proof, root), `${i} in ${n}`).toBe(true);
        expect(verifyInclusion(flip(leaves[i]), i, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaves[i], i, n, proof, flip(root))).toBe(false);
        if (proof.length) expect(verifyInclusion(leaves[i], i, n, [flip(proof[0]), ...proof.slice(1)], root)).toBe(false);
        if (n > 1) expect(verifyInclusion(leaves[i], (i + 1) % n, n, proof, root)).toBe(false);
        // The proof of a smaller tree does not verify against the next tree's head.
        if (n < many.length) expect(verifyInclusion(leaves[i], i, n + 1, proof, rootOf(many.slice(0, n + 1)))).toBe(false);
        expect(verifyInclusion(leaves[i], n, n, proof, root)).toBe(false);
      }
    }
  });

  it('proves every older tree consistent with every newer one up to 40 leaves, and refuses a rewritten history', () => {
    for (let n = 1; n <= many.length; n++) {
      const newRoot = rootOf(many.slice(0, n));
      for (let m = 1; m <= n; m++) {
        const oldRoot = rootOf(many.slice(0, m));
        const proof = consistencyProof(many.slice(0, n), m);
        expect(verifyConsistency(m, n, proof, oldRoot, newRoot), `${m} → ${n}`).toBe(true);
        if (m < n) {
          expect(verifyConsistency(m, n, proof, flip(oldRoot), newRoot)).toBe(false);
          expect(verifyConsistency(m, n, proof, oldRoot, flip(newRoot))).toBe(false);
          expect(verifyConsistency(m, n, [flip(proof[0]), ...proof.slice(1)], oldRoot, newRoot)).toBe(false);
          // The same sizes over a history with one old leaf changed: its new root cannot be proven from the old one.
          const rewritten = [...many.slice(0, n)];
          rewritten[m - 1] = flip(rewritten[m - 1]);
          expect(verifyConsistency(m, n, consistencyProof(rewritten, m), oldRoot, rootOf(rewritten))).toBe(false);
        }
      }
    }
    expect(verifyConsistency(3, 2, [], rootOf(many.slice(0, 3)), rootOf(many.slice(0, 2)))).toBe(false);
  });

  it('hashes leaves and nodes with distinct prefixes (a leaf cannot pass for a node)', () => {
    const [a, b] = many;
    expect(hex(nodeHash(a, b))).not.toBe(hex(leafHash(Buffer.concat([a, b]))));
    expect(() => inclusionProof(many.slice(0, 3), 3)).toThrow(RangeError);
    expect(() => consistencyProof(many.slice(0, 3), 4)).toThrow(RangeError);
  });
});
