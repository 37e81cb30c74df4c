import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { startQuickstart, stopQuickstart } from '../support/quickstart.js';

/**
 * docs/walkthrough.md, run as written: the embedded platform started as `npm run quickstart` starts it (a first start
 * in a fresh data folder, which creates the organisation and saves its keys to first-run-keys.json), then
 * `bash examples/walkthrough.sh` against it, given only the platform's URL (`AGP_URL`) and its data folder
 * (`AGP_DATA_DIR`): the script takes the keys from first-run-keys.json, as on a reader's machine. Checks that
 * - the script exits 0 (it stops at the first failing command: `set -euo pipefail`);
 * - every command the page shows (its ```bash blocks) is in the script, in the page's order;
 * - every line of every output the page promises (its ```text blocks) is printed, in the page's order, whole lines;
 *   `…` in a promised line stands for a part that differs from run to run (durations, temporary paths, timestamps).
 * One platform, one run of the script.
 */
const PAGE = readFileSync(join(REPO_ROOT, 'docs/walkthrough.md'), 'utf8');
const SCRIPT = readFileSync(join(REPO_ROOT, 'examples/walkthrough.sh'), 'utf8');

/** The contents of the page's fenced blocks with info string `lang`, in order, as lines. */
function blocks(lang: string): string[][] {
  return [...PAGE.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1].replace(/\n$/, '').split('\n'));
}

/** A promised output line as a whole-line pattern: `…` matches anything, the rest literally. */
function linePattern(line: string): RegExp {
  return new RegExp('^' + line.trimEnd().split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
}

/**
 * The first of `wanted` not found in `lines` after the previous match (ordered, each line matched by `matches`), with
 * where the search was; null when all are found in order.
 */
function firstMissing(wanted: string[], lines: string[], matches: (want: string, line: string) => boolean): string | null {
  let at = 0;
  for (const want of wanted) {
    const i = lines.findIndex((line, k) => k >= at && matches(want, line));
    if (i < 0) return `${JSON.stringify(want)} (looked from line ${at + 1}: ${JSON.stringify(lines.slice(at, at + 3))})`;
    at = i + 1;
  }
  return null;
}

describe('docs/walkthrough.md: examples/walkthrough.sh on a fresh quickstart', () => {
  let cwd: string;
  let platform: ChildProcess | undefined;
  let run: { code: number | null; out: string; err: string };

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'embedded,cli', '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
    cwd = realpathSync(mkdtempSync(join(tmpdir(), 'agp-walkthrough-')));
    const started = await startQuickstart(cwd);
    platform = started.child;
    run = await new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env, AGP_DATA_DIR: join(cwd, 'data') };
      for (const name of ['WRITE_KEY', 'READ_KEY', 'AGP_KEY', 'AGP']) delete env[name];
      env.AGP_URL = started.url;
      const child = spawn('bash', [join(REPO_ROOT, 'examples/walkthrough.sh')], { cwd, env });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out, err }));
    });
  }, 400_000);

  afterAll(async () => {
    if (platform) await stopQuickstart(platform);
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('the script runs to the end and exits 0', () => {
    expect(run.code, `stdout:\n${run.out}\nstderr:\n${run.err}`).toBe(0);
    expect(run.out.trimEnd().endsWith('walkthrough complete')).toBe(true);
  });

  it('every command the page shows is in the script, in the page\'s order', () => {
    const commands = blocks('bash').flat().map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
    expect(commands.length).toBeGreaterThan(40);
    const missing = firstMissing(commands, SCRIPT.split('\n').map((l) => l.trimEnd()), (want, line) => want === line);
    expect(missing, 'a command of docs/walkthrough.md that examples/walkthrough.sh does not run').toBeNull();
  });

  it('every output the page promises is printed, in order', () => {
    const promised = blocks('text').flat().filter((l) => l.trim() !== '');
    expect(promised.length).toBeGreaterThan(40);
    const printed = run.out.split('\n').map((l) => l.trimEnd());
    const missing = firstMissing(promised, printed, (want, line) => linePattern(want).test(line));
    expect(missing, `a line docs/walkthrough.md promises that the script did not print; stdout:\n${run.out}`).toBeNull();
  });
});
