import type { z } from 'zod';
import { MAX_JSON_DEPTH } from '@agp/contracts';
import { BadRequestError, type FieldError, ValidationError } from './errors.js';

/**
 * Turn zod issues into field errors: a dotted path (prefixed with `where`, e.g. `query`/`body`), a message,
 * and for enum issues the allowed values. Unknown keys become one error per key.
 */
export function fieldErrors(error: z.ZodError, where?: string): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const base = [where, ...issue.path.map(String)].filter((p) => p !== undefined && p !== '');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...base, key].join('.'), message: 'unknown field' });
      continue;
    }
    const fe: FieldError = { path: base.join('.') || (where ?? ''), message: issue.message };
    if (issue.code === 'invalid_value' && issue.values.every((v) => typeof v === 'string')) {
      fe.allowed = issue.values as string[];
      fe.message = `invalid value; allowed: ${fe.allowed.join(', ')}`;
    }
    if (issue.code === 'invalid_union' && 'note' in issue && issue.note === 'No matching discriminator') {
      fe.message = 'invalid discriminator';
    }
    out.push(fe);
  }
  // One entry per path+message, enum lists keep the first (comma-separated filters repeat per item).
  const seen = new Set<string>();
  return out
    .map((e) => ({ ...e, path: e.path.replace(/\.(\d+)$/, '') }))
    .filter((e) => {
      const k = `${e.path}\u0000${e.message}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}

/**
 * Parse `input` with `schema` or throw a ValidationError (422) listing every bad field.
 * @param where prefix for error paths: `query`, `body`, `path`.
 * @throws ValidationError
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, where?: string): z.infer<S> {
  const r = schema.safeParse(input);
  if (!r.success) {
    const errors = fieldErrors(r.error, where);
    throw new ValidationError(`${errors.length} invalid field${errors.length === 1 ? '' : 's'}: ${errors.map((e) => e.path).join(', ')}`, errors);
  }
  return r.data;
}

/**
 * Parse a request body's JSON text, then check it with `schema` (paths prefixed `body`): the one way a body that
 * arrives as text (the ingest body forwarded as its bytes) is read, wherever it is read.
 * @throws BadRequestError (400) `malformed JSON: <the parser's message>` when the text is not JSON.
 * @throws ValidationError (422) listing every bad field (`null` is checked as `{}`).
 */
export function parseJsonBody<S extends z.ZodType>(schema: S, text: string): z.infer<S> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new BadRequestError(`malformed JSON: ${(err as Error).message}`);
  }
  return parseOrThrow(schema, body ?? {}, 'body');
}

/** A NUL character, or a UTF-16 surrogate without its pair: text PostgreSQL cannot store (in `text` or `jsonb`). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Path segments a reported path shows at most; a deeper path ends in `…` (a path is never longer than this). */
const PATH_SEGMENTS_SHOWN = MAX_JSON_DEPTH + 8;

/** One value met by {@link walkJson}: its parent's frame and its key there, so a path is spelled only when reported. */
interface Frame {
  value: unknown;
  parent: Frame | null;
  /** The member name or array index under the parent; `null` for the root. */
  key: string | null;
  /** Whether `key` is an object member name (checked as text too). */
  member: boolean;
  /** Objects and arrays enclosing `value` (0 for the root). */
  depth: number;
}

/** The dotted path of `f` under `where`, at most {@link PATH_SEGMENTS_SHOWN} segments (then `…`). */
function pathOf(f: Frame, where: string, escapeKey = false): string {
  const keys: string[] = [];
  for (let x: Frame | null = f; x && x.key !== null; x = x.parent) keys.push(x === f && escapeKey ? JSON.stringify(x.key).slice(1, -1) : x.key);
  keys.reverse();
  const shown = keys.length > PATH_SEGMENTS_SHOWN ? [...keys.slice(0, PATH_SEGMENTS_SHOWN), '…'] : keys;
  return (where === '' ? shown : [where, ...shown]).join('.');
}

/** What {@link jsonInputErrors} looks for. */
export interface JsonInputCheck {
  /** Deepest nesting of objects and arrays accepted; deeper is one error at the first too-deep container. @default MAX_JSON_DEPTH (64) */
  maxDepth?: number;
  /** Also report text PostgreSQL cannot store (NUL, unpaired surrogates) in strings and member names. @default true */
  text?: boolean;
  /** Most errors reported. @default 10 */
  max?: number;
}

/**
 * Field errors of JSON input the platform refuses before any write (architecture §5: bad input changes nothing and
 * never yields a 5xx): objects and arrays nested deeper than `maxDepth` (`MAX_JSON_DEPTH`, 64, from `@agp/contracts`;
 * one error at the path of the first container past the limit, whose inside is not looked at), and every string value
 * or member name holding a NUL character (U+0000) or an unpaired UTF-16 surrogate, which PostgreSQL cannot store.
 * Paths are dotted under `where` (`body.reason`, `batch[3].body.metadata.k`), at most 72 segments.
 *
 * The walk is iterative (an explicit stack, no recursion), so no input depth can exhaust the call stack: 100,000
 * levels are checked in milliseconds. Never throws.
 */
export function jsonInputErrors(value: unknown, where: string, opts: JsonInputCheck = {}): FieldError[] {
  const maxDepth = opts.maxDepth ?? MAX_JSON_DEPTH;
  const text = opts.text ?? true;
  const max = opts.max ?? 10;
  const out: FieldError[] = [];
  const stack: Frame[] = [{ value, parent: null, key: null, member: false, depth: 0 }];
  while (stack.length && out.length < max) {
    const f = stack.pop()!;
    if (text && f.member && UNSTORABLE.test(f.key!)) {
      out.push(unstorableTextError(pathOf(f, where, true)));
      if (out.length >= max) break;
    }
    const v = f.value;
    if (typeof v === 'string') {
      if (text && UNSTORABLE.test(v)) out.push(unstorableTextError(pathOf(f, where)));
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (f.depth + 1 > maxDepth) {
      out.push(nestingError(pathOf(f, where), maxDepth));
      break;
    }
    // Children go on the stack last-first, so they are visited (and reported) in document order.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: f, key: String(i), member: false, depth: f.depth + 1 });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]], parent: f, key: keys[i], member: true, depth: f.depth + 1 });
    }
  }
  return out;
}

/**
 * The deepest nesting of objects and arrays in JSON text `buf` (UTF-8 bytes; brackets inside strings do not count),
 * in one pass over the bytes without parsing: `{}` is 1, `{"a": [1]}` 2, a scalar 0. Meant for well-formed JSON (the
 * parser refuses the rest); malformed input gives some number, never an exception. A 5 MiB body takes a few ms.
 */
export function jsonNestingDepth(buf: Uint8Array): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/**
 * The path (member names and array indices) of the first object or array nested deeper than `limit` in JSON text
 * `buf`, read from the bytes without parsing; null when nothing is that deep. The same path {@link jsonInputErrors}
 * names after parsing, so a body can be refused before the parser builds a deep structure (a 5 MiB body of 870,000
 * levels took ~1 s to parse and check; this takes ~15 ms). Meant for well-formed JSON; never throws.
 */
export function jsonPathPastDepth(buf: Uint8Array, limit: number): string[] | null {
  const open: Array<{ array: boolean; index: number; key: string }> = [];
  let inString = false;
  let start = 0;
  let last = '';
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        inString = false;
        last = Buffer.from(buf.subarray(start, i + 1)).toString('utf8');
      }
    } else if (c === 0x22) {
      inString = true;
      start = i;
    } else if (c === 0x3a) {
      const top = open[open.length - 1];
      if (top && !top.array) {
        try {
          top.key = JSON.parse(last) as string;
        } catch {
          top.key = last;
        }
      }
    } else if (c === 0x2c) {
      const top = open[open.length - 1];
      if (top?.array) top.index++;
    } else if (c === 0x7b || c === 0x5b) {
      if (open.length >= limit) return open.map((f) => (f.array ? String(f.index) : f.key));
      open.push({ array: c === 0x5b, index: 0, key: '' });
    } else if (c === 0x7d || c === 0x5d) open.pop();
  }
  return null;
}

/**
 * Throw a ValidationError (422) when {@link jsonInputErrors} finds anything in `value`.
 * @throws ValidationError naming each path, and the nesting limit when that is what was crossed.
 */
export function assertJsonInput(value: unknown, where: string, opts?: JsonInputCheck): void {
  const errors = jsonInputErrors(value, where, opts);
  if (errors.length) throw new ValidationError(describeJsonInputErrors(errors), errors);
}

/** A one-line summary of {@link jsonInputErrors}' errors, for a problem's `detail`. */
export function describeJsonInputErrors(errors: FieldError[]): string {
  const deep = errors.find((e) => e.message.startsWith('nested deeper'));
  const texts = errors.filter((e) => e !== deep).map((e) => e.path);
  return [
    deep ? `${deep.path}: ${deep.message}` : '',
    texts.length ? `${texts.length} field(s) hold text that cannot be stored (a NUL character or an unpaired surrogate): ${texts.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/**
 * Paths (dotted, under `where`) of every string value or object key in `value` that PostgreSQL cannot store — a NUL
 * character (U+0000) or an unpaired UTF-16 surrogate — at most `max`, at any depth ({@link jsonInputErrors} without
 * the nesting limit; iterative). Such input is refused with a 4xx before any write.
 */
export function unstorableTextPaths(value: unknown, where: string, max = 10): string[] {
  return jsonInputErrors(value, where, { maxDepth: Infinity, max }).map((e) => e.path);
}

/**
 * The JSON escapes that may spell text PostgreSQL cannot store: `\u0000` and the UTF-16 surrogates `\ud800`–`\udfff`.
 * JSON can carry a NUL or a lone surrogate only escaped, so a JSON text (or its UTF-8 bytes) holding none of these
 * cannot hold such text, and the exact, per-value check ({@link unstorableTextPaths}) can be skipped. A text holding
 * one may still be fine (a paired surrogate, an escaped backslash before `u0000`). Source: docs/decisions.md (Text
 * PostgreSQL cannot store, and poison messages).
 */
export const UNSTORABLE_TEXT_ESCAPES: readonly string[] = ['\\u0000', '\\ud', '\\uD'];

const MAYBE_UNSTORABLE = /\\u(?:0000|[dD])/;

/** Whether JSON text `json` holds one of {@link UNSTORABLE_TEXT_ESCAPES}: false proves it holds no unstorable text. Pure. */
export function mayHoldUnstorableText(json: string): boolean {
  return MAYBE_UNSTORABLE.test(json);
}

/** The field error of unstorable text at `path`. */
export const unstorableTextError = (path: string): FieldError => ({ path, message: 'NUL characters (\\u0000) and unpaired UTF-16 surrogates are not allowed' });

/** The field error of a container at `path` past the nesting limit `limit` (MAX_JSON_DEPTH). */
export const nestingError = (path: string, limit = MAX_JSON_DEPTH): FieldError => ({ path, message: `nested deeper than the limit of ${limit} levels of objects and arrays` });
