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
ALTER TABLE agp_projection_dead_letters ADD COLUMN IF NOT EXISTS organization_id text;
ALTER TABLE agp_projection_dead_letters ADD COLUMN IF NOT EXISTS event text;
ALTER TABLE agp_projection_dead_letters ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 1;
ALTER TABLE agp_projection_dead_letters ADD COLUMN IF NOT EXISTS last_seen timestamptz NOT NULL DEFAULT now();
CREATE INDEX IF NOT EXISTS agp_projection_dead_letters_org ON agp_projection_dead_letters (organization_id, last_seen DESC);
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
  return (await lockExistingCheckpoint(tx, name))!;
}

/**
 * Inside a transaction: lock the checkpoint of subscription `name` until the transaction ends, without creating it,
 * and return its position (undefined when it has none). Processes running the subscription wait for the lock.
 */
export async function lockExistingCheckpoint(tx: SqlExecutor, name: string): Promise<bigint | undefined> {
  const { rows } = await tx.query<{ position: string }>('SELECT position::text AS position FROM agp_checkpoints WHERE name = $1 FOR UPDATE', [name]);
  return rows[0] ? BigInt(rows[0].position) : undefined;
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
  await keepProjectionDeadLetters(tx, name, [{ event, reason: String((err as Error)?.message ?? err) }]);
}

/**
 * Keep events subscription `name` cannot apply (or refuses), each with its reason, its organisation and the event
 * itself (JSON text). An event kept before (a replay meets it again) keeps its first row: `last_seen` moves to now,
 * `attempts` counts up and `error` becomes the new reason. One statement for the whole list.
 * @param tx the projection's transaction (the rows commit with the checkpoint that moves past the events).
 */
export async function keepProjectionDeadLetters(tx: SqlExecutor, name: string, letters: ReadonlyArray<{ event: StoredEvent; reason: string }>): Promise<void> {
  if (letters.length === 0) return;
  await tx.query(
    `INSERT INTO agp_projection_dead_letters AS d (subscription, global_position, event_id, event_type, stream_id, error, organization_id, event)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
     ON CONFLICT (subscription, global_position) DO UPDATE SET last_seen = now(), attempts = d.attempts + 1, error = EXCLUDED.error`,
    [
      name,
      letters.map((l) => String(l.event.global_position)),
      letters.map((l) => l.event.event_id),
      letters.map((l) => l.event.type),
      letters.map((l) => l.event.stream_id),
      letters.map((l) => l.reason),
      letters.map((l) => l.event.metadata?.organization_id ?? null),
      letters.map((l) => storedEventJson(l.event)),
    ],
  );
}

/** A stored event as JSON text (its position as a decimal string). */
function storedEventJson(e: StoredEvent): string {
  return JSON.stringify({ event_id: e.event_id, type: e.type, stream_id: e.stream_id, stream_version: e.stream_version, global_position: String(e.global_position), recorded_at: e.recorded_at, data: e.data, metadata: e.metadata });
}

/** A projection dead letter as {@link projectionDeadLetterPage} reads it. */
export interface ProjectionDeadLetterRow {
  subscription: string;
  /** Global position of the event, as a decimal string. */
  global_position: string;
  event_id: string;
  event_type: string;
  stream_id: string;
  error: string;
  first_seen: Date | string;
  last_seen: Date | string;
  attempts: number;
  /** The stored event as JSON text; null on a row kept before events were kept with it. */
  event: string | null;
}

/**
 * One page of the projection dead letters of `organizationId` (optionally of one subscription), the most recently
 * failed first, with the total. Rows without an organisation (kept before it was recorded) are nobody's.
 * Source: docs/api.md (Dead letters).
 * @throws the driver's error when the database is unavailable.
 */
export async function projectionDeadLetterPage(
  db: SqlExecutor,
  organizationId: string,
  q: { skip: number; limit: number; subscription?: string },
): Promise<{ rows: ProjectionDeadLetterRow[]; total: number }> {
  const where = 'WHERE organization_id = $1 AND ($2::text IS NULL OR subscription = $2)';
  const params = [organizationId, q.subscription ?? null];
  const [page, count] = await Promise.all([
    db.query<ProjectionDeadLetterRow>(
      `SELECT subscription, global_position::text AS global_position, event_id, event_type, stream_id, error, dead_at AS first_seen, last_seen, attempts, event
       FROM agp_projection_dead_letters ${where} ORDER BY last_seen DESC, subscription, global_position DESC OFFSET $3 LIMIT $4`,
      [...params, q.skip, q.limit],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agp_projection_dead_letters ${where}`, params),
  ]);
  return { rows: page.rows, total: Number(count.rows[0]?.n ?? 0) };
}

/** One projection dead letter as {@link projectionDeadLetter} reads it. */
export interface ProjectionDeadLetterState {
  event_id: string;
  event_type: string;
  error: string;
  attempts: number;
}

/**
 * The projection dead letter of subscription `subscription` at global position `position` if it belongs to
 * `organizationId` (a row without an organisation is nobody's, as in {@link projectionDeadLetterPage}).
 * @param lock inside a transaction: lock the row until it ends (a concurrent retry of it waits).
 * @throws the driver's error when the database is unavailable.
 */
export async function projectionDeadLetter(db: SqlExecutor, organizationId: string, subscription: string, position: bigint, lock = false): Promise<ProjectionDeadLetterState | undefined> {
  const { rows } = await db.query<ProjectionDeadLetterState>(
    `SELECT event_id, event_type, error, attempts FROM agp_projection_dead_letters
     WHERE subscription = $1 AND global_position = $2 AND organization_id = $3${lock ? ' FOR UPDATE' : ''}`,
    [subscription, String(position), organizationId],
  );
  return rows[0];
}

/** Remove the projection dead letter of subscription `subscription` at global position `position` (once applied). */
export async function removeProjectionDeadLetter(tx: SqlExecutor, subscription: string, position: bigint): Promise<void> {
  await tx.query('DELETE FROM agp_projection_dead_letters WHERE subscription = $1 AND global_position = $2', [subscription, String(position)]);
}
