import { describe, expect, it } from 'vitest';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { createPgSql, migrateSchema } from '../src/index.js';

/** What several replicas do at start: create the same tables at the same moment. */
const DDL = Array.from({ length: 8 }, (_, i) => `CREATE TABLE IF NOT EXISTS t${i} (id text PRIMARY KEY, n bigint NOT NULL); CREATE INDEX IF NOT EXISTS t${i}_n ON t${i} (n)`).join(';\n');

describe.skipIf(skipIntegration('postgres'))('migrateSchema on PostgreSQL', () => {
  it('lets processes that start together create the same tables without racing on the catalog', async () => {
    const db = await createTestDatabase('agp_schema');
    const pools = Array.from({ length: 6 }, () => createPgSql(db.url, { max: 1 }));
    try {
      // Without the lock, concurrent CREATE TABLE IF NOT EXISTS fails with 23505 on pg_type for all but one.
      const results = await Promise.allSettled(pools.map((sql) => migrateSchema(sql, DDL)));
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const { rows } = await pools[0].query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 't_'");
      expect(rows[0].n).toBe(8);
    } finally {
      await Promise.all(pools.map((p) => p.close()));
      await db.drop();
    }
  });
});
