import { execFileSync, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { BootedPlatform } from './http.js';
import { bootEmbedded } from './modes.js';

/** The repository root, and the built CLI (`agp`) the end-to-end tests run as a child process. */
export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const CLI = join(REPO_ROOT, 'packages/cli/dist/cli.js');

/**
 * Run the built CLI with `args` from the repository root, as a user's shell would (`node packages/cli/dist/cli.js …`);
 * resolves with its exit code and output, never blocking the platform the test booted in-process. Its environment is
 * `base` (the test process's by default) without `AGP_KEY` and `AGP_URL` (the CLI must be given what it uses), plus `env`.
 * @throws nothing; rejects only when the process cannot be spawned.
 */
export function runCli(args: string[], env: Record<string, string> = {}, base: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolvePromise, reject) => {
    const childEnv: NodeJS.ProcessEnv = { ...base, ...env };
    if (!('AGP_KEY' in env)) delete childEnv.AGP_KEY;
    if (!('AGP_URL' in env)) delete childEnv.AGP_URL;
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv, cwd: REPO_ROOT });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, out, err }));
  });
}

/**
 * Build the CLI (`scripts/build.mjs --only cli`), then boot the embedded platform: the `beforeAll` of a test that
 * runs {@link runCli} against it. @throws when the build fails or the platform does not start.
 */
export async function buildCliAndBootEmbedded(): Promise<BootedPlatform> {
  execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'cli', '--quiet'], { cwd: REPO_ROOT });
  return bootEmbedded();
}
