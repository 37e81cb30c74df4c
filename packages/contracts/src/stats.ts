import { z } from 'zod';
import { DateFilterSchema, NextCursorSchema, OpaqueIdSchema, keysetPaginationShape, paginationShape } from './common.js';
import { ACTION_STATUSES, RunStatusSchema, type ActionStatus } from './fleet.js';
import { endExclusive } from './intervention.js';
import { PurposeFilterSchema, PurposeSchema } from './purpose.js';

/**
 * Runs, the action ledger and the stats endpoints of `services/stats`.
 * Source: spec §Stats, list_runs, get_agent_stats, export_ledger;
 * architecture §4 (Runs, Estimation accuracy).
 */

/** Domain events of a run stream `run-<deterministicId(org, run_id)>`. */
export const RunEvents = {
  Started: 'RunStarted',
  Ended: 'RunEnded',
  ActionRecorded: 'ActionRecorded',
} as const;

/** Data of RunStarted: the run.start body with `started_at` resolved (ISO 8601 UTC). */
export const RunStartedDataSchema = z.object({
  run_id: z.string(),
  agent_id: z.string(),
  name: z.string().optional(),
  session_id: z.string().optional(),
  started_at: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** As the client stated it (absent when it did not; the run's purpose is then `purposeOf`'s). */
  purpose: PurposeSchema.optional(),
  ingest_event_id: z.string(),
});
export type RunStartedData = z.infer<typeof RunStartedDataSchema>;

/** Data of RunEnded: the run.end body with `ended_at` resolved (ISO 8601 UTC). */
export const RunEndedDataSchema = z.object({
  run_id: z.string(),
  agent_id: z.string(),
  status: z.enum(['completed', 'failed']),
  ended_at: z.string(),
  error: z.string().optional(),
  /** As the client stated it (absent when it did not). */
  purpose: PurposeSchema.optional(),
  ingest_event_id: z.string(),
});
export type RunEndedData = z.infer<typeof RunEndedDataSchema>;

/** Data of ActionRecorded: one ledger entry. `id` is the platform-assigned UUIDv7; costs in USD, duration in ms. */
export const ActionRecordedDataSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  agent_id: z.string(),
  action_name: z.string(),
  status: z.enum(ACTION_STATUSES),
  inputs: z.record(z.string(), z.unknown()).optional(),
  outputs: z.unknown().optional(),
  /** Estimated cost, USD. */
  cost_usd: z.number().optional(),
  /** What the provider charged, USD. */
  actual_cost_usd: z.number().optional(),
  /** ms. */
  duration_ms: z.number().optional(),
  timestamp: z.string(),
  error: z.string().optional(),
  /** As the client stated it (absent when it did not); the ledger entry counts as its run's purpose. */
  purpose: PurposeSchema.optional(),
  ingest_event_id: z.string(),
});
export type ActionRecordedData = z.infer<typeof ActionRecordedDataSchema>;

/**
 * The cost of one recorded action, USD: what the provider charged (`actual_cost_usd`) where it reported it, else the
 * client's estimate (`cost_usd`), else 0. The one definition behind a run's `cost_usd`, the stats' `total_cost_usd`,
 * the per-day and per-agent costs, `min_cost`, counterfactual evaluation and a replay's `cost_savings`. Pure; accepts
 * an event's data (absent fields) or a ledger entry (null fields). Source: docs/decisions.md (Run cost); architecture §4 (Runs).
 */
export function actionCostUsd(a: { cost_usd?: number | null; actual_cost_usd?: number | null }): number {
  return a.actual_cost_usd ?? a.cost_usd ?? 0;
}

/**
 * What one recorded action spent, USD: {@link actionCostUsd} of an action that ran (status `success` or `error`), 0 for
 * a `blocked` one, whatever estimate its ledger entry carries (an action that did not run spent nothing; what a block
 * prevented is the intervention's `cost_prevented_usd`). The rule behind a run's `cost_usd` and every cost the stats
 * sum. Pure. Source: docs/decisions.md (Run cost).
 */
export function actionSpentUsd(a: { status: ActionStatus; cost_usd?: number | null; actual_cost_usd?: number | null }): number {
  return a.status === 'blocked' ? 0 : actionCostUsd(a);
}

/** Largest `days` look-back of `GET /api/v1/stats/` (ten years). */
export const STATS_MAX_DAYS = 3650;

/**
 * The `days` query parameter of the stats endpoints: an integer 1..{@link STATS_MAX_DAYS} (query strings are
 * coerced), looking back that many UTC days including today; absent = all time. A bad value is a 422 naming
 * `query.days`.
 */
const StatsDaysSchema = z.coerce.number({ message: 'expected an integer' }).int('expected an integer').min(1, `must be between 1 and ${STATS_MAX_DAYS}`).max(STATS_MAX_DAYS, `must be between 1 and ${STATS_MAX_DAYS}`);

/**
 * Query of `GET /api/v1/stats/`: `days` (integer 1..3650) looks back that many UTC days including today; absent = all
 * time. `purpose` (default production) picks the runs and actions counted.
 */
export const StatsSummaryQuerySchema = z.strictObject({ days: StatsDaysSchema.optional(), purpose: PurposeFilterSchema });
export type StatsSummaryQuery = z.infer<typeof StatsSummaryQuerySchema>;

/**
 * The period a stats answer covers: `days` as asked (null = all time), its first UTC day `start_date` (`YYYY-MM-DD`,
 * null = all time) and its last, `end_date` (today, UTC).
 */
export const StatsPeriodSchema = z.object({ days: z.number().int().nullable(), start_date: z.string().nullable(), end_date: z.string() });
export type StatsPeriod = z.infer<typeof StatsPeriodSchema>;

/** Runs counted by status. */
export const RunsByStatusSchema = z.object({ running: z.number().int(), completed: z.number().int(), failed: z.number().int() });

/**
 * `GET /api/v1/stats/`. Runs are counted on the UTC day they started (or were first seen), actions and costs on
 * the day of the action. `total_cost_usd` = Σ {@link actionSpentUsd} (each executed action's actual cost where the provider
 * reported one, else its estimate); `avg_cost_per_action_usd` = total_cost_usd ÷ actions; `avg_duration_ms` = mean
 * `duration_ms` over actions that reported one. Averages are 0 when there is nothing to average. Source: docs/decisions.md
 * (Run cost).
 */
export const StatsSummarySchema = z.object({
  total_runs: z.number().int(),
  runs_by_status: RunsByStatusSchema,
  /** completed ÷ (completed + failed); 0 when no run has ended. */
  success_rate: z.number(),
  total_actions: z.number().int(),
  /** Total cost, USD: per action the provider-reported actual cost where there is one, else the client's estimate. */
  total_cost_usd: z.number(),
  /** Sum of the clients' estimated `cost_usd`, USD (actions without one add nothing). */
  total_estimated_cost_usd: z.number(),
  /** Sum of provider-reported `actual_cost_usd`, USD (actions without one add nothing). */
  total_actual_cost_usd: z.number(),
  /** total_cost_usd ÷ total_actions, USD. */
  avg_cost_per_action_usd: z.number(),
  avg_duration_ms: z.number(),
  /** The period covered: `days` as asked (null = all time), first and last UTC day (start null = all time). */
  period: StatsPeriodSchema,
});
export type StatsSummary = z.infer<typeof StatsSummarySchema>;

/** `GET /api/v1/stats/daily` takes only `purpose` (default production; an unknown parameter is a 422). */
export const StatsDailyQuerySchema = z.strictObject({ purpose: PurposeFilterSchema });
export type StatsDailyQuery = z.infer<typeof StatsDailyQuerySchema>;

/** `GET /api/v1/stats/daily`: the last 30 UTC days including today, oldest first, zero-filled. */
export const StatsDailySchema = z.object({
  days: z.array(
    z.object({
      /** `YYYY-MM-DD` (UTC). */
      date: z.string(),
      /** Cost of that day's actions, USD: each action's actual cost where reported, else its estimate. */
      cost_usd: z.number(),
      /** Sum of that day's estimates, USD. */
      estimated_cost_usd: z.number(),
      /** Sum of that day's provider-reported costs, USD. */
      actual_cost_usd: z.number(),
      /** Runs that started that day. */
      runs: z.number().int(),
      actions: z.number().int(),
    }),
  ),
});
export type StatsDaily = z.infer<typeof StatsDailySchema>;

/** `GET /api/v1/stats/estimation-accuracy` takes only `purpose` (default production); all time. */
export const EstimationAccuracyQuerySchema = z.strictObject({ purpose: PurposeFilterSchema });
export type EstimationAccuracyQuery = z.infer<typeof EstimationAccuracyQuerySchema>;

/**
 * The six fixed skew buckets of architecture §4 (Estimation accuracy), with their exact bounds on the skew
 * fraction s: `<=-50%` s ≤ −0.5; `-50%..-10%` −0.5 < s < −0.1; `-10%..10%` −0.1 ≤ s ≤ 0.1; `10%..50%` 0.1 < s ≤ 0.5;
 * `50%..100%` 0.5 < s ≤ 1; `>100%` s > 1.
 */
export const SKEW_BUCKETS = ['<=-50%', '-50%..-10%', '-10%..10%', '10%..50%', '50%..100%', '>100%'] as const;

/** The label of the bucket a skew fraction falls in (see {@link SKEW_BUCKETS}). */
export function skewBucket(skew: number): (typeof SKEW_BUCKETS)[number] {
  return SKEW_BUCKETS[skewBucketIndex(skew)];
}

/** Index (0..5) in {@link SKEW_BUCKETS} of the bucket a skew fraction falls in (the projection stores counts by index). */
export function skewBucketIndex(skew: number): number {
  if (skew <= -0.5) return 0;
  if (skew < -0.1) return 1;
  if (skew <= 0.1) return 2;
  if (skew <= 0.5) return 3;
  if (skew <= 1) return 4;
  return 5;
}

/**
 * `GET /api/v1/stats/estimation-accuracy`. skew = (actual − estimated) ÷ estimated as a fraction (0.25 = 25 %
 * over the estimate), per action with both `cost_usd` > 0 and `actual_cost_usd`. p50/p95 are nearest-rank
 * percentiles over a histogram of 1-percentage-point buckets (skew clamped to −100 %..+1000 %): the value reported
 * is the mean skew of the bucket holding that rank, so it is exact when that bucket's values are equal and within
 * one percentage point otherwise. All values are null when no action has both costs.
 */
export const EstimationAccuracySchema = z.object({
  actions_compared: z.number().int(),
  mean_skew: z.number().nullable(),
  p50_skew: z.number().nullable(),
  p95_skew: z.number().nullable(),
  /** Top 10 action names by mean |skew|, largest first. */
  worst_offenders: z.array(z.object({ action_name: z.string(), mean_abs_skew: z.number(), mean_skew: z.number(), count: z.number().int() })),
  /** Per action name (alphabetical, at most 100), the count in each of the six buckets. */
  histograms: z.array(z.object({ action_name: z.string(), buckets: z.array(z.object({ bucket: z.enum(SKEW_BUCKETS), count: z.number().int() })) })),
});
export type EstimationAccuracy = z.infer<typeof EstimationAccuracySchema>;

/**
 * Query of `GET /api/v1/runs`: the list_runs filters (AND), newest first, paged by `skip` or `cursor` (not both: 400;
 * docs/api.md (Pagination)). `min_cost` in USD, compared with the run's `cost_usd` (actual where reported, else
 * estimated; see {@link RunSchema}).
 */
export const ListRunsQuerySchema = z.strictObject({
  status: RunStatusSchema.optional(),
  min_cost: z.coerce.number({ message: 'expected a number' }).finite().min(0, 'must be 0 or more').optional(),
  agent_id: OpaqueIdSchema.optional(),
  purpose: PurposeFilterSchema,
  ...keysetPaginationShape(50, 1000),
});
export type ListRunsQuery = z.infer<typeof ListRunsQuerySchema>;

/**
 * A run. `id` is the client's run id. `started_at` is null when run.start never arrived, `ended_at` null while running.
 * Costs in USD: `cost_usd` = Σ {@link actionSpentUsd} over its actions that ran (the provider-reported actual cost where there
 * is one, else the client's estimate); `estimated_cost_usd` = Σ of the estimates; `actual_cost_usd` = Σ of the
 * reported ones (actions without one add nothing to either). `duration_ms` = ended_at − started_at when both are
 * known, else null. Source: docs/decisions.md (Run cost); architecture §4 (Runs).
 */
export const RunSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  name: z.string().nullable(),
  status: RunStatusSchema,
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  cost_usd: z.number(),
  estimated_cost_usd: z.number(),
  actual_cost_usd: z.number(),
  action_count: z.number().int(),
  error: z.string().nullable(),
  /** `eval` for a run an eval harness recorded (left out of lists and stats by default), else `production`. */
  purpose: PurposeSchema,
});
export type Run = z.infer<typeof RunSchema>;

/** A page of runs `{runs, total, skip, limit, next_cursor}` (`skip` 0 on a page asked by `cursor`). */
export const RunPageSchema = z.object({ runs: z.array(RunSchema), total: z.number().int(), skip: z.number().int(), limit: z.number().int(), next_cursor: NextCursorSchema });
export type RunPage = z.infer<typeof RunPageSchema>;

/** One ledger entry (one action) as the API and the export return it. USD costs, `duration_ms` in ms. */
export const LedgerEntrySchema = z.object({
  id: z.string(),
  run_id: z.string(),
  agent_id: z.string(),
  action_name: z.string(),
  status: z.enum(ACTION_STATUSES),
  timestamp: z.string(),
  cost_usd: z.number().nullable(),
  actual_cost_usd: z.number().nullable(),
  duration_ms: z.number().nullable(),
  inputs: z.record(z.string(), z.unknown()).nullable(),
  outputs: z.unknown(),
  error: z.string().nullable(),
  /** Its run's purpose. */
  purpose: PurposeSchema,
});
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** Query of `GET /api/v1/runs/{id}`: its actions are paginated, oldest first (default 1000, the maximum). */
export const GetRunQuerySchema = z.strictObject({
  actions_skip: z.coerce.number().int('expected an integer').min(0, 'must be 0 or more').default(0),
  actions_limit: z.coerce.number().int('expected an integer').min(1, 'must be between 1 and 1000').max(1000, 'must be between 1 and 1000').default(1000),
});

/** `GET /api/v1/runs/{id}`: the run plus a page of its actions. */
export const RunDetailSchema = RunSchema.extend({
  actions: z.array(LedgerEntrySchema),
  actions_total: z.number().int(),
  actions_skip: z.number().int(),
  actions_limit: z.number().int(),
});
export type RunDetail = z.infer<typeof RunDetailSchema>;

/**
 * Query of `interventions.agent-counts` (the stats service's agent stats with `days`): only records whose `timestamp`
 * falls from `start_date` to `end_date` (ISO 8601 date or date-time; a date-only end_date includes that whole UTC
 * day); either absent = unbounded on that side. End before start is a 422 naming `query.end_date`.
 */
export const AgentInterventionCountsQuerySchema = z
  .strictObject({ start_date: DateFilterSchema.optional(), end_date: DateFilterSchema.optional(), purpose: PurposeFilterSchema })
  .superRefine((q, ctx) => {
    if (q.start_date && q.end_date && q.start_date.date >= endExclusive(q.end_date)) {
      ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'end_date must not be before start_date' });
    }
  });
export type AgentInterventionCountsQuery = z.infer<typeof AgentInterventionCountsQuerySchema>;

/**
 * Interventions of one agent, answered by the interventions service: live (not deleted) records, all time or those
 * whose `timestamp` is in the asked window. Every type and outcome is listed (zeros included). `cost_prevented_usd`
 * in USD.
 */
export const AgentInterventionCountsSchema = z.object({
  total: z.number().int(),
  by_type: z.record(z.string(), z.number().int()),
  by_outcome: z.record(z.string(), z.number().int()),
  cost_prevented_usd: z.number(),
});
export type AgentInterventionCounts = z.infer<typeof AgentInterventionCountsSchema>;

/**
 * Query of `GET /api/v1/agents/{id}/stats`: `days` (integer 1..3650, as {@link StatsSummaryQuerySchema}'s) looks back
 * that many UTC days including today; absent = all time. Unknown parameters are a 422.
 */
export const AgentStatsQuerySchema = z.strictObject({ days: StatsDaysSchema.optional(), purpose: PurposeFilterSchema });
export type AgentStatsQuery = z.infer<typeof AgentStatsQuerySchema>;

/**
 * `GET /api/v1/agents/{id}/stats`: per-agent totals, intervention counts and the top 10 actions by count (then name).
 * All time without `days`; with `days`, everything covers the window of {@link AgentStatsQuerySchema} (today's UTC
 * day included, later timestamps not): runs are those whose start (else first action, else end) falls in it, as
 * `GET /api/v1/stats/` counts them; actions, costs, durations and `top_actions` are those of actions timestamped in
 * it; `interventions` counts records timestamped in it. Costs as {@link StatsSummarySchema}'s: `total_cost_usd`
 * is per action the actual cost where reported, else the estimate. `avg_cost_per_run_usd` = total_cost_usd (USD) ÷
 * runs, `avg_duration_ms` = mean `duration_ms` of the actions that reported one; both 0 when there is nothing to
 * average. An agent with no run, action or intervention at all (all time) is a 404; one with none in the window
 * answers zeros. Source: spec §get_agent_stats; docs/mcp.md.
 */
export const AgentStatsSchema = z.object({
  agent_id: z.string(),
  total_runs: z.number().int(),
  runs_by_status: RunsByStatusSchema,
  total_actions: z.number().int(),
  /** Total cost, USD: per action the provider-reported actual cost where there is one, else the client's estimate. */
  total_cost_usd: z.number(),
  /** Sum of the clients' estimated `cost_usd`, USD. */
  total_estimated_cost_usd: z.number(),
  /** Sum of provider-reported `actual_cost_usd`, USD. */
  total_actual_cost_usd: z.number(),
  /** total_cost_usd ÷ total_runs, USD. */
  avg_cost_per_run_usd: z.number(),
  /** ms. */
  avg_duration_ms: z.number(),
  interventions: AgentInterventionCountsSchema,
  /** Up to 10 action names by count, then name; `cost` = their summed cost (actual where reported, else estimated), USD. */
  top_actions: z.array(z.object({ action: z.string(), count: z.number().int(), cost: z.number() })),
  /** The period covered, as {@link StatsSummarySchema}'s. */
  period: StatsPeriodSchema,
});
export type AgentStats = z.infer<typeof AgentStatsSchema>;

/** Formats of the ledger export. */
export const EXPORT_FORMATS = ['json', 'jsonl', 'csv'] as const;

/**
 * Query of `GET /api/v1/ledger/export`: `format` (required), `start_date` / `end_date` (ISO 8601 date or date-time;
 * a date-only end_date includes that day), `agent_id`. End before start is a 422.
 */
export const LedgerExportQuerySchema = z
  .strictObject({
    format: z.enum(EXPORT_FORMATS),
    start_date: DateFilterSchema.optional(),
    end_date: DateFilterSchema.optional(),
    agent_id: OpaqueIdSchema.optional(),
    purpose: PurposeFilterSchema,
  })
  .superRefine((q, ctx) => {
    if (q.start_date && q.end_date && q.start_date.date >= endExclusive(q.end_date)) {
      ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'end_date must not be before start_date' });
    }
  });
export type LedgerExportQuery = z.infer<typeof LedgerExportQuerySchema>;

/** Keyset cursor of the export: the last row's timestamp (ISO) and id. */
export const ExportCursorSchema = z.strictObject({ ts: z.string(), id: z.string() });

/**
 * One page of the export, already formatted: `text` is a run of whole records in the requested format (json:
 * elements joined by commas, without brackets; jsonl: lines; csv: lines without the header). `next_cursor` is null
 * on the last page.
 */
export const LedgerExportPageSchema = z.object({ format: z.enum(EXPORT_FORMATS), text: z.string(), rows: z.number().int(), next_cursor: ExportCursorSchema.nullable() });
export type LedgerExportPage = z.infer<typeof LedgerExportPageSchema>;

/** CSV columns of the export, in order (inputs and outputs as JSON text). */
export const LEDGER_CSV_COLUMNS = ['id', 'timestamp', 'run_id', 'agent_id', 'action_name', 'status', 'cost_usd', 'actual_cost_usd', 'duration_ms', 'inputs', 'outputs', 'error', 'purpose'] as const;
