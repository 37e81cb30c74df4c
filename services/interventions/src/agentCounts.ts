import { DEFAULT_PURPOSE, INTERVENTION_OUTCOMES, INTERVENTION_TYPES, endExclusive, roundUsd, type AgentInterventionCounts, type AgentInterventionCountsQuery } from '@agp/contracts';
import { WhereClause, type SqlExecutor } from '@agp/eventstore';

/**
 * Intervention counts of one agent (`interventions.agent-counts`, for the stats service's agent stats): live records of
 * `window.purpose` (default production)
 * by type and outcome (every type and outcome listed, zeros included) and the cost they prevented (USD), all time or
 * only records whose `timestamp` falls in `window` (`start_date` inclusive, `end_date` as an exclusive bound: a
 * date-only end_date includes that whole day). One grouped query over the (organization_id, agent_id, ts) index of
 * the list read model. Source: spec §get_agent_stats; docs/decisions.md (The tool gateway and MCP: look-back window).
 */
export async function agentInterventionCounts(db: SqlExecutor, org: string, agentId: string, window: AgentInterventionCountsQuery = { purpose: [DEFAULT_PURPOSE] }): Promise<AgentInterventionCounts> {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`).and(`agent_id = ${w.param(agentId)}`).and(`purpose = ANY(${w.param(window.purpose)}::text[])`);
  if (window.start_date) w.and(`ts >= ${w.param(window.start_date.date.toISOString())}::timestamptz`);
  if (window.end_date) w.and(`ts < ${w.param(endExclusive(window.end_date).toISOString())}::timestamptz`);
  const { rows } = await db.query<{ type: string; outcome: string; n: string; cost: number | null }>(
    `SELECT type, outcome, count(*) AS n, sum((doc->>'cost_prevented_usd')::float8) AS cost
       FROM agp_interventions WHERE ${w} GROUP BY type, outcome`,
    w.params,
  );
  const by_type: Record<string, number> = Object.fromEntries(INTERVENTION_TYPES.map((t) => [t, 0]));
  const by_outcome: Record<string, number> = Object.fromEntries(INTERVENTION_OUTCOMES.map((o) => [o, 0]));
  let total = 0;
  let cost = 0;
  for (const r of rows) {
    const n = Number(r.n);
    by_type[r.type] = (by_type[r.type] ?? 0) + n;
    by_outcome[r.outcome] = (by_outcome[r.outcome] ?? 0) + n;
    total += n;
    cost += Number(r.cost ?? 0);
  }
  return { total, by_type, by_outcome, cost_prevented_usd: roundUsd(cost) };
}
