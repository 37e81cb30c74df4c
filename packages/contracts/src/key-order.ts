/**
 * Records in the field order of their schema. PostgreSQL `jsonb` keeps keys sorted by length, then bytes, and prints
 * them spaced (`{"id": "a", "name": "b"}`); read models stored as `jsonb` (policies, agents, kill switches,
 * approvals) are put back in the order the contract declares, so every route answers the same compact JSON in the
 * same field order whatever table it came from (docs/api.md, JSON).
 */
import type { z } from 'zod';
import { defOf, unwrapSchema as unwrap } from './zod-walk.js';

/** The field order of an object schema (and of the objects inside it); null: nothing to order. */
type Order = null | { kind: 'object'; keys: string[]; fields: Map<string, Order> } | { kind: 'items'; item: Order };

function orderOf(s: z.ZodType, depth: number): Order {
  if (depth > 12) return null;
  const d = defOf(unwrap(s));
  if (d.type === 'object') {
    const keys = Object.keys(d.shape ?? {});
    const fields = new Map<string, Order>();
    for (const k of keys) {
      const o = orderOf(d.shape![k], depth + 1);
      if (o) fields.set(k, o);
    }
    return { kind: 'object', keys, fields };
  }
  if (d.type === 'array' && d.element) {
    const item = orderOf(d.element, depth + 1);
    return item ? { kind: 'items', item } : null;
  }
  if (d.type === 'record' && d.valueType) {
    const item = orderOf(d.valueType, depth + 1);
    return item ? { kind: 'items', item } : null;
  }
  if (d.type === 'union') {
    // The first object option gives the order (the options of a record's union share their fields).
    for (const o of d.options ?? []) {
      const order = orderOf(o, depth + 1);
      if (order) return order;
    }
  }
  return null;
}

function apply(order: Order, value: unknown): unknown {
  if (!order || value === null || typeof value !== 'object') return value;
  if (order.kind === 'items') {
    if (Array.isArray(value)) return value.map((v) => apply(order.item, v));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, apply(order.item, v)]));
  }
  if (Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of order.keys) if (k in source) out[k] = apply(order.fields.get(k) ?? null, source[k]);
  for (const k of Object.keys(source)) if (!(k in out)) out[k] = source[k];
  return out;
}

const orders = new WeakMap<z.ZodType, Order>();

/**
 * A copy of `value` (a value of `schema`) with the keys of each object in the order of the schema's shape, at every
 * depth the schema types; keys the schema does not name follow in their own order, and free-form JSON (records of
 * unknown, `z.unknown()`) is left as it is.
 */
export function orderKeys<T>(schema: z.ZodType, value: T): T {
  let order = orders.get(schema);
  if (order === undefined) {
    order = orderOf(schema, 0);
    orders.set(schema, order);
  }
  return apply(order, value) as T;
}

/** `jsonb` text (or the object the driver parsed from it) as compact JSON text in the schema's field order. */
export function orderedJson(schema: z.ZodType, doc: unknown): string {
  return JSON.stringify(orderKeys(schema, typeof doc === 'string' ? JSON.parse(doc) : doc));
}
