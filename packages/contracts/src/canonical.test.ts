import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';

/** The recursive definition the iterative one replaces: JSON.stringify with keys sorted at every depth. */
const reference = (v: unknown) =>
  JSON.stringify(v, (_k, x: unknown) => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) return x;
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(x).sort()) o[k] = (x as Record<string, unknown>)[k];
    return o;
  });

describe('canonicalJson', () => {
  it.each([
    ['scalars', [1, 'a"b', true, null, 1.5e-7, -0]],
    ['nested objects, keys out of order', { b: { d: 1, c: [3, { z: 1, a: 2 }] }, a: '\u2028' }],
    ['undefined, functions and non-finite numbers', { a: undefined, b: () => 1, c: [undefined, NaN, Infinity], d: 1 }],
    ['toJSON (a date)', { at: new Date(0), list: [new Date(1)] }],
    ['empty containers', { a: {}, b: [], c: [[], {}] }],
  ])('writes what JSON.stringify with sorted keys writes: %s', (_label, value) => {
    expect(canonicalJson(value)).toBe(reference(value));
  });

  it('ignores key order', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalJson({ b: { d: 3, c: 2 }, a: 1 }));
  });

  it('writes values nested 10,000 deep, where JSON.stringify overflows the stack', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = i % 2 ? { k: deep } : [deep];
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const text = canonicalJson(deep);
    expect(text.length).toBe(10_000 / 2 * ('{"k":}'.length + '[]'.length) + 3);
  });

  it('throws a TypeError on a cycle and on a BigInt, as JSON.stringify does', () => {
    const a: Record<string, unknown> = {};
    a.self = { a };
    expect(() => canonicalJson(a)).toThrow(TypeError);
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});
