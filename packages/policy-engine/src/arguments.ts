/**
 * Reading and rewriting an action's arguments by dotted path (`amount`, `payment.amount`, `messages.2.content`: a
 * numeric segment indexes an array), and their canonical hash. Pure; a rewrite copies only the containers on the path
 * (the caller's arguments are never changed), so deep arguments cost no more than the path. Iterative throughout.
 * Source: architecture §1 (packages/policy-engine).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '@agp/contracts';

/** The segments of a dotted path. */
export const pathSegments = (path: string): string[] => path.split('.');

/** The child of a container by one segment: an array's element by index, an object's own property; else undefined. */
function child(container: unknown, segment: string): unknown {
  if (Array.isArray(container)) {
    const i = Number(segment);
    return Number.isInteger(i) && i >= 0 && i < container.length && String(i) === segment ? container[i] : undefined;
  }
  if (container !== null && typeof container === 'object' && Object.hasOwn(container, segment)) return (container as Record<string, unknown>)[segment];
  return undefined;
}

/** The value at `segments` in `args`, or undefined when the path leads nowhere. */
export function getAt(args: unknown, segments: readonly string[]): unknown {
  let v = args;
  for (const s of segments) {
    v = child(v, s);
    if (v === undefined) return undefined;
  }
  return v;
}

/**
 * `args` with the value at `segments` set to `value`: the containers on the path are copied (shallow), the rest is
 * shared. The path must exist (see {@link getAt}); otherwise `args` is returned unchanged.
 */
export function setAt<T>(args: T, segments: readonly string[], value: unknown): T {
  if (segments.length === 0) return args;
  const chain: unknown[] = [args];
  for (let i = 0; i < segments.length - 1; i++) {
    const next = child(chain[i], segments[i]);
    if (next === null || typeof next !== 'object') return args;
    chain.push(next);
  }
  if (child(chain[chain.length - 1], segments[segments.length - 1]) === undefined) return args;
  let replacement = value;
  for (let i = segments.length - 1; i >= 0; i--) {
    const c = chain[i];
    const copy: Record<string, unknown> | unknown[] = Array.isArray(c) ? c.slice() : { ...(c as Record<string, unknown>) };
    // defineProperty, not assignment: a key spelled `__proto__` (JSON.parse makes it an own property) stays data.
    Object.defineProperty(copy, segments[i], { value: replacement, writable: true, enumerable: true, configurable: true });
    replacement = copy;
  }
  return replacement as T;
}

/**
 * The arguments hash the loop and idempotency guardrails compare: hex SHA-256 of the canonical JSON of the
 * arguments (object key order ignored; absent arguments hash as `{}`).
 */
export function argumentsHash(args: Readonly<Record<string, unknown>> | undefined): string {
  return createHash('sha256').update(canonicalJson(args ?? {}), 'utf8').digest('hex');
}

/**
 * The hash an MCP tool is pinned by (the MCP proxy's tool pinning, docs/mcp-proxy.md): hex SHA-256 of the canonical
 * JSON of `{name, description, inputSchema}` (an absent description counts as `''`), so a change of the description or
 * of the input schema changes it, and key order never does.
 */
export function mcpToolPinHash(tool: { name: string; description?: string | undefined; inputSchema: unknown }): string {
  return createHash('sha256').update(canonicalJson({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema }), 'utf8').digest('hex');
}
