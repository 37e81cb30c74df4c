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
