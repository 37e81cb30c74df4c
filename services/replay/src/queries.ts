import { REPLAY_ANALYSIS_TOP, REPLAY_ANALYSIS_TREND, REPLAY_STATUSES, type DivergenceDetail, type ReplayAggregates, type ReplayAnalysis, type ReplayHistoryPage, type ReplayHistoryQuery, type ReplayRunHistoryPage, type ReplaySubmission, type ReplaySubmissionDetail } from '@agp/contracts';
import { WhereClause, type SqlExecutor } from '@agp/eventstore';

/**
 * Read queries of the replay service, over its read model only (`agp_replay_submissions`), each scoped to the
 * organisation. Aggregates are computed in SQL (the USD sum over `numeric`, so it is exact).
 * Source: spec §Replay history, §Limits.
 */

/** Newest first; `seq` (the event's global position) orders submissions stored in the same millisecond. */
const NEWEST_FIRST = 'submitted_at DESC, seq DESC';

type Num = number | string;
/** Aggregates of a row of counts as the driver answers them (bigint and numeric come as text). */
const aggregatesOf = (r: { n: Num; a: Num; d: Num; c: Num } | undefined): ReplayAggregates => ({
  submissions: Number(r?.n ?? 0),
  actions_replayed: Number(r?.a ?? 0),
  divergences: Number(r?.d ?? 0),
  cost_saved_usd: Number(r?.c ?? 0),
});

/** The aggregate columns over the rows of `where`. */
const AGGREGATES = 'count(*) AS n, coalesce(sum(actions_replayed), 0)::text AS a, coalesce(sum(divergences), 0)::text AS d, coalesce(sum(cost_savings), 0)::text AS c';

/**
 * One page of the history of the organisation (or of one run with `runId`), newest first, `{submissions, total,
 * skip, limit, aggregates}`: the aggregates and the page come from one statement (one snapshot), and the aggregates
 * cover every matching submission, not only the page. The organisation's page lists submissions without their
 * divergence details (`divergence_details_count` only); one run's page ({@link replayRunHistory}) carries them.
 */
export function replayHistory(db: SqlExecutor, org: string, q: ReplayHistoryQuery): Promise<ReplayHistoryPage> {
  return historyPage(db, org, q, undefined, false) as Promise<ReplayHistoryPage>;
}

/**
 * One run's page of the history (as {@link replayHistory}), each submission with its `divergence_details` (at most
 * `REPLAY_MAX_DETAILS` per submission, as submitted): what diverged, step by step. An empty page for a run never
 * replayed.
 */
export function replayRunHistory(db: SqlExecutor, org: string, q: ReplayHistoryQuery, runId: string): Promise<ReplayRunHistoryPage> {
  return historyPage(db, org, q, runId, true) as Promise<ReplayRunHistoryPage>;
}

async function historyPage(db: SqlExecutor, org: string, q: ReplayHistoryQuery, runId: string | undefined, withDetails: boolean): Promise<ReplayHistoryPage | ReplayRunHistoryPage> {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`);
  if (runId !== undefined) w.and(`run_id = ${w.param(runId)}`);
  const details = withDetails ? ', details::text AS details' : '';
  const { rows } = await db.query<{ n: Num; a: Num; d: Num; c: Num; doc: string | null; details?: string | null }>(
    `WITH agg AS (SELECT ${AGGREGATES} FROM agp_replay_submissions WHERE ${w})
     SELECT agg.n, agg.a, agg.d, agg.c, p.* FROM agg
       LEFT JOIN LATERAL (SELECT doc::text AS doc${details}, submitted_at, seq FROM agp_replay_submissions WHERE ${w} ORDER BY ${NEWEST_FIRST} LIMIT ${w.param(q.limit)} OFFSET ${w.param(q.skip)}) AS p ON true
      ORDER BY p.submitted_at DESC, p.seq DESC`,
    w.params,
  );
  const aggregates = aggregatesOf(rows[0]);
  const submissions = rows
    .filter((r) => r.doc !== null)
    .map((r): ReplaySubmission | ReplaySubmissionDetail => (withDetails ? { ...(JSON.parse(r.doc!) as ReplaySubmission), divergence_details: JSON.parse(r.details ?? '[]') as DivergenceDetail[] } : (JSON.parse(r.doc!) as ReplaySubmission)));
  return { submissions, total: aggregates.submissions, skip: q.skip, limit: q.limit, aggregates };
}

/**
 * The divergence analysis of one run over all its submissions (see `ReplayAnalysisSchema` for every definition):
 * aggregates, divergence rate, submissions by status, the most divergent steps and actions (from the divergence
 * details), and the trend per submission, oldest first. A run never replayed answers zeros and empty lists.
 */
export async function replayAnalysis(db: SqlExecutor, org: string, runId: string): Promise<ReplayAnalysis> {
  const where = 'organization_id = $1 AND run_id = $2';
  const params = [org, runId];
  const [agg, statuses, steps, actions, trend] = await Promise.all([
    db.query<{ n: Num; a: Num; d: Num; c: Num }>(`SELECT ${AGGREGATES} FROM agp_replay_submissions WHERE ${where}`, params),
    db.query<{ status: string; n: Num }>(`SELECT status, count(*) AS n FROM agp_replay_submissions WHERE ${where} GROUP BY status`, params),
    db.query<{ step: Num; action_name: string; divergences: Num; submissions: Num }>(
      `SELECT (d->>'step')::bigint AS step, min(d->>'action_name') AS action_name, count(*) AS divergences, count(DISTINCT s.id) AS submissions
         FROM agp_replay_submissions s CROSS JOIN LATERAL json_array_elements(s.details) AS d
        WHERE ${where} GROUP BY 1 ORDER BY divergences DESC, step ASC LIMIT $3`,
      [...params, REPLAY_ANALYSIS_TOP],
    ),
    db.query<{ action_name: string; divergences: Num; submissions: Num }>(
      `SELECT d->>'action_name' AS action_name, count(*) AS divergences, count(DISTINCT s.id) AS submissions
         FROM agp_replay_submissions s CROSS JOIN LATERAL json_array_elements(s.details) AS d
        WHERE ${where} GROUP BY 1 ORDER BY divergences DESC, action_name ASC LIMIT $3`,
      [...params, REPLAY_ANALYSIS_TOP],
    ),
    db.query<{ doc: string }>(
      `SELECT doc FROM (SELECT doc::text AS doc, submitted_at, seq FROM agp_replay_submissions WHERE ${where} ORDER BY ${NEWEST_FIRST} LIMIT $3) AS t ORDER BY submitted_at, seq`,
      [...params, REPLAY_ANALYSIS_TREND],
    ),
  ]);
  const aggregates = aggregatesOf(agg.rows[0]);
  const share = (k: Num) => (aggregates.submissions ? Number(k) / aggregates.submissions : 0);
  const by_status = Object.fromEntries(REPLAY_STATUSES.map((s) => [s, 0])) as ReplayAnalysis['by_status'];
  for (const r of statuses.rows) by_status[r.status as keyof typeof by_status] = Number(r.n);
  return {
    run_id: runId,
    aggregates,
    divergence_rate: aggregates.actions_replayed ? aggregates.divergences / aggregates.actions_replayed : null,
    by_status,
    by_step: steps.rows.map((r) => ({ step: Number(r.step), action_name: r.action_name, divergences: Number(r.divergences), submissions: Number(r.submissions), share: share(r.submissions) })),
    by_action: actions.rows.map((r) => ({ action_name: r.action_name, divergences: Number(r.divergences), submissions: Number(r.submissions), share: share(r.submissions) })),
    trend: trend.rows.map((r) => {
      const s = JSON.parse(r.doc) as ReplaySubmission;
      return { submission_id: s.id, submitted_at: s.submitted_at, status: s.status, actions_replayed: s.actions_replayed, divergences: s.divergences, rate: s.actions_replayed ? s.divergences / s.actions_replayed : null };
    }),
  };
}
