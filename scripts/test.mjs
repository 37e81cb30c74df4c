#!/usr/bin/env node
// The README's test command, `npm test` (and what `.ci/run` calls): works on a fresh clone with only Node and npm.
//  1. installs the locked dependencies with the pinned pnpm through npx, as the quickstart does (the `pnpm` that
//     Corepack puts on PATH may be unable to fetch pnpm);
//  2. type-checks the workspace (tsc --noEmit), and the web console with its own settings (DOM, JSX);
//  3. lints the generated OpenAPI document (redocly, recommended rules);
//  4. runs every test file with vitest;
//  5. runs the Python SDK's tests (sdks/python: the policy engine against the shared decision vectors) with pytest,
//     skipped with one printed reason when python3 or pytest is missing.
// Arguments after `--` go to vitest and skip steps 2, 3 and 5 (`npm test -- test/e2e/stats.test.ts`).
// PostgreSQL and NATS come from DATABASE_URL / NATS_URL; see test/support/global-setup.ts for what happens without them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const pnpmVersion = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const args = process.argv.slice(2);
const bin = (name) => resolve(root, 'node_modules/.bin', name);

function run(title, cmd, cmdArgs) {
  console.log(`\n> ${title}: ${[cmd, ...cmdArgs].join(' ')}`);
  const started = Date.now();
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    console.error(`${title} could not start: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) {
    console.error(`\n${title} failed (exit ${r.status ?? r.signal}) after ${((Date.now() - started) / 1000).toFixed(0)} s`);
    process.exit(r.status ?? 1);
  }
  console.log(`> ${title}: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
run('install', npx, ['-y', `pnpm@${pnpmVersion}`, 'install', '--frozen-lockfile', '--reporter=append-only']);
if (args.length === 0) {
  run('typecheck', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
  run('typecheck console', bin('tsc'), ['-p', 'services/console/tsconfig.json', '--noEmit']);
  run('openapi lint', process.execPath, ['scripts/lint-openapi.mjs']);
}
run('tests', bin('vitest'), ['run', ...args]);
if (args.length === 0) {
  const probe = spawnSync('python3', ['-c', 'import pytest'], { cwd: root, stdio: 'ignore' });
  if (probe.error || probe.status !== 0) console.log(`\n> python sdk: skipped (${probe.error ? 'python3 not found' : 'pytest is not installed for python3'})`);
  else run('python sdk', 'python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'sdks/python/tests']);
}
