import { describe, expect, it } from 'vitest';
import { nulPaths } from './validate.js';

describe('nulPaths', () => {
  it('finds NUL characters in nested string values and keys, nowhere else', () => {
    expect(nulPaths({ a: 'ok', b: ['x', 'y\u0000'], c: { 'k\u0000': 1, d: { e: '\u0000' } }, n: 0, z: null }, 'body')).toEqual(['body.b.1', 'body.c.k\\u0000', 'body.c.d.e']);
    expect(nulPaths({ a: 'the text \\u0000 is fine' }, 'body')).toEqual([]);
  });
  it('stops at max', () => {
    expect(nulPaths(Array.from({ length: 50 }, () => '\u0000'), 'b', 3)).toHaveLength(3);
  });
});
