/**
 * Canonical JSON: one text per JSON value whatever its object key order, so that equal values hash equal. Used by
 * the replay bundle's hash, the policy history's diffs and the policy engine's arguments hash (loop and idempotency
 * guardrails), and the verifiable audit trail's leaves. For JSON data (what `JSON.parse` gives: no `undefined`, no
 * non-finite number, strings without lone surrogates) the text is RFC 8785's (JSON Canonicalization Scheme): keys
 * sorted by UTF-16 code units, numbers and strings as ECMAScript writes them (canonical.test.ts checks the RFC's
 * examples). Iterative, so arguments nested 10,000 deep (or deeper) do not overflow the call stack as
 * `JSON.stringify` does.
 */

/** A container being written: its values in output order, how far we are, and the keys for an object. */
interface Frame {
  value: object;
  keys: string[] | null;
  index: number;
  wrote: boolean;
}

/**
 * The value `JSON.stringify` would write for `v` (after `toJSON`), or `undefined` when it would drop the member.
 * @throws TypeError for a BigInt, as JSON.stringify does.
 */
function jsonValue(v: unknown, key: string): unknown {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON: (k: string) => unknown }).toJSON(key);
  if (typeof v === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return undefined;
  return v;
}

/**
 * Canonical JSON of a value: the text `JSON.stringify` writes, with every object's keys in code-unit
 * (`Array.prototype.sort`) order at every depth and no whitespace; array order kept; `undefined`, function and
 * symbol members dropped (in arrays written as `null`), `toJSON` honoured, non-finite numbers written as `null` —
 * all as JSON.stringify does. Runs in constant stack depth.
 * @throws TypeError on a cycle or a BigInt (as JSON.stringify does).
 */
export function canonicalJson(value: unknown): string {
  try {
    return writeShallow(value, '', 0) as string;
  } catch (e) {
    if (e !== TOO_DEEP) throw e;
    return writeDeep(value);
  }
}

/** Nesting depth beyond which {@link writeShallow} gives up for the constant-stack writer (a cycle gets there too). */
const SHALLOW_DEPTH = 256;
/** Thrown by {@link writeShallow} past {@link SHALLOW_DEPTH}. */
const TOO_DEEP: unique symbol = Symbol('too deep');

/**
 * The fast path of {@link canonicalJson}: the same text, written recursively in one string, for values nested at most
 * {@link SHALLOW_DEPTH} deep (all JSON data seen in practice). Returns `undefined` where JSON.stringify drops the
 * member. @throws TOO_DEEP past that depth (also what a cycle gives); TypeError for a BigInt.
 */
function writeShallow(raw: unknown, key: string, depth: number): string | undefined {
  const v = typeof raw === 'object' && raw !== null && typeof (raw as { toJSON?: unknown }).toJSON === 'function' ? jsonValue(raw, key) : raw;
  switch (typeof v) {
    case 'string':
    case 'number':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      return undefined;
  }
  if (v === null) return 'null';
  if (depth >= SHALLOW_DEPTH) throw TOO_DEEP;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      const item = v[i];
      const s = typeof item === 'object' && item !== null ? writeShallow(item, String(i), depth + 1) : writeShallow(item, '', depth + 1);
      out += s === undefined ? 'null' : s;
    }
    return out + ']';
  }
  const keys = Object.keys(v);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let wrote = false;
  for (const k of keys) {
    const s = writeShallow((v as Record<string, unknown>)[k], k, depth + 1);
    if (s === undefined) continue;
    out += wrote ? ',' + JSON.stringify(k) + ':' + s : JSON.stringify(k) + ':' + s;
    wrote = true;
  }
  return out + '}';
}

/** The constant-stack path of {@link canonicalJson}, for values nested deeper than {@link SHALLOW_DEPTH}. */
function writeDeep(value: unknown): string {
  const root = jsonValue(value, '');
  if (root === null || typeof root !== 'object') return root === undefined ? (undefined as unknown as string) : JSON.stringify(root);
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = new Set<object>();
  const push = (o: object) => {
    if (open.has(o)) throw new TypeError('Converting circular structure to JSON');
    open.add(o);
    const isArray = Array.isArray(o);
    out.push(isArray ? '[' : '{');
    stack.push({ value: o, keys: isArray ? null : Object.keys(o).sort(), index: 0, wrote: false });
  };
  push(root);
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    if (f.keys === null) {
      const arr = f.value as unknown[];
      if (f.index >= arr.length) {
        out.push(']');
        open.delete(f.value);
        stack.pop();
        continue;
      }
      const i = f.index++;
      if (i > 0) out.push(',');
      const v = jsonValue(arr[i], String(i));
      if (v !== null && typeof v === 'object') push(v);
      else out.push(v === undefined ? 'null' : JSON.stringify(v));
    } else {
      if (f.index >= f.keys.length) {
        out.push('}');
        open.delete(f.value);
        stack.pop();
        continue;
      }
      const k = f.keys[f.index++];
      const v = jsonValue((f.value as Record<string, unknown>)[k], k);
      if (v === undefined) continue;
      if (f.wrote) out.push(',');
      f.wrote = true;
      out.push(JSON.stringify(k), ':');
      if (v !== null && typeof v === 'object') push(v);
      else out.push(JSON.stringify(v));
    }
  }
  return out.join('');
}
