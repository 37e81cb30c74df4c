/**
 * Ingest dead letters (`agp_ingest_dead_letters`): ingest log messages a consumer could never store, kept with the
 * error, the organisation they belong to, when they first and last failed and how often. The table is created by the
 * first dead letter (most platforms never have one), so a read of a missing table is an empty page. This module is the
 * only code that names the table. Source: docs/decisions.md (Text PostgreSQL cannot store, and poison messages; Dead
 * letters over HTTP).
 */
import { migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';

/** Where ingest messages that can never be stored are kept for an operator, with the error. Idempotent. */
export const DEAD_LETTERS_DDL = `
CREATE TABLE IF NOT EXISTS agp_ingest_dead_letters (
  id bigserial PRIMARY KEY,
  consumer text NOT NULL,
  subject text NOT NULL,
  msg_id text NOT NULL,
  payload text NOT NULL,
  error text NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE agp_ingest_dead_letters ADD COLUMN IF NOT EXISTS organization_id text;
ALTER TABLE agp_ingest_dead_letters ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 1;
ALTER TABLE agp_ingest_dead_letters ADD COLUMN IF NOT EXISTS last_seen timestamptz NOT NULL DEFAULT now();
CREATE INDEX IF NOT EXISTS agp_ingest_dead_letters_org ON agp_ingest_dead_letters (organization_id, last_seen DESC)
`;

/** SQLSTATE of a missing table: no ingest message has been dead-lettered in this database yet. */
const UNDEFINED_TABLE = '42P01';

/** One ingest dead letter as read here. */
export interface IngestDeadLetterRow {
  id: string;
  consumer: string;
  subject: string;
  msg_id: string;
  /** The log message's payload as JSON text (it may hold text PostgreSQL's jsonb cannot, hence text). */
  payload: string;
  error: string;
  first_seen: Date | string;
  last_seen: Date | string;
  attempts: number;
}

/**
 * Keep a message consumer `consumer` can never store. The same message failing again for the same consumer (a retry
 * that ingest accepted but the consumer still cannot store) updates its row: `last_seen`, `attempts`, `error`.
 * @param organizationId the organisation of the message (its envelope's `organization_id`); null when it has none.
 * @throws the driver's error when the database is unavailable.
 */
export async function keepIngestDeadLetter(
  sql: Sql,
  m: { consumer: string; subject: string; msg_id: string; payload: unknown; organizationId: string | null; error: string },
): Promise<void> {
  await migrateSchema(sql, DEAD_LETTERS_DDL);
  await sql.query(
    `WITH seen AS (
       UPDATE agp_ingest_dead_letters SET last_seen = now(), attempts = attempts + 1, error = $5
       WHERE consumer = $1 AND msg_id = $3 RETURNING id)
     INSERT INTO agp_ingest_dead_letters (consumer, subject, msg_id, payload, error, organization_id)
     SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM seen)`,
    [m.consumer, m.subject, m.msg_id, JSON.stringify(m.payload), m.error, m.organizationId],
  );
}

const COLUMNS = 'id::text AS id, consumer, subject, msg_id, payload, error, dead_at AS first_seen, last_seen, attempts';

/** A read of the table that answers `empty` while the table does not exist yet. */
async function orEmpty<T>(read: Promise<T>, empty: T): Promise<T> {
  try {
    return await read;
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === UNDEFINED_TABLE) return empty;
    throw err;
  }
}

/**
 * One page of the ingest dead letters of `organizationId`, the most recently failed first, with the total; an empty
 * page while no message was ever dead-lettered. Rows without an organisation (kept before it was recorded) are nobody's.
 * @throws the driver's error when the database is unavailable.
 */
export async function ingestDeadLetterPage(db: SqlExecutor, organizationId: string, q: { skip: number; limit: number }): Promise<{ rows: IngestDeadLetterRow[]; total: number }> {
  const read = Promise.all([
    db.query<IngestDeadLetterRow>(`SELECT ${COLUMNS} FROM agp_ingest_dead_letters WHERE organization_id = $1 ORDER BY last_seen DESC, id DESC OFFSET $2 LIMIT $3`, [organizationId, q.skip, q.limit]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM agp_ingest_dead_letters WHERE organization_id = $1', [organizationId]),
  ]).then(([page, count]) => ({ rows: page.rows, total: Number(count.rows[0]?.n ?? 0) }));
  return orEmpty(read, { rows: [], total: 0 });
}

/** The ingest dead letter `id` of `organizationId`, or undefined (none, another organisation's, no table yet). @throws the driver's error when the database is unavailable. */
export async function ingestDeadLetter(db: SqlExecutor, organizationId: string, id: string): Promise<IngestDeadLetterRow | undefined> {
  if (!/^[1-9][0-9]{0,17}$/.test(id)) return undefined;
  const { rows } = await orEmpty(db.query<IngestDeadLetterRow>(`SELECT ${COLUMNS} FROM agp_ingest_dead_letters WHERE id = $1 AND organization_id = $2`, [id, organizationId]), { rows: [] });
  return rows[0];
}

/** Remove the ingest dead letter `id` (its retry was accepted). @returns whether a row was removed. */
export async function removeIngestDeadLetter(db: SqlExecutor, organizationId: string, id: string): Promise<boolean> {
  const { rows } = await db.query('DELETE FROM agp_ingest_dead_letters WHERE id = $1 AND organization_id = $2 RETURNING id', [id, organizationId]);
  return rows.length > 0;
}

/**
 * Record that the ingest dead letter `id` failed again (a retry not wholly accepted): `last_seen` now, `attempts` + 1,
 * the new `error`, and `payload`, the message with only the events still to be stored.
 */
export async function ingestDeadLetterFailedAgain(db: SqlExecutor, organizationId: string, id: string, failure: { error: string; payload: unknown }): Promise<void> {
  await db.query('UPDATE agp_ingest_dead_letters SET last_seen = now(), attempts = attempts + 1, error = $3, payload = $4 WHERE id = $1 AND organization_id = $2', [
    id,
    organizationId,
    failure.error,
    JSON.stringify(failure.payload),
  ]);
}
