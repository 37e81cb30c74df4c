import { EVAL_HARNESS_RUN_ID, type ActionRecordedData } from '@agp/contracts';
import { addColumn, migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';
import { isoOrNull } from '@agp/runtime';
import { StatsDeltas, type RunRow } from './runs.js';
import { flushStatsDeltas } from './statsReadModel.js';

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
 * Costs (USD) in `agp_runs`, `agp_stats_daily`, `agp_stats_agents` and `agp_stats_agent_actions`, over the actions that
 * ran (a blocked action adds no cost, whatever its entry carries; `agp_ledger` keeps the entry as recorded): `cost_usd`
 * = Σ per action of the actual cost where reported, else the estimate (`actionSpentUsd`); `estimated_cost_usd` = Σ
 * estimates; `actual_cost_usd` = Σ reported costs (docs/decisions.md (Run cost); tables created before the estimate
 * was split out are brought up to date by {@link addEstimatedCostColumns}; totals projected before blocked actions
 * stopped counting stay as they were, docs/operations.md).
 * Purpose: every run and ledger row has the `purpose` of its run (`production` or `eval`), and every aggregate row is
 * kept per purpose (the column is part of each aggregate's key), so the stats of one purpose never read the other's.
 * Tables created before it are brought up to date by {@link addPurposeColumns}.
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
  estimated_cost_usd double precision NOT NULL,
  actual_cost_usd double precision NOT NULL,
  action_count bigint NOT NULL,
  error text,
  purpose text NOT NULL DEFAULT 'production',
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
  error text,
  purpose text NOT NULL DEFAULT 'production'
);
CREATE INDEX IF NOT EXISTS agp_ledger_org_ts ON agp_ledger (organization_id, ts, id);
CREATE INDEX IF NOT EXISTS agp_ledger_org_agent_ts ON agp_ledger (organization_id, agent_id, ts, id);
CREATE INDEX IF NOT EXISTS agp_ledger_org_run_ts ON agp_ledger (organization_id, run_id, ts, id);
CREATE TABLE IF NOT EXISTS agp_stats_daily (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  day date NOT NULL,
  runs bigint NOT NULL DEFAULT 0,
  runs_running bigint NOT NULL DEFAULT 0,
  runs_completed bigint NOT NULL DEFAULT 0,
  runs_failed bigint NOT NULL DEFAULT 0,
  actions bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  estimated_cost_usd double precision NOT NULL DEFAULT 0,
  actual_cost_usd double precision NOT NULL DEFAULT 0,
  duration_ms double precision NOT NULL DEFAULT 0,
  duration_n bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, purpose, day)
);
CREATE TABLE IF NOT EXISTS agp_stats_agents (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  agent_id text NOT NULL,
  runs bigint NOT NULL DEFAULT 0,
  runs_running bigint NOT NULL DEFAULT 0,
  runs_completed bigint NOT NULL DEFAULT 0,
  runs_failed bigint NOT NULL DEFAULT 0,
  actions bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  estimated_cost_usd double precision NOT NULL DEFAULT 0,
  actual_cost_usd double precision NOT NULL DEFAULT 0,
  duration_ms double precision NOT NULL DEFAULT 0,
  duration_n bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, purpose, agent_id)
);
CREATE TABLE IF NOT EXISTS agp_stats_agent_actions (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  agent_id text NOT NULL,
  action_name text NOT NULL,
  actions bigint NOT NULL,
  cost_usd double precision NOT NULL,
  estimated_cost_usd double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, purpose, agent_id, action_name)
);
CREATE TABLE IF NOT EXISTS agp_stats_skew_actions (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  action_name text NOT NULL,
  n bigint NOT NULL,
  sum_skew double precision NOT NULL,
  sum_abs_skew double precision NOT NULL,
  b0 bigint NOT NULL, b1 bigint NOT NULL, b2 bigint NOT NULL, b3 bigint NOT NULL, b4 bigint NOT NULL, b5 bigint NOT NULL,
  PRIMARY KEY (organization_id, purpose, action_name)
);
CREATE TABLE IF NOT EXISTS agp_stats_skew_hist (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  bucket integer NOT NULL,
  n bigint NOT NULL,
  sum_skew double precision NOT NULL,
  PRIMARY KEY (organization_id, purpose, bucket)
);
`;

/**
 * One action's spent cost in SQL over an `agp_ledger` row: the same rule as `actionSpentUsd` of `@agp/contracts`
 * (actual where reported, else the estimate, else 0; 0 for a blocked action, which did not run).
 */
export const LEDGER_COST = "CASE WHEN status = 'blocked' THEN 0 ELSE coalesce(actual_cost_usd, cost_usd, 0) END";
/** The estimate an `agp_ledger` row adds to `estimated_cost_usd` sums: null (nothing) for a blocked action. */
export const LEDGER_ESTIMATED = "CASE WHEN status = 'blocked' THEN NULL ELSE cost_usd END";
/** The reported cost an `agp_ledger` row adds to `actual_cost_usd` sums: null (nothing) for a blocked action. */
export const LEDGER_ACTUAL = "CASE WHEN status = 'blocked' THEN NULL ELSE actual_cost_usd END";

/**
 * The tables holding a run or aggregate cost, with the `agp_ledger` columns their rows group by (a daily row's day is
 * the UTC date of the action's timestamp, as the projection keys it).
 */
const COST_TABLES: ReadonlyArray<{ table: string; keys: ReadonlyArray<{ col: string; ledger: string }> }> = [
  { table: 'agp_runs', keys: [{ col: 'run_id', ledger: 'run_id' }] },
  { table: 'agp_stats_daily', keys: [{ col: 'day', ledger: "(ts AT TIME ZONE 'UTC')::date" }] },
  { table: 'agp_stats_agents', keys: [{ col: 'agent_id', ledger: 'agent_id' }] },
  { table: 'agp_stats_agent_actions', keys: [{ col: 'agent_id', ledger: 'agent_id' }, { col: 'action_name', ledger: 'action_name' }] },
];

/**
 * Bring cost tables created before run cost was split into reported and estimated up to date, in the migration's locked transaction: where a table
 * has no `estimated_cost_usd` column, add it holding the old `cost_usd` (which was Σ estimates), then set `cost_usd`
 * to Σ {@link LEDGER_COST} over the row's ledger entries (0 when it has none), so a platform with existing data reports
 * the same figures as one that projected its events with today's code. `agp_ledger` is written in the same
 * transactions as these tables, so it holds exactly the actions they counted. A no-op on later starts and on fresh
 * databases (the DDL creates the column). One pass per table over `agp_ledger`.
 */
export async function addEstimatedCostColumns(tx: SqlExecutor): Promise<void> {
  for (const { table, keys } of COST_TABLES) {
    const { rows } = await tx.query(
      "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'estimated_cost_usd'",
      [table],
    );
    if (rows.length) continue;
    await tx.query(`ALTER TABLE ${table} ADD COLUMN estimated_cost_usd double precision NOT NULL DEFAULT 0`);
    await tx.query(`UPDATE ${table} SET estimated_cost_usd = cost_usd, cost_usd = 0`);
    const groups = keys.map((k) => `${k.ledger} AS ${k.col}`).join(', ');
    const match = keys.map((k) => `t.${k.col} = l.${k.col}`).join(' AND ');
    await tx.query(
      `UPDATE ${table} t SET cost_usd = l.cost
         FROM (SELECT organization_id, ${groups}, sum(${LEDGER_COST}) AS cost FROM agp_ledger GROUP BY organization_id, ${keys.map((k) => k.col).join(', ')}) AS l
        WHERE t.organization_id = l.organization_id AND ${match}`,
    );
  }
}

/** The aggregate tables and their primary keys with `purpose` (see {@link STATS_DDL}). */
const PURPOSE_KEYS: ReadonlyArray<{ table: string; key: readonly string[] }> = [
  { table: 'agp_stats_daily', key: ['organization_id', 'purpose', 'day'] },
  { table: 'agp_stats_agents', key: ['organization_id', 'purpose', 'agent_id'] },
  { table: 'agp_stats_agent_actions', key: ['organization_id', 'purpose', 'agent_id', 'action_name'] },
  { table: 'agp_stats_skew_actions', key: ['organization_id', 'purpose', 'action_name'] },
  { table: 'agp_stats_skew_hist', key: ['organization_id', 'purpose', 'bucket'] },
];

/** Where the lists read by purpose: the run list and the export of one purpose (created once the column exists). */
const PURPOSE_INDEXES = [
  'CREATE INDEX IF NOT EXISTS agp_runs_org_purpose_ts ON agp_runs (organization_id, purpose, ts DESC, run_id DESC)',
  'CREATE INDEX IF NOT EXISTS agp_ledger_org_purpose_ts ON agp_ledger (organization_id, purpose, ts, id)',
];

/**
 * Bring tables created before runs had a purpose up to date, in the migration's locked transaction, so a platform
 * with existing data answers as one that projected its events with today's code (docs/decisions.md, Eval data):
 * 1. add `purpose` (default `production`) to `agp_runs`, `agp_ledger` and each aggregate table, where it is part of
 *    the primary key;
 * 2. mark as `eval` the runs that `purposeOf` calls eval when no purpose was stated, i.e. those whose run id has the
 *    eval harness's shape (`EVAL_HARNESS_RUN_ID`), and their ledger entries;
 * 3. move their contribution to the aggregates from `production` to `eval`, with the projection's own deltas
 *    ({@link StatsDeltas}): each run's counts on its day and agent, each action's counts, costs and skew; then drop the
 *    aggregate rows left with no count at all.
 * A no-op on later starts and on fresh databases (the DDL creates the columns); the indexes by purpose are created
 * every start (`IF NOT EXISTS`). The eval runs and their ledger entries are read into memory once.
 */
export async function addPurposeColumns(tx: SqlExecutor): Promise<void> {
  const added = await addColumn(tx, 'agp_runs', 'purpose', "text NOT NULL DEFAULT 'production'");
  if (added) {
    await addColumn(tx, 'agp_ledger', 'purpose', "text NOT NULL DEFAULT 'production'");
    for (const { table, key } of PURPOSE_KEYS) await addColumn(tx, table, 'purpose', "text NOT NULL DEFAULT 'production'", key);
    await markLegacyEvalRuns(tx);
  }
  for (const stmt of PURPOSE_INDEXES) await tx.query(stmt);
}

interface LegacyRunRow extends Omit<RunRow, 'started_at' | 'ended_at' | 'first_action_at'> {
  started_at: Date | string | null;
  ended_at: Date | string | null;
  first_action_at: Date | string | null;
}

/** Steps 2 and 3 of {@link addPurposeColumns}. */
async function markLegacyEvalRuns(tx: SqlExecutor): Promise<void> {
  const pattern = EVAL_HARNESS_RUN_ID.source;
  const runs = await tx.query<LegacyRunRow>(
    `UPDATE agp_runs SET purpose = 'eval' WHERE run_id ~ $1
     RETURNING organization_id, run_id, agent_id, name, status, started_at, ended_at, first_action_at, cost_usd, estimated_cost_usd, actual_cost_usd, action_count, error, purpose`,
    [pattern],
  );
  if (runs.rows.length === 0) return;
  const actions = await tx.query<{ organization_id: string; id: string; run_id: string; agent_id: string; action_name: string; status: ActionRecordedData['status']; ts: Date | string; cost_usd: number | null; actual_cost_usd: number | null; duration_ms: number | null }>(
    `UPDATE agp_ledger l SET purpose = 'eval' FROM agp_runs r
      WHERE r.purpose = 'eval' AND r.organization_id = l.organization_id AND r.run_id = l.run_id
     RETURNING l.organization_id, l.id, l.run_id, l.agent_id, l.action_name, l.status, l.ts, l.cost_usd, l.actual_cost_usd, l.duration_ms`,
  );
  const deltas = new StatsDeltas();
  for (const r of runs.rows) {
    const row: RunRow = { ...r, started_at: isoOrNull(r.started_at), ended_at: isoOrNull(r.ended_at), first_action_at: isoOrNull(r.first_action_at), cost_usd: Number(r.cost_usd), estimated_cost_usd: Number(r.estimated_cost_usd), actual_cost_usd: Number(r.actual_cost_usd), action_count: Number(r.action_count) };
    deltas.run({ ...row, purpose: 'production' }, -1);
    deltas.run(row, 1);
  }
  for (const a of actions.rows) {
    const data: ActionRecordedData = {
      id: a.id,
      run_id: a.run_id,
      agent_id: a.agent_id,
      action_name: a.action_name,
      status: a.status,
      timestamp: isoOrNull(a.ts)!,
      ingest_event_id: '',
      ...(a.cost_usd === null ? {} : { cost_usd: Number(a.cost_usd) }),
      ...(a.actual_cost_usd === null ? {} : { actual_cost_usd: Number(a.actual_cost_usd) }),
      ...(a.duration_ms === null ? {} : { duration_ms: Number(a.duration_ms) }),
    };
    deltas.action(a.organization_id, 'production', data, -1);
    deltas.action(a.organization_id, 'eval', data, 1);
  }
  await flushStatsDeltas(deltas, tx);
  await tx.query('DELETE FROM agp_stats_daily WHERE runs = 0 AND runs_running = 0 AND runs_completed = 0 AND runs_failed = 0 AND actions = 0');
  await tx.query('DELETE FROM agp_stats_agents WHERE runs = 0 AND runs_running = 0 AND runs_completed = 0 AND runs_failed = 0 AND actions = 0');
  await tx.query('DELETE FROM agp_stats_agent_actions WHERE actions = 0');
  await tx.query('DELETE FROM agp_stats_skew_actions WHERE n = 0');
  await tx.query('DELETE FROM agp_stats_skew_hist WHERE n = 0');
}

/** Create the read-model tables (idempotent), and bring tables of an earlier version up to date. */
export async function migrateStatsReadModels(sql: Sql): Promise<void> {
  await migrateSchema(sql, STATS_DDL, async (tx) => {
    await addEstimatedCostColumns(tx);
    await addPurposeColumns(tx);
  });
}
