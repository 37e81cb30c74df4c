import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PURPOSES, RunEvents, type ListRunsQuery, type Purpose } from '@agp/contracts';
import { createPgSql, createPgliteSql, type Sql, type StoredEvent } from '@agp/eventstore';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { applyStatsEvents } from '../src/projections/statsReadModel.js';
import { migrateStatsReadModels } from '../src/projections/schema.js';
import { agentTotals, agentWindowTotals, estimationAccuracy, getRun, ledgerExportPage, listRuns, statsDaily, statsSummary } from '../src/queries.js';

/**
 * Eval data in the stats read model, through the real projection and queries, on PGlite and (with DATABASE_URL)
 * PostgreSQL: every answer of the default purpose (production) leaves the eval runs and their actions out, `eval` has
 * only them, and production + eval = all. A database projected before runs had a purpose (the eval harness's runs
 * counted as production) answers exactly the same after `migrateStatsReadModels`, and so does a rebuild of the
 * projection from its events (tables emptied, every event applied again).
 */
const ORG = 'acme';
const NOW = new Date('2026-03-02T12:00:00.000Z');
const DAY1 = '2026-03-01';
const DAY2 = '2026-03-02';
/** A run id as `agp evals run` issues them (recognised as eval when no purpose is stated). */
const LEGACY_EVAL = 'eval-denied_actions.delete_records.direct-0123456789ab';

let position = 0n;
/** A stored run event as the subscription hands it to the projection. */
function stored(type: string, data: Record<string, unknown>): StoredEvent {
  position += 1n;
  return {
    event_id: `e${position}`,
    type,
    data: { ingest_event_id: `i${position}`, ...data },
    metadata: { organization_id: ORG, actor: 'system', schema_version: 1 },
    stream_id: `run-${String(data.run_id)}`,
    stream_version: 1,
    global_position: position,
    recorded_at: NOW.toISOString(),
  };
}
const start = (run: string, at: string, extra: Record<string, unknown> = {}) => stored(RunEvents.Started, { run_id: run, agent_id: 'agent-a', started_at: at, ...extra });
const end = (run: string, at: string, status = 'completed', extra: Record<string, unknown> = {}) => stored(RunEvents.Ended, { run_id: run, agent_id: 'agent-a', status, ended_at: at, ...extra });
let ids = 0;
const act = (run: string, name: string, at: string, cost: { cost_usd?: number; actual_cost_usd?: number }, extra: Record<string, unknown> = {}) =>
  stored(RunEvents.ActionRecorded, { id: `act-${++ids}`, run_id: run, agent_id: 'agent-a', action_name: name, status: 'success', timestamp: at, duration_ms: 10, ...cost, ...extra });

/** What a platform stored before runs had a purpose: production runs and the eval harness's runs, none stating one. */
const LEGACY = [
  start('prod-1', `${DAY1}T10:00:00.000Z`),
  act('prod-1', 'llm_call', `${DAY1}T10:00:01.000Z`, { cost_usd: 1, actual_cost_usd: 2 }),
  act('prod-1', 'search', `${DAY1}T10:00:02.000Z`, { cost_usd: 0.5 }),
  end('prod-1', `${DAY1}T10:01:00.000Z`),
  start(LEGACY_EVAL, `${DAY2}T09:00:00.000Z`),
  act(LEGACY_EVAL, 'agp_eval.spend_so_far', `${DAY2}T09:00:00.000Z`, { cost_usd: 180 }),
  act(LEGACY_EVAL, 'llm_call', `${DAY2}T09:00:01.000Z`, { cost_usd: 5, actual_cost_usd: 6 }),
  end(LEGACY_EVAL, `${DAY2}T09:01:00.000Z`, 'failed'),
  start('prod-2', `${DAY2}T11:00:00.000Z`),
  act('prod-2', 'llm_call', `${DAY2}T11:00:01.000Z`, { cost_usd: 2, actual_cost_usd: 1 }),
];
/** What today's harness sends (purpose stated on every event), and a run whose first event is an action. */
const STATED = [
  start('scenario-run', `${DAY2}T10:00:00.000Z`, { purpose: 'eval' }),
  act('scenario-run', 'refund_payment', `${DAY2}T10:00:01.000Z`, { cost_usd: 3 }, { purpose: 'eval' }),
  end('scenario-run', `${DAY2}T10:00:30.000Z`, 'completed', { purpose: 'eval' }),
  act('action-first', 'llm_call', `${DAY2}T12:00:01.000Z`, { cost_usd: 1, actual_cost_usd: 1.5 }, { purpose: 'eval' }),
  start('action-first', `${DAY2}T12:00:00.000Z`),
];

/** Every answer of the stats queries for `purposes`. */
async function answers(sql: Sql, purposes: Purpose[]) {
  const page = await listRuns(sql, ORG, { skip: 0, limit: 50, purpose: purposes } as ListRunsQuery);
  const exported = await ledgerExportPage(sql, ORG, { format: 'jsonl', purpose: purposes }, null);
  return {
    runs: page.runs,
    total: page.total,
    summary: await statsSummary(sql, ORG, undefined, NOW, purposes),
    summary1d: await statsSummary(sql, ORG, 1, NOW, purposes),
    daily: (await statsDaily(sql, ORG, NOW, purposes)).days.filter((d) => d.actions > 0 || d.runs > 0),
    accuracy: await estimationAccuracy(sql, ORG, purposes),
    agent: await agentTotals(sql, ORG, 'agent-a', purposes),
    agentWindow: await agentWindowTotals(sql, ORG, 'agent-a', { start_date: DAY2, end_date: DAY2 }, purposes),
    ledger: exported.text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { run_id: string; purpose: Purpose }),
  };
}
const all = (sql: Sql) => Promise.all([answers(sql, ['production']), answers(sql, ['eval']), answers(sql, [...PURPOSES])]);

/** The run and ledger rows exactly as stored. */
async function rows(sql: Sql) {
  const runs = await sql.query('SELECT * FROM agp_runs ORDER BY organization_id, run_id');
  const ledger = await sql.query('SELECT * FROM agp_ledger ORDER BY id');
  return { runs: runs.rows, ledger: ledger.rows };
}

/** Empty every read-model table, as a rebuild of the projection from position 0 starts. */
async function truncate(sql: Sql): Promise<void> {
  for (const t of ['agp_runs', 'agp_ledger', 'agp_stats_daily', 'agp_stats_agents', 'agp_stats_agent_actions', 'agp_stats_skew_actions', 'agp_stats_skew_hist']) await sql.query(`DELETE FROM ${t}`);
}

/**
 * Put the tables back as the projection left them before runs had a purpose: no `purpose` column, each aggregate row
 * the sum over purposes under its old key.
 */
async function toSchemaWithoutPurpose(sql: Sql): Promise<void> {
  await sql.exec('ALTER TABLE agp_runs DROP COLUMN purpose; ALTER TABLE agp_ledger DROP COLUMN purpose');
  const aggregates: Array<[string, string[], string[]]> = [
    ['agp_stats_daily', ['organization_id', 'day'], ['runs', 'runs_running', 'runs_completed', 'runs_failed', 'actions', 'cost_usd', 'estimated_cost_usd', 'actual_cost_usd', 'duration_ms', 'duration_n']],
    ['agp_stats_agents', ['organization_id', 'agent_id'], ['runs', 'runs_running', 'runs_completed', 'runs_failed', 'actions', 'cost_usd', 'estimated_cost_usd', 'actual_cost_usd', 'duration_ms', 'duration_n']],
    ['agp_stats_agent_actions', ['organization_id', 'agent_id', 'action_name'], ['actions', 'cost_usd', 'estimated_cost_usd']],
    ['agp_stats_skew_actions', ['organization_id', 'action_name'], ['n', 'sum_skew', 'sum_abs_skew', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5']],
    ['agp_stats_skew_hist', ['organization_id', 'bucket'], ['n', 'sum_skew']],
  ];
  for (const [table, key, values] of aggregates) {
    await sql.exec(
      `CREATE TEMP TABLE merged AS SELECT ${key.join(', ')}, ${values.map((v) => `sum(${v}) AS ${v}`).join(', ')} FROM ${table} GROUP BY ${key.join(', ')};
       DELETE FROM ${table};
       ALTER TABLE ${table} DROP COLUMN purpose;
       ALTER TABLE ${table} ADD PRIMARY KEY (${key.join(', ')});
       INSERT INTO ${table} (${key.join(', ')}, ${values.join(', ')}) SELECT * FROM merged;
       DROP TABLE merged`,
    );
  }
  await sql.exec('DROP INDEX IF EXISTS agp_runs_org_purpose_ts; DROP INDEX IF EXISTS agp_ledger_org_purpose_ts');
}

/** Runs and cost (USD) of every day, read from the daily table as it was before runs had a purpose. */
async function statsSummaryWithoutPurpose(sql: Sql): Promise<{ runs: number; cost: number }> {
  const { rows } = await sql.query<{ runs: string; cost: number }>('SELECT sum(runs) AS runs, sum(cost_usd) AS cost FROM agp_stats_daily WHERE organization_id = $1', [ORG]);
  return { runs: Number(rows[0].runs), cost: Number(rows[0].cost) };
}

const backends: Array<{ name: string; skip: boolean; open: () => Promise<{ sql: Sql; drop: () => Promise<void> }> }> = [
  { name: 'PGlite', skip: false, open: async () => ({ sql: await createPgliteSql(), drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: skipIntegration('postgres'),
    open: async () => {
      const db = await createTestDatabase('agp_purpose');
      return { sql: createPgSql(db.url), drop: db.drop };
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`stats read model: eval data kept apart (${backend.name})`, () => {
    let sql: Sql;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ sql, drop } = await backend.open());
      await migrateStatsReadModels(sql);
    });
    afterAll(async () => {
      await sql?.close();
      await drop?.();
    });

    it('production answers leave the eval runs and their actions out, eval has only them, and the two add up to all', async () => {
      await sql.transaction((tx) => applyStatsEvents([...LEGACY, ...STATED].slice(0, 8), tx));
      await sql.transaction((tx) => applyStatsEvents([...LEGACY, ...STATED].slice(8), tx));
      const [prod, evals, every] = await all(sql);
      expect(prod.runs.map((r) => r.id)).toEqual(['prod-2', 'prod-1']);
      expect(evals.runs.map((r) => [r.id, r.purpose])).toEqual([
        ['action-first', 'eval'],
        ['scenario-run', 'eval'],
        [LEGACY_EVAL, 'eval'],
      ]);
      expect(every.total).toBe(5);
      expect(prod.summary).toMatchObject({ total_runs: 2, total_actions: 3, total_cost_usd: 3.5, runs_by_status: { running: 1, completed: 1, failed: 0 } });
      expect(evals.summary).toMatchObject({ total_runs: 3, total_actions: 4, total_cost_usd: 190.5, runs_by_status: { running: 1, completed: 1, failed: 1 } });
      for (const k of ['total_runs', 'total_actions', 'total_cost_usd', 'total_estimated_cost_usd', 'total_actual_cost_usd'] as const) {
        expect(every.summary[k], k).toBeCloseTo(prod.summary[k] + evals.summary[k], 9);
      }
      expect(prod.daily).toEqual([
        { date: DAY1, cost_usd: 2.5, estimated_cost_usd: 1.5, actual_cost_usd: 2, runs: 1, actions: 2 },
        { date: DAY2, cost_usd: 1, estimated_cost_usd: 2, actual_cost_usd: 1, runs: 1, actions: 1 },
      ]);
      expect(prod.summary1d).toMatchObject({ total_runs: 1, total_cost_usd: 1 });
      expect(prod.accuracy).toMatchObject({ actions_compared: 2, worst_offenders: [{ action_name: 'llm_call', count: 2, mean_skew: 0.25 }] });
      expect(evals.accuracy).toMatchObject({ actions_compared: 2, worst_offenders: [{ action_name: 'llm_call', count: 2 }] });
      expect(every.accuracy.actions_compared).toBe(4);
      expect(prod.agent).toMatchObject({ total_runs: 2, total_actions: 3, total_cost_usd: 3.5 });
      expect(prod.agent!.top_actions.map((a) => a.action)).not.toContain('agp_eval.spend_so_far');
      expect(evals.agent).toMatchObject({ total_runs: 3, total_actions: 4, total_cost_usd: 190.5 });
      expect(prod.agentWindow).toMatchObject({ total_runs: 1, total_actions: 1, total_cost_usd: 1 });
      expect(prod.ledger.map((e) => e.run_id)).toEqual(['prod-1', 'prod-1', 'prod-2']);
      expect(evals.ledger.every((e) => e.purpose === 'eval')).toBe(true);
      expect(every.ledger).toHaveLength(7);
      // A run is found by id whatever its purpose (the decision API and the eval run's links read it so).
      expect(await getRun(sql, ORG, LEGACY_EVAL)).toMatchObject({ purpose: 'eval', status: 'failed', cost_usd: 186 });
    });

    it('a database projected before runs had a purpose answers the same after the migration; a rebuild from the events gives the same rows', async () => {
      // Today's answers with only the legacy events (the stated purpose did not exist then).
      await truncate(sql);
      await sql.transaction((tx) => applyStatsEvents(LEGACY, tx));
      const fresh = await all(sql);
      const freshRows = await rows(sql);

      await toSchemaWithoutPurpose(sql);
      // Before: the eval harness's run counted as production, as it did then.
      expect(await statsSummaryWithoutPurpose(sql)).toEqual({ runs: 3, cost: 189.5 });
      await migrateStatsReadModels(sql);
      expect(await all(sql)).toEqual(fresh);
      expect(await rows(sql)).toEqual(freshRows);
      // A second start changes nothing.
      await migrateStatsReadModels(sql);
      expect(await all(sql)).toEqual(fresh);

      // Rebuild: every table emptied, every event applied again (one batch), to the same answers and rows.
      await truncate(sql);
      await sql.transaction((tx) => applyStatsEvents(LEGACY, tx));
      expect(await all(sql)).toEqual(fresh);
      expect(await rows(sql)).toEqual(freshRows);
    });
  });
}
