import { migrateSchema, type Sql } from '@agp/eventstore';

/**
 * Read-model tables of the policies service (it alone reads them); every row carries its organisation.
 * - `agp_policies`: the current policy records; `doc` is the record as the API returns it, the other columns
 *   exist for filtering and ordering (the agent scope is filtered on `doc->'agent_ids'`).
 * - `agp_agents`: the agent registry; `doc` is the agent without its kill switch (joined from the next table).
 * - `agp_kill_switches`: each switch ever set; `agent_id` is '' for the organisation's switch.
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
`;

/** Create the read-model tables (idempotent). */
export async function migratePoliciesReadModel(sql: Sql): Promise<void> {
  await migrateSchema(sql, POLICIES_READ_MODEL_DDL);
}
