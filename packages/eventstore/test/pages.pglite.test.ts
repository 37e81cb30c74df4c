import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteSql, pageWithTotal, type Sql } from '../src/index.js';

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
});
