import { AgentSchema, McpServerSchema, type ListMcpServersQuery, type McpServer, type McpServerPage, KillSwitchStateSchema, PolicySchema, orderKeys, orderedJson, withPolicyDefaults, type Agent, type AgentGovernance, type KillSwitchOverview, type KillSwitchState, type ListAgentsQuery, type ListPoliciesQuery, type Policy, type RegisteredAction } from '@agp/contracts';
import type { EngineKillSwitches } from '@agp/policy-engine';
import { WhereClause, pageWithTotal, type SqlExecutor } from '@agp/eventstore';
import { rawJson, type RawJson } from '@agp/runtime';
import { initialKillSwitch, killSwitchOf } from './killswitch/killswitch.js';

const parse = <T>(doc: unknown): T => (typeof doc === 'string' ? JSON.parse(doc) : doc) as T;
/** A `jsonb` document as its record, in the field order of `schema` (jsonb sorts keys; see `orderKeys`). */
const record = <T>(schema: Parameters<typeof orderKeys>[0], doc: unknown): T => orderKeys(schema, parse<T>(doc));

/**
 * A policy document as SQL, with the fields a policy recorded before they existed filled in (no action budget, no
 * downgrades, no guardrails, no period budgets, one approval by anyone: `withPolicyDefaults` of the contracts), so every read returns the whole
 * record. Rate limits without a scope are given theirs by the read model's migration (`addPolicyScopesAndPeriods`).
 */
const POLICY_DOC = `('{"action_budget":null,"downgrades":[],"guardrails":{},"period_budgets":[],"approvals_required":1,"separation_of_duties":false,"auto_kill_switch":null}'::jsonb || doc)`;

/**
 * One page of an organisation's policies, newest first (created_at, then id), as JSON text
 * `{policies, total, skip, limit}`. Filters compose with AND; `agent_id` matches policies scoped to that agent
 * and those with no scope (every agent). Source: docs/api.md (Policies).
 */
export async function listPoliciesJson(db: SqlExecutor, org: string, q: ListPoliciesQuery): Promise<RawJson> {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`);
  if (q.enabled !== undefined) w.and(`enabled = ${w.param(q.enabled)}::boolean`);
  if (q.name !== undefined) w.and(`name = ${w.param(q.name)}`);
  if (q.agent_id !== undefined) w.and(`(jsonb_array_length(doc->'agent_ids') = 0 OR doc->'agent_ids' @> jsonb_build_array(${w.param(q.agent_id)}::text))`);
  const page = await pageWithTotal<{ doc: string }>(db, { select: `${POLICY_DOC}::text AS doc`, from: 'agp_policies', where: String(w), params: w.params, orderBy: 'created_at DESC, id DESC', limit: q.limit, skip: q.skip });
  return rawJson(`{"policies":[${page.rows.map((r) => orderedJson(PolicySchema, r.doc)).join(',')}],"total":${page.total},"skip":${q.skip},"limit":${q.limit}}`);
}

/** The current policy record of an organisation, or null (unknown, or another organisation's). */
export async function getPolicy(db: SqlExecutor, org: string, id: string): Promise<Policy | null> {
  const { rows } = await db.query<{ doc: unknown }>(`SELECT ${POLICY_DOC} AS doc FROM agp_policies WHERE id = $1 AND organization_id = $2`, [id, org]);
  return rows[0] ? record<Policy>(PolicySchema, rows[0].doc) : null;
}

/** The agent document with its own kill switch (released when never set; `changed_by` null on a document from before it), as SQL over `agp_agents a LEFT JOIN agp_kill_switches k`. */
const AGENT_DOC = `('{"changed_by":null,"changed_by_name":null}'::jsonb || a.doc || jsonb_build_object('kill_switch', jsonb_build_object(
  'engaged', COALESCE(k.engaged, false), 'reason', k.doc->'reason', 'changed_at', k.doc->'changed_at', 'changed_by', k.doc->'changed_by', 'actor_name', k.doc->'actor_name')))`;
const AGENT_FROM = `agp_agents a LEFT JOIN agp_kill_switches k ON k.organization_id = a.organization_id AND k.scope = 'agent' AND k.agent_id = a.agent_id`;

/** One page of an organisation's agents by agent_id, each with its kill switch, as JSON text `{agents, total, skip, limit}`. */
export async function listAgentsJson(db: SqlExecutor, org: string, q: ListAgentsQuery): Promise<RawJson> {
  const page = await pageWithTotal<{ doc: string }>(db, {
    select: `${AGENT_DOC}::text AS doc`,
    from: AGENT_FROM,
    where: 'a.organization_id = $1',
    params: [org],
    orderBy: 'a.agent_id',
    limit: q.limit,
    skip: q.skip,
    totalSql: 'SELECT count(*) FROM agp_agents WHERE organization_id = $1',
  });
  return rawJson(`{"agents":[${page.rows.map((r) => orderedJson(AgentSchema, r.doc)).join(',')}],"total":${page.total},"skip":${q.skip},"limit":${q.limit}}`);
}

/** One agent of an organisation with its actions and kill switch, or null. */
export async function getAgent(db: SqlExecutor, org: string, agentId: string): Promise<Agent | null> {
  const { rows } = await db.query<{ doc: unknown }>(`SELECT ${AGENT_DOC} AS doc FROM ${AGENT_FROM} WHERE a.organization_id = $1 AND a.agent_id = $2`, [org, agentId]);
  return rows[0] ? record<Agent>(AgentSchema, rows[0].doc) : null;
}

/** The organisation's kill switch (released when never set) and its engaged agent switches, by agent_id. */
export async function killSwitchOverview(db: SqlExecutor, org: string): Promise<KillSwitchOverview> {
  const { rows } = await db.query<{ scope: string; doc: unknown }>(
    `SELECT scope, doc FROM agp_kill_switches WHERE organization_id = $1 AND (scope = 'organization' OR engaged) ORDER BY scope, agent_id`,
    [org],
  );
  const docs = rows.map((r) => ({ scope: r.scope, doc: record<KillSwitchState>(KillSwitchStateSchema, killSwitchOf(parse<KillSwitchState>(r.doc))) }));
  return {
    organization: docs.find((r) => r.scope === 'organization')?.doc ?? initialKillSwitch('organization', null),
    agents: docs.filter((r) => r.scope === 'agent').map((r) => r.doc),
  };
}

/**
 * The organisation's enabled policies that apply to `agentId` (scoped to it, or to every agent), oldest first
 * (created_at, then id): what the decision API evaluates. Source: docs/api.md (Policy decisions).
 */
export async function applicablePolicies(db: SqlExecutor, org: string, agentId: string): Promise<Policy[]> {
  const { rows } = await db.query<{ doc: unknown }>(
    `SELECT ${POLICY_DOC} AS doc FROM agp_policies WHERE organization_id = $1 AND enabled
       AND (jsonb_array_length(doc->'agent_ids') = 0 OR doc->'agent_ids' @> jsonb_build_array($2::text))
     ORDER BY created_at, id`,
    [org, agentId],
  );
  return rows.map((r) => record<Policy>(PolicySchema, r.doc));
}

/** The organisation's kill switch and `agentId`'s (each released when never set), as the policy engine reads them. */
export async function killSwitchesFor(db: SqlExecutor, org: string, agentId: string): Promise<EngineKillSwitches> {
  const { rows } = await db.query<{ scope: string; engaged: boolean; reason: string | null }>(
    `SELECT scope, engaged, doc->>'reason' AS reason FROM agp_kill_switches
     WHERE organization_id = $1 AND ((scope = 'organization' AND agent_id = '') OR (scope = 'agent' AND agent_id = $2))`,
    [org, agentId],
  );
  const orgSwitch = rows.find((r) => r.scope === 'organization');
  return {
    organization: { engaged: orgSwitch?.engaged ?? false, reason: orgSwitch?.reason ?? null },
    agents: rows.filter((r) => r.scope === 'agent').map((r) => ({ agent_id: agentId, engaged: r.engaged, reason: r.reason })),
  };
}

/**
 * One agent's governance snapshot: {@link applicablePolicies} and {@link killSwitchesFor}, the selection the decision
 * API decides against (`evaluateAction` reads it through here), for `GET /api/v1/agents/{agent_id}/governance`.
 */
export async function agentGovernance(db: SqlExecutor, org: string, agentId: string): Promise<AgentGovernance> {
  const [policies, killSwitches] = await Promise.all([applicablePolicies(db, org, agentId), killSwitchesFor(db, org, agentId)]);
  return { agent_id: agentId, policies, kill_switches: { organization: killSwitches.organization, agents: killSwitches.agents.map((a) => ({ agent_id: a.agent_id!, engaged: a.engaged, reason: a.reason })) } };
}

/**
 * What the agent's registration declares about one of its actions: its risk level and typical cost of one call (USD),
 * each null when not declared; null when the agent is not registered or does not declare the action.
 */
export async function registeredAction(db: SqlExecutor, org: string, agentId: string, actionName: string): Promise<Pick<RegisteredAction, 'risk_level' | 'typical_cost_usd'> | null> {
  const { rows } = await db.query<{ risk_level: RegisteredAction['risk_level']; typical_cost_usd: number | string | null }>(
    `SELECT a->>'risk_level' AS risk_level, (a->>'typical_cost_usd')::float8 AS typical_cost_usd
     FROM agp_agents, jsonb_array_elements(doc->'actions') a
     WHERE organization_id = $1 AND agent_id = $2 AND a->>'name' = $3 LIMIT 1`,
    [org, agentId, actionName],
  );
  const r = rows[0];
  return r ? { risk_level: r.risk_level ?? null, typical_cost_usd: r.typical_cost_usd === null ? null : Number(r.typical_cost_usd) } : null;
}

/**
 * The organisation's current policies of `ids`, by id, read with the fields they predate filled in
 * (`withPolicyDefaults`: a rate limit stored without a scope counts per process). Ids of other organisations, or
 * unknown, are absent. The quota grants look their limits up here.
 */
export async function policiesByIds(db: SqlExecutor, org: string, ids: readonly string[]): Promise<Map<string, Policy>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ doc: unknown }>(`SELECT ${POLICY_DOC} AS doc FROM agp_policies WHERE organization_id = $1 AND id = ANY($2::text[])`, [org, [...new Set(ids)]]);
  return new Map(rows.map((r) => withPolicyDefaults(record<Policy>(PolicySchema, r.doc))).map((p) => [p.id, p]));
}

/** One page of an organisation's registered upstream MCP servers, by name: `{servers, total, skip, limit}` (header names, never values). */
export async function listMcpServers(db: SqlExecutor, org: string, q: ListMcpServersQuery): Promise<McpServerPage> {
  const page = await pageWithTotal<{ doc: unknown }>(db, { select: 'doc', from: 'agp_mcp_servers', where: 'organization_id = $1', params: [org], orderBy: 'name', limit: q.limit, skip: q.skip });
  return { servers: page.rows.map((r) => record<McpServer>(McpServerSchema, r.doc)), total: page.total, skip: q.skip, limit: q.limit };
}

/** One registered upstream MCP server of an organisation as the API answers it, or null. */
export async function getMcpServer(db: SqlExecutor, org: string, name: string): Promise<McpServer | null> {
  const { rows } = await db.query<{ doc: unknown }>('SELECT doc FROM agp_mcp_servers WHERE organization_id = $1 AND name = $2', [org, name]);
  return rows[0] ? record<McpServer>(McpServerSchema, rows[0].doc) : null;
}
