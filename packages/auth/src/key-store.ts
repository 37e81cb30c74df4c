/**
 * API keys and organisations. Keys are `agp_` plus 32 base62 characters; only their SHA-256 is stored,
 * with the organisation, scope (read | write), name, expiry and revocation.
 * Source: architecture §4 (Auth); issue #2 point 4.
 */
import { createHash, randomBytes } from 'node:crypto';
import { migrateSchema, type Sql } from '@agp/eventstore';
import { ConflictError, NotFoundError, ValidationError, counter, iso, isoOrNull, newId } from '@agp/runtime';

/** read: queries only; write: also ingest, create, delete. */
export type KeyScope = 'read' | 'write';

/** What a valid key resolves to; the gateway turns it into the request context. */
export interface Principal {
  key_id: string;
  organization_id: string;
  scope: KeyScope;
  /** When the key expires (ISO 8601 UTC), null or absent when never; bounds how long a cache may serve it. */
  expires_at?: string | null;
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
  status: 'active' | 'revoked' | 'expired';
}

/** A key just created: the summary plus the plaintext, shown once. */
export interface CreatedKey extends KeySummary {
  key: string;
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
  scope text NOT NULL CHECK (scope IN ('read', 'write')),
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS agp_api_keys_org ON agp_api_keys (organization_id)
`;

interface KeyRow {
  id: string;
  organization_id: string;
  scope: KeyScope;
  name: string | null;
  prefix: string;
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
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
    status: r.revoked_at ? 'revoked' : expires && Date.parse(expires) <= now ? 'expired' : 'active',
  };
}

/**
 * Organisations and API keys in the platform database (PostgreSQL or PGlite).
 * Call {@link migrate} once before use.
 */
export class KeyStore {
  constructor(private readonly sql: Sql) {}

  /** Create the tables when missing. Idempotent and safe when several processes start at once. */
  async migrate(): Promise<void> {
    await migrateSchema(this.sql, KEY_STORE_DDL);
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
   * characters; ConflictError (409) when the supplied key already exists.
   */
  async createKey(opts: CreateKeyOptions): Promise<CreatedKey> {
    const key = opts.key ?? generateKey();
    if (key.length < 16 || /\s/.test(key)) throw new ValidationError('invalid key', [{ path: 'key', message: 'expected at least 16 characters without spaces' }]);
    const { rows: org } = await this.sql.query('SELECT 1 FROM agp_organizations WHERE id = $1', [opts.organizationId]);
    if (org.length === 0) throw new NotFoundError(`organisation ${opts.organizationId} not found`);
    const hash = hashKey(key);
    const { rows: existing } = await this.sql.query('SELECT 1 FROM agp_api_keys WHERE key_hash = $1', [hash]);
    if (existing.length > 0) throw new ConflictError('this key already exists');
    const { rows } = await this.sql.query<KeyRow>(
      `INSERT INTO agp_api_keys (id, organization_id, key_hash, prefix, scope, name, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id, organization_id, scope, name, prefix, created_at, expires_at, revoked_at`,
      [newId(), opts.organizationId, hash, key.slice(0, 8), opts.scope, opts.name ?? null, opts.expiresAt ? opts.expiresAt.toISOString() : null],
    );
    return { ...summary(rows[0]), key };
  }

  /** Whether any key exists (the embedded first run creates keys only when none does). */
  async hasAnyKey(): Promise<boolean> {
    const { rows } = await this.sql.query('SELECT 1 FROM agp_api_keys LIMIT 1');
    return rows.length > 0;
  }

  /**
   * Headless initialisation (AGP_INIT_ORG, AGP_INIT_WRITE_KEY, AGP_INIT_READ_KEY): create the organisation
   * and exactly these keys when they are absent; a second start changes nothing. Returns what it created.
   * @throws ConflictError (409) when a given key exists for another organisation or with the other scope.
   */
  async ensureInit(opts: { org: string; writeKey?: string; readKey?: string }): Promise<{ created: Array<'organization' | KeyScope> }> {
    const created: Array<'organization' | KeyScope> = [];
    const { rows: org } = await this.sql.query('SELECT 1 FROM agp_organizations WHERE id = $1', [opts.org]);
    if (org.length === 0) {
      await this.createOrganization(opts.org);
      created.push('organization');
    }
    for (const [scope, key] of [
      ['write', opts.writeKey],
      ['read', opts.readKey],
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

  /** The principal of a key (with its expiry), or null when it is unknown, revoked or expired. */
  async resolve(key: string): Promise<Principal | null> {
    const { rows } = await this.sql.query<Principal & { expires_at: Date | string | null }>(
      `SELECT id AS key_id, organization_id, scope, expires_at FROM agp_api_keys
        WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [hashKey(key)],
    );
    return rows[0] ? { ...rows[0], expires_at: isoOrNull(rows[0].expires_at) } : null;
  }

  /** An organisation's keys, newest first (never plaintext). */
  async list(organizationId: string): Promise<KeySummary[]> {
    const { rows } = await this.sql.query<KeyRow>(
      'SELECT id, organization_id, scope, name, prefix, created_at, expires_at, revoked_at FROM agp_api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id DESC',
      [organizationId],
    );
    return rows.map((r) => summary(r));
  }

  /**
   * Revoke a key (idempotent: revoking twice keeps the first time).
   * @throws NotFoundError (404) for an unknown key id.
   */
  async revoke(keyId: string): Promise<KeySummary> {
    const { rows } = await this.sql.query<KeyRow>(
      `UPDATE agp_api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1
       RETURNING id, organization_id, scope, name, prefix, created_at, expires_at, revoked_at`,
      [keyId],
    );
    if (rows.length === 0) throw new NotFoundError(`key ${keyId} not found`);
    return summary(rows[0]);
  }
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
