/**
 * The public keys of the audit trail, as `/.well-known/agp-audit-keys` serves them: read from the platform's database
 * (`agp_tlog_keys`, written by the policies service) by the gateway, which answers the route without credentials.
 * Never reads a private key. Source: docs/audit.md (Keys).
 */
import type { AuditKeys } from '@agp/contracts';
import type { SqlExecutor } from '@agp/eventstore';

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

/** Every key that signs or signed checkpoints: the current one first, then the retired ones, newest first. */
export async function listAuditKeys(db: SqlExecutor): Promise<AuditKeys> {
  const { rows } = await db.query<{ key_id: string; name: string; verifier_key: string; public_key: string; created_at: unknown; retired_at: unknown }>(
    `SELECT key_id, name, verifier_key, public_key, created_at, retired_at FROM agp_tlog_keys ORDER BY retired_at IS NOT NULL, created_at DESC, key_id`,
  );
  return { keys: rows.map((r) => ({ key_id: r.key_id, name: r.name, algorithm: 'ed25519' as const, verifier_key: r.verifier_key, public_key: r.public_key, created_at: iso(r.created_at)!, retired_at: iso(r.retired_at) })) };
}
