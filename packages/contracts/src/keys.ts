import { z } from 'zod';
import { DateTimeSchema, OpaqueIdSchema, paginationShape } from './common.js';

/**
 * API keys over HTTP: the scopes a key may have, and the bodies of `/api/v1/keys` and `/api/v1/auth/key`. Keys belong
 * to one organisation; only their SHA-256 is stored, so the plaintext is answered once, when the key is created.
 * Source: architecture §4 (Auth); docs/api.md (Keys).
 */

/**
 * What a key may do, each scope including the ones before it: `read` calls read routes only; `write` also ingests,
 * creates, changes and deletes; `admin` also manages the organisation's API keys (`/api/v1/keys`).
 */
export const KEY_SCOPES = ['read', 'write', 'admin'] as const;
/** One of {@link KEY_SCOPES}. */
export type Scope = (typeof KEY_SCOPES)[number];
/** See {@link KEY_SCOPES}. */
export const KeyScopeSchema = z.enum(KEY_SCOPES).describe('What the key may do: read (queries), write (also changes), admin (also manages API keys)');

/** Whether a key of scope `have` may call a route that needs `need` (`admin` ⊃ `write` ⊃ `read`). */
export function scopeAllows(have: Scope, need: Scope): boolean {
  return KEY_SCOPES.indexOf(have) >= KEY_SCOPES.indexOf(need);
}

/** Longest key name, in characters. */
export const KEY_NAME_MAX = 200;

/**
 * Body of `POST /api/v1/keys`: a name (shown beside the key's id wherever it acted, e.g. `ci-gate`), a scope, an
 * optional expiry (ISO 8601 date-time in the future; absent: the key never expires), and an optional `agent_id` that
 * binds the key to one agent (a read or write key only: an admin key may not be bound, 422). Unknown fields are a 422.
 * Source: docs/api.md (Keys, Agent-bound keys); docs/decisions.md (Agent-bound keys).
 */
export const CreateApiKeySchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(KEY_NAME_MAX).describe('A label for the key, recorded as actor_name on what it changes'),
  scope: KeyScopeSchema,
  expires_at: DateTimeSchema.optional().describe('When the key stops working (ISO 8601, in the future); absent: never'),
  agent_id: OpaqueIdSchema.optional().describe('Bind the key to this agent: it then acts only as that agent (read and write keys; an admin key cannot be bound)'),
});
export type CreateApiKey = z.infer<typeof CreateApiKeySchema>;

/** A key's state: `active`, `revoked` (DELETE), or `expired` (past `expires_at`). */
export const API_KEY_STATUSES = ['active', 'revoked', 'expired'] as const;

/** An API key as listed: never its plaintext nor its hash. Times are ISO 8601 UTC. */
export const ApiKeySchema = z.object({
  id: z.string().describe('Key id; the actor of what the key changes is `key:<id>`'),
  organization_id: z.string(),
  name: z.string().nullable().describe('The label given at creation (null for a key made without one)'),
  scope: KeyScopeSchema,
  prefix: z.string().describe('The first 8 characters of the key (`agp_AbCd`), to recognise it'),
  created_at: z.string(),
  expires_at: z.string().nullable().describe('When it expires; null: never'),
  revoked_at: z.string().nullable().describe('When it was revoked; null: not revoked'),
  last_used_at: z.string().nullable().describe('When a request last presented it, to within a minute; null: never used'),
  status: z.enum(API_KEY_STATUSES),
  agent_id: z.string().nullable().describe('The agent the key is bound to (it acts only as that agent); null: not bound'),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

/** `POST /api/v1/keys` answer: the key as listed plus its plaintext, `key`, which is shown this once. */
export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().describe('The secret (`agp_…`): shown only in this answer; store it now'),
});
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

/** Query of `GET /api/v1/keys`: skip (default 0) and limit (default 50, at most 1000). Newest first. */
export const ListApiKeysQuerySchema = z.strictObject({ ...paginationShape(50, 1000) });
export type ListApiKeysQuery = z.infer<typeof ListApiKeysQuerySchema>;

/** A page of the organisation's keys, newest first (revoked and expired ones included). */
export const ApiKeyPageSchema = z.object({ keys: z.array(ApiKeySchema), total: z.number().int(), skip: z.number().int(), limit: z.number().int() });
export type ApiKeyPage = z.infer<typeof ApiKeyPageSchema>;

/** `GET /api/v1/auth/key`: the calling key: its id, organisation, name, scope, expiry and bound agent. */
export const CallerKeySchema = z.object({
  id: z.string(),
  organization_id: z.string(),
  name: z.string().nullable(),
  scope: KeyScopeSchema,
  expires_at: z.string().nullable().describe('When the key expires; null: never'),
  agent_id: z.string().nullable().describe('The agent the key is bound to; null: not bound'),
});
export type CallerKey = z.infer<typeof CallerKeySchema>;
