import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadEnv } from './config.js';
import { ServiceUnavailableError } from './errors.js';
import { loadSecretBox, SECRETS_KEY_FILE, SecretBox, sealedKeyId, secretsEnv, secretsKeyId } from './secrets.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('secrets at rest', () => {
  const key = randomBytes(32);

  it('seals with AES-256-GCM under a key id and opens only with the same context', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('Bearer ghp_secret', 'org-1/github');
    expect(sealed).not.toContain('ghp_secret');
    expect(sealedKeyId(sealed)).toBe(secretsKeyId(key));
    expect(box.open(sealed, 'org-1/github')).toBe('Bearer ghp_secret');
    expect(() => box.open(sealed, 'org-2/github')).toThrow();
    // Two seals of one value differ (random IV).
    expect(box.seal('x', 'c')).not.toBe(box.seal('x', 'c'));
    // A changed byte does not open.
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    expect(() => box.open([...parts.slice(0, 3), body.toString('base64url')].join('.'), 'org-1/github')).toThrow();
  });

  it('rotates: a previous key opens what it sealed, seals nothing, and marks it stale', async () => {
    const next = randomBytes(32);
    const before = new SecretBox(key).seal('v', 'c');
    const env = loadEnv(z.object(secretsEnv), { AGP_SECRETS_KEY: next.toString('base64'), AGP_SECRETS_KEY_PREVIOUS: `${randomBytes(32).toString('base64')},${key.toString('base64')}` });
    const box = await loadSecretBox(env);
    expect(box.open(before, 'c')).toBe('v');
    expect(box.isStale(before)).toBe(true);
    const after = box.seal('v', 'c');
    expect(sealedKeyId(after)).toBe(secretsKeyId(next));
    expect(box.isStale(after)).toBe(false);
    // Once the previous key is dropped, the old value no longer opens (503 naming the settings).
    expect(() => new SecretBox(next).open(before, 'c')).toThrow(/AGP_SECRETS_KEY_PREVIOUS/);
  });

  it('refuses to seal without a key in distributed mode, with a 503 naming AGP_SECRETS_KEY', async () => {
    const box = await loadSecretBox({});
    expect(box.canSeal).toBe(false);
    expect(() => box.seal('v', 'c')).toThrow(ServiceUnavailableError);
    expect(() => box.seal('v', 'c')).toThrow(/AGP_SECRETS_KEY/);
  });

  it('generates a key in the embedded data folder once, mode 0600, and keeps it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agp-secrets-'));
    dirs.push(dir);
    const first = await loadSecretBox({}, join(dir, 'data'));
    const sealed = first.seal('v', 'c');
    const file = join(dir, 'data', SECRETS_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await loadSecretBox({}, join(dir, 'data'));
    expect(second.currentKeyId).toBe(first.currentKeyId);
    expect(second.open(sealed, 'c')).toBe('v');
    expect((await readFile(file, 'utf8')).trim()).toHaveLength(44);
    await writeFile(file, 'short');
    await expect(loadSecretBox({}, join(dir, 'data'))).rejects.toThrow(/does not hold a secrets key/);
  });

  it('refuses a key that is not 32 bytes of base64 at start', () => {
    expect(() => loadEnv(z.object(secretsEnv), { AGP_SECRETS_KEY: randomBytes(16).toString('base64') })).toThrow(/AGP_SECRETS_KEY: expected 32 bytes/);
    expect(() => loadEnv(z.object(secretsEnv), { AGP_SECRETS_KEY_PREVIOUS: 'not base64!' })).toThrow(/AGP_SECRETS_KEY_PREVIOUS/);
  });
});
