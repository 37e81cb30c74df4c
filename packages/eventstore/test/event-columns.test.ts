import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { EVENT_STORE_DDL, UnstorableTextError, createEventStore, createPgSql, createPgliteSql, isDataError, type EventStore, type Sql } from '../src/index.js';

/**
 * The events table's document columns (docs/decisions.md, Event store): `json` in a fresh database, `jsonb` kept in a
 * table created before (the append follows the column type), and text neither PostgreSQL type can hold refused as a
 * data error with nothing written. On PGlite, and on PostgreSQL when DATABASE_URL reaches one.
 */
const backends: Array<{ name: string; skip: boolean; open: () => Promise<{ sql: Sql; drop: () => Promise<void> }> }> = [
  { name: 'PGlite', skip: false, open: async () => ({ sql: await createPgliteSql(), drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: skipIntegration('postgres'),
    open: async () => {
      const db = await createTestDatabase('agp_evcols');
      return { sql: createPgSql(db.url), drop: db.drop };
    },
  },
];

const meta = { organization_id: 'org-1', actor: 'key:k1', correlation_id: 'c-1', schema_version: 1 };
const dataOf = (i: number) => ({ zeta: i, alpha: { b: [1, 'x', null], a: true }, text: `é ✓ 😀 "quoted" \\ ${i}` });

async function columnType(sql: Sql): Promise<string | undefined> {
  const { rows } = await sql.query<{ data_type: string }>(
    "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'agp_events' AND column_name = 'data'",
  );
  return rows[0]?.data_type;
}

for (const backend of backends) {
  describe.skipIf(backend.skip)(`event document columns (${backend.name})`, () => {
    let opened: { sql: Sql; drop: () => Promise<void> } | undefined;
    let store: EventStore | undefined;
    afterEach(async () => {
      await store?.close();
      await opened?.drop();
      store = undefined;
      opened = undefined;
    });

    const roundTrip = async (s: EventStore) => {
      await s.append([
        { stream_id: 's-1', expected_version: 'no_stream', events: [0, 1].map((i) => ({ event_id: `e-${i}`, type: 'T', data: dataOf(i), metadata: meta })) },
        { stream_id: 's-2', expected_version: 'no_stream', events: [{ event_id: 'e-2', type: 'T', data: dataOf(2), metadata: { ...meta, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } }] },
      ]);
      const s1 = await s.readStream('s-1');
      expect(s1.map((e) => [e.event_id, e.stream_version, e.data, e.metadata])).toEqual([
        ['e-0', 1, dataOf(0), meta],
        ['e-1', 2, dataOf(1), meta],
      ]);
      expect((await s.readAll(0n, 10)).map((e) => e.event_id)).toEqual(['e-0', 'e-1', 'e-2']);
    };

    it('creates json document columns and reads back what was appended, member order included', async () => {
      opened = await backend.open();
      store = createEventStore(opened.sql);
      await store.migrate();
      expect(await columnType(opened.sql)).toBe('json');
      await roundTrip(store);
      const [e] = await store.readStream('s-1');
      expect(Object.keys(e.data)).toEqual(['zeta', 'alpha', 'text']);
    });

    it('keeps the jsonb columns of a table created with them, and appends and reads as before', async () => {
      opened = await backend.open();
      await opened.sql.exec(EVENT_STORE_DDL.replace('data json NOT NULL', 'data jsonb NOT NULL').replace('metadata json NOT NULL', 'metadata jsonb NOT NULL'));
      store = createEventStore(opened.sql);
      await store.migrate();
      expect(await columnType(opened.sql)).toBe('jsonb');
      await roundTrip(store);
    });

    it('refuses text PostgreSQL cannot hold as a data error naming where, and writes none of the append', async () => {
      opened = await backend.open();
      store = createEventStore(opened.sql);
      await store.migrate();
      const bad = [
        { data: { ok: 'fine', reason: 'a\u0000b' }, path: 'events.1.data.reason' },
        { data: { ['k\ud800']: 1 }, path: 'events.1.data.k\\ud800' },
        { data: { list: ['x', 'half \udc00'] }, path: 'events.1.data.list.1' },
      ];
      for (const { data, path } of bad) {
        const err = await store
          .append([{ stream_id: 's-bad', expected_version: 'any', events: [{ event_id: 'good', type: 'T', data: { fine: true }, metadata: meta }, { event_id: 'bad', type: 'T', data, metadata: meta }] }])
          .then(() => null, (e: unknown) => e);
        expect(err).toBeInstanceOf(UnstorableTextError);
        expect(isDataError(err)).toBe(true);
        expect((err as UnstorableTextError).paths).toEqual([path]);
      }
      expect(await store.readAll(0n, 10)).toEqual([]);
      // A surrogate pair, and text that only looks like an escape, are stored.
      await store.append([{ stream_id: 's-ok', expected_version: 'any', events: [{ event_id: 'ok', type: 'T', data: { emoji: '😀', literal: '\\u0000 \\ud800' }, metadata: meta }] }]);
      expect((await store.readStream('s-ok'))[0].data).toEqual({ emoji: '😀', literal: '\\u0000 \\ud800' });
    });

    it.each(['json', 'jsonb'])('erases members of stored events named by JSON Pointers (%s columns); the rest of each event stays', async (type) => {
      opened = await backend.open();
      if (type === 'jsonb') await opened.sql.exec(EVENT_STORE_DDL.replace('data json NOT NULL', 'data jsonb NOT NULL').replace('metadata json NOT NULL', 'metadata jsonb NOT NULL'));
      store = createEventStore(opened.sql);
      await store.migrate();
      await roundTrip(store);
      const changed = await store.eraseData([
        { event_id: 'e-0', pointers: ['/text', '/alpha/b', '/absent'] },
        { event_id: 'e-1', pointers: ['/absent'] },
        { event_id: 'unknown', pointers: ['/text'] },
      ]);
      expect(changed).toBe(1);
      const [e0, e1] = await store.readStream('s-1');
      expect(e0.data).toEqual({ zeta: 0, alpha: { a: true } });
      expect([e0.event_id, e0.stream_version, e0.metadata]).toEqual(['e-0', 1, meta]);
      expect(e1.data).toEqual(dataOf(1));
    });
  });
}
