import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.js';

/**
 * The agent SDK as a user gets it: build packages/sdk, pack it with `npm pack`, and install the tarball with
 * `npm install <tarball>` alone in a new empty folder (an ESM `package.json` of its own: no workspace, nothing else
 * installed). Scripts written into the folder then `import { Governor } from '@agp/sdk'` as an agent does.
 * Takes some 10 s (the build, the pack and an install of the SDK's four dependencies).
 * @returns the folder; the caller removes it (`rmSync(dir, {recursive: true, force: true})`).
 * @throws Error when the build, the pack or the install fails (their output is passed through).
 * Source: docs/sdk.md (Packaging).
 */
export function packSdk(): string {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'sdk', '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'agp-sdk-pack-'));
  const packed = execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: join(REPO_ROOT, 'packages/sdk'), encoding: 'utf8' }).trim().split('\n').pop()!;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', join(dir, packed)], { cwd: dir, stdio: 'inherit' });
  return dir;
}
