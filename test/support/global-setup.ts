import type { TestProject } from 'vitest/node';

/**
 * Resolves real PostgreSQL and NATS for the integration suites, once per run:
 * 1. DATABASE_URL and NATS_URL when set;
 * 2. else testcontainers, when a Docker engine answers;
 * 3. else nothing: integration suites skip and print why.
 * Each suite then makes its own database and subject/stream names (see infra.ts) and drops them.
 */
export default async function setup(project: TestProject) {
  let databaseUrl = process.env.DATABASE_URL ?? '';
  let natsUrl = process.env.NATS_URL ?? '';
  let skipReason = '';
  const stops: Array<() => Promise<unknown>> = [];
  if (!databaseUrl || !natsUrl) {
    try {
      const tc = await import('testcontainers');
      if (!databaseUrl) {
        const pg = await new tc.GenericContainer('postgres:16-alpine')
          .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
          .withExposedPorts(5432)
          .withWaitStrategy(tc.Wait.forLogMessage(/ready to accept connections/, 2))
          .start();
        stops.push(() => pg.stop());
        databaseUrl = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
      }
      if (!natsUrl) {
        const nats = await new tc.GenericContainer('nats:2.11-alpine').withCommand(['-js']).withExposedPorts(4222).start();
        stops.push(() => nats.stop());
        natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
      }
    } catch (err) {
      skipReason =
        'integration tests skipped: DATABASE_URL and NATS_URL are not both set and testcontainers could not start containers ' +
        `(${(err as Error).message.split('\n')[0]}). Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres NATS_URL=nats://127.0.0.1:4222 to run them.`;
      console.warn(`\n[agp tests] ${skipReason}\n`);
    }
  }
  project.provide('databaseUrl', skipReason ? '' : databaseUrl);
  project.provide('natsUrl', skipReason ? '' : natsUrl);
  project.provide('infraSkipReason', skipReason);
  return async () => {
    for (const stop of stops) await stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    natsUrl: string;
    infraSkipReason: string;
  }
}
