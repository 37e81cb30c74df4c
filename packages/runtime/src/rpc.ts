import type { Problem, RawJson } from '@agp/contracts';

/**
 * Request context that the gateway attaches to every NATS request, resolved from the bearer token.
 * Services scope every query and append by `organization_id`.
 * Source: architecture §4 (Auth).
 */
export interface RequestContext {
  organization_id: string;
  scope: 'read' | 'write';
  /** Id of the API key (actor on appended events). */
  key_id: string;
  correlation_id: string;
  /** W3C trace context, when the caller sent one. */
  traceparent?: string;
}

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
