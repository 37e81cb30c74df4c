import type { z } from 'zod';
import { type FieldError, ValidationError } from './errors.js';

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

/** A NUL character, or a UTF-16 surrogate without its pair: text PostgreSQL cannot store (in `text` or `jsonb`). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Paths (dotted, under `where`) of every string value or object key in `value` that PostgreSQL cannot store — a NUL
 * character (U+0000) or an unpaired UTF-16 surrogate — at most `max`. Such input is refused with a 4xx before any
 * write (architecture §5: bad input changes nothing and never yields a 5xx).
 */
export function unstorableTextPaths(value: unknown, where: string, max = 10): string[] {
  const out: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (out.length >= max) return;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) out.push(path);
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${path}.${i}`));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (UNSTORABLE.test(k)) out.push(`${path}.${JSON.stringify(k).slice(1, -1)}`);
        walk(x, `${path}.${k}`);
      }
    }
  };
  walk(value, where);
  return out;
}

/** The field error of unstorable text at `path`. */
export const unstorableTextError = (path: string): FieldError => ({ path, message: 'NUL characters (\\u0000) and unpaired UTF-16 surrogates are not allowed' });
