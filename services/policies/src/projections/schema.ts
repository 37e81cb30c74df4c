import { LEGACY_RATE_LIMIT_SCOPE } from '@agp/contracts';
import { migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';

/**
 * Read-model tables of the policies service (it alone reads them); every row carries its organisation.
 * - `agp_policies`: the current policy records; `doc` is the record as the API returns it, the other columns
 *   exist for filtering and ordering (the agent scope is filtered on `doc->'agent_ids'`).
 * - `agp_agents`: the agent registry; `doc` is the agent without its kill switch (joined from the next table).
 * - `agp_kill_switches`: each switch ever set; `agent_id` is '' for the organisation's switch.
 * - `agp_mcp_servers`: the registered upstream MCP servers; `doc` is the record as the API answers it (header names,
 *   never values), `sealed_headers` the headers as sealed in the event (null when none); a deleted server has no row.
 */
export const POLICIES_READ_MODEL_DDL = `
CREATE TABLE IF NOT EXISTS agp_policies (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  name text NOT NULL,
  enabled boolean NOT NULL,
  created_at timestamptz NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS agp_policies_org_created ON agp_policies (organization_id, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS agp_agents (
  organization_id text NOT NULL,
  agent_id text NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (organization_id, agent_id)
);
CREATE TABLE IF NOT EXISTS agp_kill_switches (
  organization_id text NOT NULL,
  scope text NOT NULL,
  agent_id text NOT NULL,
  engaged boolean NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (organization_id, scope, agent_id)
);
CREATE TABLE IF NOT EXISTS agp_mcp_servers (
  organization_id text NOT NULL,
  name text NOT NULL,
  doc jsonb NOT NULL,
  sealed_headers text,
  PRIMARY KEY (organization_id, name)
);
`;

/**
 * Bring policy records projected before period budgets and rate-limit scopes existed up to what today's projection
 * writes (`withPolicyDefaults` of the contracts): `period_budgets: []` where a record has none, and each rate limit
 * without a scope given `scope: "process"` (what it meant then, `LEGACY_RATE_LIMIT_SCOPE`). Only records lacking one
 * of them are rewritten, so it is a no-op on later starts and on fresh databases. For use as {@link migrateSchema}'s
 * `then` step.
 */
export async function addPolicyScopesAndPeriods(tx: SqlExecutor): Promise<void> {
  await tx.query(`UPDATE agp_policies SET doc = jsonb_set(doc, '{period_budgets}', '[]'::jsonb) WHERE NOT doc ? 'period_budgets'`);
  await tx.query(
    `UPDATE agp_policies p
        SET doc = jsonb_set(p.doc, '{rate_limits}', (
          SELECT jsonb_object_agg(e.key, CASE WHEN e.value ? 'scope' THEN e.value ELSE e.value || jsonb_build_object('scope', $1::text) END)
            FROM jsonb_each(p.doc->'rate_limits') AS e))
      WHERE jsonb_typeof(p.doc->'rate_limits') = 'object'
        AND EXISTS (SELECT 1 FROM jsonb_each(p.doc->'rate_limits') AS e WHERE jsonb_typeof(e.value) = 'object' AND NOT e.value ? 'scope')`,
    [LEGACY_RATE_LIMIT_SCOPE],
  );
}

/** Create the read-model tables (idempotent), and bring records of an earlier version up to date ({@link addPolicyScopesAndPeriods}). */
export async function migratePoliciesReadModel(sql: Sql): Promise<void> {
  await migrateSchema(sql, POLICIES_READ_MODEL_DDL, addPolicyScopesAndPeriods);
}
