import type { SqlExecutor } from './types.js';

/** A page query: `SELECT <select> FROM <from> WHERE <where> ORDER BY <orderBy> LIMIT … OFFSET …`, with `$1…` params. */
export interface PageQuery {
  select: string;
  from: string;
  where: string;
  params: unknown[];
  orderBy: string;
  limit: number;
  skip: number;
  /** SQL of the total (same params), when it is not `count(*)` over the same FROM and WHERE (e.g. a counter table). */
  totalSql?: string;
}

/**
 * One page of a read model and the total of its filter, read in ONE statement — one snapshot — so `total` always agrees
 * with the page (two parallel queries could straddle a projection commit: `total: 1` with an empty page). The total is
 * an uncorrelated sub-select, evaluated once. Only a page past the end (no rows, `skip` > 0) costs a second query.
 * Source: spec §list pages `{items, total, skip, limit}`.
 */
export async function pageWithTotal<R extends object>(db: SqlExecutor, q: PageQuery): Promise<{ rows: R[]; total: number }> {
  const n = q.params.length;
  const totalSql = q.totalSql ?? `SELECT count(*) FROM ${q.from} WHERE ${q.where}`;
  const { rows } = await db.query<R & { __total: string | number | null }>(
    `SELECT (${totalSql}) AS __total, ${q.select} FROM ${q.from} WHERE ${q.where} ORDER BY ${q.orderBy} LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...q.params, q.limit, q.skip],
  );
  if (rows.length > 0) return { rows, total: Number(rows[0].__total ?? 0) };
  if (q.skip === 0 && q.totalSql === undefined) return { rows: [], total: 0 };
  const t = await db.query<{ n: string | number | null }>(`SELECT (${totalSql}) AS n`, q.params);
  return { rows: [], total: Number(t.rows[0]?.n ?? 0) };
}
