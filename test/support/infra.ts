import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** Infrastructure resolved by the global setup; empty strings when integration tests must skip. */
export function infra(): { databaseUrl: string; natsUrl: string; skipReason: string } {
  return { databaseUrl: inject('databaseUrl'), natsUrl: inject('natsUrl'), skipReason: inject('infraSkipReason') };
}

/** True when integration suites must skip; prints the reason once per file. */
export function skipIntegration(): boolean {
  const { skipReason } = infra();
  if (skipReason) console.warn(`[agp tests] ${skipReason}`);
  return !!skipReason;
}

/** A short random suffix for per-run database, stream and subject names. */
export function runSuffix(): string {
  return randomBytes(5).toString('hex');
}

/**
 * Create a fresh PostgreSQL database for one suite on the server in DATABASE_URL.
 * Returns its URL and a `drop` that terminates connections and drops it.
 */
export async function createTestDatabase(prefix = 'agp_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = infra().databaseUrl;
  const name = `${prefix}_${runSuffix()}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
