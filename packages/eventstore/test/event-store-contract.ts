import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WrongExpectedVersionError, newId } from '@agp/runtime';
import { checkpointPosition, createEventStore, projectionDeadLetterPage, type EventStore, type NewEvent, type Sql, type StoredEvent } from '../src/index.js';

/**
 * One contract, run against every adapter (PostgreSQL, PGlite, KurrentDB). `open` gives the store and the read-model
 * database its checkpoints live in (the same database for the SQL adapters).
 */
export function eventStoreContract(name: string, open: () => Promise<{ store: EventStore; db: Sql; cleanup: () => Promise<void> }>) {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let db: Sql;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ store, db, cleanup } = await open());
      await store.migrate();
      await store.migrate(); // idempotent
    });
    afterAll(async () => cleanup());

    const ev = (type = 'Thing', data: Record<string, unknown> = {}, id = newId()): NewEvent => ({
      event_id: id,
      type,
      data,
      metadata: { organization_id: 'acme', actor: 'system', schema_version: 1 },
    });

    it('is ready while its server answers (the readiness probe)', async () => {
      await expect(store.ready()).resolves.toBeUndefined();
    });

    it('appends to a new stream and reads it back in version order', async () => {
      const s = `t-${newId()}`;
      const [r] = await store.append([{ stream_id: s, expected_version: 'no_stream', events: [ev('A', { n: 1 }), ev('B', { n: 2 })] }]);
      expect(r.next_version).toBe(2);
      expect(r.appended.map((e) => e.stream_version)).toEqual([1, 2]);
      const read = await store.readStream(s);
      expect(read.map((e) => [e.type, e.data.n, e.stream_version])).toEqual([
        ['A', 1, 1],
        ['B', 2, 2],
      ]);
      expect(read[1].global_position).toBeGreaterThan(read[0].global_position);
      expect(read[0].metadata.organization_id).toBe('acme');
      expect(Number.isNaN(Date.parse(read[0].recorded_at))).toBe(false);
    });

    it('rejects a wrong expected version with a 409 and writes nothing', async () => {
      const s = `t-${newId()}`;
      await store.append([{ stream_id: s, expected_version: 'no_stream', events: [ev()] }]);
      const err = await store.append([{ stream_id: s, expected_version: 0, events: [ev()] }]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongExpectedVersionError);
      expect((err as WrongExpectedVersionError).status).toBe(409);
      await expect(store.append([{ stream_id: s, expected_version: 'no_stream', events: [ev()] }])).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect(await store.readStream(s)).toHaveLength(1);
      const [ok] = await store.append([{ stream_id: s, expected_version: 1, events: [ev()] }]);
      expect(ok.next_version).toBe(2);
    });

    it('is idempotent by event id, within and across appends', async () => {
      const s = `t-${newId()}`;
      const e = ev('Once');
      await store.append([{ stream_id: s, events: [e, e] }]);
      const [again] = await store.append([{ stream_id: s, expected_version: 'no_stream', events: [e] }]);
      expect(again.duplicates).toEqual([e.event_id]);
      expect(again.appended).toEqual([]);
      expect(await store.readStream(s)).toHaveLength(1);
    });

    it('appends many streams in one transaction: all or nothing', async () => {
      const a = `t-${newId()}`;
      const b = `t-${newId()}`;
      await store.append([{ stream_id: b, events: [ev()] }]);
      await expect(
        store.append([
          { stream_id: a, expected_version: 'no_stream', events: [ev()] },
          { stream_id: b, expected_version: 'no_stream', events: [ev()] },
        ]),
      ).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect(await store.readStream(a)).toEqual([]);
      const results = await store.append([
        { stream_id: a, expected_version: 'no_stream', events: [ev()] },
        { stream_id: b, expected_version: 1, events: [ev(), ev()] },
      ]);
      expect(results.map((r) => r.next_version)).toEqual([1, 3]);
    });

    it('appendWith: a change in the database and its events, committed together (SQL adapters: one transaction)', async () => {
      await db.exec('CREATE TABLE IF NOT EXISTS contract_rows (id text PRIMARY KEY)');
      const s = `t-${newId()}`;
      const row = newId();
      const value = await store.appendWith(async (tx) => {
        await tx.query('INSERT INTO contract_rows (id) VALUES ($1)', [row]);
        return { value: 'made', events: [{ stream_id: s, expected_version: 'no_stream', events: [ev('RowMade', { row })] }] };
      });
      expect(value).toBe('made');
      expect((await store.readStream(s)).map((e) => e.data.row)).toEqual([row]);
      expect((await db.query('SELECT id FROM contract_rows WHERE id = $1', [row])).rows).toHaveLength(1);
      // A write that throws: neither the row nor an event.
      const lost = newId();
      await expect(
        store.appendWith(async (tx) => {
          await tx.query('INSERT INTO contract_rows (id) VALUES ($1)', [lost]);
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await db.query('SELECT id FROM contract_rows WHERE id = $1', [lost])).rows).toHaveLength(0);
      // An append that fails its version check: with a shared transaction the row rolls back too.
      const err = await store
        .appendWith(async (tx) => {
          await tx.query('INSERT INTO contract_rows (id) VALUES ($1)', [lost]);
          return { value: null, events: [{ stream_id: s, expected_version: 'no_stream', events: [ev('RowMade', { row: lost })] }] };
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongExpectedVersionError);
      expect(await store.readStream(s)).toHaveLength(1);
      if (store.kind !== 'kurrentdb') expect((await db.query('SELECT id FROM contract_rows WHERE id = $1', [lost])).rows).toHaveLength(0);
      // No events: the change alone.
      expect(await store.appendWith(async () => ({ value: 1, events: [] }))).toBe(1);
    });

    it('answers which event ids are stored, the stored events of ids, and the head position', async () => {
      const stored = ev('Known');
      const [r] = await store.append([{ stream_id: `t-${newId()}`, events: [stored] }]);
      const unknown = newId();
      expect(await store.hasEvents([stored.event_id, unknown])).toEqual(new Set([stored.event_id]));
      expect(await store.hasEvents([])).toEqual(new Set());
      expect((await store.readEvents([unknown, stored.event_id])).map((e) => [e.event_id, e.type])).toEqual([[stored.event_id, 'Known']]);
      expect(await store.readEvents([])).toEqual([]);
      expect(await store.headPosition()).toBeGreaterThanOrEqual(r.appended[0].global_position);
      const [later] = await store.append([{ stream_id: `t-${newId()}`, events: [ev()] }]);
      expect(await store.headPosition()).toBe(later.appended[0].global_position);
    });

    it('starts a checkpoint at the head only once', async () => {
      const name = `sub-${newId()}`;
      await store.startCheckpointAtHead(name);
      const head = await store.headPosition();
      expect(await checkpointPosition(db, name)).toBe(head);
      await store.append([{ stream_id: `t-${newId()}`, events: [ev()] }]);
      await store.startCheckpointAtHead(name);
      expect(await checkpointPosition(db, name)).toBe(head);
    });

    it('reads all events in global order, filtered by type', async () => {
      const start = await store.headPosition();
      const s = `t-${newId()}`;
      await store.append([{ stream_id: s, events: [ev('X'), ev('Y'), ev('X')] }]);
      const all = await store.readAll(start, 100);
      expect(all.map((e) => e.type)).toEqual(['X', 'Y', 'X']);
      const xs = await store.readAll(start, 100, ['X']);
      expect(xs).toHaveLength(2);
      expect((await store.readAll(start, 1)).length).toBe(1);
    });

    it('catch-up subscription: delivers every event once, in order, with the checkpoint committed alongside the read model', async () => {
      const name = `sub-${newId()}`;
      await db.exec(`CREATE TABLE IF NOT EXISTS contract_seen (name text, pos bigint, type text)`);
      const start = await store.headPosition();
      await store.resetCheckpoint(name, start);
      const handler = async (events: StoredEvent[], tx: { query: (t: string, p?: unknown[]) => Promise<unknown> }) => {
        for (const e of events) await tx.query('INSERT INTO contract_seen VALUES ($1, $2, $3)', [name, String(e.global_position), e.type]);
      };
      const sub = store.subscribe({ name, eventTypes: ['Keep'], batchSize: 7, handler, idlePollMs: 50 });
      // Concurrent appenders: positions must still be applied without gaps or repeats.
      const appends = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.append([{ stream_id: `t-${newId()}`, events: [ev('Keep', { i }), ev('Skip'), ev('Keep', { i })] }])),
      );
      const maxPos = appends.flatMap((r) => r[0].appended.map((e) => e.global_position)).reduce((a, b) => (a > b ? a : b));
      await sub.waitFor(maxPos, 10000);
      expect(sub.position()).toBeGreaterThanOrEqual(maxPos);
      await sub.stop();
      const { rows } = await db.query<{ pos: string; type: string }>('SELECT pos::text AS pos, type FROM contract_seen WHERE name = $1 ORDER BY pos', [name]);
      expect(rows).toHaveLength(40);
      expect(new Set(rows.map((r) => r.pos)).size).toBe(40);
      expect(rows.every((r) => r.type === 'Keep')).toBe(true);
      expect(await checkpointPosition(db, name)).toBe(sub.position());

      // A restarted subscription resumes from the checkpoint: nothing is applied twice.
      const again = store.subscribe({ name, eventTypes: ['Keep'], handler, idlePollMs: 50 });
      const [more] = await store.append([{ stream_id: `t-${newId()}`, events: [ev('Keep')] }]);
      await again.waitFor(more.appended[0].global_position, 10000);
      // Events of other types are never read, yet the checkpoint moves past them (to the head of the store).
      const [skipped] = await store.append([{ stream_id: `t-${newId()}`, events: [ev('Skip'), ev('Skip')] }]);
      await again.waitFor(skipped.appended[1].global_position, 10000);
      await again.stop();
      const { rows: after } = await db.query('SELECT 1 FROM contract_seen WHERE name = $1', [name]);
      expect(after).toHaveLength(41);
    });

    it('a failing handler rolls back its batch and retries it', async () => {
      const name = `sub-${newId()}`;
      const start = await store.headPosition();
      await store.resetCheckpoint(name, start);
      let calls = 0;
      const errors: unknown[] = [];
      const seen: string[] = [];
      const sub = store.subscribe({
        name,
        idlePollMs: 20,
        handler: async (events) => {
          calls += 1;
          if (calls === 1) throw new Error('boom');
          seen.push(...events.map((e) => e.event_id));
        },
        onError: (e) => errors.push(e),
      });
      const e = ev('Retry');
      const [r] = await store.append([{ stream_id: `t-${newId()}`, events: [e] }]);
      await sub.waitFor(r.appended[0].global_position, 10000);
      await sub.stop();
      expect(errors).toHaveLength(1);
      expect(seen).toEqual([e.event_id]);
    });

    it('onCommitted: called after an applied batch committed, with its events (its writes visible on other connections), never for a batch rolled back', async () => {
      const name = `sub-${newId()}`;
      await db.exec(`CREATE TABLE IF NOT EXISTS contract_committed (name text, event_id text)`);
      await store.resetCheckpoint(name, await store.headPosition());
      let calls = 0;
      const committed: Array<{ ids: string[]; visible: number }> = [];
      const checks: Array<Promise<void>> = [];
      const sub = store.subscribe({
        name,
        eventTypes: ['Commit'],
        idlePollMs: 20,
        handler: async (events, tx) => {
          calls += 1;
          for (const e of events) await tx.query('INSERT INTO contract_committed VALUES ($1, $2)', [name, e.event_id]);
          if (calls === 1) throw new Error('boom'); // rolled back: no onCommitted for it
        },
        onCommitted: (events) => {
          const ids = events.map((e) => e.event_id);
          checks.push(db.query<{ n: string }>('SELECT count(*)::text AS n FROM contract_committed WHERE name = $1', [name]).then(({ rows }) => void committed.push({ ids, visible: Number(rows[0].n) })));
        },
        onError: () => undefined,
      });
      const e = ev('Commit');
      const [r] = await store.append([{ stream_id: `t-${newId()}`, events: [e] }]);
      await sub.waitFor(r.appended[0].global_position, 10000);
      await sub.stop();
      await Promise.all(checks);
      expect(calls).toBe(2);
      expect(committed).toEqual([{ ids: [e.event_id], visible: 1 }]);
    });

    it('parks an event the projection can never apply (an SQL data error) and applies the rest of its batch', async () => {
      const name = `sub-${newId()}`;
      const table = `t_${newId().replace(/-/g, '')}`;
      await db.exec(`CREATE TABLE ${table} (n integer NOT NULL)`);
      const start = await store.headPosition();
      await store.resetCheckpoint(name, start);
      const events = [ev('Num', { n: '1' }), ev('Num', { n: 'two' }), ev('Num', { n: '3' })];
      const [r] = await store.append([{ stream_id: `t-${newId()}`, events }]);
      const errors: unknown[] = [];
      const sub = store.subscribe({
        name,
        idlePollMs: 20,
        eventTypes: ['Num'],
        // A real data error from PostgreSQL: 'two' is not an integer (SQLSTATE 22P02), however often it is retried.
        handler: async (batch, tx) => {
          for (const e of batch) await tx.query(`INSERT INTO ${table} (n) VALUES ($1::integer)`, [e.data.n]);
        },
        onError: (e) => errors.push(e),
      });
      await sub.waitFor(r.appended.at(-1)!.global_position, 10000);
      await sub.stop();
      const { rows } = await db.query<{ n: number }>(`SELECT n FROM ${table} ORDER BY n`);
      expect(rows.map((x) => x.n)).toEqual([1, 3]);
      const dead = await db.query<{ event_id: string; error: string }>('SELECT event_id, error FROM agp_projection_dead_letters WHERE subscription = $1', [name]);
      expect(dead.rows).toEqual([{ event_id: events[1].event_id, error: expect.stringMatching(/integer/) }]);
      expect(errors.some((e) => String((e as Error).message).includes('parked'))).toBe(true);

      // A replay meets the event again: the same row, last_seen moved and attempts counted; its organisation and the event kept.
      await store.resetCheckpoint(name, r.appended[0].global_position - 1n);
      await db.query(`DELETE FROM ${table}`);
      const again = store.subscribe({ name, idlePollMs: 20, eventTypes: ['Num'], handler: async (batch, tx) => {
        for (const e of batch) await tx.query(`INSERT INTO ${table} (n) VALUES ($1::integer)`, [e.data.n]);
      } });
      await again.waitFor(r.appended.at(-1)!.global_position, 10000);
      await again.stop();
      const page = await projectionDeadLetterPage(db, 'acme', { skip: 0, limit: 10, subscription: name });
      expect(page.total).toBe(1);
      const [row] = page.rows;
      expect(row).toMatchObject({ event_id: events[1].event_id, attempts: 2 });
      expect(new Date(row.last_seen).getTime()).toBeGreaterThan(new Date(row.first_seen).getTime());
      expect(JSON.parse(row.event!)).toMatchObject({ event_id: events[1].event_id, data: { n: 'two' }, metadata: { organization_id: 'acme' } });
      expect((await projectionDeadLetterPage(db, 'globex', { skip: 0, limit: 10, subscription: name })).total).toBe(0);
    });

    it('inline projections: applied in the append\'s transaction with their checkpoint where the adapter can, by catch-up otherwise; each event once, in order', async () => {
      const name = `inl-${newId()}`;
      await db.exec(`CREATE TABLE IF NOT EXISTS contract_inline (seq bigserial PRIMARY KEY, name text, pos bigint, type text, via text)`);
      await store.resetCheckpoint(name, await store.headPosition());
      const writer = (via: string) => async (events: StoredEvent[], tx: { query: (t: string, p?: unknown[]) => Promise<unknown> }) => {
        for (const e of events) await tx.query('INSERT INTO contract_inline (name, pos, type, via) VALUES ($1, $2, $3, $4)', [name, String(e.global_position), e.type, via]);
      };
      const inline = [{ name, eventTypes: ['Keep'], handler: writer('inline') }];
      const sub = store.subscribe({ name, eventTypes: ['Keep'], batchSize: 5, handler: writer('catch-up'), idlePollMs: 50 });

      // One append alone: applied before append resolves where the adapter can inline; the subscription is current at once.
      const [one] = await store.append([{ stream_id: `t-${newId()}`, events: [ev('Keep'), ev('Skip'), ev('Keep')] }], { inline });
      const onePos = one.appended[2].global_position;
      if (store.canInline) {
        expect(sub.position()).toBeGreaterThanOrEqual(onePos);
        expect(await checkpointPosition(db, name)).toBe(onePos);
      } else {
        await sub.waitFor(onePos, 10000);
      }

      // A failing inline handler never fails the append: the events are stored and its catch-up applies them.
      const boom = [{ name, eventTypes: ['Keep'], handler: async () => Promise.reject(new Error('projection failed')) }];
      const [failed] = await store.append([{ stream_id: `t-${newId()}`, events: [ev('Keep')] }], { inline: boom });
      expect(failed.appended).toHaveLength(1);
      await sub.waitFor(failed.appended[0].global_position, 10000);

      // Concurrent appends, some without the inline projection (another writer): those leave the checkpoint behind, so
      // later inline appends find earlier events of its types unapplied and leave theirs to the catch-up as well.
      const appends = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          store.append([{ stream_id: `t-${newId()}`, events: [ev('Keep', { i }), ev('Skip'), ev('Keep', { i })] }], i % 4 === 3 ? {} : { inline }),
        ),
      );
      const [last] = await store.append([{ stream_id: `t-${newId()}`, events: [ev('Keep')] }], { inline });
      const maxPos = [...appends.flatMap((r) => r[0].appended), ...last.appended].map((e) => e.global_position).reduce((a, b) => (a > b ? a : b));
      await sub.waitFor(maxPos, 10000);
      await sub.stop();

      const { rows } = await db.query<{ pos: string; type: string; via: string }>('SELECT pos::text AS pos, type, via FROM contract_inline WHERE name = $1 ORDER BY seq', [name]);
      const keeps = 2 + 1 + 16 * 2 + 1;
      expect(rows).toHaveLength(keeps);
      expect(new Set(rows.map((r) => r.pos)).size).toBe(keeps);
      expect(rows.every((r) => r.type === 'Keep')).toBe(true);
      // Applied in global order, whichever path applied each.
      const positions = rows.map((r) => BigInt(r.pos));
      expect(positions.every((p, i) => i === 0 || p > positions[i - 1])).toBe(true);
      expect(rows.find((r) => BigInt(r.pos) === failed.appended[0].global_position)?.via).toBe('catch-up');
      if (store.canInline) expect(rows.filter((r) => r.via === 'inline').length).toBeGreaterThanOrEqual(2);
      else expect(rows.some((r) => r.via === 'inline')).toBe(false);
      expect(await checkpointPosition(db, name)).toBeGreaterThanOrEqual(maxPos);

      // A rebuild from the same start through catch-up alone applies the same events.
      await store.resetCheckpoint(name, positions[0] - 1n);
      const rebuilt: bigint[] = [];
      const again = store.subscribe({ name, eventTypes: ['Keep'], handler: async (events) => void rebuilt.push(...events.map((e) => e.global_position)), idlePollMs: 50 });
      await again.waitFor(maxPos, 10000);
      await again.stop();
      expect(rebuilt.filter((p) => p <= maxPos)).toEqual(positions);
    });

    it('two instances of one subscription share the work without applying an event twice', async () => {
      const name = `sub-${newId()}`;
      const start = await store.headPosition();
      await store.resetCheckpoint(name, start);
      const seen: bigint[] = [];
      const handler = async (events: StoredEvent[]) => void seen.push(...events.map((e) => e.global_position));
      const one = store.subscribe({ name, batchSize: 3, handler, idlePollMs: 10 });
      const two = store.subscribe({ name, batchSize: 3, handler, idlePollMs: 10 });
      let last = 0n;
      for (let i = 0; i < 10; i++) {
        const [r] = await store.append([{ stream_id: `t-${newId()}`, events: [ev(), ev()] }]);
        last = r.appended[1].global_position;
      }
      await Promise.all([one.waitFor(last, 10000).catch(() => two.waitFor(last, 10000)), two.waitFor(last, 10000).catch(() => one.waitFor(last, 10000))]);
      await one.stop();
      await two.stop();
      expect(seen).toHaveLength(20);
      expect(new Set(seen.map(String)).size).toBe(20);
    });
  });
}

export { createEventStore };
