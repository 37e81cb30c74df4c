/**
 * The two SQL adapters behind the {@link Sql} port: PostgreSQL through a `pg` pool (distributed mode)
 * and PGlite, PostgreSQL compiled to WASM, in this process (embedded mode). Both speak the same SQL.
 * Source: ARCHITECTURE.md §2 (Two ways to run), §3 (Event store).
 */
import pg from 'pg';
import type { Sql, SqlExecutor } from './types.js';

/** Options of {@link createPgSql}. */
export interface PgSqlOptions {
  /** Pool size. @default 10 */
  max?: number;
  /** `application_name` shown in pg_stat_activity. */
  applicationName?: string;
}

/**
 * A {@link Sql} over a `pg` connection pool. Connections are opened lazily, so this never throws;
 * queries reject with the driver's error when PostgreSQL is unreachable.
 * @param url a `postgres://` connection string (DATABASE_URL)
 */
export function createPgSql(url: string, opts: PgSqlOptions = {}): Sql {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, application_name: opts.applicationName });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return {
    kind: 'postgres',
    async query<R>(text: string, params?: unknown[]) {
      const res = await pool.query(text, params as unknown[]);
      return { rows: res.rows as R[] };
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: SqlExecutor = {
          async query<R>(text: string, params?: unknown[]) {
            const res = await client.query(text, params as unknown[]);
            return { rows: res.rows as R[] };
          },
        };
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async exec(text: string) {
      await pool.query(text);
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * A {@link Sql} over PGlite. PGlite runs one statement at a time, so transactions serialise.
 * @param dataDir folder holding the database files; omitted keeps it in memory.
 */
export async function createPgliteSql(dataDir?: string): Promise<Sql> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dataDir ? { dataDir } : {});
  return {
    kind: 'pglite',
    async query<R>(text: string, params?: unknown[]) {
      const res = await db.query<R>(text, params);
      return { rows: res.rows };
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      return db.transaction(async (t) =>
        fn({
          async query<R>(text: string, params?: unknown[]) {
            const res = await t.query<R>(text, params);
            return { rows: res.rows };
          },
        }),
      );
    },
    async exec(text: string) {
      await db.exec(text);
    },
    async close() {
      if (!db.closed) await db.close();
    },
  };
}
