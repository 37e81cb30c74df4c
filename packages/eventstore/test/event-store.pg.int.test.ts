import { describe } from 'vitest';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { createEventStore, createPgSql } from '../src/index.js';
import { eventStoreContract } from './event-store-contract.js';

describe.skipIf(skipIntegration('postgres'))('PostgreSQL adapter', () => {
  eventStoreContract('PostgreSQL (pg pool)', async () => {
    const db = await createTestDatabase('agp_es');
    const sql = createPgSql(db.url);
    const store = createEventStore(sql);
    return {
      store,
      db: sql,
      cleanup: async () => {
        await store.close();
        await db.drop();
      },
    };
  });
});
