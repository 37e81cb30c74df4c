import {
  INTERVENTION_OUTCOMES,
  INTERVENTION_TYPES,
  endExclusive,
  roundUsd,
  type InterventionRecord,
  type InterventionStats,
  type InterventionStatsQuery,
  type ListInterventionsQuery,
} from '@agp/contracts';
import { ProjectionAnswerCache, WhereClause, checkpointPosition, pageStart, pageWithTotal, type SqlExecutor } from '@agp/eventstore';
import { READ_MODEL_PROJECTION } from './projections/interventionReadModel.js';
import { DEFAULT_ANSWER_CACHE_ENTRIES, rawJson, type RawJson } from '@agp/runtime';

const parseDoc = (doc: unknown): InterventionRecord => (typeof doc === 'string' ? JSON.parse(doc) : doc) as InterventionRecord;

/**
 * One page of the list read model, newest first (timestamp, then id), scoped to the organisation, as JSON text
 * `{interventions, total, skip, limit, next_cursor}`: the records are read as their stored JSON text (`doc`, a json
 * column) and joined, so a page is never parsed and re-serialised on its way to the client. Filters compose with AND;
 * an enum filter with several values matches any of them; `purpose` (default production) is always applied. `total`
 * counts every match: for a list filtered by purpose alone it comes from the totals projection (O(purposes)).
 * The page starts at `skip`, or after the row `cursor` names (a keyset page: an index range scan however deep the
 * walk); `next_cursor` names its last row (null on the last page).
 * Comes with the read model's projection position as of the same snapshot (undefined before the projection has a
 * checkpoint), for {@link InterventionListReader}'s cache. Source: spec §GET /api/v1/interventions; docs/api.md (Pagination).
 * @throws BadRequestError (400) for `cursor` with `skip`, or a cursor this list did not issue.
 */
export async function listInterventionsPage(db: SqlExecutor, org: string, q: ListInterventionsQuery): Promise<{ value: RawJson; position: bigint | undefined }> {
  const { skip, after } = pageStart(q);
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`).and(`purpose = ANY(${w.param(q.purpose)}::text[])`);
  if (q.type) w.and(`type = ANY(${w.param(q.type)}::text[])`);
  if (q.outcome) w.and(`outcome = ANY(${w.param(q.outcome)}::text[])`);
  if (q.risk_level) w.and(`risk_level = ANY(${w.param(q.risk_level)}::text[])`);
  if (q.action_name) w.and(`action_name = ${w.param(q.action_name)}`);
  if (q.agent_id) w.and(`agent_id = ${w.param(q.agent_id)}`);
  if (q.run_id) w.and(`run_id = ${w.param(q.run_id)}`);
  if (q.policy_id) w.and(`policy_id = ${w.param(q.policy_id)}`);
  if (q.start_date) w.and(`ts >= ${w.param(q.start_date.date.toISOString())}::timestamptz`);
  if (q.end_date) w.and(`ts < ${w.param(endExclusive(q.end_date).toISOString())}::timestamptz`);
  const filtered = w.size > 2;
  const page = await pageWithTotal<{ doc: string }>(db, {
    select: 'doc::text AS doc',
    from: 'agp_interventions',
    where: w.toString(),
    params: w.params,
    orderBy: 'ts DESC, id DESC',
    limit: q.limit,
    skip,
    ...(filtered ? {} : { totalSql: 'SELECT coalesce(sum(total), 0) FROM agp_intervention_totals WHERE organization_id = $1 AND purpose = ANY($2::text[])' }),
    checkpoint: READ_MODEL_PROJECTION,
    key: 'id',
    keyset: { sort: 'ts', key: 'id', after },
  });
  return {
    value: rawJson(`{"interventions":[${page.rows.map((r) => r.doc).join(',')}],"total":${page.total},"skip":${skip},"limit":${q.limit},"next_cursor":${JSON.stringify(page.nextCursor ?? null)}}`),
    position: page.position,
  };
}

/**
 * The list read model's query module, for any process that holds a connection to its database: the interventions
 * service, and the gateway, which answers `GET /api/v1/interventions` with it in-process (one hop instead
 * of gateway -> NATS -> service -> NATS -> gateway; docs/decisions.md). Pages are cached per organisation and query,
 * each tagged with the projection position it was read at; a cached page is served only after one primary-key read
 * of the checkpoint shows the projection has not moved since, so a hit is never staler than a fresh query and
 * read-your-writes holds across every replica (the write's reply is sent after its projection commit).
 * A page is kept as its UTF-8 bytes, not as a string: a cached page outlives young-generation collections, and a
 * ~50 KB string that does is copied into the old generation and collected there, where a Buffer's bytes live outside
 * the JavaScript heap; the bytes also go to the socket as they are, with no encoding per answer
 * (docs/performance.md, `pnpm bench list`).
 * Source: spec §GET /api/v1/interventions; architecture §3 (Projections).
 */
export class InterventionListReader {
  private readonly pages: ProjectionAnswerCache<Buffer>;

  /** @param maxEntries pages kept (AGP_ANSWER_CACHE_ENTRIES); 0 reads every page from the database. */
  constructor(
    private readonly db: SqlExecutor,
    maxEntries = DEFAULT_ANSWER_CACHE_ENTRIES,
  ) {
    this.pages = new ProjectionAnswerCache<Buffer>(maxEntries);
  }

  /**
   * One page `{interventions, total, skip, limit, next_cursor}` as UTF-8 JSON bytes (what the gateway sends as the
   * HTTP body). `q` is the query as the `interventions.list` wire row parsed it (defaults applied). The Buffer may be
   * the cached page itself: callers must not change it.
   * @throws BadRequestError (400) for `cursor` with `skip`, or a cursor this list did not issue.
   * @throws the driver's error when the database cannot be asked.
   */
  listBytes(org: string, q: ListInterventionsQuery): Promise<Buffer> {
    const key = `${org}\u0000${JSON.stringify(q)}`;
    return this.pages.getChecked(
      key,
      () => checkpointPosition(this.db, READ_MODEL_PROJECTION),
      async () => {
        const { value, position } = await listInterventionsPage(this.db, org, q);
        return { value: Buffer.from(value.$json), position };
      },
    );
  }

  /**
   * The same page as {@link listBytes}, as JSON text (a bus reply).
   * @throws BadRequestError (400) for `cursor` with `skip`, or a cursor this list did not issue.
   * @throws the driver's error when the database cannot be asked.
   */
  async list(org: string, q: ListInterventionsQuery): Promise<RawJson> {
    return rawJson((await this.listBytes(org, q)).toString('utf8'));
  }
}

/** The live record of an organisation, or null (unknown, deleted, or another organisation's). */
export async function getIntervention(db: SqlExecutor, org: string, id: string): Promise<InterventionRecord | null> {
  const { rows } = await db.query<{ doc: unknown }>('SELECT doc FROM agp_interventions WHERE id = $1 AND organization_id = $2', [id, org]);
  return rows[0] ? parseDoc(rows[0].doc) : null;
}

const DAY_MS = 86_400_000;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The statistics object from the stats projection (never from scanning records).
 * Period: without start_date, totals are all-time and the time series covers the last 30 days; with it,
 * both cover start_date .. end_date (default: today), the series zero-filled per UTC day (at most 366 days,
 * the most recent ones). Only the records of `q.purpose` (default production) count. Source: spec §Intervention
 * statistics object.
 * @param now current time (for "today").
 */
export async function interventionStats(db: SqlExecutor, org: string, q: InterventionStatsQuery, now: Date): Promise<InterventionStats> {
  const from = q.start_date ? isoDay(q.start_date.date) : null;
  // The stats grain is the UTC day: an end_date (date or date-time) includes its whole day.
  const toExclusive = q.end_date ? isoDay(new Date(q.end_date.date.getTime() + DAY_MS)) : null;
  const cond = ['organization_id = $1', 'purpose = ANY($2::text[])'];
  const params: unknown[] = [org, q.purpose];
  if (from) {
    params.push(from);
    cond.push(`day >= $${params.length}::date`);
  }
  if (toExclusive) {
    params.push(toExclusive);
    cond.push(`day < $${params.length}::date`);
  }
  const w = cond.join(' AND ');
  const seriesEnd = toExclusive ? new Date(Date.parse(toExclusive) - DAY_MS) : new Date(Date.parse(isoDay(now)));
  let seriesStart = from ? new Date(Date.parse(from)) : new Date(seriesEnd.getTime() - 29 * DAY_MS);
  if ((seriesEnd.getTime() - seriesStart.getTime()) / DAY_MS > 365) seriesStart = new Date(seriesEnd.getTime() - 365 * DAY_MS);

  const [byTypeOutcome, series, actions, policies] = await Promise.all([
    db.query<{ type: string; outcome: string; n: string; cost: number; hr: string }>(
      `SELECT type, outcome, sum(interventions) AS n, sum(cost_prevented_usd) AS cost, sum(high_risk_blocks) AS hr
       FROM agp_intervention_stats_daily WHERE ${w} GROUP BY type, outcome`,
      params,
    ),
    db.query<{ day: string | Date; type: string; n: string; cost: number }>(
      `SELECT day, type, sum(interventions) AS n, sum(cost_prevented_usd) AS cost FROM agp_intervention_stats_daily
       WHERE organization_id = $1 AND purpose = ANY($2::text[]) AND day >= $3::date AND day <= $4::date GROUP BY day, type`,
      [org, q.purpose, isoDay(seriesStart), isoDay(seriesEnd)],
    ),
    db.query<{ action_name: string; n: string; cost: number }>(
      `SELECT action_name, sum(blocked) AS n, sum(cost_prevented_usd) AS cost FROM agp_intervention_stats_actions
       WHERE ${w} GROUP BY action_name HAVING sum(blocked) > 0 ORDER BY n DESC, action_name LIMIT 10`,
      params,
    ),
    db.query<{ policy_id: string; policy_name: string; n: string }>(
      `SELECT policy_id, (array_agg(policy_name ORDER BY day DESC))[1] AS policy_name, sum(triggered) AS n
       FROM agp_intervention_stats_policies WHERE ${w} GROUP BY policy_id HAVING sum(triggered) > 0 ORDER BY n DESC, policy_id LIMIT 10`,
      params,
    ),
  ]);

  const by_type: Record<string, number> = Object.fromEntries(INTERVENTION_TYPES.map((t) => [t, 0]));
  const by_outcome: Record<string, number> = Object.fromEntries(INTERVENTION_OUTCOMES.map((o) => [o, 0]));
  let total = 0;
  let cost = 0;
  let hr = 0;
  for (const r of byTypeOutcome.rows) {
    const n = Number(r.n);
    by_type[r.type] = (by_type[r.type] ?? 0) + n;
    by_outcome[r.outcome] = (by_outcome[r.outcome] ?? 0) + n;
    total += n;
    cost += Number(r.cost);
    hr += Number(r.hr);
  }
  const perDay = new Map<string, { n: number; cost: number; by_type: Record<string, number> }>();
  for (const r of series.rows) {
    const day = typeof r.day === 'string' ? r.day.slice(0, 10) : isoDay(r.day);
    const d = perDay.get(day) ?? { n: 0, cost: 0, by_type: {} };
    const n = Number(r.n);
    d.n += n;
    d.cost += Number(r.cost);
    if (n !== 0) d.by_type[r.type] = n;
    perDay.set(day, d);
  }
  const time_series: InterventionStats['time_series'] = [];
  for (let t = seriesStart.getTime(); t <= seriesEnd.getTime(); t += DAY_MS) {
    const day = isoDay(new Date(t));
    const d = perDay.get(day);
    time_series.push({ date: day, interventions: d?.n ?? 0, cost_prevented_usd: d ? roundUsd(d.cost) : 0, by_type: d?.by_type ?? {} });
  }
  return {
    total_interventions: total,
    by_type,
    by_outcome,
    cost_prevented_usd: roundUsd(cost),
    high_risk_blocks: hr,
    time_series,
    top_blocked_actions: actions.rows.map((r) => ({ action_name: r.action_name, count: Number(r.n), cost_prevented_usd: roundUsd(Number(r.cost)) })),
    top_triggering_policies: policies.rows.map((r) => ({ policy_id: r.policy_id, policy_name: r.policy_name, count: Number(r.n) })),
  };
}

