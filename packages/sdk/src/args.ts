/**
 * Argument copying: what `run.act` takes from the caller and what it records. The arguments are copied when `act` is
 * called, so what was decided (and approved) is what runs and is recorded, whatever the caller changes afterwards; a
 * function's result is made JSON-safe for the ledger. Pure. Source: docs/sdk.md §Governing actions.
 */

/** Whether `v` is a plain object (not an array, class instance or null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** What {@link copyPlain} answers for data it leaves to `structuredClone`. */
const NOT_PLAIN = Symbol('not plain');
/** Nesting {@link copyPlain} copies itself; deeper arguments (or a cycle) go to the `structuredClone` path. */
const PLAIN_DEPTH = 64;

/**
 * A copy of JSON-like data made of plain objects, arrays without holes and primitives other than bigint, function and
 * symbol, at most {@link PLAIN_DEPTH} levels deep: every container copied, strings shared (they are immutable).
 * Anything else (a class instance, a Date, a hole, a `__proto__` key, deeper nesting or a cycle) gives
 * {@link NOT_PLAIN}. Several times cheaper than `JSON.stringify` + `structuredClone`, and the copy holds fewer objects.
 */
function copyPlain(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol' ? NOT_PLAIN : v;
  if (depth > PLAIN_DEPTH) return NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return NOT_PLAIN;
      const c = copyPlain(v[i], depth + 1);
      if (c === NOT_PLAIN) return NOT_PLAIN;
      out[i] = c;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k in v) {
    if (k === '__proto__') return NOT_PLAIN;
    const c = copyPlain((v as Record<string, unknown>)[k], depth + 1);
    if (c === NOT_PLAIN) return NOT_PLAIN;
    out[k] = c;
  }
  return out;
}

/**
 * A copy of the arguments taken when `act` is called, so what was decided (and approved) is what runs and is recorded:
 * a shallow copy when every value is a primitive (the common case, ~10× cheaper), else a copy of its plain objects and
 * arrays ({@link copyPlain}), else (class instances, deep nesting, cycles…) `structuredClone` after a `JSON.stringify`
 * check.
 * @throws TypeError when the arguments are not JSON data (a function, symbol or bigint; a cycle).
 */
export function copyArgs<A extends Record<string, unknown>>(name: string, args: A): A {
  let flat = true;
  for (const k in args) {
    const v = args[k];
    if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') throw new TypeError(`act ${name}: arguments must be JSON data; ${k} is a ${typeof v}`);
    if (v !== null && typeof v === 'object') {
      flat = false;
      break;
    }
  }
  if (flat) return { ...args };
  const plain = copyPlain(args, 0);
  if (plain !== NOT_PLAIN) return plain as A;
  try {
    JSON.stringify(args);
    return structuredClone(args);
  } catch (err) {
    throw new TypeError(`act ${name}: arguments must be JSON data (${(err as Error).message})`);
  }
}

/** A JSON-safe copy of a function's result for the ledger (`{unserializable: …}` when it has none). */
export function jsonSafe(v: unknown): unknown {
  if (v === undefined) return null;
  // JSON's own values need no copy; a string of at most 40 Ki characters stays under the 256 KiB bound below even
  // when every character is escaped (6 bytes each).
  if (v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length <= 40 * 1024)) return v;
  try {
    const text = JSON.stringify(v);
    if (text === undefined) return { unserializable: String(v) };
    if (text.length > 256 * 1024) return { truncated: true, bytes: text.length, preview: text.slice(0, 4096) };
    return JSON.parse(text);
  } catch (err) {
    return { unserializable: (err as Error).message };
  }
}
