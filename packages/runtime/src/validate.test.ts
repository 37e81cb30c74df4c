import { describe, expect, it } from 'vitest';
import { unstorableTextPaths } from './validate.js';

describe('unstorableTextPaths', () => {
  it('finds NUL characters in nested string values and keys, nowhere else', () => {
    expect(unstorableTextPaths({ a: 'ok', b: ['x', 'y\u0000'], c: { 'k\u0000': 1, d: { e: '\u0000' } }, n: 0, z: null }, 'body')).toEqual(['body.b.1', 'body.c.k\\u0000', 'body.c.d.e']);
    expect(unstorableTextPaths({ a: 'the text \\u0000 is fine' }, 'body')).toEqual([]);
  });
  it('finds unpaired UTF-16 surrogates, and lets proper pairs through', () => {
    expect(unstorableTextPaths({ a: 'x\ud800', b: '\udc00y', c: 'smile \ud83d\ude00', d: ['\ud83d'] }, 'body')).toEqual(['body.a', 'body.b', 'body.d.0']);
  });
  it('stops at max', () => {
    expect(unstorableTextPaths(Array.from({ length: 50 }, () => '\u0000'), 'b', 3)).toHaveLength(3);
  });
});
