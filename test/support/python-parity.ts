/**
 * What the parity tests of the Python SDK (sdks/python) share: a seeded generator, so their cases are the same on every
 * run, and a python3 that answers a batch of cases over stdin/stdout with the SDK's source on its path. Used by
 * packages/policy-engine/test/python-parity.test.ts and packages/sdk/test/python-moderation-parity.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Python SDK's source folder (put on PYTHONPATH). */
export const PYTHON_SDK = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'sdks', 'python');

/** Why the parity tests cannot run here ('python3 not found'), or null. */
export const pythonMissing: string | null = spawnSync('python3', ['-c', 'import sys'], { stdio: 'ignore' }).error ? 'python3 not found' : null;

/** Mulberry32: a generator of numbers in [0, 1), the same sequence for the same seed. */
export function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Run the Python `script` with `cases` as JSON on stdin; it prints one JSON array of answers, one per case.
 * @throws Error with python3's stderr when it exits non-zero.
 */
export function askPython<T = unknown>(script: string, cases: unknown[]): T[] {
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(cases), env: { ...process.env, PYTHONPATH: PYTHON_SDK }, encoding: 'utf8', maxBuffer: 1 << 27 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as T[];
}
