import { SqlIngestLog } from '@agp/bus';
import { createEventStore, createPgSql, createPgliteSql, type EventStore, type Sql } from '@agp/eventstore';
import { startFakeLlm, type FakeLlm } from '../../../test/support/fake-llm.js';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';

/** A database an interventions-service test runs on: PGlite always, PostgreSQL when DATABASE_URL reaches one. */
export interface TestBackend {
  name: 'PGlite' | 'PostgreSQL';
  /** True when the backend is unavailable (the suite skips with the reason `skipIntegration` prints). */
  skip: boolean;
  open(): Promise<{ sql: Sql; drop: () => Promise<void> }>;
}

/** PGlite, and PostgreSQL in its own database named from `dbPrefix` (dropped by `drop`). */
export function testBackends(dbPrefix: string): TestBackend[] {
  return [
    { name: 'PGlite', skip: false, open: async () => ({ sql: await createPgliteSql(), drop: async () => {} }) },
    {
      name: 'PostgreSQL',
      skip: skipIntegration('postgres'),
      open: async () => {
        const db = await createTestDatabase(dbPrefix);
        return { sql: createPgSql(db.url), drop: db.drop };
      },
    },
  ];
}

/** What a service under test is built on: the database, its migrated event store, the SQL ingest log, a fake LLM. */
export interface ServiceParts {
  sql: Sql;
  store: EventStore;
  log: SqlIngestLog;
  fake: FakeLlm;
  drop: () => Promise<void>;
}

/** Open `backend` and build the {@link ServiceParts} on it (the fake LLM listens on loopback). */
export async function openServiceParts(backend: TestBackend): Promise<ServiceParts> {
  const { sql, drop } = await backend.open();
  const store = createEventStore(sql);
  await store.migrate();
  const log = await SqlIngestLog.create(sql);
  const fake = await startFakeLlm();
  return { sql, store, log, fake, drop };
}

/** Close what {@link openServiceParts} opened, in reverse; tolerates a partial open (`undefined`). Stop services first. */
export async function closeServiceParts(parts: ServiceParts | undefined): Promise<void> {
  await parts?.fake.close();
  await parts?.log.close();
  await parts?.store.close();
  await parts?.drop();
}
