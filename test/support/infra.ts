import { inject } from 'vitest';
import { createDatabase, runSuffix } from './db.js';

export { runSuffix };

/** What an integration suite may need from the machine. */
export type Need = 'postgres' | 'nats';

/** Infrastructure resolved by the global setup; empty strings for what is missing. */
export function infra(): { databaseUrl: string; natsUrl: string } {
  return { databaseUrl: inject('databaseUrl'), natsUrl: inject('natsUrl') };
}

/**
 * True when a suite must skip because something it needs is missing (default: PostgreSQL and NATS); prints one line
 * per file naming what is missing and how to provide it. Source: docs/decisions.md (The test command and its infrastructure).
 */
export function skipIntegration(...needs: Need[]): boolean {
  const wanted: Need[] = needs.length ? needs : ['postgres', 'nats'];
  const reasons = wanted.map((n) => (n === 'postgres' ? inject('postgresMissing') : inject('natsMissing'))).filter(Boolean);
  if (reasons.length) console.warn(`[agp tests] ${reasons.join(' ')}`);
  return reasons.length > 0;
}

/**
 * Create a fresh PostgreSQL database for one suite on the server in DATABASE_URL.
 * Returns its URL and a `drop` that terminates connections and drops it.
 */
export function createTestDatabase(prefix = 'agp_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  return createDatabase(infra().databaseUrl, prefix);
}
