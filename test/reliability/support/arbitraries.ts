/**
 * Property-based inputs for the fuzzer (fast-check): a JSON Schema (2020-12, as the OpenAPI document and the MCP
 * tools publish them) turned into an arbitrary of valid-ish values, mutations that make them invalid, and the corpus
 * of edge cases every operation gets (deep nesting, NUL, lone surrogates, huge numbers, wrong types, bad JSON, wrong
 * content types, oversize bodies, bad percent-encoding, long URLs). Source: the reliability suite
 * (docs/reliability.md, "Fuzzing").
 */
import fc from 'fast-check';

type Json = Record<string, any>;

/** Raw JSON text spliced in place of a marker string after `JSON.stringify` (numbers JSON.stringify cannot write). */
export const RAW_NUMBERS: Readonly<Record<string, string>> = {
  __agp_raw_1e309__: '1e309',
  __agp_raw_2p64__: '18446744073709551616',
  __agp_raw_neg_1e309__: '-1e309',
  __agp_raw_tiny__: '1e-400',
  __agp_raw_long_int__: '9'.repeat(400),
};

/** JSON text of `value`, with every {@link RAW_NUMBERS} marker string replaced by its raw number. */
export function jsonText(value: unknown): string {
  let text = JSON.stringify(value) ?? 'null';
  for (const [marker, raw] of Object.entries(RAW_NUMBERS)) text = text.replaceAll(`"${marker}"`, raw);
  return text;
}

/** Edge values put in place of a field: text PostgreSQL cannot store, huge numbers, wrong types, long text. */
export const EDGE_VALUES: readonly unknown[] = [
  'a\u0000b',
  '\u0000',
  'half \ud83d',
  '\udc00 low',
  '',
  ' ',
  'x'.repeat(10_000),
  '😀'.repeat(100),
  '../../etc/passwd',
  "' OR 1=1 --",
  '=HYPERLINK("http://x")',
  '<script>alert(1)</script>',
  '2026-02-30T25:61:00Z',
  '%zz',
  ...Object.keys(RAW_NUMBERS),
  Number.MAX_SAFE_INTEGER + 2,
  -1,
  -1e308,
  0,
  1.5,
  Number.MIN_VALUE,
  true,
  null,
  [],
  [null],
  {},
  { $gt: '' },
  JSON.parse('{"__proto__":{"polluted":true}}') as unknown,
  { constructor: { prototype: { polluted: true } } },
];

/** A value nested `depth` levels deep (`{"a":{"a":…leaf…}}`, or arrays), built iteratively. */
export function deep(depth: number, leaf: unknown, arrays = false): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
}

/** The JSON text of a value nested `depth` levels deep around `leafJson`, without building it (10,000 levels). */
export function deepText(depth: number, leafJson: string, arrays = false): string {
  return arrays ? '['.repeat(depth) + leafJson + ']'.repeat(depth) : '{"a":'.repeat(depth) + leafJson + '}'.repeat(depth);
}

/** How a schema is resolved: `$ref` to the root document's definitions. */
export type Resolver = (schema: Json) => Json;

const ISO = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

/** A string arbitrary for a string schema: formats, enums and bounds honoured where they are easy to honour. */
function stringArb(s: Json): fc.Arbitrary<string> {
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = Math.max(min, Math.min(typeof s.maxLength === 'number' ? s.maxLength : 24, 64));
  switch (s.format) {
    case 'date-time':
      return ISO;
    case 'date':
      return ISO.map((d) => d.slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'uuid':
      return fc.uuid();
  }
  if (typeof s.pattern === 'string') {
    try {
      // A string of the pattern when it comes out of the allowed length, else text of that length (a filter would
      // loop for ever on a pattern whose strings are rarely long enough, e.g. `^[A-Za-z0-9]+$` with minLength 16).
      const upTo = s.maxLength ?? Infinity;
      return fc
        .tuple(fc.stringMatching(new RegExp(s.pattern)), fc.string({ minLength: min, maxLength: Math.max(min, Math.min(upTo, min + 40)) }))
        .map(([matching, text]) => (matching.length >= min && matching.length <= upTo ? matching : text));
    } catch {
      /* a pattern fast-check cannot generate from: plain text */
    }
  }
  return fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_-]*$/).map((x) => x.slice(0, max)).filter((x) => x.length >= min) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }) },
  );
}

/** A number arbitrary for an integer or number schema, within its bounds (kept small when unbounded). */
function numberArb(s: Json, integer: boolean): fc.Arbitrary<number> {
  const lo = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 1e-9) : -1000;
  const hi = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 1e-9) : 1000;
  const min = Math.max(lo, -1e9);
  const max = Math.min(Math.max(hi, min), 1e9);
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/**
 * A fast-check arbitrary of values valid (or nearly) for JSON Schema `schema`: `const`, `enum`, `anyOf`/`oneOf`
 * (one branch), `allOf` (the first), `type` (one of a list), objects (every required property, some optional ones),
 * arrays (a few items), strings, numbers, booleans, null; `{}` any small JSON value. `depth` bounds recursion.
 */
export function arbitraryOf(schema: Json | boolean | undefined, resolve: Resolver, depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || schema === true || (typeof schema === 'object' && Object.keys(schema).length === 0)) return depth > 3 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  if (schema === false) return fc.constant(null);
  const s = resolve(schema);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (branches?.length) return fc.oneof(...branches.map((b) => arbitraryOf(b, resolve, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length) return arbitraryOf({ ...s, allOf: undefined, ...resolve(s.allOf[0]) }, resolve, depth + 1);
  // Each type's arbitrary is built once (not per generated value): a schema with a list of types is one of them.
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((t) => ofType(s, t, resolve, depth)));
  return ofType(s, s.type ?? (s.properties ? 'object' : undefined), resolve, depth);
}

/** The arbitrary of schema `s` taken as type `t` (see {@link arbitraryOf}). */
function ofType(s: Json, t: string | undefined, resolve: Resolver, depth: number): fc.Arbitrary<unknown> {
  {
    switch (t) {
      case 'object': {
        if (depth > 5) return fc.constant({});
        const props = (s.properties ?? {}) as Record<string, Json>;
        const required = new Set<string>((s.required ?? []) as string[]);
        const keys = Object.keys(props);
        const rec: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(keys.map((k) => [k, arbitraryOf(props[k], resolve, depth + 1)]));
        if (!keys.length && s.additionalProperties && typeof s.additionalProperties === 'object') {
          return fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), arbitraryOf(s.additionalProperties, resolve, depth + 1), { maxKeys: 3 });
        }
        return fc.record(rec, { requiredKeys: keys.filter((k) => required.has(k)) });
      }
      case 'array': {
        if (depth > 5) return fc.constant([]);
        const minLength = typeof s.minItems === 'number' ? s.minItems : 0;
        const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === 'number' ? s.maxItems : 3, minLength + 3));
        return fc.array(arbitraryOf(s.items, resolve, depth + 1), { minLength, maxLength });
      }
      case 'string':
        return stringArb(s);
      case 'integer':
        return numberArb(s, true);
      case 'number':
        return numberArb(s, false);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }
}

/** Every path (list of keys) to a value inside `value`, the root included. */
function pathsOf(value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

/** `value` with the value at `path` replaced by `by` (`undefined` deletes it); the root path replaces the whole. */
function replaceAt(value: unknown, path: Array<string | number>, by: unknown): unknown {
  if (!path.length) return by;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as Json) };
  const [head, ...rest] = path;
  if (rest.length) copy[head] = replaceAt(copy[head], rest, by);
  else if (by === undefined && !Array.isArray(copy)) delete copy[head];
  else copy[head] = by;
  return copy;
}

/**
 * An arbitrary of invalid variants of values of `valid`: one field (or the whole value) replaced by an
 * {@link EDGE_VALUES} entry or deleted, an unknown field added, or a deeply nested value put in a field.
 */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.nat(), fc.nat({ max: EDGE_VALUES.length + 3 })).map(([v, pick, how]) => {
    const paths = pathsOf(v);
    const path = paths[pick % paths.length];
    if (how < EDGE_VALUES.length) return replaceAt(v, path, EDGE_VALUES[how]);
    if (how === EDGE_VALUES.length) return replaceAt(v, path, undefined);
    if (how === EDGE_VALUES.length + 1) return v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as Json), unknown_field_xyz: 1 } : [v];
    if (how === EDGE_VALUES.length + 2) return replaceAt(v, path, deep(70, 'x'));
    return replaceAt(v, path, deep(200, 1, true));
  });
}

/** A raw body of the corpus: its name, bytes and content type. */
export interface RawBody {
  name: string;
  body: string | Buffer;
  contentType?: string;
}

/** Bytes over the 5 MiB every route accepts. */
const OVERSIZE = 5 * 1024 * 1024 + 16;

/**
 * The body corpus every operation with a body (and every GET, as a body the edge parses on any method) gets:
 * deep nesting (10,000 levels) with a NUL or a lone surrogate leaf, huge numbers, bad JSON, wrong content types,
 * an oversize body. Built once (the oversize one is one shared buffer).
 */
export function bodyCorpus(): RawBody[] {
  const big = Buffer.alloc(OVERSIZE, 0x20);
  big.write('{"a":"', 0);
  big.write('"}', OVERSIZE - 2);
  return [
    { name: 'deep 10,000 objects, NUL leaf', body: deepText(10_000, '"\\u0000"') },
    { name: 'deep 10,000 objects, lone surrogate leaf', body: deepText(10_000, '"\\ud800"') },
    { name: 'deep 10,000 arrays, NUL leaf', body: deepText(10_000, '"\\u0000"', true) },
    { name: 'deep 10,000 objects', body: deepText(10_000, '1') },
    { name: 'deep 100,000 arrays', body: deepText(100_000, '1', true) },
    { name: 'deep 64 objects, NUL leaf', body: deepText(64, '"a\\u0000"') },
    { name: 'NUL key', body: '{"\\u0000":1}' },
    { name: 'lone surrogate key', body: '{"\\udfff":"x"}' },
    { name: '1e309', body: '{"a":1e309,"limit":1e309,"name":1e309}' },
    { name: '2^64', body: '{"a":18446744073709551616,"skip":18446744073709551616}' },
    { name: 'bare 1e309', body: '1e309' },
    { name: 'bad JSON', body: '{"a":' },
    { name: 'bad JSON: trailing comma', body: '{"a":1,}' },
    { name: 'bad JSON: single quotes', body: "{'a':1}" },
    { name: 'bad JSON: NaN', body: '{"a":NaN}' },
    { name: 'empty JSON body', body: ' ' },
    { name: 'JSON null', body: 'null' },
    { name: 'JSON string', body: '"x"' },
    { name: 'JSON array', body: '[1,2,3]' },
    { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    { name: 'UTF-16 charset', body: '{"a":1}', contentType: 'application/json; charset=utf-16' },
    { name: 'text/plain', body: '{"a":1}', contentType: 'text/plain' },
    { name: 'form', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
    { name: 'multipart', body: '--x\r\n\r\n--x--', contentType: 'multipart/form-data; boundary=x' },
    { name: 'no content type', body: '{"a":1}', contentType: '' },
    { name: 'oversize (5 MiB + 16)', body: big },
  ];
}

/** A path segment as sent: fuzzed ids, percent-encoded, and the broken encodings of the corpus sent as they are. */
export const PATH_CORPUS: readonly string[] = [
  '%zz',
  '%',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%00',
  'a%00b',
  '%2F',
  'a%2Fb',
  '..',
  '%2E%2E',
  'x'.repeat(2000),
  '%F0%9F%98%80',
  encodeURIComponent('\u202e'),
  encodeURIComponent("' OR 1=1 --"),
  encodeURIComponent('{"a":1}'),
];

/** Query strings of the corpus: bad percent-encoding, NUL, arrays and objects where scalars go, repeats. */
export const QUERY_CORPUS: readonly string[] = ['%zz=1', 'a=%zz', 'x=%00', '%00=1', 'a[b][c]=1', 'a[]=1&a[]=2', 'a=1&a=2', '=', '&&&', 'a=' + 'y'.repeat(4000)];

/** A URL path over what the HTTP server accepts in its request line and headers (16 KiB): answered 431. */
export const LONG_URL_LENGTH = 20_000;
