import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../support/distributed.js';
import { embeddedCluster, startFailure } from '../../support/embedded-postgres.js';

/**
 * Servers that a fault test owns, so that it may kill and restart them: a NATS server with JetStream and a PostgreSQL
 * cluster, each on a free loopback port with its data in a temporary folder that survives restarts. Never the
 * machine's shared servers.
 */

/** A server this suite started and may stop and start again (same port, same data). */
export interface OwnServer {
  /** Connection URL (`nats://…` or the admin `postgres://…/postgres`). */
  url: string;
  port: number;
  /** pid of the running server, or null while it is down. */
  pid(): number | null;
  /**
   * Take the server down: `SIGKILL` or `SIGTERM` for NATS; for PostgreSQL `SIGINT` is a fast shutdown (what
   * `pg_ctl stop -m fast` sends). Resolves when the process has exited.
   */
  down(signal: NodeJS.Signals): Promise<void>;
  /** Start it again on the same port and data; resolves when it accepts connections. */
  up(): Promise<void>;
  /** Stop it for good and delete its data. */
  destroy(): Promise<void>;
}

/** Poll until `port` on loopback accepts a TCP connection. @throws Error after `timeoutMs`. */
async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((r) => {
      const s = tcpConnect({ port, host: '127.0.0.1' });
      s.once('connect', () => (s.destroy(), r(true)));
      s.once('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

/** Where the `nats-server` binary is: /usr/sbin/nats-server, else the first on PATH; null when there is none. */
export function natsServerBinary(): string | null {
  const dirs = ['/usr/sbin', '/usr/local/bin', ...(process.env.PATH ?? '').split(delimiter)];
  for (const d of dirs) if (d && existsSync(join(d, 'nats-server'))) return join(d, 'nats-server');
  return null;
}

/**
 * Start `nats-server -a 127.0.0.1 -p <free port> -js -sd <temp dir>`. The JetStream store stays in the folder across
 * {@link OwnServer.down}/{@link OwnServer.up}, as on a server that is restarted.
 * @throws Error when the binary is missing or the server does not listen within 10 s (with its output).
 */
export async function startOwnNats(): Promise<OwnServer> {
  const bin = natsServerBinary();
  if (!bin) throw new Error('no nats-server binary');
  const dir = await mkdtemp(join(tmpdir(), 'agp-fault-nats-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  let output = '';
  const up = async () => {
    output = '';
    const c = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
    c.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
    child = c;
    try {
      await waitForPort(port, 10_000, 'nats-server');
    } catch (err) {
      c.kill('SIGKILL');
      throw new Error(`${(err as Error).message}; its output: ${output}`);
    }
  };
  const down = async (signal: NodeJS.Signals) => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    await exited;
    child = null;
  };
  await up();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: () => child?.pid ?? null,
    down,
    up,
    async destroy() {
      await down('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Start a PostgreSQL cluster from the `embedded-postgres` binaries (a devDependency) in a temporary folder, on a
 * free loopback port, password authentication, `max_connections=300`, `fsync=off`. As root it runs as the system's
 * `postgres` user (PostgreSQL refuses root; this never creates a user). Its data persists across
 * {@link OwnServer.down}/{@link OwnServer.up}: `down('SIGINT')` is a fast shutdown.
 * @throws Error when the binaries are missing, as root without a `postgres` user, or when the cluster does not start.
 */
export async function startOwnPostgres(): Promise<OwnServer> {
  const { cluster, dir, port, url, log } = await embeddedCluster('agp-fault-pg-', true);
  const proc = () => (cluster as unknown as { process?: ChildProcess }).process;
  const up = async () => {
    await cluster.start();
    // "ready to accept connections" is logged before the port may be probed by every client: wait for a query.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const c = new pg.Client({ connectionString: url });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.query('SELECT 1');
        await c.end();
        return;
      } catch (err) {
        await c.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`PostgreSQL did not answer after its start: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const down = async (signal: NodeJS.Signals) => {
    const p = proc();
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    if (signal === 'SIGINT') return cluster.stop();
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
    (cluster as unknown as { process?: ChildProcess }).process = undefined;
  };
  try {
    await cluster.initialise();
    await up();
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw startFailure(err, log);
  }
  await waitForPort(port, 5_000, 'PostgreSQL');
  return {
    url,
    port,
    pid: () => proc()?.pid ?? null,
    down,
    up,
    async destroy() {
      await cluster.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `pg_terminate_backend` of every connection to database `dbName` except the caller's own, from an admin
 * connection to `adminUrl`. Returns how many backends were terminated.
 */
export async function terminateBackends(adminUrl: string, dbName: string): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl });
  c.on('error', () => undefined);
  await c.connect();
  try {
    const { rows } = await c.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
    return rows.filter((r) => r.ok).length;
  } finally {
    await c.end();
  }
}
