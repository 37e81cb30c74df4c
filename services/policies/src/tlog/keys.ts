/**
 * The audit trail's signing key: Ed25519 through `node:crypto`. From AGP_AUDIT_SIGNING_KEY (base64 of the 32-byte
 * private key, never stored), or generated on first start and kept in `agp_tlog_keys`, sealed with the platform's
 * secrets key (`SecretBox`: AGP_SECRETS_KEY, or embedded mode's key in its data folder). Every key that ever signed
 * stays in the table (public part) so old checkpoints keep verifying: configuring another key retires the current
 * one. Key ids are the signed-note ids (4 bytes, hex). Source: docs/audit.md (Keys).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { SqlExecutor } from '@agp/eventstore';
import type { Logger, SecretBox } from '@agp/runtime';
import { verifierKey } from '@agp/tlog';

/** The key that signs checkpoints. */
export interface AuditSigner {
  name: string;
  /** The signed-note key id, 8 hex digits. */
  keyId: string;
  privateKey: KeyObject;
  verifierKey: string;
}

/** The PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An Ed25519 private key from its 32-byte seed. @throws Error when `seed` is not 32 bytes. */
export function ed25519FromSeed(seed: Buffer): KeyObject {
  if (seed.length !== 32) throw new Error(`an Ed25519 private key is 32 bytes (base64), got ${seed.length}`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The 32-byte seed of an Ed25519 private key. */
function seedOf(key: KeyObject): Buffer {
  return Buffer.from((key.export({ format: 'jwk' }) as { d: string }).d, 'base64url');
}

function signerOf(name: string, privateKey: KeyObject): AuditSigner {
  const vkey = verifierKey(name, privateKey);
  return { name, keyId: vkey.split('+')[1], privateKey, verifierKey: vkey };
}

const rawPublic = (key: KeyObject) => Buffer.from((createPublicKey(key).export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('base64');
const sealContext = (keyId: string) => `agp-audit-signing-key/${keyId}`;

/** What {@link loadAuditSigner} reads of the settings. */
export interface AuditKeySettings {
  /** Base64 of a 32-byte Ed25519 private key; absent: a generated key. */
  AGP_AUDIT_SIGNING_KEY?: string;
  /** The key's name (and the logs' origin prefix). */
  AGP_AUDIT_LOG_NAME: string;
}

/**
 * The signing key, recorded in `agp_tlog_keys` (public part; a generated key's private part sealed). A configured key
 * new to the table retires the current one. Without a configured key, the current generated key is opened, or one is
 * generated and stored (two processes starting at once agree on the first one stored).
 * @returns null, with a warning, when there is no configured key and no secrets key to seal a generated one with (or
 *   the stored key no longer opens): checkpoints are then not signed; proofs are still answered.
 */
export async function loadAuditSigner(db: SqlExecutor, secrets: SecretBox, settings: AuditKeySettings, logger: Logger): Promise<AuditSigner | null> {
  const name = settings.AGP_AUDIT_LOG_NAME;
  if (settings.AGP_AUDIT_SIGNING_KEY) {
    const signer = signerOf(name, ed25519FromSeed(Buffer.from(settings.AGP_AUDIT_SIGNING_KEY, 'base64')));
    const { rows } = await db.query<{ key_id: string }>(
      `INSERT INTO agp_tlog_keys (key_id, name, verifier_key, public_key, sealed_private_key, source) VALUES ($1, $2, $3, $4, NULL, 'configured')
       ON CONFLICT (key_id) DO NOTHING RETURNING key_id`,
      [signer.keyId, name, signer.verifierKey, rawPublic(signer.privateKey)],
    );
    if (rows.length) await db.query(`UPDATE agp_tlog_keys SET retired_at = now() WHERE key_id <> $1 AND retired_at IS NULL`, [signer.keyId]);
    else await db.query(`UPDATE agp_tlog_keys SET retired_at = NULL WHERE key_id = $1`, [signer.keyId]);
    return signer;
  }
  const current = async () =>
    (await db.query<{ key_id: string; name: string; sealed_private_key: string | null }>(`SELECT key_id, name, sealed_private_key FROM agp_tlog_keys WHERE retired_at IS NULL ORDER BY created_at, key_id LIMIT 1`)).rows[0];
  let row = await current();
  if (row && row.sealed_private_key === null) {
    // The configured key was removed from the settings: it retires and a generated key takes over.
    await db.query(`UPDATE agp_tlog_keys SET retired_at = now() WHERE key_id = $1`, [row.key_id]);
    row = await current();
  }
  if (!row) {
    if (!secrets.canSeal) {
      logger.warn('the audit trail signs no checkpoints: set AGP_AUDIT_SIGNING_KEY, or AGP_SECRETS_KEY to keep a generated key');
      return null;
    }
    const signer = signerOf(name, generateKeyPairSync('ed25519').privateKey);
    const sealed = secrets.seal(seedOf(signer.privateKey).toString('base64'), sealContext(signer.keyId));
    await db.query(
      `INSERT INTO agp_tlog_keys (key_id, name, verifier_key, public_key, sealed_private_key, source) VALUES ($1, $2, $3, $4, $5, 'generated') ON CONFLICT (key_id) DO NOTHING`,
      [signer.keyId, name, signer.verifierKey, rawPublic(signer.privateKey), sealed],
    );
    row = await current();
  }
  try {
    return signerOf(row!.name, ed25519FromSeed(Buffer.from(secrets.open(row!.sealed_private_key!, sealContext(row!.key_id)), 'base64')));
  } catch (err) {
    logger.error({ err }, 'the audit trail signs no checkpoints: its stored signing key does not open with the configured secrets keys');
    return null;
  }
}
