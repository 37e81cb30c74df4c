import {
  LEDGER_CSV_COLUMNS,
  SKEW_BUCKETS,
  endExclusive,
  type AgentStats,
  type EstimationAccuracy,
  type LedgerEntry,
  type LedgerExportPage,
  type LedgerExportQuery,
  type ListRunsQuery,
  type Purpose,
  type Run,
  type RunPage,
  type StatsDaily,
  type StatsPeriod,
  type StatsSummary,
  roundUsd,
} from '@agp/contracts';
import { WhereClause, pageStart, pageWithTotal, type SqlExecutor } from '@agp/eventstore';
import { csvField, isoOrNull } from '@agp/runtime';
import { LEDGER_ACTUAL, LEDGER_COST, LEDGER_ESTIMATED } from './projections/schema.js';

/**
 * Read queries of the stats service, over its read models only, each scoped to the organisation. The stats
 * endpoints read the incremental aggregate tables (O(days), O(actions), O(histogram buckets)); lists and the
 * export read indexed pages of `agp_runs` / `agp_ledger`. Every read takes the purposes to include (`purpose` of the
 * query, `production` by default: eval runs and their actions are left out unless asked for). Source: spec §Stats;
 * docs/decisions.md (Eval data).
 */

const DAY_MS = 86_400_000;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
/** A USD sum read from the database (a number or numeric text), rounded by `roundUsd`. */
const usd = (v: unknown) => roundUsd(Number(v ?? 0));
/** Fractions and milliseconds rounded to 1e-6. */
const frac = (v: number) => Math.round(v * 1e6) / 1e6;
const num = (v: unknown) => Number(v ?? 0);

interface SumRow {
  runs: string;
  running: string;
  completed: string;
  failed: string;
  actions: string;
  /** Σ per action of the actual cost where reported, else the estimate (USD). */
  cost: number;
  estimated: number;
  actual: number;
  dur: number;
  dur_n: string;
}
const SUMS = `coalesce(sum(runs), 0) AS runs, coalesce(sum(runs_running), 0) AS running, coalesce(sum(runs_completed), 0) AS completed,
  coalesce(sum(runs_failed), 0) AS failed, coalesce(sum(actions), 0) AS actions, coalesce(sum(cost_usd), 0) AS cost,
  coalesce(sum(estimated_cost_usd), 0) AS estimated, coalesce(sum(actual_cost_usd), 0) AS actual, coalesce(sum(duration_ms), 0) AS dur, coalesce(sum(duration_n), 0) AS dur_n`;

/** Totals, by-status counts and averages from one row of sums. */
function totals(r: SumRow) {
  const actions = num(r.actions);
  const completed = num(r.completed);
  const failed = num(r.failed);
  return {
    total_runs: num(r.runs),
    runs_by_status: { running: num(r.running), completed, failed },
    success_rate: completed + failed > 0 ? frac(completed / (completed + failed)) : 0,
    total_actions: actions,
    total_cost_usd: usd(r.cost),
    total_estimated_cost_usd: usd(r.estimated),
    total_actual_cost_usd: usd(r.actual),
    avg_cost_per_action_usd: actions > 0 ? usd(num(r.cost) / actions) : 0,
    avg_duration_ms: num(r.dur_n) > 0 ? frac(num(r.dur) / num(r.dur_n)) : 0,
  };
}

/**
 * The period of a stats answer at `now`: the last `days` UTC days including today (`start_date` = today − (days − 1)),
 * or all time (`days` and `start_date` null) when `days` is absent; `end_date` is today. Dates are `YYYY-MM-DD`.
 */
export function statsPeriod(days: number | undefined, now: Date): StatsPeriod {
  const today = isoDay(now);
  return { days: days ?? null, start_date: days ? isoDay(new Date(Date.parse(today) - (days - 1) * DAY_MS)) : null, end_date: today };
}

/**
 * `GET /api/v1/stats/`: sums of the daily aggregates of `purposes` over the last `days` UTC days including today (all
 * days when absent). O(days × purposes).
 */
export async function statsSummary(db: SqlExecutor, org: string, days: number | undefined, now: Date, purposes: readonly Purpose[]): Promise<StatsSummary> {
  const period = statsPeriod(days, now);
  const { rows } = period.start_date
    ? await db.query<SumRow>(`SELECT ${SUMS} FROM agp_stats_daily WHERE organization_id = $1 AND purpose = ANY($2::text[]) AND day >= $3::date AND day <= $4::date`, [
        org,
        purposes,
        period.start_date,
        period.end_date,
      ])
    : await db.query<SumRow>(`SELECT ${SUMS} FROM agp_stats_daily WHERE organization_id = $1 AND purpose = ANY($2::text[])`, [org, purposes]);
  return { ...totals(rows[0]), period };
}

/** `GET /api/v1/stats/daily`: the last 30 UTC days including today of `purposes`, oldest first, zero-filled. O(30). */
export async function statsDaily(db: SqlExecutor, org: string, now: Date, purposes: readonly Purpose[]): Promise<StatsDaily> {
  const end = Date.parse(isoDay(now));
  const start = end - 29 * DAY_MS;
  const { rows } = await db.query<{ day: string; runs: string; actions: string; cost: number; estimated: number; actual: number }>(
    `SELECT day::text AS day, sum(runs) AS runs, sum(actions) AS actions, sum(cost_usd) AS cost, sum(estimated_cost_usd) AS estimated, sum(actual_cost_usd) AS actual
       FROM agp_stats_daily WHERE organization_id = $1 AND purpose = ANY($2::text[]) AND day >= $3::date AND day <= $4::date GROUP BY day`,
    [org, purposes, isoDay(new Date(start)), isoDay(new Date(end))],
  );
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const days: StatsDaily['days'] = [];
  for (let t = start; t <= end; t += DAY_MS) {
    const date = isoDay(new Date(t));
    const r = byDay.get(date);
    days.push({ date, cost_usd: usd(r?.cost), estimated_cost_usd: usd(r?.estimated), actual_cost_usd: usd(r?.actual), runs: num(r?.runs), actions: num(r?.actions) });
  }
  return { days };
}

/**
 * `GET /api/v1/stats/estimation-accuracy`. The overall mean comes from the histogram sums; p50 and p95 are
 * nearest-rank percentiles found in SQL with a running sum over the 1-point histogram (the bucket's mean skew is
 * reported). Per-action figures come from `agp_stats_skew_actions`. O(buckets + actions).
 */
export async function estimationAccuracy(db: SqlExecutor, org: string, purposes: readonly Purpose[]): Promise<EstimationAccuracy> {
  // The tables hold one row per purpose; the CTEs sum the purposes asked for into one row per bucket or action.
  const actionsOf = `SELECT action_name, sum(n) AS n, sum(sum_skew) AS sum_skew, sum(sum_abs_skew) AS sum_abs_skew,
       sum(b0) AS b0, sum(b1) AS b1, sum(b2) AS b2, sum(b3) AS b3, sum(b4) AS b4, sum(b5) AS b5
     FROM agp_stats_skew_actions WHERE organization_id = $1 AND purpose = ANY($2::text[]) GROUP BY action_name HAVING sum(n) > 0`;
  const [overall, worst, hist] = await Promise.all([
    db.query<{ total: string | null; sum: number | null; p50: number | null; p95: number | null }>(
      `WITH b AS (
         SELECT bucket, sum(n) AS n, sum(sum_skew) AS sum_skew FROM agp_stats_skew_hist
          WHERE organization_id = $1 AND purpose = ANY($2::text[]) GROUP BY bucket HAVING sum(n) > 0),
       h AS (SELECT bucket, n, sum_skew, sum(n) OVER (ORDER BY bucket) AS cum, sum(n) OVER () AS total FROM b)
       SELECT (SELECT max(total) FROM h) AS total, (SELECT sum(sum_skew) FROM h) AS sum,
              (SELECT sum_skew / n FROM h WHERE cum >= ceil(0.50 * total) ORDER BY bucket LIMIT 1) AS p50,
              (SELECT sum_skew / n FROM h WHERE cum >= ceil(0.95 * total) ORDER BY bucket LIMIT 1) AS p95`,
      [org, purposes],
    ),
    db.query<{ action_name: string; n: string; sum_skew: number; sum_abs_skew: number }>(
      `WITH a AS (${actionsOf}) SELECT action_name, n, sum_skew, sum_abs_skew FROM a ORDER BY sum_abs_skew / n DESC, action_name LIMIT 10`,
      [org, purposes],
    ),
    db.query<{ action_name: string; b0: string; b1: string; b2: string; b3: string; b4: string; b5: string }>(
      `WITH a AS (${actionsOf}) SELECT action_name, b0, b1, b2, b3, b4, b5 FROM a ORDER BY action_name LIMIT 100`,
      [org, purposes],
    ),
  ]);
  const o = overall.rows[0];
  const n = num(o?.total);
  const nullable = (v: number | null | undefined) => (v === null || v === undefined ? null : frac(Number(v)));
  return {
    actions_compared: n,
    mean_skew: n > 0 ? frac(num(o.sum) / n) : null,
    p50_skew: n > 0 ? nullable(o.p50) : null,
    p95_skew: n > 0 ? nullable(o.p95) : null,
    worst_offenders: worst.rows.map((r) => ({ action_name: r.action_name, mean_abs_skew: frac(num(r.sum_abs_skew) / num(r.n)), mean_skew: frac(num(r.sum_skew) / num(r.n)), count: num(r.n) })),
    histograms: hist.rows.map((r) => ({
      action_name: r.action_name,
      buckets: SKEW_BUCKETS.map((bucket, i) => ({ bucket, count: num(r[`b${i}` as 'b0']) })),
    })),
  };
}

interface RunDbRow {
  run_id: string;
  agent_id: string;
  name: string | null;
  status: Run['status'];
  started_at: Date | string | null;
  ended_at: Date | string | null;
  cost_usd: number;
  estimated_cost_usd: number;
  actual_cost_usd: number;
  action_count: string;
  error: string | null;
  purpose: Purpose;
}
const RUN_COLS = 'run_id, agent_id, name, status, started_at, ended_at, cost_usd, estimated_cost_usd, actual_cost_usd, action_count, error, purpose';

function toRun(r: RunDbRow): Run {
  const started = isoOrNull(r.started_at);
  const ended = isoOrNull(r.ended_at);
  return {
    id: r.run_id,
    agent_id: r.agent_id,
    name: r.name,
    status: r.status,
    started_at: started,
    ended_at: ended,
    // Never negative: the projection refuses an end before the start; a row stored before that rule shows null.
    duration_ms: started && ended && ended >= started ? Date.parse(ended) - Date.parse(started) : null,
    cost_usd: usd(r.cost_usd),
    estimated_cost_usd: usd(r.estimated_cost_usd),
    actual_cost_usd: usd(r.actual_cost_usd),
    action_count: num(r.action_count),
    error: r.error,
    purpose: r.purpose,
  };
}

/**
 * `GET /api/v1/runs`: a page newest first (run time, then id); filters AND (`purpose`: the runs of those purposes);
 * `total` counts every match. `min_cost` (USD) compares with the run's `cost_usd` (actual where reported, else
 * estimated). The page starts at `skip` or after the run `cursor` names; `next_cursor` names its last run (null on
 * the last page). docs/api.md (Pagination).
 * @throws BadRequestError (400) for `cursor` with `skip`, or a cursor this list did not issue.
 */
export async function listRuns(db: SqlExecutor, org: string, q: ListRunsQuery): Promise<RunPage> {
  const { skip, after } = pageStart(q);
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`).and(`purpose = ANY(${w.param(q.purpose)}::text[])`);
  if (q.status) w.and(`status = ${w.param(q.status)}`);
  if (q.agent_id) w.and(`agent_id = ${w.param(q.agent_id)}`);
  if (q.min_cost !== undefined) w.and(`cost_usd >= ${w.param(q.min_cost)}::float8`);
  const page = await pageWithTotal<RunDbRow>(db, { select: RUN_COLS, from: 'agp_runs', where: w.toString(), params: w.params, orderBy: 'ts DESC, run_id DESC', limit: q.limit, skip, keyset: { sort: 'ts', key: 'run_id', after } });
  return { runs: page.rows.map(toRun), total: page.total, skip, limit: q.limit, next_cursor: page.nextCursor ?? null };
}

/** One run of the organisation (whatever its purpose), or null. */
export async function getRun(db: SqlExecutor, org: string, id: string): Promise<Run | null> {
  const { rows } = await db.query<RunDbRow>(`SELECT ${RUN_COLS} FROM agp_runs WHERE organization_id = $1 AND run_id = $2`, [org, id]);
  return rows[0] ? toRun(rows[0]) : null;
}

/** A ledger row as selected for the API and the export (`inputs`/`outputs` as JSON text, never parsed). */
export interface LedgerDbRow {
  id: string;
  ts: Date | string;
  /** `ts` as PostgreSQL prints it (microsecond precision), for the keyset cursor. */
  ts_key: string;
  run_id: string;
  agent_id: string;
  action_name: string;
  status: LedgerEntry['status'];
  cost_usd: number | null;
  actual_cost_usd: number | null;
  duration_ms: number | null;
  inputs: string | null;
  outputs: string | null;
  error: string | null;
  purpose: Purpose;
}
const LEDGER_COLS = 'id, ts, ts::text AS ts_key, run_id, agent_id, action_name, status, cost_usd, actual_cost_usd, duration_ms, inputs::text AS inputs, outputs::text AS outputs, error, purpose';

const q = JSON.stringify;
/** One ledger entry as JSON text (see LedgerEntrySchema); inputs/outputs are spliced in as stored. */
export function entryJson(r: LedgerDbRow): string {
  return (
    `{"id":${q(r.id)},"run_id":${q(r.run_id)},"agent_id":${q(r.agent_id)},"action_name":${q(r.action_name)},"status":${q(r.status)},` +
    `"timestamp":"${new Date(r.ts).toISOString()}","cost_usd":${r.cost_usd ?? null},"actual_cost_usd":${r.actual_cost_usd ?? null},` +
    `"duration_ms":${r.duration_ms ?? null},"inputs":${r.inputs ?? 'null'},"outputs":${r.outputs ?? 'null'},"error":${q(r.error)},"purpose":${q(r.purpose)}}`
  );
}

/** RFC 4180 field, neutralised against formula injection: `csvField` of @agp/runtime (shared with the audit log export). */
export { csvField };

/**
 * One ledger entry as a CSV line (columns LEDGER_CSV_COLUMNS, CRLF-terminated). The numeric columns (cost_usd,
 * actual_cost_usd, duration_ms) are numbers; every other column is text, neutralised by {@link csvField}.
 */
export function entryCsv(r: LedgerDbRow): string {
  const cols: Record<(typeof LEDGER_CSV_COLUMNS)[number], string | number | null> = {
    id: r.id,
    timestamp: new Date(r.ts).toISOString(),
    run_id: r.run_id,
    agent_id: r.agent_id,
    action_name: r.action_name,
    status: r.status,
    cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
    actual_cost_usd: r.actual_cost_usd === null ? null : Number(r.actual_cost_usd),
    duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    inputs: r.inputs,
    outputs: r.outputs,
    error: r.error,
    purpose: r.purpose,
  };
  return `${LEDGER_CSV_COLUMNS.map((c) => csvField(cols[c])).join(',')}\r\n`;
}

/** A page of a run's actions, oldest first. */
export async function runActions(db: SqlExecutor, org: string, runId: string, skip: number, limit: number): Promise<LedgerEntry[]> {
  const { rows } = await db.query<LedgerDbRow>(`SELECT ${LEDGER_COLS} FROM agp_ledger WHERE organization_id = $1 AND run_id = $2 ORDER BY ts, id LIMIT $3 OFFSET $4`, [org, runId, limit, skip]);
  return rows.map((r) => JSON.parse(entryJson(r)) as LedgerEntry);
}

/** Rows per export page, and the most text per page (a NATS message is at most 1 MiB, JSON-escaped). */
export const EXPORT_PAGE_ROWS = 2000;
export const EXPORT_PAGE_BYTES = 384 * 1024;

/**
 * One keyset page of the ledger export, oldest first (timestamp, then id), formatted: at most EXPORT_PAGE_ROWS
 * rows and about EXPORT_PAGE_BYTES of text (always at least one row). Index range scan on (org, ts, id) or
 * (org, agent_id, ts, id) (or (org, purpose, ts, id)), so every page costs the same however deep the export is. Only
 * the entries of runs of `query.purpose` (default production).
 */
export async function ledgerExportPage(db: SqlExecutor, org: string, query: LedgerExportQuery, cursor: { ts: string; id: string } | null): Promise<LedgerExportPage> {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`).and(`purpose = ANY(${w.param(query.purpose)}::text[])`);
  if (query.agent_id) w.and(`agent_id = ${w.param(query.agent_id)}`);
  if (query.start_date) w.and(`ts >= ${w.param(query.start_date.date.toISOString())}::timestamptz`);
  if (query.end_date) w.and(`ts < ${w.param(endExclusive(query.end_date).toISOString())}::timestamptz`);
  if (cursor) w.and(`(ts, id) > (${w.param(cursor.ts)}::timestamptz, ${w.param(cursor.id)})`);
  const { rows } = await db.query<LedgerDbRow>(`SELECT ${LEDGER_COLS} FROM agp_ledger WHERE ${w} ORDER BY ts, id LIMIT ${w.param(EXPORT_PAGE_ROWS)}`, w.params);
  const parts: string[] = [];
  let bytes = 0;
  let last: LedgerDbRow | null = null;
  for (const r of rows) {
    const text = query.format === 'csv' ? entryCsv(r) : query.format === 'jsonl' ? `${entryJson(r)}\n` : entryJson(r);
    if (parts.length > 0 && bytes + text.length > EXPORT_PAGE_BYTES) break;
    parts.push(text);
    bytes += text.length;
    last = r;
  }
  const more = parts.length < rows.length || rows.length === EXPORT_PAGE_ROWS;
  return {
    format: query.format,
    text: query.format === 'json' ? parts.join(',') : parts.join(''),
    rows: parts.length,
    next_cursor: more && last ? { ts: last.ts_key, id: last.id } : null,
  };
}

/** An agent's stats without the intervention counts and the period (which the service adds). */
export type AgentTotals = Omit<AgentStats, 'interventions' | 'period'>;

/** The agent stats of one row of sums and the top actions (name, count, cost in USD: actual where reported, else estimated). */
function agentTotalsOf(agentId: string, sums: SumRow, top: Array<{ action_name: string; actions: string | number; cost_usd: number | null }>): AgentTotals {
  const t = totals(sums);
  return {
    agent_id: agentId,
    total_runs: t.total_runs,
    runs_by_status: t.runs_by_status,
    total_actions: t.total_actions,
    total_cost_usd: t.total_cost_usd,
    total_estimated_cost_usd: t.total_estimated_cost_usd,
    total_actual_cost_usd: t.total_actual_cost_usd,
    avg_cost_per_run_usd: t.total_runs > 0 ? usd(t.total_cost_usd / t.total_runs) : 0,
    avg_duration_ms: t.avg_duration_ms,
    top_actions: top.map((r) => ({ action: r.action_name, count: num(r.actions), cost: usd(r.cost_usd) })),
  };
}

/** The stats of an agent with no runs or actions: every count, sum and average 0, no top actions. */
export function emptyAgentTotals(agentId: string): AgentTotals {
  return agentTotalsOf(agentId, { runs: '0', running: '0', completed: '0', failed: '0', actions: '0', cost: 0, estimated: 0, actual: 0, dur: 0, dur_n: '0' }, []);
}

/**
 * Per-agent all-time totals and top 10 actions by count (then name) from the agent aggregates of `purposes`; null
 * when the agent has no runs or actions of them. O(agent's action names).
 */
export async function agentTotals(db: SqlExecutor, org: string, agentId: string, purposes: readonly Purpose[]): Promise<AgentTotals | null> {
  const [sums, top] = await Promise.all([
    db.query<SumRow>(`SELECT ${SUMS} FROM agp_stats_agents WHERE organization_id = $1 AND agent_id = $2 AND purpose = ANY($3::text[])`, [org, agentId, purposes]),
    db.query<{ action_name: string; actions: string; cost_usd: number }>(
      `SELECT action_name, sum(actions) AS actions, sum(cost_usd) AS cost_usd FROM agp_stats_agent_actions
        WHERE organization_id = $1 AND agent_id = $2 AND purpose = ANY($3::text[]) GROUP BY action_name HAVING sum(actions) > 0 ORDER BY sum(actions) DESC, action_name LIMIT 10`,
      [org, agentId, purposes],
    ),
  ]);
  const t = agentTotalsOf(agentId, sums.rows[0], top.rows);
  return t.total_runs === 0 && t.total_actions === 0 ? null : t;
}

/**
 * Per-agent totals and top 10 actions over the UTC days `start_date`..`end_date` (`YYYY-MM-DD`, both included):
 * runs whose `ts` (start, else first action, else end: the day `agp_stats_daily` counts them on) falls in them, and
 * actions timestamped in them. There is no per-agent per-day aggregate, so this reads the agent's rows of the window:
 * one range scan of `agp_runs_org_agent_ts` and one of `agp_ledger_org_agent_ts` (grouped by action name, ordered as
 * {@link agentTotals} orders its top actions; the totals are summed from the groups). O(runs + actions of the agent
 * in the window). Zeros when there are none.
 */
export async function agentWindowTotals(db: SqlExecutor, org: string, agentId: string, period: { start_date: string; end_date: string }, purposes: readonly Purpose[]): Promise<AgentTotals> {
  const from = `${period.start_date}T00:00:00Z`;
  const to = new Date(Date.parse(`${period.end_date}T00:00:00Z`) + DAY_MS).toISOString();
  const [runs, actions] = await Promise.all([
    db.query<Pick<SumRow, 'runs' | 'running' | 'completed' | 'failed'>>(
      `SELECT count(*) AS runs, count(*) FILTER (WHERE status = 'running') AS running, count(*) FILTER (WHERE status = 'completed') AS completed,
              count(*) FILTER (WHERE status = 'failed') AS failed
         FROM agp_runs WHERE organization_id = $1 AND agent_id = $2 AND ts >= $3::timestamptz AND ts < $4::timestamptz AND purpose = ANY($5::text[])`,
      [org, agentId, from, to, purposes],
    ),
    db.query<{ action_name: string; actions: string; cost_usd: number | null; estimated: number | null; actual: number | null; dur: number | null; dur_n: string }>(
      `SELECT action_name, count(*) AS actions, sum(${LEDGER_COST}) AS cost_usd, sum(${LEDGER_ESTIMATED}) AS estimated, sum(${LEDGER_ACTUAL}) AS actual, sum(duration_ms) AS dur, count(duration_ms) AS dur_n
         FROM agp_ledger WHERE organization_id = $1 AND agent_id = $2 AND ts >= $3::timestamptz AND ts < $4::timestamptz AND purpose = ANY($5::text[])
        GROUP BY action_name ORDER BY count(*) DESC, action_name`,
      [org, agentId, from, to, purposes],
    ),
  ]);
  const groups = actions.rows;
  const sum = (f: (g: (typeof groups)[number]) => unknown) => groups.reduce((acc, g) => acc + num(f(g)), 0);
  const sums: SumRow = {
    ...runs.rows[0],
    actions: String(sum((g) => g.actions)),
    cost: sum((g) => g.cost_usd),
    estimated: sum((g) => g.estimated),
    actual: sum((g) => g.actual),
    dur: sum((g) => g.dur),
    dur_n: String(sum((g) => g.dur_n)),
  };
  return agentTotalsOf(agentId, sums, groups.slice(0, 10));
}
