import type { Problem, RawJson, RequestContext } from '@agp/contracts';

/** The caller's context on every request (defined once: `RequestContextSchema` in `@agp/contracts`). */
export type { RequestContext };

/** Envelope of every request/reply message on the bus: the caller's context plus the payload. */
export interface RpcRequest<T = unknown> {
  ctx: RequestContext;
  body: T;
}

/** Envelope of every reply: either data or a problem. Handlers never throw across the wire. */
export type RpcReply<T = unknown> = { ok: true; data: T } | { ok: false; problem: Problem };

/** A reply body already serialised as JSON text (defined once: `RawJsonSchema` in `@agp/contracts`). */
export type { RawJson };

/** Wrap JSON text as a {@link RawJson} reply body. The caller guarantees `json` is valid JSON. */
export function rawJson(json: string): RawJson {
  return { $json: json };
}

/** True when `value` is a {@link RawJson} reply body. */
export function isRawJson(value: unknown): value is RawJson {
  return typeof value === 'object' && value !== null && typeof (value as RawJson).$json === 'string' && Object.keys(value).length === 1;
}
