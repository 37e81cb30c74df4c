/**
 * API keys and organisations. Keys are `agp_` plus 32 base62 characters; only their SHA-256 is stored,
 * with the organisation, scope (read | write | admin), name, expiry, revocation, when it was last used, and the agent
 * it is bound to (docs/decisions.md, Agent-bound keys).
 * Source: architecture §4 (Auth); docs/api.md (Keys).
 */
import { createHash, randomBytes } from 'node:crypto';
import { AuthEvents, OpaqueIdSchema, apiKeyStream, type Scope } from '@agp/contracts';
import { EVENT_SCHEMA_VERSION, migrateSchema, type AppendRequest, type EventMetadata, type EventStore, type Sql, type SqlExecutor } from '@agp/eventstore';
import { ConflictError, NotFoundError, ValidationError, counter, iso, isoOrNull, newId } from '@agp/runtime';

/** read: queries only; write: also ingest, create, delete; admin: also manage the organisation's API keys. */
export type KeyScope = Scope;

/** What a valid key resolves to; the gateway turns it into the request context. */
export interface Principal {
  key_id: string;
  organization_id: string;
  scope: KeyScope;
  /** The key's name (null for a key made without one); recorded beside the actor on what the key changes. */
  name?: string | null;
  /** When the key expires (ISO 8601 UTC), null or absent when never; bounds how long a cache may serve it. */
  expires_at?: string | null;
  /** The agent the key is bound to (it acts only as that agent); null or absent when none. */
  agent_id?: string | null;
}

/** A key as listed (never its plaintext or hash). Times are ISO 8601 UTC. */
export interface KeySummary {
  id: string;
  organization_id: string;
  scope: KeyScope;
  name: string | null;
  /** First characters of the key, to recognise it (`agp_AbCd…`). */
  prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** When a request last presented the key (ISO 8601 UTC, to within {@link LAST_USED_GRANULARITY_S} s); null: never. */
  last_used_at: string | null;
  status: 'active' | 'revoked' | 'expired';
  /** The agent the key is bound to; null when none. */
  agent_id: string | null;
}

/** A key just created: the summary plus the plaintext, shown once. */
export interface CreatedKey extends KeySummary {
  key: string;
}

/**
 * Where key and member changes are recorded as events (the event store the platform was opened with, over the same
 * database): {@link EventStore.appendWith} makes the table write and its event one transaction. Absent: the change is
 * made without an event (tools and tests that need no record).
 */
export type ChangeRecorder = Pick<EventStore, 'appendWith'>;

/**
 * Who makes a change, as event metadata (`requestMetadata(ctx)` of @agp/eventstore for an API request). Its
 * `organization_id` is replaced by the changed object's. Absent: the platform itself (`system`).
 */
export type ChangedBy = EventMetadata;

/** The metadata of a change of an object of `organizationId` made by `by` (else `system`). */
export function changeMetadata(organizationId: string, by?: ChangedBy): EventMetadata {
  return { ...(by ?? { actor: 'system', schema_version: EVENT_SCHEMA_VERSION }), organization_id: organizationId };
}

/**
 * Make a change and record its events in one transaction ({@link ChangeRecorder}); without a recorder, the change
 * alone in a transaction of `sql`. @returns `write`'s value. @throws what `write` or the append throws (nothing written).
 */
export async function recordChange<T>(sql: Sql, recorder: ChangeRecorder | undefined, write: (tx: SqlExecutor) => Promise<{ value: T; events: AppendRequest[] }>): Promise<T> {
  if (recorder) return recorder.appendWith(write);
  return sql.transaction(async (tx) => (await write(tx)).value);
}

/** Options of {@link KeyStore.createKey}. */
export interface CreateKeyOptions {
  organizationId: string;
  scope: KeyScope;
  name?: string;
  /** Use this plaintext instead of a random one (headless init, AGP_INIT_*). At least 16 characters. */
  key?: string;
  /** Expiry; omitted never expires. */
  expiresAt?: Date;
  /** Bind the key to this agent (a read or write key only); omitted: bound to none. */
  agentId?: string;
  /** Who creates it (recorded on the ApiKeyCreated event); omitted: `system`. */
  by?: ChangedBy;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A fresh random key: `agp_` + 32 base62 characters (~190 bits). */
export function generateKey(): string {
  const bytes = randomBytes(48);
  let out = '';
  for (const b of bytes) {
    if (b < 248) out += BASE62[b % 62];
    if (out.length === 32) break;
  }
  while (out.length < 32) out += BASE62[randomBytes(1)[0] % 62];
  return `agp_${out}`;
}

/** SHA-256 hex of a key: what is stored and looked up. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

const ORG_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** `last_used_at` is written at most once per this many seconds per key, so resolving a key stays a read nearly always. */
export const LAST_USED_GRANULARITY_S = 60;

/** Why an admin key cannot be bound to an agent (the 422 of a create naming `agent_id` with scope `admin`). */
export const ADMIN_NOT_BOUND = 'an admin key cannot be bound to an agent: it manages the organisation\'s keys, which no single agent may; bind a read or write key';

/** The scope check of `agp_api_keys`, by name, so a later migration can widen it. */
const SCOPE_CHECK = `CONSTRAINT agp_api_keys_scope_check CHECK (scope IN ('read', 'write', 'admin'))`;

export const KEY_STORE_DDL = `
CREATE TABLE IF NOT EXISTS agp_organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS agp_api_keys (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES agp_organizations(id),
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  scope text NOT NULL,
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  agent_id text,
  ${SCOPE_CHECK}
);
ALTER TABLE agp_api_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz;
ALTER TABLE agp_api_keys ADD COLUMN IF NOT EXISTS agent_id text;
CREATE INDEX IF NOT EXISTS agp_api_keys_org ON agp_api_keys (organization_id)
`;

/**
 * Widen the scope check of a table made before the `admin` scope (`CHECK (scope IN ('read', 'write'))`); a no-op once
 * it names `admin`. Runs inside {@link migrateSchema}'s transaction and lock.
 */
async function widenScopeCheck(tx: SqlExecutor): Promise<void> {
  const { rows } = await tx.query<{ def: string }>(
    `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'agp_api_keys'::regclass AND contype = 'c' AND conname = 'agp_api_keys_scope_check'`,
  );
  if (rows[0]?.def.includes("'admin'")) return;
  await tx.query('ALTER TABLE agp_api_keys DROP CONSTRAINT IF EXISTS agp_api_keys_scope_check');
  await tx.query(`ALTER TABLE agp_api_keys ADD ${SCOPE_CHECK}`);
}

/** The columns of a {@link KeyRow}. */
const KEY_COLUMNS = 'id, organization_id, scope, name, prefix, created_at, expires_at, revoked_at, last_used_at, agent_id';

interface KeyRow {
  id: string;
  organization_id: string;
  scope: KeyScope;
  name: string | null;
  prefix: string;
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  last_used_at: Date | string | null;
  agent_id: string | null;
}


function summary(r: KeyRow, now = Date.now()): KeySummary {
  const expires = isoOrNull(r.expires_at);
  return {
    id: r.id,
    organization_id: r.organization_id,
    scope: r.scope,
    name: r.name,
    prefix: r.prefix,
    created_at: iso(r.created_at),
    expires_at: expires,
    revoked_at: isoOrNull(r.revoked_at),
    last_used_at: isoOrNull(r.last_used_at),
    status: r.revoked_at ? 'revoked' : expires && Date.parse(expires) <= now ? 'expired' : 'active',
    agent_id: r.agent_id ?? null,
  };
}

/**
 * Organisations and API keys in the platform database (PostgreSQL or PGlite).
 * Call {@link migrate} once before use.
 */
export class KeyStore {
  /**
   * @param sql the platform database.
   * @param recorder where creations and revocations are recorded as ApiKeyCreated / ApiKeyRevoked events (stream
   *   `api-key-<id>`, data: the key as listed, never its plaintext or hash), in the transaction of the change.
   */
  constructor(
    private readonly sql: Sql,
    private readonly recorder?: ChangeRecorder,
  ) {}

  /** Create the tables when missing, or bring older ones up to date. Idempotent and safe when several processes start at once. */
  async migrate(): Promise<void> {
    await migrateSchema(this.sql, KEY_STORE_DDL, widenScopeCheck);
  }

  /**
   * Create an organisation when absent (idempotent).
   * @throws ValidationError (422) when the id is not 1-63 of `a-z 0-9 _ -` starting with a letter or digit.
   */
  async createOrganization(id: string, name?: string): Promise<void> {
    if (!ORG_ID.test(id)) throw new ValidationError('invalid organisation id', [{ path: 'org', message: 'expected 1-63 characters of a-z, 0-9, _ and -, starting with a letter or digit' }]);
    await this.sql.query('INSERT INTO agp_organizations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [id, name ?? id]);
  }

  /**
   * Create a key (random unless `key` is given) for an existing organisation; the plaintext is returned once.
   * @throws NotFoundError (404) for an unknown organisation; ValidationError (422) for a supplied key under 16
   * characters, an `agentId` that is not 1-256 characters, or an `agentId` on an admin key (an admin key manages the organisation's keys, which no single agent
   * may); ConflictError (409) when the supplied key already exists.
   */
  async createKey(opts: CreateKeyOptions): Promise<CreatedKey> {
    const key = opts.key ?? generateKey();
    if (key.length < 16 || /\s/.test(key)) throw new ValidationError('invalid key', [{ path: 'key', message: 'expected at least 16 characters without spaces' }]);
    if (opts.agentId !== undefined && !OpaqueIdSchema.safeParse(opts.agentId).success) throw new ValidationError('1 invalid field: agent_id', [{ path: 'agent_id', message: 'expected 1-256 characters' }]);
    if (opts.agentId !== undefined && opts.scope === 'admin') throw new ValidationError('1 invalid field: agent_id', [{ path: 'agent_id', message: ADMIN_NOT_BOUND }]);
    const hash = hashKey(key);
    return recordChange(this.sql, this.recorder, async (tx) => {
      const { rows: org } = await tx.query('SELECT 1 FROM agp_organizations WHERE id = $1', [opts.organizationId]);
      if (org.length === 0) throw new NotFoundError(`organisation ${opts.organizationId} not found`);
      const { rows: existing } = await tx.query('SELECT 1 FROM agp_api_keys WHERE key_hash = $1', [hash]);
      if (existing.length > 0) throw new ConflictError('this key already exists');
      const { rows } = await tx.query<KeyRow>(
        `INSERT INTO agp_api_keys (id, organization_id, key_hash, prefix, scope, name, expires_at, agent_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING ${KEY_COLUMNS}`,
        [newId(), opts.organizationId, hash, key.slice(0, 8), opts.scope, opts.name ?? null, opts.expiresAt ? opts.expiresAt.toISOString() : null, opts.agentId ?? null],
      );
      const created = summary(rows[0]);
      return { value: { ...created, key }, events: [keyEvent(AuthEvents.KeyCreated, created, opts.by)] };
    });
  }

  /** Whether any key exists (the embedded first run creates keys only when none does). */
  async hasAnyKey(): Promise<boolean> {
    const { rows } = await this.sql.query('SELECT 1 FROM agp_api_keys LIMIT 1');
    return rows.length > 0;
  }

  /**
   * Headless initialisation (AGP_INIT_ORG, AGP_INIT_WRITE_KEY, AGP_INIT_READ_KEY, AGP_INIT_ADMIN_KEY): create the
   * organisation and exactly these keys when they are absent; a second start changes nothing. Returns what it created.
   * @throws ConflictError (409) when a given key exists for another organisation or with another scope.
   */
  async ensureInit(opts: { org: string; writeKey?: string; readKey?: string; adminKey?: string }): Promise<{ created: Array<'organization' | KeyScope> }> {
    const created: Array<'organization' | KeyScope> = [];
    const { rows: org } = await this.sql.query('SELECT 1 FROM agp_organizations WHERE id = $1', [opts.org]);
    if (org.length === 0) {
      await this.createOrganization(opts.org);
      created.push('organization');
    }
    for (const [scope, key] of [
      ['write', opts.writeKey],
      ['read', opts.readKey],
      ['admin', opts.adminKey],
    ] as const) {
      if (!key) continue;
      const { rows } = await this.sql.query<{ organization_id: string; scope: string }>('SELECT organization_id, scope FROM agp_api_keys WHERE key_hash = $1', [hashKey(key)]);
      if (rows.length === 0) {
        await this.createKey({ organizationId: opts.org, scope, key, name: `AGP_INIT_${scope.toUpperCase()}_KEY` });
        created.push(scope);
      } else if (rows[0].organization_id !== opts.org || rows[0].scope !== scope) {
        throw new ConflictError(`AGP_INIT_${scope.toUpperCase()}_KEY exists as a ${rows[0].scope} key of organisation ${rows[0].organization_id}`);
      }
    }
    return { created };
  }

  /**
   * The principal of a key (with its name, expiry and bound agent), or null when it is unknown, revoked or expired. Notes the use
   * in `last_used_at` when the last note is older than {@link LAST_USED_GRANULARITY_S} seconds, in the same statement
   * (one round trip; a write at most once a minute per key, and only on a key cache miss).
   */
  async resolve(key: string): Promise<Principal | null> {
    const { rows } = await this.sql.query<Principal & { expires_at: Date | string | null }>(
      `WITH k AS (
         SELECT id, organization_id, scope, name, expires_at, last_used_at, agent_id FROM agp_api_keys
          WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
       ), used AS (
         UPDATE agp_api_keys a SET last_used_at = now() FROM k
          WHERE a.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${LAST_USED_GRANULARITY_S}))
       )
       SELECT id AS key_id, organization_id, scope, name, expires_at, agent_id FROM k`,
      [hashKey(key)],
    );
    return rows[0] ? { ...rows[0], expires_at: isoOrNull(rows[0].expires_at) } : null;
  }

  /** An organisation's keys, newest first (never plaintext). */
  async list(organizationId: string): Promise<KeySummary[]> {
    return (await this.page(organizationId, { skip: 0, limit: null })).keys;
  }

  /**
   * One page of an organisation's keys, newest first (created_at, then id), revoked and expired ones included, with
   * the total. Never plaintext. `limit` null: every key from `skip` on.
   */
  async page(organizationId: string, q: { skip: number; limit: number | null }): Promise<{ keys: KeySummary[]; total: number }> {
    const [{ rows }, { rows: count }] = await Promise.all([
      this.sql.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM agp_api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3`, [organizationId, q.skip, q.limit]),
      this.sql.query<{ n: string | number }>('SELECT count(*) AS n FROM agp_api_keys WHERE organization_id = $1', [organizationId]),
    ]);
    const now = Date.now();
    return { keys: rows.map((r) => summary(r, now)), total: Number(count[0].n) };
  }

  /**
   * Revoke a key (idempotent: revoking twice keeps the first time). With `organizationId`, only a key of that
   * organisation: another organisation's key is unknown. The first revocation is recorded as ApiKeyRevoked by `by`
   * (else `system`); a repeated one records nothing.
   * @throws NotFoundError (404) for an unknown key id (or another organisation's).
   */
  async revoke(keyId: string, organizationId?: string, by?: ChangedBy): Promise<KeySummary> {
    return recordChange(this.sql, this.recorder, async (tx) => {
      const { rows: before } = await tx.query<{ revoked: boolean }>(
        'SELECT revoked_at IS NOT NULL AS revoked FROM agp_api_keys WHERE id = $1 AND ($2::text IS NULL OR organization_id = $2) FOR UPDATE',
        [keyId, organizationId ?? null],
      );
      if (before.length === 0) throw new NotFoundError(`key ${keyId} not found`);
      const { rows } = await tx.query<KeyRow>(`UPDATE agp_api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId]);
      const revoked = summary(rows[0]);
      // Revoking a revoked key changes nothing, so records nothing.
      return { value: revoked, events: before[0].revoked ? [] : [keyEvent(AuthEvents.KeyRevoked, revoked, by)] };
    });
  }
}

/** The append of one key event: the key as listed after the change (no plaintext, no hash), in the key's organisation. */
function keyEvent(type: string, key: KeySummary, by?: ChangedBy): AppendRequest {
  return { stream_id: apiKeyStream(key.id), events: [{ event_id: newId(), type, data: { key }, metadata: changeMetadata(key.organization_id, by) }] };
}

/** Anything that resolves a key to its principal. */
export interface KeyResolver {
  resolve(key: string): Promise<Principal | null>;
}

/** Options of {@link CachedKeyResolver} beyond the fresh TTL. */
export interface KeyCacheOptions {
  /** How long an unknown key's answer is cached, in ms. @default 2000 */
  negativeTtlMs?: number;
  /** Most keys kept (the cache is emptied when full). @default 10000 */
  maxEntries?: number;
  /**
   * Serve-stale window, in ms (`AGP_KEY_STALE_MS`): while the store fails, a key that resolved as valid within the
   * last `staleMs` keeps being served (never past its expiry); 0 turns it off. @default 300000 (5 min)
   */
  staleMs?: number;
  /** After a store failure, how long stale entries are served without asking the store again, in ms. @default 1000 */
  retryAfterFailureMs?: number;
}

/** Default serve-stale window of {@link CachedKeyResolver}: 5 minutes. */
export const DEFAULT_KEY_STALE_MS = 300_000;

const staleServes = counter('agp_key_cache_stale_serves_total', 'API keys served from the cache past their TTL because the key store failed');
const storeFailures = counter('agp_key_store_failures_total', 'Key resolutions the key store could not answer');

/**
 * A {@link KeyResolver} with a time-bounded cache in front of the store, so the hot path does not query the
 * database per request. Unknown keys are cached for `negativeTtlMs` so a flood of bad keys costs one query per key
 * and period. When the store fails (PostgreSQL down), a key that resolved as valid within the last `staleMs` is
 * served stale (counted in `agp_key_cache_stale_serves_total`) so ingest keeps accepting through a database blip;
 * an unknown key, or one resolved longer ago, makes `resolve` throw (the gateway answers 503).
 * Revocation latency: a revoked key stops working within `ttlMs` while the store answers, and within `staleMs` of
 * its last successful resolution while the store fails. Source: architecture §4 (Auth); docs/reliability.md.
 */
export class CachedKeyResolver implements KeyResolver {
  private readonly cache = new Map<string, { p: Principal | null; until: number; resolvedAt: number }>();
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private readonly staleMs: number;
  private readonly retryAfterFailureMs: number;
  /** Until when (epoch ms) stale entries are served without asking the failing store. */
  private storeDownUntil = 0;

  constructor(
    private readonly inner: KeyResolver,
    private readonly ttlMs = 10_000,
    options: KeyCacheOptions = {},
  ) {
    this.negativeTtlMs = options.negativeTtlMs ?? 2_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.staleMs = options.staleMs ?? DEFAULT_KEY_STALE_MS;
    this.retryAfterFailureMs = options.retryAfterFailureMs ?? 1_000;
  }

  /**
   * Forget every cached answer for key `keyId`, stale window included, so the next request with it asks the store
   * (call it after revoking the key through this process; other processes stop serving it within `ttlMs`).
   */
  invalidate(keyId: string): void {
    for (const [key, entry] of this.cache) if (entry.p?.key_id === keyId) this.cache.delete(key);
  }

  /**
   * The principal of `key`, or null when it is unknown, revoked or expired.
   * @throws the store's error when the store fails and no valid entry of `key` is within the serve-stale window.
   */
  async resolve(key: string): Promise<Principal | null> {
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.p;
    const stale = hit?.p && now - hit.resolvedAt <= this.staleMs && !(hit.p.expires_at && Date.parse(hit.p.expires_at) <= now) ? hit.p : null;
    if (stale && now < this.storeDownUntil) {
      staleServes.inc();
      return stale;
    }
    let p: Principal | null;
    try {
      p = await this.inner.resolve(key);
    } catch (err) {
      storeFailures.inc();
      this.storeDownUntil = Date.now() + this.retryAfterFailureMs;
      if (!stale) throw err;
      staleServes.inc();
      return stale;
    }
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(key, { p, until: now + (p ? this.ttlMs : this.negativeTtlMs), resolvedAt: now });
    return p;
  }
}
