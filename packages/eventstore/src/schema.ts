import type { Sql } from './types.js';

/** Advisory lock key every schema migration takes (the event store's append lock + 1). */
const SCHEMA_LOCK = 0x41475046;

/**
 * Run idempotent DDL (`CREATE … IF NOT EXISTS` statements separated by `;`, none containing a `;` of its own) in one
 * transaction that holds a transaction-scoped advisory lock. PostgreSQL's `IF NOT EXISTS` is not safe when processes
 * run it at once — replicas starting together race on the catalog and the loser fails with 23505 on `pg_type` — so
 * every service's tables are created through here. Source: architecture §2 (services scale horizontally).
 * @throws the driver's error when the database is unreachable or a statement is invalid (nothing is created then).
 */
export async function migrateSchema(sql: Sql, ddl: string): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    for (const stmt of ddl.split(';').map((s) => s.trim()).filter(Boolean)) await tx.query(stmt);
  });
}
