/**
 * `/api/v1/keys` and `/api/v1/auth/key`: API keys over HTTP, answered by the gateway itself (it owns the key store;
 * `GatewayOps` in `@agp/contracts`). Managing keys needs an admin key, checked at the edge from the route table; every
 * query is scoped by the caller's organisation, so another organisation's key id is a 404. The plaintext of a key is
 * answered once, by the create; only its SHA-256 is stored. A key revoked here is dropped from this gateway's key
 * cache at once; other gateways stop accepting it within their cache period.
 * Source: architecture §4 (Auth); docs/api.md (Keys); docs/decisions.md (Keys over HTTP).
 */
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { GatewayOps, type ApiKey, type ApiKeyPage, type CallerKey, type CreatedApiKey } from '@agp/contracts';
import type { CreatedKey, CreateKeyOptions, KeySummary } from '@agp/auth';
import { UnauthorizedError, ValidationError, parseOrThrow } from '@agp/runtime';
import { ctxOf, databaseFailure } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

/** Injection token of the {@link KeyAdmin}. */
export const KEY_ADMIN = Symbol('agp.gateway.key-admin');

/** What the key routes need of the key store and the key cache. */
export interface KeyAdmin {
  createKey(opts: CreateKeyOptions): Promise<CreatedKey>;
  page(organizationId: string, q: { skip: number; limit: number }): Promise<{ keys: KeySummary[]; total: number }>;
  revoke(keyId: string, organizationId: string): Promise<KeySummary>;
  /** Drop the key's cached resolutions in this process (after a revoke). */
  invalidate(keyId: string): void;
}

const keyStoreFailure = databaseFailure('the key store');

/** POST, GET /api/v1/keys and DELETE /api/v1/keys/{id} (admin key). */
@Controller('api/v1/keys')
export class KeysController {
  constructor(@Inject(KEY_ADMIN) private readonly keys: KeyAdmin) {}

  /**
   * POST /api/v1/keys `{name, scope, expires_at?}`: 201 with the key and its secret `key` (shown this once).
   * @throws ValidationError (422) naming each bad field (a scope with its allowed values; an expiry not in the future).
   */
  @Post()
  @HttpCode(201)
  async create(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response): Promise<CreatedApiKey> {
    const ctx = ctxOf(req);
    const { body: b } = parseOrThrow(GatewayOps['keys.create'].request, { body: body ?? {} });
    const expiresAt = b.expires_at === undefined ? undefined : new Date(b.expires_at);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ValidationError('1 invalid field: body.expires_at', [{ path: 'body.expires_at', message: 'must be in the future' }]);
    }
    const created = await this.keys.createKey({ organizationId: ctx.organization_id, scope: b.scope, name: b.name, expiresAt }).catch(keyStoreFailure);
    res.location('/api/v1/keys');
    return created;
  }

  /** GET /api/v1/keys?skip&limit: `{keys, total, skip, limit}`, newest first, never a secret. */
  @Get()
  async list(@Req() req: AuthedRequest, @Query() query: unknown): Promise<ApiKeyPage> {
    const ctx = ctxOf(req);
    const { query: q } = parseOrThrow(GatewayOps['keys.list'].request, { query });
    const page = await this.keys.page(ctx.organization_id, q).catch(keyStoreFailure);
    return { keys: page.keys, total: page.total, skip: q.skip, limit: q.limit };
  }

  /** DELETE /api/v1/keys/{id}: 200 with the revoked key (idempotent). @throws NotFoundError (404) for another organisation's key. */
  @Delete(':id')
  @HttpCode(200)
  async revoke(@Req() req: AuthedRequest, @Param('id') id: string): Promise<ApiKey> {
    const ctx = ctxOf(req);
    const { path } = parseOrThrow(GatewayOps['keys.revoke'].request, { path: { id } });
    const revoked = await this.keys.revoke(path.id, ctx.organization_id).catch(keyStoreFailure);
    this.keys.invalidate(revoked.id);
    return revoked;
  }
}

/** GET /api/v1/auth/key: the calling key (any scope). */
@Controller('api/v1/auth/key')
export class CallerKeyController {
  /** The calling key's id, organisation, name, scope and expiry, from what the edge resolved (no further query). */
  @Get()
  get(@Req() req: AuthedRequest): CallerKey {
    const key = req.agpKey;
    if (!key) throw new UnauthorizedError('missing API key');
    return { id: key.key_id, organization_id: key.organization_id, name: key.name ?? null, scope: key.scope, expires_at: key.expires_at ?? null };
  }
}

/** The key routes, registered by the gateway module. */
export const keysControllers = [KeysController, CallerKeyController];
