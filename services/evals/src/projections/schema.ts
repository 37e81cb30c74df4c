import { migrateSchema, type Sql } from '@agp/eventstore';

/**
 * Read model of the evals service (it alone reads it), kept by the `evals-read-model` projection:
 * - `agp_eval_runs`: one row per (organisation, run id). `doc` is the run without its scenarios, as the history lists
 *   it; `scenarios` is the run's scenario list (both `json`: stored and returned as text, never queried inside). The
 *   other columns exist for filters and ordering; `seq` is the global position of the run's event, which orders runs
 *   created in the same millisecond.
 * Indexes: the history, newest first (organisation, created_at, seq), and the CI baseline and filtered history
 * (organisation, suite, agent, branch, created_at, seq). Source: docs/decisions.md (Evals).
 */
export const EVALS_READ_MODEL_DDL = `
CREATE TABLE IF NOT EXISTS agp_eval_runs (
  organization_id text NOT NULL,
  id text NOT NULL,
  seq bigint NOT NULL,
  suite text NOT NULL,
  agent_id text NOT NULL,
  branch text,
  commit_sha text,
  created_at timestamptz NOT NULL,
  grade text NOT NULL,
  block_rate double precision,
  correctness_rate double precision NOT NULL,
  ci_status text,
  doc json NOT NULL,
  scenarios json NOT NULL,
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX IF NOT EXISTS agp_eval_runs_org_created ON agp_eval_runs (organization_id, created_at DESC, seq DESC);
CREATE INDEX IF NOT EXISTS agp_eval_runs_org_suite_agent_branch ON agp_eval_runs (organization_id, suite, agent_id, branch, created_at DESC, seq DESC);
`;

/** Create the read-model tables (idempotent; under the schema advisory lock, so replicas may start together). */
export async function migrateEvalsReadModel(sql: Sql): Promise<void> {
  await migrateSchema(sql, EVALS_READ_MODEL_DDL);
}
