import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.js';
import { eventually } from './http.js';

/** The embedded platform started the way `npm start` (and so `npm run quickstart`) starts it, and the banner it printed. */
export interface QuickstartPlatform {
  child: ChildProcess;
  /** Everything the process wrote to stdout up to and including the start banner. */
  banner: string;
  /** The URL the banner names (`AGP is running (embedded mode) at <url>`). */
  url: string;
}

/**
 * Start `services/embedded/dist/main.js` (built beforehand: `scripts/build.mjs --only embedded`) in `cwd` as `npm start`
 * runs it (`node --max-semi-space-size=2 …`), with `AGP_DATA_DIR=data` (relative to `cwd`), any free port, and none of
 * the test process's DATABASE_URL or AGP_INIT_* settings, so it is a first start in that folder that creates the
 * organisation and prints its keys. Resolves once the banner is out. `logLevel` is its LOG_LEVEL (JSON logs go to stderr).
 * @throws (rejects) when the process exits first, or prints no banner within 100 s.
 */
export async function startQuickstart(cwd: string, logLevel = 'warn'): Promise<QuickstartPlatform> {
  const child = spawn(process.execPath, ['--max-semi-space-size=2', join(REPO_ROOT, 'services/embedded/dist/main.js')], {
    cwd,
    env: { ...process.env, AGP_DATA_DIR: 'data', PORT: '0', LOG_LEVEL: logLevel, AGP_INIT_ORG: '', AGP_INIT_WRITE_KEY: '', AGP_INIT_READ_KEY: '', AGP_INIT_ADMIN_KEY: '', DATABASE_URL: '' },
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
  return { child, banner, url: /running \(embedded mode\) at (\S+)/.exec(banner)![1] };
}

/** Stop a process started by {@link startQuickstart} with SIGTERM and wait for it to exit (no-op when it has). */
export async function stopQuickstart(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Start `services/embedded/dist/main.js` (built beforehand) in memory (`AGP_DATA_DIR=memory`, any free port, warn
 * logs to the test's stderr, no DATABASE_URL) with `env` added, e.g. the `AGP_INIT_*` keys and the `OTEL_*` export
 * variables. Resolves with the process and the URL its banner names; stop it with {@link stopQuickstart}.
 * @throws (rejects) when the process exits first, or prints no banner within 100 s.
 */
export async function startEmbeddedProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'services/embedded/dist/main.js')], {
    env: { ...process.env, AGP_DATA_DIR: 'memory', PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const url = await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`the embedded platform exited with ${child.exitCode}: ${out}`);
    return /running \(embedded mode\) at (\S+)/.exec(out)?.[1];
  }, 100_000);
  return { child, url };
}
