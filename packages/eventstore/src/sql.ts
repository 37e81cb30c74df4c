/**
 * The two SQL adapters behind the {@link Sql} port: PostgreSQL through a `pg` pool (distributed mode)
 * and PGlite, PostgreSQL compiled to WASM, in this process (embedded mode). Both speak the same SQL.
 * Source: architecture §2 (Two ways to run), §3 (Event store).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { QueryOptions, Sql, SqlExecutor } from './types.js';

/** Options of {@link createPgSql}. */
export interface PgSqlOptions {
  /** Pool size. @default 10 */
  max?: number;
  /** `application_name` shown in pg_stat_activity. */
  applicationName?: string;
}

/** Prepared-statement name of a query text: one name per text, so a name never meets two texts. */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `agp_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
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
    async query<R>(text: string, params?: unknown[], opts?: QueryOptions) {
      const res = opts?.prepare ? await pool.query({ name: statementName(text), text, values: params }) : await pool.query(text, params as unknown[]);
      return { rows: res.rows as R[] };
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: SqlExecutor = {
          async query<R>(text: string, params?: unknown[], opts?: QueryOptions) {
            const res = opts?.prepare ? await client.query({ name: statementName(text), text, values: params }) : await client.query(text, params as unknown[]);
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
 * PostgreSQL settings of the embedded database. PGlite's default `shared_buffers` is 128 MB; the embedded
 * platform serves one organisation's fleet from one process, so 8 MB keeps its idle RSS low (measured: 128 MB -> 8 MB saves ~120 MB RSS).
 */
export const PGLITE_CONF = ["shared_buffers = '8MB'", "wal_buffers = '1MB'", "work_mem = '4MB'", "maintenance_work_mem = '16MB'"];

/**
 * Create the database files of `dataDir` (initdb) in a short-lived child process. initdb touches several
 * hundred MB that a WASM heap never gives back; doing it elsewhere keeps the long-running process small.
 * No-op when the folder already holds a database.
 * @throws Error when the child fails.
 */
export function initPgliteDataDir(dataDir: string): void {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  const entry = pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href;
  const script = `const { PGlite } = await import(${JSON.stringify(entry)});
const db = await PGlite.create({ dataDir: ${JSON.stringify(dataDir)}, postgresqlconf: ${JSON.stringify(PGLITE_CONF)} });
await db.query('SELECT 1');
await db.close();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`initialising the embedded database in ${dataDir} failed: ${r.stderr || r.error?.message}`);
}

/**
 * A {@link Sql} over PGlite. PGlite runs one statement at a time, so transactions serialise.
 * @param dataDir folder holding the database files (created on first use); omitted keeps it in memory.
 */
export async function createPgliteSql(dataDir?: string): Promise<Sql> {
  const { PGlite } = await import('@electric-sql/pglite');
  if (dataDir) initPgliteDataDir(dataDir);
  const db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), postgresqlconf: PGLITE_CONF });
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
