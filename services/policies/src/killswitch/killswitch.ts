import { KillSwitchEvents, type KillSwitchChangedData, type KillSwitchScope, type KillSwitchState, type SetKillSwitch } from '@agp/contracts';
import { deterministicId } from '@agp/runtime';
import type { StoredEvent } from '@agp/eventstore';

/** The parts of a stored event that folding needs. */
export type KillSwitchEvent = Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'stream_version'>;

/** Stream id of a kill switch: deterministic per (organisation, scope, agent), since agent ids are client-supplied. */
export const killSwitchStream = (organizationId: string, scope: KillSwitchScope, agentId: string | null) =>
  `killswitch-${deterministicId(organizationId, scope, agentId ?? '')}`;

/** A switch never set: released, no reason, never changed (version 0). */
export function initialKillSwitch(scope: KillSwitchScope, agentId: string | null): KillSwitchState {
  return { scope, agent_id: agentId, engaged: false, reason: null, changed_at: null, changed_by: null, actor_name: null, version: 0 };
}

/** A stored switch document as the API answers it: one stored before `actor_name` existed reads it as null. */
export function killSwitchOf(doc: Omit<KillSwitchState, 'actor_name'> & { actor_name?: string | null }): KillSwitchState {
  return { ...doc, actor_name: doc.actor_name ?? null };
}

/** Fold one KillSwitchEngaged / KillSwitchReleased event; the actor and its name come from the event metadata (captured when it was appended). */
export function evolveKillSwitch(state: KillSwitchState, event: KillSwitchEvent): KillSwitchState {
  if (event.type !== KillSwitchEvents.Engaged && event.type !== KillSwitchEvents.Released) return { ...state, version: event.stream_version };
  const d = event.data as unknown as KillSwitchChangedData;
  return {
    scope: d.scope,
    agent_id: d.agent_id,
    engaged: event.type === KillSwitchEvents.Engaged,
    reason: d.reason,
    changed_at: d.at,
    changed_by: event.metadata.actor,
    actor_name: event.metadata.actor_name ?? null,
    version: event.stream_version,
  };
}

/** Fold a kill-switch stream from its initial state. */
export function foldKillSwitch(scope: KillSwitchScope, agentId: string | null, events: KillSwitchEvent[]): KillSwitchState {
  return events.reduce(evolveKillSwitch, initialKillSwitch(scope, agentId));
}

/**
 * SetKillSwitch (PUT): engaging a released switch → KillSwitchEngaged; releasing an engaged one →
 * KillSwitchReleased; setting the state it already has → no event (PUT is idempotent).
 * @param now current time, ISO 8601 UTC.
 */
export function decideKillSwitch(state: KillSwitchState, change: SetKillSwitch, now: string): { type: string; data: KillSwitchChangedData } | null {
  if (change.engaged === state.engaged) return null;
  return {
    type: change.engaged ? KillSwitchEvents.Engaged : KillSwitchEvents.Released,
    data: { scope: state.scope, agent_id: state.agent_id, reason: change.reason ?? null, at: now },
  };
}
