import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '@agp/contracts';
import { assertJsonInput, jsonInputErrors, jsonNestingDepth, jsonPathPastDepth, unstorableTextPaths } from './validate.js';

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

/** `{"a": {"a": … leaf …}}` nested `levels` objects deep, built without recursion. */
function deep(levels: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

describe('jsonInputErrors', () => {
  it('walks 100,000 levels without exhausting the stack (NUL and lone surrogate leaves)', () => {
    for (const leaf of ['\u0000', '\ud800', ['x', '\udc00']]) {
      const body = deep(100_000, leaf);
      expect(unstorableTextPaths(body, 'body')).toHaveLength(1);
      const errors = jsonInputErrors(body, 'body');
      expect(errors).toEqual([{ path: `body${'.a'.repeat(MAX_JSON_DEPTH)}`, message: `nested deeper than the limit of ${MAX_JSON_DEPTH} levels of objects and arrays` }]);
      expect(() => assertJsonInput(body, 'body')).toThrow(/limit of 64 levels/);
    }
  });
  it('elides a very deep path instead of spelling 100,000 segments', () => {
    const [path] = unstorableTextPaths(deep(100_000, '\u0000'), 'body');
    expect(path.endsWith('.…')).toBe(true);
    expect(path.length).toBeLessThan(200);
  });
  it('accepts 64 levels and refuses 65, naming the path where the limit was crossed', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(jsonInputErrors(deep(64, 1), 'body')).toEqual([]);
    expect(jsonInputErrors(deep(63, []), 'body')).toEqual([]);
    expect(jsonInputErrors(deep(64, []), 'body').map((e) => e.path)).toEqual([`body${'.a'.repeat(64)}`]);
    expect(jsonInputErrors(deep(65, 'x'), 'batch[2]').map((e) => e.path)).toEqual([`batch[2]${'.a'.repeat(64)}`]);
    expect(jsonInputErrors([[[]]], 'body', { maxDepth: 2 }).map((e) => e.path)).toEqual(['body.0.0']);
  });
  it('reports text and depth in document order, and can skip the text check', () => {
    expect(jsonInputErrors({ a: '\u0000', b: deep(64, 0) }, 'body').map((e) => e.path)).toEqual(['body.a', `body.b${'.a'.repeat(63)}`]);
    expect(jsonInputErrors({ a: '\u0000' }, 'body', { text: false })).toEqual([]);
  });
  it('walks a wide array quickly', () => {
    const wide = Array.from({ length: 200_000 }, (_, i) => ({ i, s: 'text' }));
    const t = performance.now();
    expect(jsonInputErrors(wide, 'body')).toEqual([]);
    expect(performance.now() - t).toBeLessThan(2000);
  });
});

describe('jsonNestingDepth and jsonPathPastDepth (from the bytes)', () => {
  const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));
  it('count objects and arrays, not brackets inside strings', () => {
    expect(jsonNestingDepth(bytes(1))).toBe(0);
    expect(jsonNestingDepth(bytes({}))).toBe(1);
    expect(jsonNestingDepth(bytes({ a: [1, { b: '[[[{{{' }], c: '\\"[' }))).toBe(3);
    expect(jsonNestingDepth(Buffer.from('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)))).toBe(100_000);
  });
  it('name the same path as the walk over the parsed value', () => {
    const cases: unknown[] = [
      deep(65, 1),
      { x: [1, 2, { 'k"]': [[], [deep(70, 'v')]] }], y: deep(100, []) },
      [0, { a: 'b,c', 'é \u00e9': [{ '': deep(80, null) }] }],
      { shallow: deep(60, [1, [2]]), then: [[[deep(64, {})]]] },
    ];
    for (const v of cases) {
      const expected = jsonInputErrors(v, 'body', { text: false })[0]?.path;
      const got = jsonPathPastDepth(bytes(v), MAX_JSON_DEPTH);
      expect(got && ['body', ...got].join('.')).toBe(expected);
    }
    expect(jsonPathPastDepth(bytes(deep(64, [])), MAX_JSON_DEPTH)).not.toBeNull();
    expect(jsonPathPastDepth(bytes(deep(64, 1)), MAX_JSON_DEPTH)).toBeNull();
  });
});
