import { migrateSchema, type Sql } from '@agp/eventstore';

/**
 * Read-model tables of the stats service (it alone reads them), kept by the `stats-read-model` projection.
 * - `agp_runs`: one row per (organisation, client run id). `ts` is the run's sort and day key: started_at, else
 *   the first action's timestamp, else ended_at.
 * - `agp_ledger`: one row per action (ledger entry); indexed for the export (org, ts, id), the agent export and a
 *   run's actions.
 * - `agp_stats_daily`: per organisation and UTC day: runs (by the run's day, by status), actions, costs, durations.
 * - `agp_stats_agents` / `agp_stats_agent_actions`: per agent totals and per agent and action counts and cost.
 * - `agp_stats_skew_actions`: per organisation and action: compared count, sums of skew and |skew|, the six buckets.
 * - `agp_stats_skew_hist`: per organisation, 1-percentage-point skew buckets (clamped to -100..1000) with the count
 *   and the sum of skew in each, from which p50/p95 come in SQL.
 * Every endpoint therefore reads O(days), O(actions) or O(buckets) rows, never O(ledger rows).
 */
export const STATS_DDL = `
CREATE TABLE IF NOT EXISTS agp_runs (
  organization_id text NOT NULL,
  run_id text NOT NULL,
  agent_id text NOT NULL,
  name text,
  status text NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  first_action_at timestamptz,
  ts timestamptz NOT NULL,
  cost_usd double precision NOT NULL,
  actual_cost_usd double precision NOT NULL,
  action_count bigint NOT NULL,
  error text,
  PRIMARY KEY (organization_id, run_id)
);
CREATE INDEX IF NOT EXISTS agp_runs_org_ts ON agp_runs (organization_id, ts DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS agp_runs_org_agent_ts ON agp_runs (organization_id, agent_id, ts DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS agp_runs_org_status_ts ON agp_runs (organization_id, status, ts DESC, run_id DESC);
CREATE TABLE IF NOT EXISTS agp_ledger (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  run_id text NOT NULL,
  agent_id text NOT NULL,
  action_name text NOT NULL,
  status text NOT NULL,
  ts timestamptz NOT NULL,
  cost_usd double precision,
  actual_cost_usd double precision,
  duration_ms double precision,
  inputs jsonb,
  outputs jsonb,
  error text
);
CREATE INDEX IF NOT EXISTS agp_ledger_org_ts ON agp_ledger (organization_id, ts, id);
CREATE INDEX IF NOT EXISTS agp_ledger_org_agent_ts ON agp_ledger (organization_id, agent_id, ts, id);
CREATE INDEX IF NOT EXISTS agp_ledger_org_run_ts ON agp_ledger (organization_id, run_id, ts, id);
CREATE TABLE IF NOT EXISTS agp_stats_daily (
  organization_id text NOT NULL,
  day date NOT NULL,
  runs bigint NOT NULL DEFAULT 0,
  runs_running bigint NOT NULL DEFAULT 0,
  runs_completed bigint NOT NULL DEFAULT 0,
  runs_failed bigint NOT NULL DEFAULT 0,
  actions bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  actual_cost_usd double precision NOT NULL DEFAULT 0,
  duration_ms double precision NOT NULL DEFAULT 0,
  duration_n bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, day)
);
CREATE TABLE IF NOT EXISTS agp_stats_agents (
  organization_id text NOT NULL,
  agent_id text NOT NULL,
  runs bigint NOT NULL DEFAULT 0,
  runs_running bigint NOT NULL DEFAULT 0,
  runs_completed bigint NOT NULL DEFAULT 0,
  runs_failed bigint NOT NULL DEFAULT 0,
  actions bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  actual_cost_usd double precision NOT NULL DEFAULT 0,
  duration_ms double precision NOT NULL DEFAULT 0,
  duration_n bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, agent_id)
);
CREATE TABLE IF NOT EXISTS agp_stats_agent_actions (
  organization_id text NOT NULL,
  agent_id text NOT NULL,
  action_name text NOT NULL,
  actions bigint NOT NULL,
  cost_usd double precision NOT NULL,
  PRIMARY KEY (organization_id, agent_id, action_name)
);
CREATE TABLE IF NOT EXISTS agp_stats_skew_actions (
  organization_id text NOT NULL,
  action_name text NOT NULL,
  n bigint NOT NULL,
  sum_skew double precision NOT NULL,
  sum_abs_skew double precision NOT NULL,
  b0 bigint NOT NULL, b1 bigint NOT NULL, b2 bigint NOT NULL, b3 bigint NOT NULL, b4 bigint NOT NULL, b5 bigint NOT NULL,
  PRIMARY KEY (organization_id, action_name)
);
CREATE TABLE IF NOT EXISTS agp_stats_skew_hist (
  organization_id text NOT NULL,
  bucket integer NOT NULL,
  n bigint NOT NULL,
  sum_skew double precision NOT NULL,
  PRIMARY KEY (organization_id, bucket)
);
`;

/** Create the read-model tables (idempotent). */
export async function migrateStatsReadModels(sql: Sql): Promise<void> {
  await migrateSchema(sql, STATS_DDL);
}
