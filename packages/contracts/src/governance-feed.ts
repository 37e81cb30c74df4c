/**
 * The governance push channel's mapping: one stored event of the policy, kill-switch or intervention streams to the
 * push-channel event it is (`policy.changed`, `kill_switch.changed`, `approval.decided`), with the agents it
 * concerns. Pure: the caller reads the events (the gateway's governance feed, from the event store) and hands each
 * one over with the events of its stream that scoping needs. Each event's data is read through its own schema
 * (`PolicyCreatedDataSchema`, `KillSwitchChangedDataSchema`, `InterventionOutcomeChangedDataSchema`, …); an event
 * whose data does not match its schema maps to nothing. Source: the SDK's live policies, kill switches and
 * approvals; docs/decisions.md (governance push channel).
 */
import { z } from 'zod';
import { APPROVAL_EXPIRED_REASON, approvalId } from './approval.js';
import { InterventionEvents, InterventionOutcomeChangedDataSchema, InterventionRecordedDataSchema } from './events.js';
import { GovernanceApprovalDecidedSchema, GovernanceKillSwitchChangedSchema, GovernancePolicyChangedSchema } from './governance.js';
import {
  KillSwitchChangedDataSchema,
  KillSwitchEvents,
  PolicyCreatedDataSchema,
  PolicyEvents,
  PolicySettingsSchema,
  PolicyToggledDataSchema,
  PolicyUpdatedDataSchema,
} from './policy.js';

/**
 * A stored event as the mapper reads it: the fields it uses of the event store's `StoredEvent` (`@agp/eventstore`),
 * which satisfies this shape as it is.
 */
export interface GovernanceSourceEvent {
  type: string;
  data: unknown;
  /** The event's version in its stream (from 1). */
  stream_version: number;
  /** The event store's global position: the push channel's SSE `id:`. */
  global_position: bigint;
  /** Time of append, ISO 8601 UTC. */
  recorded_at: string;
  metadata: { organization_id: string; actor?: string };
}

/** `data:` of a `policy.changed` event. */
export type GovernancePolicyChanged = z.infer<typeof GovernancePolicyChangedSchema>;
/** `data:` of a `kill_switch.changed` event. */
export type GovernanceKillSwitchChanged = z.infer<typeof GovernanceKillSwitchChangedSchema>;
/** `data:` of an `approval.decided` event. */
export type GovernanceApprovalDecided = z.infer<typeof GovernanceApprovalDecidedSchema>;

/**
 * One event of the push channel, as a stream sends it: `position` is the SSE `id:`, `event` the SSE `event:` and
 * `data` its `data:` object; `agents` the agents it concerns (null = every agent of the organisation).
 */
export type GovernanceFeedEvent = { position: bigint; organization_id: string; agents: readonly string[] | null } & (
  | { event: 'policy.changed'; data: GovernancePolicyChanged }
  | { event: 'kill_switch.changed'; data: GovernanceKillSwitchChanged }
  | { event: 'approval.decided'; data: GovernanceApprovalDecided }
);

const POLICY_CHANGE = {
  [PolicyEvents.Created]: 'created',
  [PolicyEvents.Updated]: 'updated',
  [PolicyEvents.Enabled]: 'enabled',
  [PolicyEvents.Disabled]: 'disabled',
} as const satisfies Record<string, GovernancePolicyChanged['change']>;

/** What the mapper reads of each event type's data: the parts of the events' own schemas it uses. */
const CreatedScope = PolicyCreatedDataSchema.pick({ id: true, at: true, agent_ids: true }).partial({ agent_ids: true });
const AgentIds = PolicySettingsSchema.shape.agent_ids;
const InterventionAgent = InterventionRecordedDataSchema.pick({ agent_id: true });
const OutcomeFrom = InterventionOutcomeChangedDataSchema.pick({ from: true });

const isPolicyEvent = (type: string): type is keyof typeof POLICY_CHANGE => Object.hasOwn(POLICY_CHANGE, type);

/** The agent scope a policy event sets (`agent_ids`), or undefined when it sets none (a toggle, an update of other fields). */
function scopeSetBy(e: GovernanceSourceEvent): string[] | undefined {
  if (e.type === PolicyEvents.Created) {
    const d = CreatedScope.safeParse(e.data);
    return d.success ? (d.data.agent_ids ?? []) : undefined;
  }
  if (e.type === PolicyEvents.Updated) {
    const d = PolicyUpdatedDataSchema.safeParse(e.data);
    const to = d.success && d.data.changes.agent_ids ? AgentIds.safeParse(d.data.changes.agent_ids.to) : undefined;
    return to?.success ? to.data : undefined;
  }
  return undefined;
}

/**
 * A policy's agent scope as of event `e`: the one set by the latest of `e` and the events of its stream before it
 * that set one ([] = every agent, also when none did).
 */
function policyScopeAt(e: GovernanceSourceEvent, stream: readonly GovernanceSourceEvent[]): string[] {
  let scope: string[] = [];
  let at = 0;
  for (const p of [...stream, e]) {
    if (p.stream_version > e.stream_version || p.stream_version < at) continue;
    const set = scopeSetBy(p);
    if (set) [scope, at] = [set, p.stream_version];
  }
  return scope;
}

/**
 * Whether {@link governanceFeedEventOf} needs `e`'s stream: for a policy event (its scope), and for an outcome change
 * from `escalated` (an approval's decision: its intervention's agent). Every other event maps without it.
 */
export function governanceFeedNeedsStream(e: GovernanceSourceEvent): boolean {
  if (isPolicyEvent(e.type)) return true;
  if (e.type !== InterventionEvents.OutcomeChanged) return false;
  const d = OutcomeFrom.safeParse(e.data);
  return d.success && d.data.from === 'escalated';
}

/**
 * The push-channel event `e` is, or null when it is none (another event type, an outcome change that decides no
 * approval, data that does not match its event's schema, an approval whose intervention's first event is not in
 * `stream`).
 * - Policy events: `policy.changed`; `agent_ids` is the policy's scope as of `e`. It concerns every agent when that
 *   scope is (or was, before an update of `agent_ids`) empty, else the agents in its scope before and after.
 * - Kill-switch events: `kill_switch.changed`; the organisation's concerns every agent, an agent's that agent.
 * - An outcome change from `escalated`: `approval.decided` (approved; expired when its reason is `expired`; else
 *   rejected), concerning the intervention's agent (`agent_id` of its stream's first event).
 * `actor` / `changed_by` / `decided_by` is the event's actor (`system` when it has none).
 * @param stream the events of `e`'s stream, at least up to `e` (any order; later ones are ignored); needed only when
 *   {@link governanceFeedNeedsStream} says so, else pass [].
 */
export function governanceFeedEventOf(e: GovernanceSourceEvent, stream: readonly GovernanceSourceEvent[]): GovernanceFeedEvent | null {
  const base = { position: e.global_position, organization_id: e.metadata.organization_id };
  const actor = e.metadata.actor ?? 'system';
  if (isPolicyEvent(e.type)) {
    const change = POLICY_CHANGE[e.type];
    const updated = change === 'updated' ? PolicyUpdatedDataSchema.safeParse(e.data) : null;
    const d = updated ?? PolicyToggledDataSchema.safeParse(e.data);
    if (!d.success) return null;
    const changes = updated?.data?.changes ?? {};
    const after = policyScopeAt(e, stream);
    const from = changes.agent_ids ? AgentIds.safeParse(changes.agent_ids.from) : null;
    const before = from?.success ? from.data : after;
    return {
      ...base,
      event: 'policy.changed',
      agents: after.length === 0 || before.length === 0 ? null : [...new Set([...before, ...after])],
      data: { policy_id: d.data.id, version: e.stream_version, change, fields: Object.keys(changes), agent_ids: after, actor, at: d.data.at },
    };
  }
  if (e.type === KillSwitchEvents.Engaged || e.type === KillSwitchEvents.Released) {
    const d = KillSwitchChangedDataSchema.safeParse(e.data);
    if (!d.success) return null;
    const { scope, agent_id, reason, at } = d.data;
    if (scope === 'agent' && agent_id === null) return null;
    return {
      ...base,
      event: 'kill_switch.changed',
      agents: agent_id === null || scope === 'organization' ? null : [agent_id],
      data: { scope, agent_id, engaged: e.type === KillSwitchEvents.Engaged, reason, changed_by: actor, at },
    };
  }
  if (e.type === InterventionEvents.OutcomeChanged) {
    const d = InterventionOutcomeChangedDataSchema.safeParse(e.data);
    if (!d.success || d.data.from !== 'escalated') return null;
    const first = stream.find((x) => x.stream_version === 1);
    const agent = first ? InterventionAgent.safeParse(first.data) : null;
    if (!agent?.success) return null;
    const { id, to, reason, notes } = d.data;
    const status = to === 'approved_after_review' ? 'approved' : reason === APPROVAL_EXPIRED_REASON ? 'expired' : 'rejected';
    return {
      ...base,
      event: 'approval.decided',
      agents: [agent.data.agent_id],
      data: { approval_id: approvalId(id), intervention_id: id, agent_id: agent.data.agent_id, status, decided_by: actor, notes: notes ?? null, at: e.recorded_at },
    };
  }
  return null;
}
