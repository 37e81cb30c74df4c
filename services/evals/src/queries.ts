import {
  EVAL_MAX_REPLY_BYTES,
  evalHeadline,
  type EvalBenchmarks,
  type EvalBenchmarksQuery,
  type EvalComparison,
  type EvalRun,
  type EvalRunDetail,
  type EvalScenario,
  type ListEvalRunsQuery,
} from '@agp/contracts';
import { WhereClause, pageWithTotal, type SqlExecutor } from '@agp/eventstore';

/**
 * Read queries of the evals service, over its read model only (`agp_eval_runs`), each scoped to the organisation.
 * Every answer fits {@link EVAL_MAX_REPLY_BYTES}: pages hold the items that fit, a comparison lists what fits and
 * says what it left out. Source: spec §Evals.
 */

/** Newest first; `seq` (the event's global position) orders runs created in the same millisecond. */
const NEWEST_FIRST = 'created_at DESC, seq DESC';
/** Room kept for an answer's envelope and fixed fields when items are fitted into {@link EVAL_MAX_REPLY_BYTES}. */
const ENVELOPE_BYTES = 4096;

/** Filters of the history and of `latest` (AND). */
export interface EvalRunFilters {
  suite?: string;
  agent_id?: string;
  branch?: string;
}

/** `organization_id = $1 AND …` with one parameter per filter given. */
function whereOf(org: string, f: EvalRunFilters): { where: string; params: unknown[] } {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`);
  for (const field of ['suite', 'agent_id', 'branch'] as const) {
    const value = f[field];
    if (value !== undefined) w.and(`${field} = ${w.param(value)}`);
  }
  return { where: String(w), params: w.params };
}

/**
 * How many of `texts` (JSON texts, in order) fit `budget` bytes together with a comma between each: the longest
 * prefix, but always at least one (a run always fits, see `decideSubmit`).
 */
export function fittingCount(texts: readonly string[], budget: number): number {
  let used = 0;
  for (let i = 0; i < texts.length; i++) {
    used += Buffer.byteLength(texts[i]) + 1;
    if (used > budget && i > 0) return i;
  }
  return texts.length;
}

/**
 * `GET /api/v1/evals/`: one page of the history, newest first, filtered by suite, agent and branch, `{eval_runs,
 * total, skip, limit}`. Runs come without their scenarios. The page holds fewer than `limit` runs when more would not
 * fit {@link EVAL_MAX_REPLY_BYTES}.
 */
export async function listEvalRuns(db: SqlExecutor, org: string, q: ListEvalRunsQuery): Promise<{ eval_runs: EvalRun[]; total: number; skip: number; limit: number }> {
  const { where, params } = whereOf(org, q);
  const page = await pageWithTotal<{ doc: string }>(db, { select: 'doc::text AS doc', from: 'agp_eval_runs', where, params, orderBy: NEWEST_FIRST, limit: q.limit, skip: q.skip });
  const texts = page.rows.map((r) => r.doc);
  const n = fittingCount(texts, EVAL_MAX_REPLY_BYTES - ENVELOPE_BYTES);
  return { eval_runs: texts.slice(0, n).map((t) => JSON.parse(t) as EvalRun), total: page.total, skip: q.skip, limit: q.limit };
}

/** A run with its scenarios from its two stored texts. */
const detailOf = (r: { doc: string; scenarios: string }): EvalRunDetail => ({ ...(JSON.parse(r.doc) as EvalRun), scenarios: JSON.parse(r.scenarios) as EvalScenario[] });

/** The latest run of the organisation matching the filters (newest `created_at`), with its scenarios; null when none. */
export async function latestEvalRun(db: SqlExecutor, org: string, f: EvalRunFilters): Promise<EvalRunDetail | null> {
  const { where, params } = whereOf(org, f);
  const { rows } = await db.query<{ doc: string; scenarios: string }>(`SELECT doc::text AS doc, scenarios::text AS scenarios FROM agp_eval_runs WHERE ${where} ORDER BY ${NEWEST_FIRST} LIMIT 1`, params);
  return rows[0] ? detailOf(rows[0]) : null;
}

/** One run of the organisation with its scenarios; null when unknown or another organisation's. */
export async function getEvalRun(db: SqlExecutor, org: string, id: string): Promise<EvalRunDetail | null> {
  const { rows } = await db.query<{ doc: string; scenarios: string }>('SELECT doc::text AS doc, scenarios::text AS scenarios FROM agp_eval_runs WHERE organization_id = $1 AND id = $2', [org, id]);
  return rows[0] ? detailOf(rows[0]) : null;
}

/**
 * The CI baseline of a submission: the latest run of the organisation's `suite` and `agent_id` on `branch` (the
 * submission's default branch), other than run `excludeId`, with its scenarios; null when there is none.
 * Source: architecture §4 (Eval run, ci_status).
 */
export async function ciBaseline(db: SqlExecutor, org: string, suite: string, agentId: string, branch: string, excludeId: string): Promise<{ id: string; scenarios: EvalScenario[] } | null> {
  const { rows } = await db.query<{ id: string; scenarios: string }>(
    `SELECT id, scenarios::text AS scenarios FROM agp_eval_runs
      WHERE organization_id = $1 AND suite = $2 AND agent_id = $3 AND branch = $4 AND id <> $5
      ORDER BY ${NEWEST_FIRST} LIMIT 1`,
    [org, suite, agentId, branch, excludeId],
  );
  return rows[0] ? { id: rows[0].id, scenarios: JSON.parse(rows[0].scenarios) as EvalScenario[] } : null;
}

/**
 * `GET /api/v1/evals/benchmarks`: a page of (suite, agent) pairs in suite then agent order, each with its run count,
 * its last `q.runs` runs oldest first (the trend), its best run (highest grade, then block rate, then correctness,
 * then newest, over all its runs) and its latest. The page holds fewer than `limit` pairs when more would not fit
 * {@link EVAL_MAX_REPLY_BYTES}.
 */
export async function evalBenchmarks(db: SqlExecutor, org: string, q: EvalBenchmarksQuery): Promise<EvalBenchmarks> {
  const { where, params } = whereOf(org, { suite: q.suite, agent_id: q.agent_id });
  const n = params.length;
  const { rows: pairs } = await db.query<{ suite: string; agent_id: string; total_runs: number | string; pairs: number | string }>(
    `SELECT suite, agent_id, count(*) AS total_runs, count(*) OVER () AS pairs FROM agp_eval_runs WHERE ${where}
      GROUP BY suite, agent_id ORDER BY suite, agent_id LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...params, q.limit, q.skip],
  );
  let total = pairs.length ? Number(pairs[0].pairs) : 0;
  if (pairs.length === 0 && q.skip > 0) {
    const { rows } = await db.query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM agp_eval_runs WHERE ${where} GROUP BY suite, agent_id) AS p`, params);
    total = Number(rows[0]?.n ?? 0);
  }
  if (pairs.length === 0) return { benchmarks: [], total, skip: q.skip, limit: q.limit };

  const { rows } = await db.query<{ suite: string; agent_id: string; recent: number | string; best: number | string; doc: string }>(
    `SELECT suite, agent_id, recent, best, doc FROM (
       SELECT r.suite, r.agent_id, r.created_at, r.seq, r.doc::text AS doc,
              row_number() OVER (PARTITION BY r.suite, r.agent_id ORDER BY r.created_at DESC, r.seq DESC) AS recent,
              row_number() OVER (PARTITION BY r.suite, r.agent_id ORDER BY r.grade ASC, r.block_rate DESC NULLS LAST, r.correctness_rate DESC, r.created_at DESC, r.seq DESC) AS best
         FROM agp_eval_runs r JOIN unnest($2::text[], $3::text[]) AS k(s, a) ON r.suite = k.s AND r.agent_id = k.a
        WHERE r.organization_id = $1
     ) x WHERE recent <= $4 OR best = 1
     ORDER BY suite, agent_id, created_at, seq`,
    [org, pairs.map((p) => p.suite), pairs.map((p) => p.agent_id), q.runs],
  );
  const point = (doc: string) => {
    const { suite: _s, agent_id: _a, ...rest } = evalHeadline(JSON.parse(doc) as EvalRun);
    return rest;
  };
  const key = (suite: string, agent: string) => `${suite}\u0000${agent}`;
  const byPair = new Map<string, { trend: ReturnType<typeof point>[]; best?: ReturnType<typeof point> }>();
  for (const r of rows) {
    const entry = byPair.get(key(r.suite, r.agent_id)) ?? { trend: [] };
    const p = point(r.doc);
    if (Number(r.recent) <= q.runs) entry.trend.push(p);
    if (Number(r.best) === 1) entry.best = p;
    byPair.set(key(r.suite, r.agent_id), entry);
  }
  const benchmarks = pairs.map((p) => {
    const entry = byPair.get(key(p.suite, p.agent_id))!;
    return { suite: p.suite, agent_id: p.agent_id, total_runs: Number(p.total_runs), trend: entry.trend, best: entry.best!, latest: entry.trend[entry.trend.length - 1] };
  });
  const fit = fittingCount(
    benchmarks.map((b) => JSON.stringify(b)),
    EVAL_MAX_REPLY_BYTES - ENVELOPE_BYTES,
  );
  return { benchmarks: benchmarks.slice(0, fit), total, skip: q.skip, limit: q.limit };
}

/** The lists of a comparison that may be shortened to fit an answer, least important first. */
const TRIMMABLE = ['only_in_baseline', 'only_in_current', 'by_category', 'improvements', 'regressions'] as const;

/**
 * `comparison` as it fits {@link EVAL_MAX_REPLY_BYTES}: unchanged when it fits; otherwise entries are dropped from the
 * end of its lists, least important first (scenarios on one side only, per-category deltas, improvements, then
 * regressions), and a warning says how many of each list are shown. Mutates and returns `comparison`.
 */
export function fitComparison(comparison: EvalComparison, budget = EVAL_MAX_REPLY_BYTES - ENVELOPE_BYTES): EvalComparison {
  let size = Buffer.byteLength(JSON.stringify(comparison));
  for (const name of TRIMMABLE) {
    if (size <= budget) break;
    const list = comparison[name] as unknown[];
    const before = list.length;
    while (size > budget && list.length > 0) size -= Buffer.byteLength(JSON.stringify(list.pop())) + 1;
    const warning = `only ${list.length} of the ${before} entries of ${name} are listed: the whole comparison is over the ${budget} bytes one answer holds`;
    comparison.warnings.push(warning);
    size += Buffer.byteLength(JSON.stringify(warning)) + 1;
  }
  return comparison;
}
