import { describe, expect, it } from 'vitest';
import { createPgliteSql } from './sql.js';
import { WhereClause } from './where.js';

describe('WhereClause', () => {
  it('numbers each bound value in order and joins the conditions with AND', () => {
    const w = new WhereClause();
    w.and(`organization_id = ${w.param('acme')}`).and(`status = ANY(${w.param(['a', 'b'])}::text[])`);
    expect(`${w} LIMIT ${w.param(10)}`).toBe('organization_id = $1 AND status = ANY($2::text[]) LIMIT $3');
    expect(w.params).toEqual(['acme', ['a', 'b'], 10]);
    expect(w.size).toBe(2);
    expect(String(new WhereClause())).toBe('true');
  });

  it('keeps values out of the SQL text: a value that looks like SQL matches only itself', async () => {
    const sql = await createPgliteSql();
    try {
      await sql.query(`CREATE TABLE t (name text)`);
      await sql.query(`INSERT INTO t VALUES ('x'), ($1)`, ["x' OR 'a'='a"]);
      const w = new WhereClause();
      w.and(`name = ${w.param("x' OR 'a'='a")}`);
      const { rows } = await sql.query<{ name: string }>(`SELECT name FROM t WHERE ${w}`, w.params);
      expect(rows.map((r) => r.name)).toEqual(["x' OR 'a'='a"]);
    } finally {
      await sql.close();
    }
  });
});
