import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue #9 point 5: the first-start banner of `npm start` names the real, absolute path of `first-run-keys.json`
 * (it printed the placeholder `<AGP_DATA_DIR>/first-run-keys.json`). Runs the built embedded entry point as `npm start`
 * does, with a relative AGP_DATA_DIR in a temporary working directory, and reads what it prints.
 */
const ROOT = resolve(import.meta.dirname, '../..');

/** Start `services/embedded/dist/main.js` in `cwd`; resolves with the process and its stdout once the banner is out. */
async function start(cwd: string): Promise<{ child: ChildProcess; banner: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'services/embedded/dist/main.js')], {
    cwd,
    env: { ...process.env, AGP_DATA_DIR: 'data', PORT: '0', LOG_LEVEL: 'warn', AGP_INIT_ORG: '', AGP_INIT_WRITE_KEY: '', AGP_INIT_READ_KEY: '', AGP_INIT_ADMIN_KEY: '', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const banner = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no banner within 100 s; stdout: ${out}\nstderr: ${err}`)), 100_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      // The banner is one write that ends with an empty line.
      if (/AGP is running[\s\S]*\n\n$/.test(out)) {
        clearTimeout(timer);
        res(out);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`exited with ${code} before the banner; stdout: ${out}\nstderr: ${err}`));
    });
  });
  return { child, banner };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

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
    expect(saved, first.banner).toBeDefined();
    expect(isAbsolute(saved!)).toBe(true);
    expect(saved).toBe(join(cwd, 'data', 'first-run-keys.json'));
    const keys = JSON.parse(readFileSync(saved!, 'utf8'));
    expect(first.banner).toContain(`write key: ${keys.write}`);
    expect(first.banner).toContain(`read key:  ${keys.read}`);
    expect(first.banner).toContain(`admin key: ${keys.admin}`);
    expect(statSync(saved!).mode & 0o777).toBe(0o600);

    // The curl line works as printed.
    const url = /running \(embedded mode\) at (\S+)/.exec(first.banner)![1];
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
