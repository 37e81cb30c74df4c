/**
 * Subscription checkpoints: one row per catch-up subscription in the read-model database (`agp_checkpoints`), holding
 * the global position it has applied, and the events a projection could never apply (`agp_projection_dead_letters`).
 * Whatever the event store's adapter (PostgreSQL, PGlite, KurrentDB), the checkpoint lives with the read model, so a
 * batch's read-model writes and its checkpoint commit in one transaction (exactly-once projections). This module is
 * the only code that names these tables; services read a checkpoint through {@link checkpointPosition}.
 * Source: architecture §3 (Projections: checkpoint in the same transaction as the writes).
 */
import type { SqlExecutor, StoredEvent } from './types.js';

/** DDL of the checkpoint and dead-letter tables. Idempotent. */
export const CHECKPOINTS_DDL = `
CREATE TABLE IF NOT EXISTS agp_checkpoints (
  name text PRIMARY KEY,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS agp_projection_dead_letters (
  subscription text NOT NULL,
  global_position bigint NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  stream_id text NOT NULL,
  error text NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription, global_position)
);
`;

/**
 * The committed position of subscription `name` (its `agp_checkpoints` row), or undefined before it has one.
 * One primary-key read, prepared.
 */
export async function checkpointPosition(db: SqlExecutor, name: string): Promise<bigint | undefined> {
  const { rows } = await db.query<{ position: string }>('SELECT position::text AS position FROM agp_checkpoints WHERE name = $1', [name], { prepare: true });
  return rows[0] ? BigInt(rows[0].position) : undefined;
}

/** Set subscription `name`'s checkpoint to `position` (a replay from there), creating it when missing. */
export async function setCheckpoint(db: SqlExecutor, name: string, position: bigint): Promise<void> {
  await db.query(
    `INSERT INTO agp_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()`,
    [name, String(position)],
  );
}

/** Give subscription `name` the checkpoint `position` unless it already has one. */
export async function initCheckpoint(db: SqlExecutor, name: string, position: bigint): Promise<void> {
  await db.query(`INSERT INTO agp_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, String(position)]);
}

/**
 * Inside a transaction: create the checkpoint row when missing (at 0), lock it until the transaction ends, and return
 * its position. Processes running the same subscription serialise here.
 */
export async function lockCheckpoint(tx: SqlExecutor, name: string): Promise<bigint> {
  await tx.query(`INSERT INTO agp_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING`, [name]);
  const { rows } = await tx.query<{ position: string }>('SELECT position::text AS position FROM agp_checkpoints WHERE name = $1 FOR UPDATE', [name]);
  return BigInt(rows[0].position);
}

/**
 * Inside a transaction: lock the checkpoints `names` (in name order, so two transactions locking several never
 * deadlock), creating missing ones at 0, and return their positions. One statement when they all exist.
 */
export async function lockCheckpoints(tx: SqlExecutor, names: readonly string[]): Promise<Map<string, bigint>> {
  const sorted = [...new Set(names)].sort();
  const read = async () => {
    const { rows } = await tx.query<{ name: string; position: string }>(
      'SELECT name, position::text AS position FROM agp_checkpoints WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE',
      [sorted],
      { prepare: true },
    );
    return new Map(rows.map((r) => [r.name, BigInt(r.position)]));
  };
  let found = await read();
  if (found.size < sorted.length) {
    await tx.query(`INSERT INTO agp_checkpoints (name, position) SELECT unnest($1::text[]), 0 ON CONFLICT (name) DO NOTHING`, [sorted.filter((n) => !found.has(n))]);
    found = await read();
  }
  return found;
}

/** Inside the transaction that locked them: move the checkpoints `names` to `position`. */
export async function saveCheckpoints(tx: SqlExecutor, names: readonly string[], position: bigint): Promise<void> {
  await tx.query('UPDATE agp_checkpoints SET position = $2, updated_at = now() WHERE name = ANY($1::text[])', [[...names], String(position)], { prepare: true });
}

/** Inside the transaction that locked it: move the checkpoint to `position`. */
export async function saveCheckpoint(tx: SqlExecutor, name: string, position: bigint): Promise<void> {
  await tx.query('UPDATE agp_checkpoints SET position = $2, updated_at = now() WHERE name = $1', [name, String(position)]);
}

/** Inside the transaction that locked the checkpoint: keep `event` with the error that stops subscription `name` applying it. */
export async function deadLetter(tx: SqlExecutor, name: string, event: StoredEvent, err: unknown): Promise<void> {
  await tx.query(
    `INSERT INTO agp_projection_dead_letters (subscription, global_position, event_id, event_type, stream_id, error)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [name, String(event.global_position), event.event_id, event.type, event.stream_id, String((err as Error)?.message ?? err)],
  );
}
