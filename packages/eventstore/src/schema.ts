import type { Sql, SqlExecutor } from './types.js';

/** Advisory lock key every schema migration takes (the event store's append lock + 1). */
const SCHEMA_LOCK = 0x41475046;

/**
 * Run idempotent DDL (`CREATE … IF NOT EXISTS` statements separated by `;`, none containing a `;` of its own) in one
 * transaction that holds a transaction-scoped advisory lock. PostgreSQL's `IF NOT EXISTS` is not safe when processes
 * run it at once — replicas starting together race on the catalog and the loser fails with 23505 on `pg_type` — so
 * every service's tables are created through here. Source: architecture §2 (services scale horizontally).
 * @param then a step that is not plain idempotent DDL (e.g. changing a column's type when it still has the old one),
 *   run after `ddl` in the same locked transaction.
 * @throws the driver's error when the database is unreachable or a statement is invalid (nothing is created then).
 */
export async function migrateSchema(sql: Sql, ddl: string, then?: (tx: SqlExecutor) => Promise<void>): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    for (const stmt of ddl.split(';').map((s) => s.trim()).filter(Boolean)) await tx.query(stmt);
    if (then) await then(tx);
  });
}

/**
 * Change `table.column` to `type` when it has another type (one `ALTER TABLE … USING column::type`, which rewrites
 * the table; a no-op on later starts). For use as {@link migrateSchema}'s `then` step.
 * @param type a PostgreSQL type name as `information_schema.columns.data_type` spells it (e.g. `json`).
 */
export async function alterColumnType(tx: SqlExecutor, table: string, column: string, type: string): Promise<void> {
  const { rows } = await tx.query<{ data_type: string }>(
    'SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2',
    [table, column],
  );
  if (rows[0] && rows[0].data_type !== type) await tx.query(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE ${type} USING ${column}::${type}`);
}

/** Whether `table` (in the current schema) has `column`. For {@link migrateSchema}'s `then` steps. */
export async function hasColumn(tx: SqlExecutor, table: string, column: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2', [table, column]);
  return rows.length > 0;
}

/**
 * Add `column` (`definition`, e.g. `text NOT NULL DEFAULT 'production'`: existing rows take the default) to `table`
 * and, when `primaryKey` is given, make the table's primary key those columns (the old key, `<table>_pkey` as
 * PostgreSQL names it, is dropped first). A no-op when the column exists. For {@link migrateSchema}'s `then` step.
 * @returns whether the column was added.
 */
export async function addColumn(tx: SqlExecutor, table: string, column: string, definition: string, primaryKey?: readonly string[]): Promise<boolean> {
  if (await hasColumn(tx, table, column)) return false;
  await tx.query(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  if (primaryKey) await tx.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (${primaryKey.join(', ')})`);
  return true;
}
