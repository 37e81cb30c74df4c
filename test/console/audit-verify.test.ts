import { describe, expect, it } from 'vitest';
import { inclusionProof, leafHash as tlogLeafHash, rootOf } from '@agp/tlog';
import { rootFromInclusionProof, toBase64 } from '../../services/console/src/pages/audit-trail/verify.js';

/**
 * The console's Web Crypto inclusion check (services/console/src/pages/audit-trail/verify.ts) agrees with the
 * platform's own (`@agp/tlog`, node:crypto) on every leaf of every tree of 1 to 40 leaves: the path `@agp/tlog` makes
 * leads the console's walk to `rootOf`, and a path with one hash changed does not.
 */
describe('the console’s inclusion check agrees with @agp/tlog', () => {
  it('recomputes the root of every leaf of trees of 1..40 leaves, and refuses a changed path', async () => {
    const all = Array.from({ length: 40 }, (_, i) => tlogLeafHash(new TextEncoder().encode(`leaf ${i}`)));
    let checked = 0;
    for (let size = 1; size <= all.length; size++) {
      const leaves = all.slice(0, size);
      const root = toBase64(rootOf(leaves));
      for (let i = 0; i < size; i++) {
        const path = inclusionProof(leaves, i).map((h) => new Uint8Array(h));
        expect(toBase64((await rootFromInclusionProof(new Uint8Array(leaves[i]), i, size, path))!), `leaf ${i} of ${size}`).toBe(root);
        if (path.length) {
          const bad = path.map((h, j) => (j === path.length - 1 ? h.map((v, k) => (k === 0 ? v ^ 1 : v)) : h));
          expect(toBase64((await rootFromInclusionProof(new Uint8Array(leaves[i]), i, size, bad)) ?? new Uint8Array())).not.toBe(root);
        }
        checked++;
      }
    }
    expect(checked).toBe((40 * 41) / 2);
  });
});
