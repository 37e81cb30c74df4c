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
import { dbStatementSpan, isTransientInfraError } from '@agp/runtime';
import type { QueryOptions, Sql, SqlExecutor } from './types.js';

/** The part of a (pino) logger {@link createPgSql} uses. */
export interface PgSqlLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Options of {@link createPgSql}. */
export interface PgSqlOptions {
  /** Pool size. @default 10 */
  max?: number;
  /** `application_name` shown in pg_stat_activity. */
  applicationName?: string;
  /** Logs a lost connection once per outage (warn) and its return (info). */
  logger?: PgSqlLogger;
  /** Longest wait for a new connection, in ms; then the query fails (a transient error, 503). @default 5000 */
  connectionTimeoutMs?: number;
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
 * queries reject with the driver's error when PostgreSQL is unreachable (`isTransientInfraError` tells those apart:
 * 503 at the edge).
 *
 * Survives a PostgreSQL restart and `pg_terminate_backend` (SQLSTATE 57P01): every client, idle in the pool or
 * checked out by {@link Sql.transaction}, has an `'error'` listener, so a dropped connection fails the statement
 * that used it instead of crashing the process with an unhandled `'error'` event; a client that failed is destroyed
 * rather than returned to the pool, and the next query opens a fresh connection. A lost connection is logged once,
 * and the first query that succeeds afterwards logs that the database is back.
 * @param url a `postgres://` connection string (DATABASE_URL)
 */
export function createPgSql(url: string, opts: PgSqlOptions = {}): Sql {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5_000,
  });
  const { logger } = opts;
  let lostAt = 0;
  const lost = (err: unknown) => {
    if (lostAt) return;
    lostAt = Date.now();
    logger?.warn({ err, application_name: opts.applicationName }, 'PostgreSQL connection lost; queries fail until it is back');
  };
  const answered = () => {
    if (!lostAt) return;
    logger?.info({ outage_ms: Date.now() - lostAt, application_name: opts.applicationName }, 'PostgreSQL answers again');
    lostAt = 0;
  };
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', lost);
  const run = async <R>(c: pg.Pool | pg.PoolClient, text: string, params?: unknown[], qopts?: QueryOptions) => {
    let res: pg.QueryResult;
    try {
      res = qopts?.prepare ? await c.query({ name: statementName(text), text, values: params }) : await c.query(text, params as unknown[]);
    } catch (err) {
      if (isTransientInfraError(err)) lost(err);
      throw err;
    }
    answered();
    return { rows: res.rows as R[] };
  };
  return {
    kind: 'postgres',
    async query<R>(text: string, params?: unknown[], qopts?: QueryOptions) {
      return run<R>(pool, text, params, qopts);
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect().catch((err: unknown) => {
        if (isTransientInfraError(err)) lost(err);
        throw err;
      });
      // A checked-out client has no listener of the pool's: without this one, a backend terminated while the
      // transaction runs (57P01, a restart) emits an unhandled 'error' and kills the process.
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken ??= err;
        lost(err);
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const tx: SqlExecutor = {
          query: <R>(text: string, params?: unknown[], qopts?: QueryOptions) => run<R>(client, text, params, qopts),
        };
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: Error) => void (broken ??= rollbackErr));
        throw err;
      } finally {
        client.off('error', onError);
        // A client whose connection failed is destroyed (release with an error), never handed out again.
        client.release(broken ?? false);
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

/** The database PGlite serves (its `current_database()`): `db.namespace` of its statements' spans. */
const PGLITE_DATABASE = 'postgres';

/**
 * A {@link Sql} over PGlite. PGlite runs one statement at a time, so transactions serialise. Each statement runs in
 * a database client span of the pg instrumentation's shape (`dbStatementSpan` of `@agp/runtime`: `db.system.name`
 * `postgresql`, its text, no parameter values) when the active span is recording, so an embedded trace shows its
 * database work as a distributed one does (PGlite's own `BEGIN` and `COMMIT` of a transaction have no span).
 * @param dataDir folder holding the database files (created on first use); omitted keeps it in memory.
 */
export async function createPgliteSql(dataDir?: string): Promise<Sql> {
  const { PGlite } = await import('@electric-sql/pglite');
  if (dataDir) initPgliteDataDir(dataDir);
  const db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), postgresqlconf: PGLITE_CONF });
  const traced = <T>(text: string, fn: () => Promise<T>) => dbStatementSpan(PGLITE_DATABASE, text, fn);
  return {
    kind: 'pglite',
    async query<R>(text: string, params?: unknown[]) {
      const res = await traced(text, () => db.query<R>(text, params));
      return { rows: res.rows };
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      return db.transaction(async (t) =>
        fn({
          async query<R>(text: string, params?: unknown[]) {
            const res = await traced(text, () => t.query<R>(text, params));
            return { rows: res.rows };
          },
        }),
      );
    },
    async exec(text: string) {
      await traced(text, () => db.exec(text));
    },
    async close() {
      if (!db.closed) await db.close();
    },
  };
}
