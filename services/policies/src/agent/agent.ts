import { AGENT_FIELDS, AgentEvents, type Agent, type AgentDefinition, type AgentRegister, type AgentRegisteredData, type AgentUpdatedData, type FieldChange } from '@agp/contracts';
import { deterministicId } from '@agp/runtime';
import type { StoredEvent } from '@agp/eventstore';
import { diff } from '../values.js';

/** An agent as its registry stream defines it: the record without its kill switch (a stream of its own). */
export type RegistryAgent = Omit<Agent, 'kill_switch'>;

/** The parts of a stored event that folding needs. */
export type AgentEvent = Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'stream_version'>;

/**
 * Stream id of an agent's registry entry. Agent ids are client-supplied, so the stream is named by a
 * deterministic UUID of (organisation, agent_id): two organisations' agents never share a stream.
 */
export const agentStream = (organizationId: string, agentId: string) => `agent-${deterministicId(organizationId, agentId)}`;

/** A registration body's definition with every optional field normalised (null, {} or []). */
export function normaliseDefinition(body: AgentRegister): AgentDefinition {
  return {
    name: body.name ?? null,
    description: body.description ?? null,
    framework: body.framework ?? null,
    owner: body.owner ?? null,
    metadata: body.metadata ?? {},
    actions: (body.actions ?? []).map((a) => ({
      name: a.name,
      description: a.description ?? null,
      parameters: a.parameters ?? null,
      risk_level: a.risk_level ?? null,
      typical_cost_usd: a.typical_cost_usd ?? null,
    })),
  };
}

/** The definition part of an agent. */
export function definitionOf(a: RegistryAgent): AgentDefinition {
  return Object.fromEntries(AGENT_FIELDS.map((f) => [f, a[f]])) as unknown as AgentDefinition;
}

/** Who an agent event was made by: its actor (`user:<id>` or `key:<id>`) and that actor's name then (null when none). */
const changedBy = (event: AgentEvent) => ({ changed_by: event.metadata.actor ?? null, changed_by_name: event.metadata.actor_name ?? null });

/** Fold one event of an agent stream. AgentRegistered starts it; AgentUpdated applies each change's `to`. */
export function evolveAgent(state: RegistryAgent | null, event: AgentEvent): RegistryAgent | null {
  switch (event.type) {
    case AgentEvents.Registered: {
      const { agent_id, at, ...definition } = event.data as unknown as AgentRegisteredData;
      return { agent_id, organization_id: event.metadata.organization_id, ...definition, registered_at: at, updated_at: at, version: event.stream_version, ...changedBy(event) };
    }
    case AgentEvents.Updated: {
      if (!state) return state;
      const d = event.data as unknown as AgentUpdatedData;
      const next: RegistryAgent = { ...state, updated_at: d.at, version: event.stream_version, ...changedBy(event) };
      for (const [field, change] of Object.entries(d.changes) as Array<[string, FieldChange]>) (next as Record<string, unknown>)[field] = change.to;
      return next;
    }
    default:
      return state && { ...state, version: event.stream_version };
  }
}

/** Fold a whole agent stream. */
export function foldAgent(events: AgentEvent[]): RegistryAgent | null {
  return events.reduce<RegistryAgent | null>(evolveAgent, null);
}

/**
 * RegisterAgent: a registration declares the agent's whole definition (re-registering replaces it, actions
 * included). First registration → AgentRegistered; a re-registration that changes a field → AgentUpdated with
 * each changed field `{from, to}`; an identical one → no event.
 * @param now current time, ISO 8601 UTC.
 */
export function decideRegister(state: RegistryAgent | null, body: AgentRegister, now: string): { type: string; data: AgentRegisteredData | AgentUpdatedData } | null {
  const definition = normaliseDefinition(body);
  if (!state) return { type: AgentEvents.Registered, data: { agent_id: body.agent_id, at: now, ...definition } };
  const changes = diff(AGENT_FIELDS, definitionOf(state), definition);
  if (Object.keys(changes).length === 0) return null;
  return { type: AgentEvents.Updated, data: { agent_id: state.agent_id, at: now, changes } };
}
