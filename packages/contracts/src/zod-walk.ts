/**
 * Reading zod schemas' structure, for the walkers that follow a reply schema through a value (`roundNumbers` in
 * numbers.ts, `orderKeys` in key-order.ts). Reads zod 4's `_zod.def`.
 */
import type { z } from 'zod';

/** The parts of a zod 4 schema definition the walkers read. */
export type ZodDef = {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
};

/** The definition of `s`. */
export const defOf = (s: z.ZodType): ZodDef => (s as unknown as { _zod: { def: ZodDef } })._zod.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional', 'success']);

/** `s` without its wrappers: optional, nullable, default, readonly, catch, lazy, and a pipe's output side. */
export function unwrapSchema(s: z.ZodType, depth = 0): z.ZodType {
  const d = defOf(s);
  if (depth > 20) return s;
  if (d.innerType && WRAPPERS.has(d.type)) return unwrapSchema(d.innerType, depth + 1);
  if (d.type === 'lazy' && d.getter) return unwrapSchema(d.getter(), depth + 1);
  if (d.type === 'pipe' && d.out && d.in) return unwrapSchema(defOf(d.out).type === 'transform' ? d.in : d.out, depth + 1);
  return s;
}
