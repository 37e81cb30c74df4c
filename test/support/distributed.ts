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
 * Build the service bundles and start each service as its own process (gateway, ingest, interventions, policies, stats;
 * `replicas` starts more than one of a service) against the real NATS and PostgreSQL, with a fresh database, subject
 * prefix and JetStream stream. `pids` holds the last process of each service.
 */
export async function startDistributed(opts: {
  adminDatabaseUrl: string;
  natsUrl: string;
  env: Record<string, string>;
  dbPrefix?: string;
  build?: boolean;
  /** Processes per service (default 1 each), e.g. `{interventions: 2, stats: 2}`. */
  replicas?: Partial<Record<'interventions' | 'policies' | 'stats' | 'ingest', number>>;
}): Promise<DistributedRun> {
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
  // Every service's processes start together (as replicas would): schema migrations take an advisory lock.
  const readiness: Array<Promise<void>> = [];
  for (const name of ['interventions', 'policies', 'stats', 'ingest'] as const) {
    for (let i = 0; i < (opts.replicas?.[name] ?? 1); i++) {
      const ops = await freePort();
      await start(name, { OPS_PORT: String(ops) });
      readiness.push(ready(`http://127.0.0.1:${ops}/readyz`));
    }
  }
  await Promise.all(readiness);
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
