import { inject } from 'vitest';
import { createDatabase, runSuffix } from './db.js';

export { runSuffix };

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

/**
 * Create a fresh PostgreSQL database for one suite on the server in DATABASE_URL.
 * Returns its URL and a `drop` that terminates connections and drops it.
 */
export function createTestDatabase(prefix = 'agp_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  return createDatabase(infra().databaseUrl, prefix);
}
