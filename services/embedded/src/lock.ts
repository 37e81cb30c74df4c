import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Path of the embedded mode's lock file inside the data folder. */
export const lockPath = (dataDir: string) => join(dataDir, 'agp.lock');

/** Whether a process with this pid is alive. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Take the data folder's lock (PGlite is single-process). A stale lock (dead pid) is taken over.
 * @throws Error when another live process holds it.
 */
export function acquireLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = lockPath(dataDir);
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    if (pid && pid !== process.pid && pidAlive(pid)) {
      throw new Error(`another AGP process (pid ${pid}) is using ${dataDir}; stop it first or set AGP_DATA_DIR to another folder`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeFileSync(path, String(process.pid));
  return () => rmSync(path, { force: true });
}
