/**
 * `/api/v1/keys` and `/api/v1/auth/key`: API keys over HTTP, answered by the gateway itself (it owns the key store;
 * `GatewayOps` in `@agp/contracts`). Managing keys needs an admin key, checked at the edge from the route table; every
 * query is scoped by the caller's organisation, so another organisation's key id is a 404. The plaintext of a key is
 * answered once, by the create; only its SHA-256 is stored. A key revoked here is dropped from this gateway's key
 * cache at once; other gateways stop accepting it within their cache period.
 * Source: architecture §4 (Auth); docs/api.md (Keys); docs/decisions.md (Keys over HTTP).
 */
import { GatewayOps, type ApiKey, type ApiKeyPage, type CallerKey, type CreatedApiKey } from '@agp/contracts';
import { ADMIN_NOT_BOUND, type ChangedBy, type CreatedKey, type CreateKeyOptions, type KeySummary } from '@agp/auth';
import { requestMetadata } from '@agp/eventstore';
import { UnauthorizedError, ValidationError, databaseUnavailable, parseOrThrow } from '@agp/runtime';
import type { RouteAnswer, RouteCall } from '../router.js';

/** What the key routes need of the key store and the key cache. */
export interface KeyAdmin {
  createKey(opts: CreateKeyOptions): Promise<CreatedKey>;
  page(organizationId: string, q: { skip: number; limit: number }): Promise<{ keys: KeySummary[]; total: number }>;
  /** Revoke; `by` is recorded as the actor of the ApiKeyRevoked event. */
  revoke(keyId: string, organizationId: string, by?: ChangedBy): Promise<KeySummary>;
  /** Drop the key's cached resolutions in this process (after a revoke). */
  invalidate(keyId: string): void;
}

const keyStoreUnavailable = databaseUnavailable('the key store');

/**
 * POST /api/v1/keys `{name, scope, expires_at?, agent_id?}`: 201 with the key and its secret `key` (shown this once).
 * @throws ValidationError (422) naming each bad field (a scope with its allowed values; an expiry not in the future;
 * an `agent_id` on an admin key).
 */
export async function createApiKey({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const { body: b } = parseOrThrow(GatewayOps['keys.create'].request, { body: req.body ?? {} });
  const expiresAt = b.expires_at === undefined ? undefined : new Date(b.expires_at);
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw new ValidationError('1 invalid field: body.expires_at', [{ path: 'body.expires_at', message: 'must be in the future' }]);
  }
  if (b.agent_id !== undefined && b.scope === 'admin') throw new ValidationError('1 invalid field: body.agent_id', [{ path: 'body.agent_id', message: ADMIN_NOT_BOUND }]);
  const created: CreatedApiKey = await deps.keys.createKey({ organizationId: ctx.organization_id, scope: b.scope, name: b.name, expiresAt, agentId: b.agent_id, by: requestMetadata(ctx) }).catch(keyStoreUnavailable);
  res.location('/api/v1/keys');
  return { body: created };
}

/** GET /api/v1/keys?skip&limit: `{keys, total, skip, limit}`, newest first, never a secret. */
export async function listApiKeys({ req, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const { query: q } = parseOrThrow(GatewayOps['keys.list'].request, { query: req.query });
  const page = await deps.keys.page(ctx.organization_id, q).catch(keyStoreUnavailable);
  const body: ApiKeyPage = { keys: page.keys, total: page.total, skip: q.skip, limit: q.limit };
  return { body };
}

/** DELETE /api/v1/keys/{id}: 200 with the revoked key (idempotent). @throws NotFoundError (404) for another organisation's key. */
export async function revokeApiKey({ ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  const { path } = parseOrThrow(GatewayOps['keys.revoke'].request, { path: { id: params.id } });
  const revoked: ApiKey = await deps.keys.revoke(path.id, ctx.organization_id, requestMetadata(ctx)).catch(keyStoreUnavailable);
  deps.keys.invalidate(revoked.id);
  return { body: revoked };
}

/** GET /api/v1/auth/key: the calling key's id, organisation, name, scope, expiry and bound agent, from what the edge resolved (no further query). */
export function getCallerKey({ req }: RouteCall): RouteAnswer {
  const key = req.agpKey;
  if (!key) throw new UnauthorizedError('missing API key');
  const body: CallerKey = { id: key.key_id, organization_id: key.organization_id, name: key.name ?? null, scope: key.scope, expires_at: key.expires_at ?? null, agent_id: key.agent_id ?? null };
  return { body };
}
