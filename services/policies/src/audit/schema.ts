import { migrateSchema, type Sql } from '@agp/eventstore';

/**
 * Tables of the audit log (the policies service alone writes and reads them; every row carries its organisation):
 * - `agp_audit_log`: one row per recorded change; `entry` is the entry as the API answers it (before and after already
 *   without secrets), the other columns exist for filtering and ordering (newest first: `at`, then `id`).
 * - `agp_audit_objects`: each object's state as last recorded (secret-free), the `before` of its next change; a
 *   deleted object has no row.
 * Source: docs/auth.md (Audit log).
 */
export const AUDIT_LOG_DDL = `
CREATE TABLE IF NOT EXISTS agp_audit_log (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  position bigint NOT NULL,
  at timestamptz NOT NULL,
  actor_type text NOT NULL,
  actor_id text,
  object_type text NOT NULL,
  object_id text NOT NULL,
  type text NOT NULL,
  entry jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS agp_audit_log_org_at ON agp_audit_log (organization_id, at DESC, id DESC);
CREATE INDEX IF NOT EXISTS agp_audit_log_org_object ON agp_audit_log (organization_id, object_type, object_id, at DESC, id DESC);
CREATE TABLE IF NOT EXISTS agp_audit_objects (
  organization_id text NOT NULL,
  object_type text NOT NULL,
  object_id text NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (organization_id, object_type, object_id)
);
`;

/** Create the audit log's tables (idempotent, safe when several processes start at once). */
export async function migrateAuditLog(sql: Sql): Promise<void> {
  await migrateSchema(sql, AUDIT_LOG_DDL);
}
