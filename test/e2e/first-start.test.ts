import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuickstart, stopQuickstart } from '../support/quickstart.js';

/**
 * The first-start banner of `npm start` names the real, absolute path of `first-run-keys.json`
 * (it printed the placeholder `<AGP_DATA_DIR>/first-run-keys.json`). Runs the built embedded entry point as `npm start`
 * does, with a relative AGP_DATA_DIR in a temporary working directory, and reads what it prints.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const start = (cwd: string) => startQuickstart(cwd, 'info');
const stop = stopQuickstart;

describe('first start of the embedded platform (npm start)', () => {
  let cwd: string;
  const running: ChildProcess[] = [];
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'embedded', '--quiet'], { cwd: ROOT, stdio: 'inherit' });
    cwd = realpathSync(mkdtempSync(join(tmpdir(), 'agp-first-start-')));
  });
  afterAll(async () => {
    await Promise.all(running.map(stop));
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('prints the absolute path of first-run-keys.json, which holds the printed keys (mode 0600); a later start points at it', async () => {
    const first = await start(cwd);
    running.push(first.child);
    const saved = /also saved to (\S+)\)/.exec(first.banner)?.[1];
    expect(first.banner).not.toContain('<AGP_DATA_DIR>');
    // stdout is the banner alone: the JSON log lines (info and up here) go to stderr.
    expect(first.banner).toMatch(/^\n {2}AGP is running/);
    expect(first.banner).not.toContain('"level":');
    expect(saved, first.banner).toBeDefined();
    expect(isAbsolute(saved!)).toBe(true);
    expect(saved).toBe(join(cwd, 'data', 'first-run-keys.json'));
    const keys = JSON.parse(readFileSync(saved!, 'utf8'));
    expect(first.banner).toContain(`write key: ${keys.write}`);
    expect(first.banner).toContain(`read key:  ${keys.read}`);
    expect(first.banner).toContain(`admin key: ${keys.admin}`);
    expect(statSync(saved!).mode & 0o777).toBe(0o600);

    // The curl line works as printed.
    const url = first.url;
    const r = await fetch(`${url}/api/v1/interventions`, { headers: { authorization: `Bearer ${keys.read}` } });
    expect(r.status).toBe(200);
    // The admin key names itself and creates keys over HTTP, with the platform running.
    const me = await fetch(`${url}/api/v1/auth/key`, { headers: { authorization: `Bearer ${keys.admin}` } });
    expect(await me.json()).toMatchObject({ organization_id: 'default', scope: 'admin', name: 'first-run admin key' });
    const created = await fetch(`${url}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ci', scope: 'write' }) });
    expect(created.status).toBe(201);
    await stop(first.child);

    const later = await start(cwd);
    running.push(later.child);
    expect(later.banner).toContain(`Keys were printed on first start and saved to ${saved}.`);
    expect(later.banner).not.toContain('write key:');
  }, 240_000);
});
