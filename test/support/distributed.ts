import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createDatabase, runSuffix } from './db.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** Processes of a distributed platform started for one test run, in their own database, subjects and stream. */
export interface DistributedRun {
  url: string;
  /** pid of each service process, by service name. */
  pids: Record<string, number>;
  databaseUrl: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Build the service bundles and start each service as its own process (gateway, ingest, interventions, policies, stats)
 * against the real NATS and PostgreSQL, with a fresh database, subject prefix and JetStream stream.
 */
export async function startDistributed(opts: { adminDatabaseUrl: string; natsUrl: string; env: Record<string, string>; dbPrefix?: string; build?: boolean }): Promise<DistributedRun> {
  if (opts.build !== false) execFileSync(process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: ROOT, stdio: 'inherit' });
  const db = await createDatabase(opts.adminDatabaseUrl, opts.dbPrefix ?? 'agp_e2e');
  const suffix = runSuffix();
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NATS_URL: opts.natsUrl,
    DATABASE_URL: db.url,
    PORT: String(port),
    AGP_SUBJECT_PREFIX: `t${suffix}`,
    AGP_INGEST_STREAM: `INGEST_T${suffix}`,
    LOG_LEVEL: process.env.AGP_TEST_LOG_LEVEL ?? 'warn',
    ...opts.env,
  };
  const children: ChildProcess[] = [];
  const pids: Record<string, number> = {};
  const start = async (name: string, extra: Record<string, string> = {}) => {
    const child = spawn(process.execPath, ['--enable-source-maps', `services/${name}/dist/main.js`], { cwd: ROOT, env: { ...env, ...extra }, stdio: ['ignore', 'inherit', 'inherit'] });
    children.push(child);
    pids[name] = child.pid!;
    return child;
  };
  const ready = async (url: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(url)).ok) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${url} not ready after ${timeoutMs} ms`);
  };
  const opsInterventions = await freePort();
  const opsIngest = await freePort();
  const opsPolicies = await freePort();
  const opsStats = await freePort();
  // The services that create tables start one after another (concurrent CREATE ... IF NOT EXISTS of the
  // event store is serialised by a lock, but sequential starts keep the logs readable).
  await start('interventions', { OPS_PORT: String(opsInterventions) });
  await ready(`http://127.0.0.1:${opsInterventions}/readyz`);
  await start('policies', { OPS_PORT: String(opsPolicies) });
  await start('stats', { OPS_PORT: String(opsStats) });
  await start('ingest', { OPS_PORT: String(opsIngest) });
  await Promise.all([ready(`http://127.0.0.1:${opsPolicies}/readyz`), ready(`http://127.0.0.1:${opsStats}/readyz`), ready(`http://127.0.0.1:${opsIngest}/readyz`)]);
  await start('gateway');
  await ready(`http://127.0.0.1:${port}/readyz`);
  return {
    url: `http://127.0.0.1:${port}`,
    pids,
    databaseUrl: db.url,
    env,
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((r) => {
              if (c.exitCode !== null) return r();
              c.once('exit', () => r());
              c.kill('SIGTERM');
              setTimeout(() => c.kill('SIGKILL'), 5000).unref();
            }),
        ),
      );
      const nc = await connect({ servers: opts.natsUrl });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(env.AGP_INGEST_STREAM).catch(() => undefined);
      await nc.close();
      await db.drop();
    },
  };
}
