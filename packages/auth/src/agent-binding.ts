/**
 * Agent-bound keys: a key created with an `agent_id` acts only as that agent. The gateway edge refuses a request whose
 * path or body names another agent (`HttpRoute.agentId` in `@agp/contracts`), the ingest service each ingest event
 * naming another, and {@link agentIdOf} tells a connection (the MCP proxy's) which agent it is.
 * Source: docs/decisions.md (Agent-bound keys); docs/api.md (Keys, Agent-bound keys).
 */
import { OpaqueIdSchema, routeOperation, type HttpRoute, type RequestContext } from '@agp/contracts';
import { ForbiddenError, ValidationError } from '@agp/runtime';

/** The request header that names the agent a connection acts as, when its key is bound to none (`AGP-Agent-Id`). */
export const AGENT_ID_HEADER = 'AGP-Agent-Id';

/** What the agent checks read of a request context: the agent its key is bound to (null or absent: none). */
export type AgentBinding = Pick<RequestContext, 'agent_id'>;

/**
 * Why a key bound to an agent may not name `named` in `field`, or null when it may: the key is bound to no agent,
 * `named` is that agent, or `named` is not a string (left to the route's own validation, which answers 422).
 * @param field where the request names the agent, as problem details name fields (`body.agent_id`, `path.agent_id`).
 */
export function boundAgentRefusal(ctx: AgentBinding, named: unknown, field: string): string | null {
  const bound = ctx.agent_id;
  if (!bound || typeof named !== 'string' || named === bound) return null;
  return `${field}: this key is bound to agent ${bound} and acts only as that agent; it cannot name agent ${named}`;
}

/**
 * Why a key bound to an agent may not call a route that names no agent and changes state (`what`, e.g.
 * `POST /api/v1/policies`), or null when the key is bound to none: such a route acts for the whole organisation,
 * beyond one agent (`HttpRoute.boundKeys` in `@agp/contracts` names the few an agent's own process needs).
 */
export function boundKeyRouteRefusal(ctx: AgentBinding, what: string): string | null {
  if (!ctx.agent_id) return null;
  return `this key is bound to agent ${ctx.agent_id} and acts only as that agent; ${what} acts for the whole organisation, so it needs a key bound to no agent`;
}

/**
 * Why a key bound to an agent may not make a request on `route` with these `parts`, or null when it may (or is bound to
 * none): the route names an agent in its path, body or a header (`route.agentId`; with `each`, in every item of a body list)
 * and it is another agent ({@link boundAgentRefusal}, naming the field), or the route changes state, names no agent
 * and its row does not allow bound keys ({@link boundKeyRouteRefusal}). Ingest events (`agentId: {in: 'events'}`)
 * are checked per event by the ingest service, not here. `parts.path` holds the decoded path parameters, `parts.headers`
 * the request headers by lower-case name.
 * Used by the gateway edge for HTTP requests and by the MCP tool registry for the wire rows its tools call.
 */
export function boundKeyRefusal(
  ctx: AgentBinding,
  route: HttpRoute,
  parts: { path?: Readonly<Record<string, unknown>>; body?: unknown; headers?: Readonly<Record<string, string | string[] | undefined>> },
): string | null {
  if (!ctx.agent_id) return null;
  const ref = route.agentId;
  if (!ref) return route.boundKeys === 'allowed' || routeOperation(route.message).scope === 'read' ? null : boundKeyRouteRefusal(ctx, `${route.method} ${route.path}`);
  if (ref.in === 'events') return null;
  if (ref.in === 'path') return boundAgentRefusal(ctx, parts.path?.[ref.name], `path.${ref.name}`);
  if (ref.in === 'header') {
    const value = parts.headers?.[ref.name.toLowerCase()];
    return boundAgentRefusal(ctx, (typeof value === 'string' ? value.trim() : undefined) || undefined, `header.${ref.name}`);
  }
  const body = parts.body;
  const value = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[ref.name] : undefined;
  if (!ref.each) return boundAgentRefusal(ctx, value, `body.${ref.name}`);
  if (!Array.isArray(value)) return null; // not a list: the route's own validation answers 422
  for (const [i, item] of value.entries()) {
    const named = item && typeof item === 'object' ? (item as Record<string, unknown>)[ref.each] : undefined;
    const refusal = boundAgentRefusal(ctx, named, `body.${ref.name}.${i}.${ref.each}`);
    if (refusal) return refusal;
  }
  return null;
}

/**
 * Refuse a request whose `field` names another agent than the one its key is bound to ({@link boundAgentRefusal}).
 * @throws ForbiddenError (403) naming the field, the bound agent and the agent named.
 */
export function checkBoundAgent(ctx: AgentBinding, named: unknown, field: string): void {
  const refusal = boundAgentRefusal(ctx, named, field);
  if (refusal) throw new ForbiddenError(refusal);
}

/**
 * The agent a request or connection acts as: the key's bound agent; else the {@link AGENT_ID_HEADER} header's value
 * (trimmed; empty counts as absent); else `fallback` (the MCP client's `clientInfo.name`); null when none is given.
 * @param headerValue the `AGP-Agent-Id` header as received (undefined or null when absent).
 * @param fallback what names the agent when neither the key nor the header does.
 * @throws ForbiddenError (403) when the key is bound and the header names another agent; ValidationError (422) when
 * the header is not an opaque id (over 256 characters).
 */
export function agentIdOf(ctx: AgentBinding, headerValue: string | null | undefined, fallback?: string | null): string | null {
  const header = headerValue?.trim() || undefined;
  if (header !== undefined && !OpaqueIdSchema.safeParse(header).success) {
    throw new ValidationError(`1 invalid field: header.${AGENT_ID_HEADER}`, [{ path: `header.${AGENT_ID_HEADER}`, message: 'expected 1-256 characters' }]);
  }
  if (ctx.agent_id) {
    checkBoundAgent(ctx, header, `header.${AGENT_ID_HEADER}`);
    return ctx.agent_id;
  }
  return header ?? (fallback || null);
}
