import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedPlatform } from '@agp/embedded';
import { call, eventually, type BootedPlatform } from '../support/http.js';

/**
 * `AGP_AUDIT_TRAIL=off` (docs/configuration.md) pauses the audit trail's projection: a governance record made while
 * off is in the audit log but is no leaf; the platform started again with the setting on (the same data folder)
 * appends it, from where the projection stopped, and answers its inclusion proof.
 */
const dir = mkdtempSync(join(tmpdir(), 'agp-audit-off-'));
const KEYS = { initOrg: 'acme', initWriteKey: 'agp_test_write_key_0001', initReadKey: 'agp_test_read_key_0001', initAdminKey: 'agp_test_admin_key_001' };
let running: EmbeddedPlatform | undefined;

async function boot(trail: 'on' | 'off'): Promise<BootedPlatform> {
  running = await startEmbedded({ port: 0, host: '127.0.0.1', dataDir: dir, bootstrapFirstRun: false, ...KEYS, env: { AGP_AUDIT_TRAIL: trail, AGP_AUDIT_CHECKPOINT_INTERVAL_MS: '0' } });
  return { url: running.url, writeKey: KEYS.initWriteKey, readKey: KEYS.initReadKey } as BootedPlatform;
}

afterAll(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('AGP_AUDIT_TRAIL', () => {
  it('off: a record is audited but not appended; on again: it is appended and its inclusion proof answers', async () => {
    let p = await boot('off');
    const created = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: 'made while the trail is off' } });
    expect(created.status).toBe(201);
    const entry = await eventually(async () => (await call(p, 'GET', `/api/v1/audit-log?object_id=${created.body.id}`, { key: KEYS.initAdminKey })).body.entries?.[0] ?? null, 15_000);
    expect((await call(p, 'GET', '/api/v1/audit/checkpoints', { key: p.readKey })).body.tree_size).toBe(0);
    expect((await call(p, 'GET', `/api/v1/audit/proofs/inclusion?record=${entry.id}`, { key: p.readKey })).status).toBe(404);
    await running!.stop();
    running = undefined;

    p = await boot('on');
    const proof = await eventually(async () => {
      const r = await call(p, 'GET', `/api/v1/audit/proofs/inclusion?record=${entry.id}`, { key: p.readKey });
      return r.status === 200 ? r.body : null;
    }, 15_000);
    expect(JSON.parse(proof.leaf)).toMatchObject({ id: entry.id, type: 'PolicyCreated' });
    expect((await call(p, 'GET', '/api/v1/audit/checkpoints', { key: p.readKey })).body.tree_size).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
