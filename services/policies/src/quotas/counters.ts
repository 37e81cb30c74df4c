/**
 * Fleet-wide quotas, the reading side: the organisation's counters as `GET /api/v1/quotas` lists them, and what each
 * limit has left as the decision API reads it. Reads write nothing: an active lease already past its expiry (not yet
 * reclaimed, which the next grant on its counter does) is answered as returned — its unspent part is not counted in
 * `committed`, and its holder is not counted in `holders`. Source: docs/api.md (Quotas).
 */
import { quotaUnitOf, type ListQuotasQuery, type QuotaCounter, type QuotaCounterPage } from '@agp/contracts';
import { WhereClause, pageWithTotal, type SqlExecutor } from '@agp/eventstore';
import { counterId, keysJson, rowsByKeys, type CounterKey } from './leases.js';

/**
 * The active leases of counter `c` as of `$<nowParam>` (ms): the unspent part of those past their expiry by more than
 * `$<graceParam>` ms (what the next grant reclaims, `quotaLeaseGraceMs`), and the distinct holders of the live ones.
 */
const liveLeases = (nowParam: string, graceParam: string) => `LEFT JOIN LATERAL (
  SELECT sum(greatest(l.held - l.spent, 0)) FILTER (WHERE l.expires_ms <= ${nowParam} - ${graceParam}) AS unspent,
         count(DISTINCT l.holder) FILTER (WHERE l.expires_ms > ${nowParam}) AS holders
    FROM agp_quota_leases l
   WHERE l.organization_id = c.organization_id AND l.policy_id = c.policy_id AND l.limit_name = c.limit_name
     AND l.scope_key = c.scope_key AND l.window_start = c.window_start AND l.status = 'active') x ON true`;

/** The counter columns as {@link CounterRow} reads them (amounts as exact text). */
const COUNTER_COLUMNS = `c.policy_id, c.limit_name, c.scope_key, c.window_start::text AS window_start, c.window_end::text AS window_end, c.unit,
  c.limit_value::text AS limit_value, (c.committed - coalesce(x.unspent, 0))::text AS committed, c.spent::text AS spent,
  c.overshoot::text AS overshoot, coalesce(x.holders, 0)::int AS holders, c.updated_at`;

interface CounterRow {
  policy_id: string;
  limit_name: string;
  scope_key: string;
  window_start: string;
  window_end: string | null;
  unit: QuotaCounter['unit'];
  limit_value: string;
  committed: string;
  spent: string;
  overshoot: string;
  holders: number;
  updated_at: Date | string;
}

/** A row as the API answers it. */
function counterOf(r: CounterRow): QuotaCounter {
  const windowed = r.window_end !== null;
  const committed = Number(r.committed);
  const limitValue = Number(r.limit_value);
  return {
    policy_id: r.policy_id,
    limit: r.limit_name,
    unit: r.unit ?? quotaUnitOf(r.limit_name),
    scope_key: r.scope_key,
    window_start: windowed ? new Date(Number(r.window_start)).toISOString() : null,
    window_end: windowed ? new Date(Number(r.window_end)).toISOString() : null,
    limit_value: limitValue,
    committed,
    spent: Number(r.spent),
    overshoot: Number(r.overshoot),
    remaining: Number((limitValue - committed).toFixed(10)),
    holders: Number(r.holders),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

/**
 * `GET /api/v1/quotas` (`quotas.list`): one page of the organisation's counters, most recently changed first (then by
 * policy, limit, scope key, newest window first). Filters compose with AND: `policy_id`, `limit_name`, `scope_key`.
 * @param now ms since the Unix epoch: leases past it by more than `graceMs` count as returned.
 * @param graceMs how long past its expiry a lease keeps its reservation (`quotaLeaseGraceMs` of the lease TTL), ms.
 */
export async function listQuotaCounters(db: SqlExecutor, org: string, q: ListQuotasQuery, now: number, graceMs: number): Promise<QuotaCounterPage> {
  const w = new WhereClause();
  w.and(`c.organization_id = ${w.param(org)}`);
  const nowParam = w.param(now);
  const graceParam = w.param(graceMs);
  if (q.policy_id !== undefined) w.and(`c.policy_id = ${w.param(q.policy_id)}`);
  if (q.limit_name !== undefined) w.and(`c.limit_name = ${w.param(q.limit_name)}`);
  if (q.scope_key !== undefined) w.and(`c.scope_key = ${w.param(q.scope_key)}`);
  // The count statement binds the same parameters, so it names the clock's too (PostgreSQL must type every one).
  const where = `${w} AND ${nowParam}::bigint IS NOT NULL AND ${graceParam}::bigint IS NOT NULL`;
  const page = await pageWithTotal<CounterRow>(db, {
    select: COUNTER_COLUMNS,
    from: `agp_quota_counters c ${liveLeases(`${nowParam}::bigint`, `${graceParam}::bigint`)}`,
    where,
    params: w.params,
    orderBy: 'c.updated_at DESC, c.policy_id, c.limit_name, c.scope_key, c.window_start DESC',
    limit: q.limit,
    skip: q.skip,
    totalSql: `SELECT count(*) FROM agp_quota_counters c WHERE ${where}`,
  });
  return { counters: page.rows.map(counterOf), total: page.total, skip: q.skip, limit: q.limit };
}

/**
 * The committed amount of each counter of `keys` that exists (USD or calls), by {@link counterId}: what the fleet has
 * drawn, less the unspent part of leases past their expiry at `now` (ms) by more than `graceMs` (the lease TTL's
 * `quotaLeaseGraceMs`). A counter without a row has nothing committed.
 */
export async function committedOf(db: SqlExecutor, org: string, keys: CounterKey[], now: number, graceMs: number): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<CounterRow>(
    `SELECT ${COUNTER_COLUMNS} FROM ${rowsByKeys('agp_quota_counters', 'c')}
     ${liveLeases('$3::bigint', '$4::bigint')}`,
    [org, keysJson(keys), now, graceMs],
  );
  return new Map(rows.map((r) => [counterId({ policy_id: r.policy_id, limit: r.limit_name, scope_key: r.scope_key, window_start: Number(r.window_start) }), Number(r.committed)]));
}
