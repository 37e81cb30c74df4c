import { RunEvents, type ActionRecordedData, type Purpose, type ProjectionName } from '@agp/contracts';
import { recordRefusedEvents, type SqlExecutor, type StoredEvent } from '@agp/eventstore';
import { StatsDeltas, evolveRun, runEventRejection, runTs, type RunRow, type Totals } from './runs.js';
import { counter, isoOrNull } from '@agp/runtime';

const refusedRunEvents = counter('agp_stats_run_events_refused_total', 'Run events the stats projection refused (recorded in agp_projection_dead_letters), by type', ['type']);

/** Name (and checkpoint key) of the projection. */
export const STATS_PROJECTION = 'stats-read-model' satisfies ProjectionName;

/** Event types it applies. */
export const STATS_EVENT_TYPES = Object.values(RunEvents);


interface RunDbRow extends Omit<RunRow, 'started_at' | 'ended_at' | 'first_action_at' | 'cost_usd' | 'estimated_cost_usd' | 'actual_cost_usd' | 'action_count'> {
  started_at: Date | string | null;
  ended_at: Date | string | null;
  first_action_at: Date | string | null;
  cost_usd: number | string;
  estimated_cost_usd: number | string;
  actual_cost_usd: number | string;
  action_count: number | string;
}

/**
 * Apply a batch of run events inside the subscription's transaction (its checkpoint commits with these writes):
 * read the touched run rows once (locked), fold the batch into them, write them back with one upsert, insert the
 * batch's ledger rows with one statement, and flush the aggregate deltas with one upsert per table. A run.start,
 * run.end or action.record that breaks a run's consistency (`runEventRejection`) is not folded (nor, for an action, put
 * in the ledger); it is recorded with its reason in
 * `agp_projection_dead_letters` in the same transaction.
 * Source: spec §Stats; architecture §3 (Projections).
 */
export async function applyStatsEvents(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const key = (org: string, run: string) => `${org}\u0000${run}`;
  const touched = new Map<string, { org: string; run: string }>();
  for (const e of events) {
    const run = String((e.data as { run_id?: unknown }).run_id);
    touched.set(key(e.metadata.organization_id, run), { org: e.metadata.organization_id, run });
  }
  const keys = [...touched.values()];
  const { rows } = await tx.query<RunDbRow>(
    `SELECT r.organization_id, r.run_id, r.agent_id, r.name, r.status, r.started_at, r.ended_at, r.first_action_at, r.cost_usd, r.estimated_cost_usd, r.actual_cost_usd, r.action_count, r.error, r.purpose
       FROM agp_runs r JOIN unnest($1::text[], $2::text[]) AS k(org, run) ON r.organization_id = k.org AND r.run_id = k.run
       FOR UPDATE OF r`,
    [keys.map((k) => k.org), keys.map((k) => k.run)],
  );
  const before = new Map<string, RunRow>();
  for (const r of rows) {
    before.set(key(r.organization_id, r.run_id), {
      ...r,
      started_at: isoOrNull(r.started_at),
      ended_at: isoOrNull(r.ended_at),
      first_action_at: isoOrNull(r.first_action_at),
      cost_usd: Number(r.cost_usd),
      estimated_cost_usd: Number(r.estimated_cost_usd),
      actual_cost_usd: Number(r.actual_cost_usd),
      action_count: Number(r.action_count),
    });
  }

  const deltas = new StatsDeltas();
  const after = new Map<string, RunRow>();
  const ledger: Array<{ org: string; purpose: Purpose; a: ActionRecordedData }> = [];
  const refused: Array<{ event: StoredEvent; reason: string }> = [];
  for (const e of events) {
    const k = key(e.metadata.organization_id, String((e.data as { run_id?: unknown }).run_id));
    const cur = after.get(k) ?? before.get(k) ?? null;
    const reason = runEventRejection(cur, e);
    if (reason) {
      refused.push({ event: e, reason });
      refusedRunEvents.inc({ type: e.type });
      continue;
    }
    const run = evolveRun(cur, e);
    after.set(k, run);
    if (e.type === RunEvents.ActionRecorded) {
      // An action counts as its run's purpose (fixed by the run's first event), whatever it states itself.
      const a = e.data as unknown as ActionRecordedData;
      ledger.push({ org: e.metadata.organization_id, purpose: run.purpose, a });
      deltas.action(e.metadata.organization_id, run.purpose, a);
    }
  }
  for (const [k, r] of after) {
    const prev = before.get(k);
    if (prev) deltas.run(prev, -1);
    deltas.run(r, 1);
  }

  const runs = [...after.values()];
  const rc = <T>(f: (r: RunRow) => T) => runs.map(f);
  await tx.query(
    `INSERT INTO agp_runs AS t (organization_id, run_id, agent_id, name, status, started_at, ended_at, first_action_at, ts, cost_usd, estimated_cost_usd, actual_cost_usd, action_count, error, purpose)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::float8[], $11::float8[], $12::float8[], $13::bigint[], $14::text[], $15::text[])
     ON CONFLICT (organization_id, run_id) DO UPDATE SET
       agent_id = EXCLUDED.agent_id, name = EXCLUDED.name, status = EXCLUDED.status, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
       first_action_at = EXCLUDED.first_action_at, ts = EXCLUDED.ts, cost_usd = EXCLUDED.cost_usd, estimated_cost_usd = EXCLUDED.estimated_cost_usd,
       actual_cost_usd = EXCLUDED.actual_cost_usd, action_count = EXCLUDED.action_count, error = EXCLUDED.error`,
    [
      rc((r) => r.organization_id),
      rc((r) => r.run_id),
      rc((r) => r.agent_id),
      rc((r) => r.name),
      rc((r) => r.status),
      rc((r) => r.started_at),
      rc((r) => r.ended_at),
      rc((r) => r.first_action_at),
      rc((r) => runTs(r)),
      rc((r) => r.cost_usd),
      rc((r) => r.estimated_cost_usd),
      rc((r) => r.actual_cost_usd),
      rc((r) => r.action_count),
      rc((r) => r.error),
      rc((r) => r.purpose),
    ],
  );

  if (ledger.length) {
    const lc = <T>(f: (x: (typeof ledger)[number]) => T) => ledger.map(f);
    await tx.query(
      `INSERT INTO agp_ledger (id, organization_id, run_id, agent_id, action_name, status, ts, cost_usd, actual_cost_usd, duration_ms, inputs, outputs, error, purpose)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::float8[], $9::float8[], $10::float8[], $11::jsonb[], $12::jsonb[], $13::text[], $14::text[])
       ON CONFLICT (id) DO NOTHING`,
      [
        lc((x) => x.a.id),
        lc((x) => x.org),
        lc((x) => x.a.run_id),
        lc((x) => x.a.agent_id),
        lc((x) => x.a.action_name),
        lc((x) => x.a.status),
        lc((x) => x.a.timestamp),
        lc((x) => x.a.cost_usd ?? null),
        lc((x) => x.a.actual_cost_usd ?? null),
        lc((x) => x.a.duration_ms ?? null),
        lc((x) => (x.a.inputs === undefined ? null : JSON.stringify(x.a.inputs))),
        lc((x) => (x.a.outputs === undefined ? null : JSON.stringify(x.a.outputs))),
        lc((x) => x.a.error ?? null),
        lc((x) => x.purpose),
      ],
    );
  }
  await flushStatsDeltas(deltas, tx);
  await recordRefusedEvents(tx, STATS_PROJECTION, refused);
}

const nonZero = (t: Totals) => Object.values(t).some((v) => v !== 0);
const TOTAL_COLS = 'runs, runs_running, runs_completed, runs_failed, actions, cost_usd, estimated_cost_usd, actual_cost_usd, duration_ms, duration_n';
const TOTAL_SET = TOTAL_COLS.split(', ')
  .map((c) => `${c} = s.${c} + EXCLUDED.${c}`)
  .join(', ');
const totalsParams = (ts: Totals[]) => [
  ts.map((t) => t.runs),
  ts.map((t) => t.running),
  ts.map((t) => t.completed),
  ts.map((t) => t.failed),
  ts.map((t) => t.actions),
  ts.map((t) => t.cost),
  ts.map((t) => t.estimated),
  ts.map((t) => t.actual),
  ts.map((t) => t.dur),
  ts.map((t) => t.durN),
];
const TOTAL_TYPES = '$4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::float8[], $10::float8[], $11::float8[], $12::float8[], $13::bigint[]';

/**
 * Write every accumulated delta (see {@link StatsDeltas}) with one statement per aggregate table, each row keyed by
 * organisation and purpose. Used by the projection and by the read-model migration that marks eval runs.
 */
export async function flushStatsDeltas(d: StatsDeltas, tx: SqlExecutor): Promise<void> {
  const daily = [...d.daily.values()].filter((v) => nonZero(v.t));
  if (daily.length) {
    await tx.query(
      `INSERT INTO agp_stats_daily AS s (organization_id, purpose, day, ${TOTAL_COLS})
       SELECT * FROM unnest($1::text[], $2::text[], $3::date[], ${TOTAL_TYPES})
       ON CONFLICT (organization_id, purpose, day) DO UPDATE SET ${TOTAL_SET}`,
      [daily.map((v) => v.org), daily.map((v) => v.purpose), daily.map((v) => v.day), ...totalsParams(daily.map((v) => v.t))],
    );
  }
  const agents = [...d.agents.values()].filter((v) => nonZero(v.t));
  if (agents.length) {
    await tx.query(
      `INSERT INTO agp_stats_agents AS s (organization_id, purpose, agent_id, ${TOTAL_COLS})
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], ${TOTAL_TYPES})
       ON CONFLICT (organization_id, purpose, agent_id) DO UPDATE SET ${TOTAL_SET}`,
      [agents.map((v) => v.org), agents.map((v) => v.purpose), agents.map((v) => v.agent), ...totalsParams(agents.map((v) => v.t))],
    );
  }
  const aa = [...d.agentActions.values()];
  if (aa.length) {
    await tx.query(
      `INSERT INTO agp_stats_agent_actions AS s (organization_id, purpose, agent_id, action_name, actions, cost_usd, estimated_cost_usd)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[])
       ON CONFLICT (organization_id, purpose, agent_id, action_name) DO UPDATE SET actions = s.actions + EXCLUDED.actions, cost_usd = s.cost_usd + EXCLUDED.cost_usd,
         estimated_cost_usd = s.estimated_cost_usd + EXCLUDED.estimated_cost_usd`,
      [aa.map((v) => v.org), aa.map((v) => v.purpose), aa.map((v) => v.agent), aa.map((v) => v.action), aa.map((v) => v.n), aa.map((v) => v.cost), aa.map((v) => v.estimated)],
    );
  }
  const sa = [...d.skewActions.values()];
  if (sa.length) {
    const b = (i: number) => sa.map((v) => v.b[i]);
    await tx.query(
      `INSERT INTO agp_stats_skew_actions AS s (organization_id, purpose, action_name, n, sum_skew, sum_abs_skew, b0, b1, b2, b3, b4, b5)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::float8[], $6::float8[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])
       ON CONFLICT (organization_id, purpose, action_name) DO UPDATE SET n = s.n + EXCLUDED.n, sum_skew = s.sum_skew + EXCLUDED.sum_skew, sum_abs_skew = s.sum_abs_skew + EXCLUDED.sum_abs_skew,
         b0 = s.b0 + EXCLUDED.b0, b1 = s.b1 + EXCLUDED.b1, b2 = s.b2 + EXCLUDED.b2, b3 = s.b3 + EXCLUDED.b3, b4 = s.b4 + EXCLUDED.b4, b5 = s.b5 + EXCLUDED.b5`,
      [sa.map((v) => v.org), sa.map((v) => v.purpose), sa.map((v) => v.action), sa.map((v) => v.n), sa.map((v) => v.sum), sa.map((v) => v.abs), b(0), b(1), b(2), b(3), b(4), b(5)],
    );
  }
  const sh = [...d.skewHist.values()];
  if (sh.length) {
    await tx.query(
      `INSERT INTO agp_stats_skew_hist AS s (organization_id, purpose, bucket, n, sum_skew)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], $5::float8[])
       ON CONFLICT (organization_id, purpose, bucket) DO UPDATE SET n = s.n + EXCLUDED.n, sum_skew = s.sum_skew + EXCLUDED.sum_skew`,
      [sh.map((v) => v.org), sh.map((v) => v.purpose), sh.map((v) => v.bucket), sh.map((v) => v.n), sh.map((v) => v.sum)],
    );
  }
}
