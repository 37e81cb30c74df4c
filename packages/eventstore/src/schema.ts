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
