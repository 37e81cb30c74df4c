/**
 * Secrets at rest: AES-256-GCM (node:crypto) under a key from configuration, with a key id in every sealed value so
 * the key can be rotated. A sealed value is `agp1.<key id>.<iv>.<ciphertext and tag>` (base64url parts; a 12-byte
 * random IV, a 16-byte tag) and is bound to a context string (additional authenticated data: the organisation and the
 * record it belongs to), so a sealed value copied into another record does not open.
 *
 * Keys: `AGP_SECRETS_KEY` (32 bytes, base64) seals and opens; `AGP_SECRETS_KEY_PREVIOUS` (comma-separated, the same
 * form) only opens, for values sealed before a rotation. Without `AGP_SECRETS_KEY` the embedded platform generates a
 * key and keeps it in its data folder (`<AGP_DATA_DIR>/secrets.key`, mode 0600); a distributed process has none and
 * refuses to seal (503 naming the setting). Source: docs/operations.md (Secrets); docs/decisions.md (Secrets at rest).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ServiceUnavailableError } from './errors.js';

/** Bytes of a key (AES-256). */
export const SECRETS_KEY_BYTES = 32;
/** The file of the embedded platform's generated key, inside AGP_DATA_DIR. */
export const SECRETS_KEY_FILE = 'secrets.key';
/** Prefix of a sealed value (its format's version). */
const FORMAT = 'agp1';

/** Decode a base64 (or base64url) key. @throws Error unless it is exactly {@link SECRETS_KEY_BYTES} bytes. */
export function decodeSecretsKey(value: string): Buffer {
  const trimmed = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new Error('expected base64');
  const key = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
  if (key.length !== SECRETS_KEY_BYTES) throw new Error(`expected ${SECRETS_KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`), got ${key.length}`);
  return key;
}

const keySetting = (v: string | undefined, ctx: z.RefinementCtx, list: boolean) => {
  for (const part of list ? (v ?? '').split(',').filter((p) => p.trim() !== '') : v === undefined ? [] : [v]) {
    try {
      decodeSecretsKey(part);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  }
};

/** AGP_SECRETS_KEY and AGP_SECRETS_KEY_PREVIOUS: every process that seals or opens secrets (the policies service; embedded). */
export const secretsEnv = {
  /**
   * The key that seals secrets at rest (registered MCP servers' headers): 32 bytes in base64 (`openssl rand -base64 32`).
   * Unset: the embedded platform generates one in AGP_DATA_DIR; distributed mode refuses to store secrets (503).
   */
  AGP_SECRETS_KEY: z.string().optional().superRefine((v, ctx) => keySetting(v, ctx, false)),
  /** Earlier keys, comma-separated, each 32 bytes in base64: they open values sealed before a rotation, and never seal. */
  AGP_SECRETS_KEY_PREVIOUS: z.string().optional().superRefine((v, ctx) => keySetting(v, ctx, true)),
};

/** The id of a key as a sealed value names it: 16 hex digits of a SHA-256 over a label and the key (it reveals nothing of the key). */
export function secretsKeyId(key: Buffer): string {
  return createHash('sha256').update('agp-secrets-key-id\0').update(key).digest('hex').slice(0, 16);
}

/** A sealed value's key id, or null when it is not a sealed value. */
export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split('.');
  return parts.length === 4 && parts[0] === FORMAT ? parts[1] : null;
}

/**
 * Seals and opens secrets with the configured keys. One instance per process, built by {@link loadSecretBox}.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  /** The id of the key that seals, or null when there is none (distributed mode without AGP_SECRETS_KEY). */
  readonly currentKeyId: string | null;

  /**
   * @param current the key that seals (and opens), or null.
   * @param previous keys that only open.
   * @param missing what to say when sealing without a key (names the setting).
   */
  constructor(
    private readonly current: Buffer | null,
    previous: Buffer[] = [],
    private readonly missing = 'AGP_SECRETS_KEY is not set: set it (32 bytes, base64) on every process of the platform to store secrets',
  ) {
    for (const key of previous) this.keys.set(secretsKeyId(key), key);
    this.currentKeyId = current ? secretsKeyId(current) : null;
    if (current) this.keys.set(this.currentKeyId!, current);
  }

  /** Whether this process can seal. */
  get canSeal(): boolean {
    return this.current !== null;
  }

  /**
   * Seal `plaintext` under the current key, bound to `context`.
   * @throws ServiceUnavailableError (503) naming AGP_SECRETS_KEY when no key is configured.
   */
  seal(plaintext: string, context: string): string {
    if (!this.current) throw new ServiceUnavailableError(this.missing);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, this.currentKeyId, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  /**
   * Open a value {@link seal} made, with the key its id names.
   * @throws ServiceUnavailableError (503) when no configured key has its id (a key rotated out too early, or none set);
   *   Error when the value is malformed or does not open under `context` (tampered, or another record's).
   */
  open(sealed: string, context: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== FORMAT) throw new Error('not a sealed value');
    const key = this.keys.get(parts[1]);
    if (!key) throw new ServiceUnavailableError(`a secret is sealed under key ${parts[1]}, which neither AGP_SECRETS_KEY nor AGP_SECRETS_KEY_PREVIOUS holds`);
    const iv = Buffer.from(parts[2], 'base64url');
    const body = Buffer.from(parts[3], 'base64url');
    if (iv.length !== 12 || body.length < 16) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
  }

  /** Whether `sealed` is sealed under a key other than the current one (a rotation re-seals it). */
  isStale(sealed: string): boolean {
    return this.currentKeyId !== null && sealedKeyId(sealed) !== this.currentKeyId;
  }
}

/**
 * The process's {@link SecretBox} from its settings.
 * @param env the parsed {@link secretsEnv} settings.
 * @param dataDir embedded mode's AGP_DATA_DIR: without AGP_SECRETS_KEY the key is read from, or generated into,
 *   `<dataDir>/secrets.key`. Absent (distributed mode): no key, and sealing answers 503.
 * @throws Error when the key file exists but does not hold a valid key.
 */
export async function loadSecretBox(env: { AGP_SECRETS_KEY?: string; AGP_SECRETS_KEY_PREVIOUS?: string }, dataDir?: string): Promise<SecretBox> {
  const previous = (env.AGP_SECRETS_KEY_PREVIOUS ?? '').split(',').filter((p) => p.trim() !== '').map(decodeSecretsKey);
  if (env.AGP_SECRETS_KEY) return new SecretBox(decodeSecretsKey(env.AGP_SECRETS_KEY), previous);
  if (dataDir === undefined) return new SecretBox(null, previous);
  const file = join(dataDir, SECRETS_KEY_FILE);
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text !== null) {
    try {
      return new SecretBox(decodeSecretsKey(text), previous);
    } catch (err) {
      throw new Error(`${file} does not hold a secrets key: ${(err as Error).message}`, { cause: err });
    }
  }
  const key = randomBytes(SECRETS_KEY_BYTES);
  await mkdir(dataDir, { recursive: true });
  // `wx`: a second process starting at once keeps the first one's key.
  try {
    await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretBox(env, dataDir);
    throw err;
  }
  await chmod(file, 0o600);
  return new SecretBox(key, previous);
}
