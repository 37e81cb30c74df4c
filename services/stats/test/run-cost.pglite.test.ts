import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunEvents, type ListRunsQuery } from '@agp/contracts';
import { createPgliteSql, type Sql, type StoredEvent } from '@agp/eventstore';
import { applyStatsEvents } from '../src/projections/statsReadModel.js';
import { migrateStatsReadModels } from '../src/projections/schema.js';
import { agentTotals, agentWindowTotals, getRun, listRuns, statsDaily, statsSummary } from '../src/queries.js';

/**
 * Run cost (docs/decisions.md, Run cost) through the real projection and queries on PGlite: a run's `cost_usd`, the stats'
 * `total_cost_usd`, the daily and agent costs and `min_cost` are per action the actual cost where reported, else the
 * estimate; and a database whose tables were projected before the change (no `estimated_cost_usd`, `cost_usd` = Σ
 * estimates) answers the same figures after `migrateStatsReadModels`.
 */
const ORG = 'acme';
const NOW = new Date('2026-03-02T12:00:00.000Z');
const DAY1 = '2026-03-01';
const DAY2 = '2026-03-02';

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
const start = (run: string, agent: string, at: string) => stored(RunEvents.Started, { run_id: run, agent_id: agent, started_at: at });
const end = (run: string, agent: string, at: string) => stored(RunEvents.Ended, { run_id: run, agent_id: agent, status: 'completed', ended_at: at });
let ids = 0;
const act = (run: string, agent: string, name: string, at: string, cost: { cost_usd?: number; actual_cost_usd?: number }) =>
  stored(RunEvents.ActionRecorded, { id: `act-${++ids}`, run_id: run, agent_id: agent, action_name: name, status: 'success', timestamp: at, ...cost });

/**
 * Three runs: `doubled` (4 actions estimated at 1 USD that cost 2 each, day 1), `estimates` (two estimate-only actions,
 * 0.5 and 0.25, day 2) and `mixed` (actual 2 over estimate 1; estimate 1 only; actual 3 only; no cost; day 2).
 */
const EVENTS = [
  start('doubled', 'agent-a', `${DAY1}T10:00:00.000Z`),
  ...[1, 2, 3, 4].map((i) => act('doubled', 'agent-a', 'llm_call', `${DAY1}T10:00:0${i}.000Z`, { cost_usd: 1, actual_cost_usd: 2 })),
  end('doubled', 'agent-a', `${DAY1}T10:01:00.000Z`),
  start('estimates', 'agent-b', `${DAY2}T09:00:00.000Z`),
  act('estimates', 'agent-b', 'search', `${DAY2}T09:00:01.000Z`, { cost_usd: 0.5 }),
  act('estimates', 'agent-b', 'search', `${DAY2}T09:00:02.000Z`, { cost_usd: 0.25 }),
  end('estimates', 'agent-b', `${DAY2}T09:01:00.000Z`),
  start('mixed', 'agent-a', `${DAY2}T11:00:00.000Z`),
  act('mixed', 'agent-a', 'llm_call', `${DAY2}T11:00:01.000Z`, { cost_usd: 1, actual_cost_usd: 2 }),
  act('mixed', 'agent-a', 'search', `${DAY2}T11:00:02.000Z`, { cost_usd: 1 }),
  act('mixed', 'agent-a', 'llm_call', `${DAY2}T11:00:03.000Z`, { actual_cost_usd: 3 }),
  act('mixed', 'agent-a', 'noop', `${DAY2}T11:00:04.000Z`, {}),
  end('mixed', 'agent-a', `${DAY2}T11:01:00.000Z`),
];

/** Every cost-bearing answer of the stats queries. */
async function answers(sql: Sql) {
  const page = (q: Partial<ListRunsQuery>) => listRuns(sql, ORG, { skip: 0, limit: 50, purpose: ['production'], ...q } as ListRunsQuery);
  return {
    runs: Object.fromEntries(await Promise.all(['doubled', 'estimates', 'mixed'].map(async (id) => [id, await getRun(sql, ORG, id)]))),
    min6: (await page({ min_cost: 6 })).runs.map((r) => r.id),
    min2: (await page({ min_cost: 2 })).runs.map((r) => r.id),
    summary: await statsSummary(sql, ORG, undefined, NOW, ['production']),
    daily: (await statsDaily(sql, ORG, NOW, ['production'])).days.filter((d) => d.actions > 0),
    agentA: await agentTotals(sql, ORG, 'agent-a', ['production']),
    agentAWindow: await agentWindowTotals(sql, ORG, 'agent-a', { start_date: DAY2, end_date: DAY2 }, ['production']),
  };
}

describe('run cost: actual where reported, else the estimate (PGlite, the real projection)', () => {
  let sql: Sql;
  let fresh: Awaited<ReturnType<typeof answers>>;
  beforeAll(async () => {
    sql = await createPgliteSql();
    await migrateStatsReadModels(sql);
    // Two batches, so the second folds into rows read back from the table.
    await sql.transaction((tx) => applyStatsEvents(EVENTS.slice(0, 7), tx));
    await sql.transaction((tx) => applyStatsEvents(EVENTS.slice(7), tx));
    fresh = await answers(sql);
  });
  afterAll(async () => sql?.close());

  it('a run: cost_usd per action actual else estimate, estimated_cost_usd and actual_cost_usd beside it', () => {
    expect(fresh.runs.doubled).toMatchObject({ cost_usd: 8, estimated_cost_usd: 4, actual_cost_usd: 8, action_count: 4 });
    expect(fresh.runs.estimates).toMatchObject({ cost_usd: 0.75, estimated_cost_usd: 0.75, actual_cost_usd: 0, action_count: 2 });
    expect(fresh.runs.mixed).toMatchObject({ cost_usd: 6, estimated_cost_usd: 2, actual_cost_usd: 5, action_count: 4 });
  });

  it('min_cost filters on that cost (the doubled run passes 6 though its estimates sum to 4)', () => {
    expect(fresh.min6).toEqual(['mixed', 'doubled']);
    expect(fresh.min2).toEqual(['mixed', 'doubled']);
  });

  it('stats total, daily and agent costs use it too; estimated and actual sums stay beside it', () => {
    expect(fresh.summary).toMatchObject({ total_runs: 3, total_actions: 10, total_cost_usd: 14.75, total_estimated_cost_usd: 6.75, total_actual_cost_usd: 13, avg_cost_per_action_usd: 1.475 });
    expect(fresh.daily).toEqual([
      { date: DAY1, cost_usd: 8, estimated_cost_usd: 4, actual_cost_usd: 8, runs: 1, actions: 4 },
      { date: DAY2, cost_usd: 6.75, estimated_cost_usd: 2.75, actual_cost_usd: 5, runs: 2, actions: 6 },
    ]);
    expect(fresh.agentA).toMatchObject({ total_runs: 2, total_cost_usd: 14, total_estimated_cost_usd: 6, total_actual_cost_usd: 13, avg_cost_per_run_usd: 7 });
    expect(fresh.agentA!.top_actions).toEqual([
      { action: 'llm_call', count: 6, cost: 13 },
      { action: 'noop', count: 1, cost: 0 },
      { action: 'search', count: 1, cost: 1 },
    ]);
    expect(fresh.agentAWindow).toMatchObject({ total_runs: 1, total_actions: 4, total_cost_usd: 6, total_estimated_cost_usd: 2, total_actual_cost_usd: 5, avg_cost_per_run_usd: 6 });
  });

  it('a database projected before the change (cost_usd = Σ estimates, no estimated_cost_usd) answers the same after the migration', async () => {
    // Put the tables back exactly as the earlier projection left them: cost_usd held the estimates, and no column beside it.
    for (const table of ['agp_runs', 'agp_stats_daily', 'agp_stats_agents', 'agp_stats_agent_actions']) {
      await sql.exec(`UPDATE ${table} SET cost_usd = estimated_cost_usd; ALTER TABLE ${table} DROP COLUMN estimated_cost_usd`);
    }
    expect((await sql.query<{ cost_usd: number }>("SELECT cost_usd FROM agp_runs WHERE run_id = 'doubled'")).rows[0].cost_usd).toBe(4);
    await migrateStatsReadModels(sql);
    expect(await answers(sql)).toEqual(fresh);
    // A second start changes nothing, and the projection goes on from the migrated rows.
    await migrateStatsReadModels(sql);
    await sql.transaction((tx) => applyStatsEvents([act('doubled', 'agent-a', 'llm_call', `${DAY1}T10:00:09.000Z`, { cost_usd: 1, actual_cost_usd: 2 })], tx));
    expect(await getRun(sql, ORG, 'doubled')).toMatchObject({ cost_usd: 10, estimated_cost_usd: 5, actual_cost_usd: 10, action_count: 5 });
  });
});
