import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A short random suffix for per-run database, stream and subject names. */
export function runSuffix(): string {
  return randomBytes(5).toString('hex');
}

/**
 * Create a fresh PostgreSQL database on the server of `adminUrl`.
 * Returns its URL and a `drop` that terminates its connections and drops it.
 */
export async function createDatabase(adminUrl: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${runSuffix()}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const d = new pg.Client({ connectionString: adminUrl });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
