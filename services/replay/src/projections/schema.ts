import { migrateSchema, type Sql } from '@agp/eventstore';

/**
 * Read model of the replay service (it alone reads it), kept by the `replay-read-model` projection:
 * - `agp_replay_submissions`: one row per (organisation, submission id). `doc` is the submission without its
 *   divergence details, as the history lists it; `details` is its `divergence_details` (both `json`, returned as
 *   text; `details` is unnested by the analysis). The count columns feed the aggregates, computed in SQL;
 *   `cost_savings` is `numeric` so the sum of USD amounts is exact. `seq` is the global position of the submission's
 *   event, which orders submissions stored in the same millisecond.
 * Indexes: the organisation's history, newest first, and a run's (organisation, run_id, submitted_at, seq).
 * Source: docs/decisions.md (Replay submissions, bundles and analysis).
 */
export const REPLAY_READ_MODEL_DDL = `
CREATE TABLE IF NOT EXISTS agp_replay_submissions (
  organization_id text NOT NULL,
  id text NOT NULL,
  run_id text NOT NULL,
  seq bigint NOT NULL,
  submitted_at timestamptz NOT NULL,
  status text NOT NULL,
  actions_replayed bigint NOT NULL,
  divergences bigint NOT NULL,
  cost_savings numeric NOT NULL,
  doc json NOT NULL,
  details json NOT NULL,
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX IF NOT EXISTS agp_replay_submissions_org_submitted ON agp_replay_submissions (organization_id, submitted_at DESC, seq DESC);
CREATE INDEX IF NOT EXISTS agp_replay_submissions_org_run ON agp_replay_submissions (organization_id, run_id, submitted_at DESC, seq DESC);
`;

/** Create the read-model table (idempotent; under the schema advisory lock, so replicas may start together). */
export async function migrateReplayReadModel(sql: Sql): Promise<void> {
  await migrateSchema(sql, REPLAY_READ_MODEL_DDL);
}
