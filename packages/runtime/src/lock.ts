import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded platform's lock on its data folder: `<AGP_DATA_DIR>/agp.lock` holding the pid of the process
 * using it (PGlite is single-process). Taken by the embedded platform (services/embedded/src/platform.ts) and by the
 * `agp keys` commands that open the same folder (packages/cli/src/keys.ts).
 */

/** The embedded platform (or another `agp` command) holds the data folder. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    /** Pid in the lock file, alive. */
    readonly pid: number,
    /** Path of the lock file. */
    readonly path: string,
  ) {
    super(`the embedded platform is running (pid ${pid}, lock ${path}); stop it first, use AGP_INIT_* at start, or manage keys over HTTP with an admin key (POST /api/v1/keys)`);
  }
}

/**
 * Take the data folder's lock for this process, so that the embedded platform cannot start on the same PGlite
 * files meanwhile. A stale lock (its pid is dead) is taken over. Returns the release function.
 * @throws DataDirLockedError when a live process other than this one holds it.
 */
export function acquireDataDirLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'agp.lock');
  return acquirePidLock(path, (holder) => new DataDirLockedError(holder, path));
}

/**
 * Take a pid lock file at `path` (its folder must exist): it holds this process's pid. A lock whose process is gone
 * (e.g. killed with SIGKILL) is taken over. Returns the release function. Also used by the agent SDK's report spool.
 * @throws the error `held(pid)` builds when a live process other than this one holds it.
 */
export function acquirePidLock(path: string, held: (pid: number) => Error): () => void {
  let holder = 0;
  try {
    holder = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (holder > 0 && holder !== process.pid && pidAlive(holder)) throw held(holder);
  writeFileSync(path, String(process.pid));
  return () => rmSync(path, { force: true });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
