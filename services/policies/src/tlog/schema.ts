import { migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';

/**
 * Tables of the verifiable audit trail (the policies service alone writes them; the gateway reads `agp_tlog_keys`):
 * - `agp_tlog_leaves`: one row per leaf: organisation, index (0-based, in stored order), the record's id (the event
 *   id), the leaf (the canonical record, RFC 8785 JSON text) and its leaf hash (hex).
 * - `agp_tlog_nodes`: the stored subtree hashes (hex) of each organisation's tree: node (level, index) is the root of
 *   leaves [index·2^level, (index+1)·2^level), stored once complete (`@agp/tlog` stored.ts); level 0 are the leaf hashes.
 * - `agp_tlog_record_salts`: one row per version 2 leaf: its record id, the salts of its committed fields (a JSON
 *   object from JSON Pointer, RFC 6901 into the leaf record, to the salt: 32 random bytes, base64) and the record's
 *   time (for retention). Erasure and retention delete a record's row (a record's fields are erased together); a
 *   leaf whose commitment has no salt left is a redacted field. It replaced `agp_tlog_salts` (one row per field),
 *   whose rows {@link migrateTlog} moves into it.
 * - `agp_tlog_pending_erasures`: the deleted interventions whose records are still to be erased, one row per
 *   `InterventionDeleted` record, inserted by the audit-trail projection in the transaction that appends its leaf and
 *   deleted by the erasure worker once erased (`lease_until`: the claim of a worker); with the erasure's id chosen
 *   then and the deleting request's actor.
 * - `agp_tlog_retention`: each organisation's audit retention in days (no row: keep everything).
 * - `agp_tlog_trees`: each organisation's tree size, updated in the transaction that appends.
 * - `agp_tlog_checkpoints`: signed tree heads, one per (organisation, tree size), with the signed note.
 * - `agp_tlog_keys`: the signing keys: the public part, and the private key sealed with the platform's secrets key
 *   (null for a key from AGP_AUDIT_SIGNING_KEY, which is never stored).
 * Source: docs/audit.md.
 */
export const TLOG_DDL = `
CREATE TABLE IF NOT EXISTS agp_tlog_leaves (
  organization_id text NOT NULL,
  leaf_index bigint NOT NULL,
  record_id text NOT NULL,
  leaf_hash text NOT NULL,
  leaf text NOT NULL,
  PRIMARY KEY (organization_id, leaf_index)
);
CREATE UNIQUE INDEX IF NOT EXISTS agp_tlog_leaves_record ON agp_tlog_leaves (record_id);
CREATE TABLE IF NOT EXISTS agp_tlog_nodes (
  organization_id text NOT NULL,
  level integer NOT NULL,
  node_index bigint NOT NULL,
  hash text NOT NULL,
  PRIMARY KEY (organization_id, level, node_index)
);
CREATE TABLE IF NOT EXISTS agp_tlog_record_salts (
  organization_id text NOT NULL,
  record_id text PRIMARY KEY,
  salts jsonb NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS agp_tlog_record_salts_org_at ON agp_tlog_record_salts (organization_id, at);
CREATE TABLE IF NOT EXISTS agp_tlog_pending_erasures (
  record_id text PRIMARY KEY,
  organization_id text NOT NULL,
  intervention_id text NOT NULL,
  erasure_id text NOT NULL,
  actor text NOT NULL,
  actor_name text,
  correlation_id text,
  queued_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz
);
CREATE TABLE IF NOT EXISTS agp_tlog_retention (
  organization_id text PRIMARY KEY,
  days integer NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS agp_tlog_trees (
  organization_id text PRIMARY KEY,
  size bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS agp_tlog_checkpoints (
  organization_id text NOT NULL,
  tree_size bigint NOT NULL,
  root_hash text NOT NULL,
  at timestamptz NOT NULL,
  key_id text NOT NULL,
  key_name text NOT NULL,
  origin text NOT NULL,
  note text NOT NULL,
  PRIMARY KEY (organization_id, tree_size)
);
CREATE TABLE IF NOT EXISTS agp_tlog_keys (
  key_id text PRIMARY KEY,
  name text NOT NULL,
  verifier_key text NOT NULL,
  public_key text NOT NULL,
  sealed_private_key text,
  source text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz
);
`;

/**
 * Move the salts of a database made before `agp_tlog_record_salts` (table `agp_tlog_salts`: one row per committed
 * field) into it, one row per record (the fields' salts as one JSON object, the record's time kept), and drop the old
 * table. Runs in the migration's transaction; a no-op once the old table is gone.
 */
export async function moveFieldSalts(tx: SqlExecutor): Promise<void> {
  const { rows } = await tx.query<{ t: string | null }>(`SELECT to_regclass('agp_tlog_salts')::text AS t`);
  if (!rows[0]?.t) return;
  await tx.query(
    `INSERT INTO agp_tlog_record_salts (organization_id, record_id, salts, at)
     SELECT organization_id, record_id, jsonb_object_agg(pointer, salt), min(at) FROM agp_tlog_salts GROUP BY organization_id, record_id
     ON CONFLICT (record_id) DO NOTHING`,
  );
  await tx.query('DROP TABLE agp_tlog_salts');
}

/** Create the audit trail's tables ({@link TLOG_DDL}) and migrate an older database's ({@link moveFieldSalts}). */
export async function migrateTlog(sql: Sql): Promise<void> {
  await migrateSchema(sql, TLOG_DDL, moveFieldSalts);
}
