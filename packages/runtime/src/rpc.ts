import type { Problem } from './problem.js';

/**
 * Request context that the gateway attaches to every NATS request, resolved from the bearer token.
 * Services scope every query and append by `organization_id`.
 * Source: ARCHITECTURE.md §4 (Auth).
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
