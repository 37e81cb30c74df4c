import { AgentEvents, KillSwitchEvents, McpServerEvents, PolicyEvents, type KillSwitchChangedData, type KillSwitchState, type Policy, type ProjectionName } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { evolveAgent, type RegistryAgent } from '../agent/agent.js';
import { evolveKillSwitch, initialKillSwitch } from '../killswitch/killswitch.js';
import { evolvePolicy } from '../policy/policy.js';
import { applyMcpServerEvents } from './mcpServers.js';

/** Name (and checkpoint key) of the projection. */
export const POLICIES_READ_MODEL = 'policies-read-model' satisfies ProjectionName;

/** Event types it applies. */
export const POLICIES_READ_MODEL_EVENT_TYPES = [...Object.values(PolicyEvents), ...Object.values(AgentEvents), ...Object.values(KillSwitchEvents), ...Object.values(McpServerEvents)];

const policyTypes = new Set<string>(Object.values(PolicyEvents));
const agentTypes = new Set<string>(Object.values(AgentEvents));
const mcpServerTypes = new Set<string>(Object.values(McpServerEvents));

const parse = <T>(doc: unknown): T => (typeof doc === 'string' ? JSON.parse(doc) : doc) as T;
const agentKey = (org: string, agentId: string) => JSON.stringify([org, agentId]);
const switchKey = (org: string, scope: string, agentId: string) => JSON.stringify([org, scope, agentId]);

/**
 * Apply a batch of policy, agent and kill-switch events to the read-model tables inside the subscription's
 * transaction (its checkpoint commits with these writes). The rows the batch touches are read with one query
 * per table, every event is folded in memory with the same `evolve` functions the deciders use, and each table
 * is written with one upsert (registered MCP servers: ./mcpServers.ts). Source: architecture §3 (Projections).
 */
export async function applyPoliciesEvents(all: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const servers = all.filter((e) => mcpServerTypes.has(e.type));
  if (servers.length) await applyMcpServerEvents(servers, tx);
  const events = servers.length ? all.filter((e) => !mcpServerTypes.has(e.type)) : all;
  const policyIds = new Set<string>();
  const agentKeys = new Map<string, [string, string]>();
  const switchKeys = new Map<string, [string, string, string]>();
  for (const e of events) {
    const org = e.metadata.organization_id;
    if (policyTypes.has(e.type)) policyIds.add(String((e.data as { id: string }).id));
    else if (agentTypes.has(e.type)) {
      const id = String((e.data as { agent_id: string }).agent_id);
      agentKeys.set(agentKey(org, id), [org, id]);
    } else {
      const d = e.data as unknown as KillSwitchChangedData;
      switchKeys.set(switchKey(org, d.scope, d.agent_id ?? ''), [org, d.scope, d.agent_id ?? '']);
    }
  }

  const policies = new Map<string, Policy | null>();
  const agents = new Map<string, RegistryAgent | null>();
  const switches = new Map<string, KillSwitchState>();
  if (policyIds.size) {
    const { rows } = await tx.query<{ id: string; doc: unknown }>('SELECT id, doc FROM agp_policies WHERE id = ANY($1::text[]) FOR UPDATE', [[...policyIds]]);
    for (const r of rows) policies.set(r.id, parse<Policy>(r.doc));
  }
  if (agentKeys.size) {
    const keys = [...agentKeys.values()];
    const { rows } = await tx.query<{ organization_id: string; agent_id: string; doc: unknown }>(
      `SELECT a.organization_id, a.agent_id, a.doc FROM agp_agents a
       JOIN jsonb_to_recordset($1::jsonb) AS k(o text, a text) ON a.organization_id = k.o AND a.agent_id = k.a FOR UPDATE OF a`,
      [JSON.stringify(keys.map(([o, a]) => ({ o, a })))],
    );
    for (const r of rows) agents.set(agentKey(r.organization_id, r.agent_id), parse<RegistryAgent>(r.doc));
  }
  if (switchKeys.size) {
    const keys = [...switchKeys.values()];
    const { rows } = await tx.query<{ organization_id: string; scope: string; agent_id: string; doc: unknown }>(
      `SELECT s.organization_id, s.scope, s.agent_id, s.doc FROM agp_kill_switches s
       JOIN jsonb_to_recordset($1::jsonb) AS k(o text, s text, a text) ON s.organization_id = k.o AND s.scope = k.s AND s.agent_id = k.a FOR UPDATE OF s`,
      [JSON.stringify(keys.map(([o, s, a]) => ({ o, s, a })))],
    );
    for (const r of rows) switches.set(switchKey(r.organization_id, r.scope, r.agent_id), parse<KillSwitchState>(r.doc));
  }

  for (const e of events) {
    const org = e.metadata.organization_id;
    if (policyTypes.has(e.type)) {
      const id = String((e.data as { id: string }).id);
      policies.set(id, evolvePolicy(policies.get(id) ?? null, e));
    } else if (agentTypes.has(e.type)) {
      const key = agentKey(org, String((e.data as { agent_id: string }).agent_id));
      agents.set(key, evolveAgent(agents.get(key) ?? null, e));
    } else {
      const d = e.data as unknown as KillSwitchChangedData;
      const key = switchKey(org, d.scope, d.agent_id ?? '');
      switches.set(key, evolveKillSwitch(switches.get(key) ?? initialKillSwitch(d.scope, d.agent_id), e));
    }
  }

  const policyRows = [...policies.values()].filter((p): p is Policy => p !== null);
  if (policyRows.length) {
    await tx.query(
      `INSERT INTO agp_policies (id, organization_id, name, enabled, created_at, doc)
       SELECT x.id, x.doc->>'organization_id', x.doc->>'name', (x.doc->>'enabled')::boolean, (x.doc->>'created_at')::timestamptz, x.doc
         FROM jsonb_to_recordset($1::jsonb) AS x(id text, doc jsonb)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, enabled = excluded.enabled, doc = excluded.doc`,
      [JSON.stringify(policyRows.map((doc) => ({ id: doc.id, doc })))],
    );
  }
  const agentRows = [...agents.values()].filter((a): a is RegistryAgent => a !== null);
  if (agentRows.length) {
    await tx.query(
      `INSERT INTO agp_agents (organization_id, agent_id, doc)
       SELECT x.doc->>'organization_id', x.doc->>'agent_id', x.doc FROM jsonb_to_recordset($1::jsonb) AS x(doc jsonb)
       ON CONFLICT (organization_id, agent_id) DO UPDATE SET doc = excluded.doc`,
      [JSON.stringify(agentRows.map((doc) => ({ doc })))],
    );
  }
  if (switches.size) {
    await tx.query(
      `INSERT INTO agp_kill_switches (organization_id, scope, agent_id, engaged, doc)
       SELECT x.o, x.doc->>'scope', COALESCE(x.doc->>'agent_id', ''), (x.doc->>'engaged')::boolean, x.doc FROM jsonb_to_recordset($1::jsonb) AS x(o text, doc jsonb)
       ON CONFLICT (organization_id, scope, agent_id) DO UPDATE SET engaged = excluded.engaged, doc = excluded.doc`,
      [JSON.stringify([...switches.entries()].map(([key, doc]) => ({ o: (JSON.parse(key) as string[])[0], doc })))],
    );
  }
}
