/**
 * The event-store contract against KurrentDB: the server at KURRENTDB_URL (alias EVENTSTORE_URL) when set, else a
 * testcontainers KurrentDB when a Docker engine answers, else one printed skip line naming both. The checkpoints and
 * the id table live in a fresh PostgreSQL database (the read-model database). How to run it: docs/operations.md.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { createPgSql, kurrentDbUrl, openEventStore } from '../src/index.js';
import { eventDataOf, expectedRevision, kurrentEventId, readPositionAfter, typeFilter, versionOfRevision } from '../src/kurrentdb.js';
import { eventStoreContract } from './event-store-contract.js';

/** The KurrentDB image the container fallback starts. */
const IMAGE = 'docker.kurrent.io/kurrent-latest/kurrentdb:25.1';

const stops: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

/** A KurrentDB URL for this run, or the reason there is none. */
async function resolveKurrentDb(): Promise<{ url: string } | { missing: string }> {
  const url = kurrentDbUrl(process.env);
  if (url) return { url };
  try {
    const tc = await import('testcontainers');
    const c = await new tc.GenericContainer(IMAGE)
      .withEnvironment({ KURRENTDB_INSECURE: 'true', KURRENTDB_RUN_PROJECTIONS: 'None', KURRENTDB_MEM_DB: 'true' })
      .withExposedPorts(2113)
      .withWaitStrategy(tc.Wait.forHttp('/health/live', 2113).forStatusCode(204))
      .start();
    stops.push(() => c.stop());
    return { url: `kurrentdb://${c.getHost()}:${c.getMappedPort(2113)}?tls=false` };
  } catch (err) {
    return { missing: `KurrentDB suite skipped: KURRENTDB_URL (or EVENTSTORE_URL) is not set and Docker is not available (${(err as Error).message.split('\n')[0]}).` };
  }
}

const kurrent = await resolveKurrentDb();
if ('missing' in kurrent) console.warn(`[agp tests] ${kurrent.missing}`);

describe.skipIf('missing' in kurrent || skipIntegration('postgres'))('KurrentDB adapter', () => {
  eventStoreContract('KurrentDB (checkpoints in PostgreSQL)', async () => {
    const database = await createTestDatabase('agp_kdb');
    const db = createPgSql(database.url);
    const store = await openEventStore(db, { AGP_EVENT_STORE: 'kurrentdb', KURRENTDB_URL: (kurrent as { url: string }).url });
    expect(store.kind).toBe('kurrentdb');
    return {
      store,
      db,
      cleanup: async () => {
        await store.close();
        await db.close();
        await database.drop();
      },
    };
  });
});

// What the adapter decides without a server: the revision mapping, event ids and read positions.
describe('KurrentDB adapter mappings', () => {
  it('maps expected versions to expected revisions (versions start at 1, revisions at 0)', () => {
    expect(expectedRevision(undefined)).toBe('any');
    expect(expectedRevision('any')).toBe('any');
    expect(expectedRevision('no_stream')).toBe('no_stream');
    expect(expectedRevision(0)).toBe('no_stream');
    expect(expectedRevision(1)).toBe(0n);
    expect(expectedRevision(5)).toBe(4n);
    expect(versionOfRevision(4n)).toBe(5);
    expect(versionOfRevision('no_stream')).toBe(0);
  });

  it('keeps UUID event ids and gives others a stable UUID', () => {
    const uuid = '0190f1e2-3c4d-7e5f-8a9b-0c1d2e3f4a5b';
    expect(kurrentEventId(uuid)).toBe(uuid);
    expect(kurrentEventId('e1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(kurrentEventId('e1')).toBe(kurrentEventId('e1'));
    expect(kurrentEventId('e1')).not.toBe(kurrentEventId('e2'));
  });

  it('reads $all from the start, or from a position it then excludes', () => {
    expect(readPositionAfter(0n)).toBe('start');
    expect(readPositionAfter(42n)).toEqual({ commit: 42n, prepare: 42n });
  });

  it('filters $all by exact event type on the server, and sends the port\'s id with each event', async () => {
    const k = await import('@kurrent/kurrentdb-client');
    const filter = typeFilter(k, ['Policy.Created', 'KillSwitchEngaged']) as { filterOn: string; regex: string };
    expect(filter.filterOn).toBe('eventType');
    expect(new RegExp(filter.regex).test('Policy.Created')).toBe(true);
    expect(new RegExp(filter.regex).test('PolicyXCreated')).toBe(false);
    expect(new RegExp(filter.regex).test('KillSwitchEngagedLater')).toBe(false);
    const data = eventDataOf(k, { event_id: 'e1', type: 'T', data: { n: 1 }, metadata: { organization_id: 'o', actor: 'system', schema_version: 1 } });
    expect(data).toMatchObject({ id: kurrentEventId('e1'), type: 'T', contentType: 'application/json', data: { n: 1 }, metadata: { organization_id: 'o', $agp_event_id: 'e1' } });
  });

  it('selects the adapter from the environment, and names the missing URL', async () => {
    expect(kurrentDbUrl({ EVENTSTORE_URL: 'esdb://old:2113' })).toBe('esdb://old:2113');
    expect(kurrentDbUrl({ KURRENTDB_URL: 'kurrentdb://new:2113', EVENTSTORE_URL: 'esdb://old:2113' })).toBe('kurrentdb://new:2113');
    const db = { kind: 'pglite' } as never;
    await expect(openEventStore(db, { AGP_EVENT_STORE: 'kurrentdb' })).rejects.toThrow(/KURRENTDB_URL \(or its former name EVENTSTORE_URL\)/);
    expect((await openEventStore(db, {})).kind).toBe('pglite');
  });
});
