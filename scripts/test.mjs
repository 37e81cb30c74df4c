#!/usr/bin/env node
// The README's test command, `npm test` (and what `.ci/run` calls): works on a fresh clone with only Node and npm.
//  1. installs the locked dependencies with the pinned pnpm through npx, as the quickstart does (the `pnpm` that
//     Corepack puts on PATH may be unable to fetch pnpm);
//  2. type-checks the workspace (tsc --noEmit), and the web console with its own settings (DOM, JSX);
//  3. lints the generated OpenAPI document (redocly, recommended rules);
//  4. runs every test file with vitest.
// Arguments after `--` go to vitest and skip steps 2 and 3 (`npm test -- test/e2e/stats.test.ts`).
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
