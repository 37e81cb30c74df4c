import { createEventStore, createPgliteSql } from '../src/index.js';
import { eventStoreContract } from './event-store-contract.js';

eventStoreContract('PGlite (in memory)', async () => {
  const sql = await createPgliteSql();
  const store = createEventStore(sql);
  return { store, db: sql, cleanup: () => store.close() };
});
