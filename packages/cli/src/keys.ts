/**
 * `agp keys create|list|revoke`: manage API keys directly in the platform database — PostgreSQL when
 * DATABASE_URL is set (distributed mode), else the embedded PGlite folder AGP_DATA_DIR (default ./.agp/data),
 * which the embedded platform must not be holding at the time. Creations and revocations are recorded in the event
 * store like those made over HTTP (actor `system`), so the audit log has them. Source: docs/api.md (Keys).
 */
import { join, resolve } from 'node:path';
import { KeyStore, type CreatedKey, type KeyScope, type KeySummary } from '@agp/auth';
import { closeEventStoreAndDb, createPgSql, createPgliteSql, openEventStore, type Sql } from '@agp/eventstore';
import { acquireDataDirLock } from '@agp/runtime';

export type { CreatedKey, KeySummary };

async function withKeyStore<T>(env: Record<string, string | undefined>, fn: (keys: KeyStore) => Promise<T>): Promise<T> {
  let sql: Sql;
  let release = () => {};
  if (env.DATABASE_URL) sql = createPgSql(env.DATABASE_URL, { max: 1, applicationName: 'agp-cli' });
  else {
    const dir = resolve(env.AGP_DATA_DIR ?? './.agp/data');
    release = acquireDataDirLock(dir);
    sql = await createPgliteSql(join(dir, 'pg'));
  }
  // Key changes are recorded in the event store (the audit log), by `system`, in the transaction of the change.
  const store = await openEventStore(sql, env).catch(async (err: unknown) => {
    await sql.close();
    release();
    throw err;
  });
  try {
    await store.migrate();
    const keys = new KeyStore(sql, store);
    await keys.migrate();
    return await fn(keys);
  } finally {
    await closeEventStoreAndDb(store, sql);
    release();
  }
}

/**
 * Create a key for `org` (the organisation is created when absent), bound to agent `agentId` when given; the
 * plaintext is in the result, once.
 * @throws ValidationError for a bad organisation id or an admin key bound to an agent; DataDirLockedError when the
 * embedded platform holds the folder.
 */
export function keysCreate(env: Record<string, string | undefined>, o: { org: string; scope: KeyScope; name?: string; expiresInDays?: number; agentId?: string }): Promise<CreatedKey> {
  return withKeyStore(env, async (keys) => {
    await keys.createOrganization(o.org);
    return keys.createKey({ organizationId: o.org, scope: o.scope, name: o.name, expiresAt: o.expiresInDays ? new Date(Date.now() + o.expiresInDays * 86_400_000) : undefined, agentId: o.agentId });
  });
}

/** An organisation's keys, newest first. */
export function keysList(env: Record<string, string | undefined>, org: string): Promise<KeySummary[]> {
  return withKeyStore(env, (keys) => keys.list(org));
}

/** Revoke a key by id. @throws NotFoundError for an unknown id. */
export function keysRevoke(env: Record<string, string | undefined>, id: string): Promise<KeySummary> {
  return withKeyStore(env, (keys) => keys.revoke(id));
}
