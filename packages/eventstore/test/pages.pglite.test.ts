import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '@agp/runtime';
import { DEFERRED_JOIN_SKIP, alterColumnType, checkpointPosition, createPgliteSql, decodeCursor, encodeCursor, migrateSchema, pageStart, pageWithTotal, type CursorKey, type Sql } from '../src/index.js';

describe('pageWithTotal (PGlite)', () => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await createPgliteSql();
    await sql.exec('CREATE TABLE items (org text, n integer); CREATE TABLE counters (org text, total bigint)');
    await sql.query("INSERT INTO items SELECT 'a', g FROM generate_series(1, 7) g");
    await sql.query("INSERT INTO counters VALUES ('a', 7)");
  });
  afterAll(async () => sql.close());
  const page = (org: string, limit: number, skip: number, totalSql?: string) =>
    pageWithTotal<{ n: number }>(sql, { select: 'n', from: 'items', where: 'org = $1', params: [org], orderBy: 'n DESC', limit, skip, totalSql });

  it('answers the page in order with the total of the filter, from one statement', async () => {
    const r = await page('a', 3, 2);
    expect(r.rows.map((x) => x.n)).toEqual([5, 4, 3]);
    expect(r.total).toBe(7);
  });
  it('still knows the total past the end, and answers 0 for no match', async () => {
    expect(await page('a', 3, 10)).toEqual({ rows: [], total: 7 });
    expect(await page('b', 3, 0)).toEqual({ rows: [], total: 0 });
  });
  it('takes the total from another statement when given (a counter table)', async () => {
    expect((await page('a', 2, 0, 'SELECT total FROM counters WHERE org = $1')).total).toBe(7);
  });
  it('reads a checkpoint position in the same statement as the rows', async () => {
    await sql.exec("CREATE TABLE IF NOT EXISTS agp_checkpoints (name text PRIMARY KEY, position bigint NOT NULL); INSERT INTO agp_checkpoints VALUES ('list', 42)");
    const at = async (org: string, checkpoint: string) => {
      const r = await pageWithTotal<{ n: number }>(sql, { select: 'n', from: 'items', where: 'org = $1', params: [org], orderBy: 'n DESC', limit: 2, skip: 0, checkpoint });
      return { ns: r.rows.map((x) => x.n), total: r.total, position: r.position };
    };
    expect(await at('a', 'list')).toEqual({ ns: [7, 6], total: 7, position: 42n });
    expect(await at('b', 'list')).toEqual({ ns: [], total: 0, position: undefined }); // an empty page is never cached
    expect(await at('a', 'no-such-subscription')).toEqual({ ns: [7, 6], total: 7, position: undefined });
    expect(await checkpointPosition(sql, 'list')).toBe(42n);
    expect(await checkpointPosition(sql, 'no-such-subscription')).toBeUndefined();
  });
});

describe('pageWithTotal with a deferred join for deep pages (PGlite)', () => {
  it('answers the same pages, in order, whether the offset is walked over whole rows or over keys', async () => {
    const sql = await createPgliteSql();
    try {
      await sql.exec("CREATE TABLE rows (id text PRIMARY KEY, org text NOT NULL, ts integer NOT NULL, doc text NOT NULL); CREATE INDEX rows_org_ts ON rows (org, ts DESC, id DESC)");
      // 2,500 rows of org a (with ties on ts, broken by id) and some of org b, which must never show.
      await sql.query("INSERT INTO rows SELECT 'a' || g, 'a', g / 3, 'doc' || g FROM generate_series(1, 2500) g");
      await sql.query("INSERT INTO rows SELECT 'b' || g, 'b', g, 'other' || g FROM generate_series(1, 2500) g");
      const read = (skip: number, key?: string) =>
        pageWithTotal<{ id: string }>(sql, { select: 'id', from: 'rows', where: 'org = $1', params: ['a'], orderBy: 'ts DESC, id DESC', limit: 7, skip, key });
      for (const skip of [DEFERRED_JOIN_SKIP - 1, DEFERRED_JOIN_SKIP, 1500, 2496, 2500]) {
        const plain = await read(skip);
        const deferred = await read(skip, 'id');
        expect(deferred.rows.map((r) => r.id)).toEqual(plain.rows.map((r) => r.id));
        expect(deferred.total).toBe(2500);
        expect(plain.total).toBe(2500);
      }
      expect((await read(2496, 'id')).rows).toHaveLength(4);
    } finally {
      await sql.close();
    }
  });
});

describe('pageWithTotal by keyset (PGlite)', () => {
  it('walks every row once, in order, from the first page or from a deep page read with the deferred join', async () => {
    const sql = await createPgliteSql();
    try {
      await sql.exec('CREATE TABLE rows (id text PRIMARY KEY, org text NOT NULL, ts timestamptz NOT NULL); CREATE INDEX rows_org_ts ON rows (org, ts DESC, id DESC)');
      // 1,300 rows of org a, three per microsecond-distinct instant (ties broken by id), and rows of org b that never show.
      await sql.query("INSERT INTO rows SELECT 'a' || g, 'a', timestamptz '2026-01-01T00:00:00Z' + (g / 3) * interval '1 microsecond' FROM generate_series(1, 1300) g");
      await sql.query("INSERT INTO rows SELECT 'b' || g, 'b', timestamptz '2026-01-01T00:00:00Z' + g * interval '1 microsecond' FROM generate_series(1, 50) g");
      const read = (limit: number, skip: number, after?: CursorKey) =>
        pageWithTotal<{ id: string }>(sql, { select: 'id', from: 'rows', where: 'org = $1', params: ['a'], orderBy: 'ts DESC, id DESC', limit, skip, key: 'id', keyset: { sort: 'ts', key: 'id', after } });
      const all = (await read(1300, 0)).rows.map((r) => r.id);
      expect(all).toHaveLength(1300);
      const walked: string[] = [];
      let page = await read(97, 0);
      for (;;) {
        expect(page.total).toBe(1300);
        walked.push(...page.rows.map((r) => r.id));
        if (!page.nextCursor) break;
        page = await read(97, 0, decodeCursor(page.nextCursor));
      }
      expect(walked).toEqual(all);
      // A page past DEFERRED_JOIN_SKIP names its last row as a plain page does.
      const deep = await read(5, DEFERRED_JOIN_SKIP + 3);
      expect(deep.rows.map((r) => r.id)).toEqual(all.slice(DEFERRED_JOIN_SKIP + 3, DEFERRED_JOIN_SKIP + 8));
      expect((await read(4, 0, decodeCursor(deep.nextCursor!))).rows.map((r) => r.id)).toEqual(all.slice(DEFERRED_JOIN_SKIP + 8, DEFERRED_JOIN_SKIP + 12));
      expect((await read(5, 1295)).nextCursor).toBeNull();
    } finally {
      await sql.close();
    }
  });

  it('takes skip or cursor, and refuses both, or a cursor it did not issue, with a 400', () => {
    const cursor = encodeCursor({ sort: '2026-01-01T00:00:00.000001Z', key: 'a1' });
    expect(pageStart({ skip: 3 })).toEqual({ skip: 3 });
    expect(pageStart({})).toEqual({ skip: 0 });
    expect(pageStart({ cursor })).toEqual({ skip: 0, after: { sort: '2026-01-01T00:00:00.000001Z', key: 'a1' } });
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const q of [{ cursor, skip: 0 }, { cursor: '' }, { cursor: 'not a cursor' }, { cursor: 'x'.repeat(600) }, { cursor: b64({ sort: 1 }) }, { cursor: b64(['2026-02-30T00:00:00.000000Z', 'a']) }, { cursor: b64(['2026-01-01', 'a']) }, { cursor: b64(['2026-01-01T00:00:00.000000Z', '']) }, { cursor: b64(['2026-01-01T00:00:00.000000Z', 'a\u0000']) }]) {
      expect(() => pageStart(q), JSON.stringify(q)).toThrow(BadRequestError);
    }
  });
});

describe('alterColumnType (PGlite)', () => {
  it('changes a column that has another type, keeping its values, and is a no-op afterwards', async () => {
    const sql = await createPgliteSql();
    try {
      await sql.exec(`CREATE TABLE docs (id text PRIMARY KEY, doc jsonb NOT NULL); INSERT INTO docs VALUES ('a', '{"b": 1, "a": [2]}')`);
      const ddl = 'CREATE TABLE IF NOT EXISTS docs (id text PRIMARY KEY, doc json NOT NULL)';
      await migrateSchema(sql, ddl, (tx) => alterColumnType(tx, 'docs', 'doc', 'json'));
      await migrateSchema(sql, ddl, (tx) => alterColumnType(tx, 'docs', 'doc', 'json'));
      const { rows } = await sql.query<{ t: string; doc: string }>("SELECT pg_typeof(doc)::text AS t, doc::text AS doc FROM docs WHERE id = 'a'");
      expect(rows[0].t).toBe('json');
      expect(JSON.parse(rows[0].doc)).toEqual({ a: [2], b: 1 });
    } finally {
      await sql.close();
    }
  });
});
