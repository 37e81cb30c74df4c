import { MAX_CURSOR_LENGTH } from '@agp/contracts';
import { BadRequestError } from '@agp/runtime';
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
  /**
   * Name of a subscription checkpoint (`agp_checkpoints`) to read in the same statement, so the page comes with the
   * projection position it reflects (see `ProjectionAnswerCache.getChecked`).
   */
  checkpoint?: string;
  /**
   * The table's unique key column (e.g. `id`). With it, a page at `skip` ≥ {@link DEFERRED_JOIN_SKIP} walks the offset
   * over keys only — an index-only scan when an index on the WHERE and ORDER BY columns ends in the key — and then
   * fetches just the page's rows (a "deferred join"). 100,000 rows, skip 50,000: 123–154 ms → 30 ms.
   */
  key?: string;
  /**
   * Keyset pagination ({@link keysetPage}): the list is ordered by a timestamptz column, then a unique text key, both
   * descending (`orderBy` must say the same), and each page comes with the cursor of the page after it. `after` (a
   * decoded cursor) answers the rows after that one: `(sort, key) < (after)`, a range scan of an index on the WHERE
   * columns then `sort DESC, key DESC`, whatever the depth. `skip` must then be 0. `from` must be one table's name
   * (`select`, `where` and `orderBy` name its columns unqualified): the page is read as a sub-select of its rows.
   */
  keyset?: { sort: string; key: string; after?: CursorKey };
}

/** Where a keyset page starts: the sort value (ISO 8601, UTC, microseconds) and key of the last row before it. */
export interface CursorKey {
  sort: string;
  key: string;
}

/** From this `skip` on, a page with a {@link PageQuery.key} is read with a deferred join. */
export const DEFERRED_JOIN_SKIP = 1000;

/**
 * One page of a read model and the total of its filter, read in ONE statement — one snapshot — so `total` always agrees
 * with the page (two parallel queries could straddle a projection commit: `total: 1` with an empty page). The total is
 * an uncorrelated sub-select, evaluated once. The statement is prepared (one text per filter shape). Only an empty page costs a second query (the total of no rows, when it is not plainly 0).
 * Source: spec §list pages `{items, total, skip, limit}`.
 */
export async function pageWithTotal<R extends object>(db: SqlExecutor, q: PageQuery): Promise<{ rows: R[]; total: number; position?: bigint; nextCursor?: string | null }> {
  const totalSql = q.totalSql ?? `SELECT count(*) FROM ${q.from} WHERE ${q.where}`;
  const params: unknown[] = q.checkpoint === undefined ? [...q.params] : [...q.params, q.checkpoint];
  const positionSql = q.checkpoint === undefined ? '' : `, (SELECT position::text FROM agp_checkpoints WHERE name = $${params.length}) AS __position`;
  const ks = q.keyset;
  let where = q.where;
  if (ks?.after) {
    params.push(ks.after.sort, ks.after.key);
    where = `(${where}) AND (${ks.sort}, ${ks.key}) < ($${params.length - 1}::timestamptz, $${params.length})`;
  }
  const m = params.length;
  // A keyset page reads one row more than it answers: whether it exists decides `next_cursor`.
  const limit = ks ? q.limit + 1 : q.limit;
  const keysetSql = ks ? `, to_char(${ks.sort} AT TIME ZONE 'UTC', ${CURSOR_TIME_FORMAT}) AS __sort, ${ks.key} AS __after` : '';
  const deferred = q.key !== undefined && q.skip >= DEFERRED_JOIN_SKIP;
  const page = `WHERE ${where} ORDER BY ${q.orderBy} LIMIT $${m + 1} OFFSET $${m + 2}`;
  // A keyset page's rows are chosen by a sub-select of whole rows (a scan that projects nothing), and `select` and the
  // cursor's `to_char` are evaluated on them alone: with `LIMIT … OFFSET`, PostgreSQL evaluates the expressions of the
  // scan's target list for every row it skips too (a `to_char` of each of the 500 rows before a page at skip 500).
  const from = deferred
    ? `${q.from} JOIN (SELECT ${q.key} AS __key FROM ${q.from} ${page}) AS __page ON ${q.from}.${q.key} = __page.__key ORDER BY ${q.orderBy}`
    : ks
      ? `(SELECT * FROM ${q.from} ${page}) AS ${q.from} ORDER BY ${q.orderBy}`
      : `${q.from} ${page}`;
  const { rows } = await db.query<R & { __total: string | number | null; __position?: string | null; __sort?: string; __after?: string }>(
    `SELECT (${totalSql}) AS __total${positionSql}${keysetSql}, ${q.select} FROM ${from}`,
    [...params, limit, q.skip],
    { prepare: true },
  );
  let nextCursor: { nextCursor?: string | null } = {};
  if (ks) {
    const more = rows.length > q.limit;
    if (more) rows.length = q.limit;
    const last = rows.at(-1);
    nextCursor = { nextCursor: more && last ? encodeCursor({ sort: last.__sort!, key: last.__after! }) : null };
  }
  if (rows.length > 0) return { rows, total: Number(rows[0].__total ?? 0), ...positionOf(rows[0].__position), ...nextCursor };
  // An empty page carries no position: it is answered, never cached (a second statement could see a later snapshot
  // than the first, so its total and position would not describe the empty page).
  if (q.skip === 0 && q.totalSql === undefined && !ks?.after) return { rows: [], total: 0, ...nextCursor };
  const t = await db.query<{ n: string | number | null }>(`SELECT (${totalSql}) AS n`, q.params);
  return { rows: [], total: Number(t.rows[0]?.n ?? 0), ...nextCursor };
}

/** `to_char` format of a cursor's sort value: ISO 8601 in UTC with microseconds, exactly as PostgreSQL stores it. */
const CURSOR_TIME_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
/** A sort value as {@link CURSOR_TIME_FORMAT} writes it (years 1000–9999, the instants AGP stores). */
const CURSOR_TIME = /^[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The opaque cursor of a {@link CursorKey}: base64url of the JSON array `[sort, key]`. */
export function encodeCursor(k: CursorKey): string {
  return Buffer.from(JSON.stringify([k.sort, k.key])).toString('base64url');
}

/**
 * The {@link CursorKey} of a cursor this platform issued ({@link encodeCursor}).
 * @throws BadRequestError (400) naming `query.cursor` for anything else: not base64url, not the JSON array of a
 * valid instant and a key, longer than {@link MAX_CURSOR_LENGTH}.
 */
export function decodeCursor(cursor: string): CursorKey {
  const bad = () => new BadRequestError('query.cursor: not a cursor this list issued; pass the next_cursor of a page unchanged');
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'string' || typeof v[1] !== 'string' || v[1].length === 0) throw bad();
  const [sort, key] = v as [string, string];
  // The instant must be a real one (no 31 February): its milliseconds read back as written.
  if (!CURSOR_TIME.test(sort) || Number.isNaN(Date.parse(sort)) || new Date(sort).toISOString().slice(0, 23) !== sort.slice(0, 23)) throw bad();
  if (/\u0000/.test(key)) throw bad();
  return { sort, key };
}

/**
 * The keyset of a list query with `skip` (optional) and `cursor`: `{skip, after}` for {@link PageQuery}.
 * @throws BadRequestError (400) when both are given, or the cursor is not one this platform issued ({@link decodeCursor}).
 */
export function pageStart(q: { skip?: number; cursor?: string }): { skip: number; after?: CursorKey } {
  if (q.cursor === undefined) return { skip: q.skip ?? 0 };
  if (q.skip !== undefined) throw new BadRequestError('query.cursor and query.skip: give one of them (cursor walks on from a page, skip jumps to an offset)');
  return { skip: 0, after: decodeCursor(q.cursor) };
}

const positionOf = (p: string | null | undefined): { position?: bigint } => (p === undefined || p === null ? {} : { position: BigInt(p) });
