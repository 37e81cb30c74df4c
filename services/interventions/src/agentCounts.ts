import { DEFAULT_PURPOSE, INTERVENTION_OUTCOMES, INTERVENTION_TYPES, endExclusive, roundUsd, type AgentInterventionCounts, type AgentInterventionCountsQuery } from '@agp/contracts';
import type { SqlExecutor } from '@agp/eventstore';

/**
 * Intervention counts of one agent (`interventions.agent-counts`, for the stats service's agent stats): live records of
 * `window.purpose` (default production)
 * by type and outcome (every type and outcome listed, zeros included) and the cost they prevented (USD), all time or
 * only records whose `timestamp` falls in `window` (`start_date` inclusive, `end_date` as an exclusive bound: a
 * date-only end_date includes that whole day). One grouped query over the (organization_id, agent_id, ts) index of
 * the list read model. Source: spec §get_agent_stats; docs/decisions.md (The tool gateway and MCP: look-back window).
 */
export async function agentInterventionCounts(db: SqlExecutor, org: string, agentId: string, window: AgentInterventionCountsQuery = { purpose: [DEFAULT_PURPOSE] }): Promise<AgentInterventionCounts> {
  const where = ['organization_id = $1', 'agent_id = $2', 'purpose = ANY($3::text[])'];
  const params: unknown[] = [org, agentId, window.purpose];
  if (window.start_date) {
    params.push(window.start_date.date.toISOString());
    where.push(`ts >= $${params.length}::timestamptz`);
  }
  if (window.end_date) {
    params.push(endExclusive(window.end_date).toISOString());
    where.push(`ts < $${params.length}::timestamptz`);
  }
  const { rows } = await db.query<{ type: string; outcome: string; n: string; cost: number | null }>(
    `SELECT type, outcome, count(*) AS n, sum((doc->>'cost_prevented_usd')::float8) AS cost
       FROM agp_interventions WHERE ${where.join(' AND ')} GROUP BY type, outcome`,
    params,
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
