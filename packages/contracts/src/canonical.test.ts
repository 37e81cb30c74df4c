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

/**
 * RFC 8785 (JSON Canonicalization Scheme) for JSON values parsed from text: the examples of the RFC (§3.2.2 and
 * §3.2.3) and number serialisations of its Appendix B. The verifiable audit trail's leaves rely on this.
 */
describe('canonicalJson is RFC 8785 for JSON data', () => {
  it('writes the example of RFC 8785 §3.2.2 (numbers, strings and literals) byte for byte', () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalJson(JSON.parse(input))).toBe(String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`);
  });

  it('sorts keys by UTF-16 code units as RFC 8785 §3.2.3 does', () => {
    const input = String.raw`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`;
    const out = JSON.parse(canonicalJson(JSON.parse(input))) as Record<string, string>;
    expect(Object.values(out).length).toBe(7);
    expect(canonicalJson(JSON.parse(input)).match(/"([A-Z][^"]*)"/g)).toEqual(
      ['"Carriage Return"', '"One"', '"Control"', '"Latin Small Letter O With Diaeresis"', '"Euro Sign"', '"Emoji: Grinning Face"', '"Hebrew Letter Dalet With Dagesh"'],
    );
  });

  it.each([
    [0, '0'],
    [-0, '0'],
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    [9007199254740991, '9007199254740991'],
    [295147905179352830000, '295147905179352830000'],
    [5e-324, '5e-324'],
    [-1.7976931348623157e308, '-1.7976931348623157e+308'],
  ])('writes the number %s as RFC 8785 Appendix B does: %s', (n, text) => {
    expect(canonicalJson(n)).toBe(text);
  });
});
