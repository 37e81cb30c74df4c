import {
  POLICY_FIELDS,
  PolicyEvents,
  type FieldChange,
  type Policy,
  type PolicyCreatedData,
  type PolicyHistoryEntry,
  type PolicySettings,
  type PolicyToggledData,
  type PolicyUpdatedData,
  type RateLimit,
  withPolicyDefaults,
  withRateLimitScopes,
} from '@agp/contracts';
import type { StoredEvent } from '@agp/eventstore';

/** The parts of a stored event that folding needs (pure tests build these by hand). */
export type PolicyEvent = Pick<StoredEvent, 'type' | 'data' | 'metadata' | 'stream_version'>;

/**
 * The changes of a PolicyUpdated as they read today: `rate_limits` (its `from` and `to`) with each limit's scope, a
 * limit recorded before scopes existed counting per process (`withRateLimitScopes` of the contracts). Every other
 * field as recorded. Pure.
 */
export function updatedChanges(d: PolicyUpdatedData): Record<string, FieldChange> {
  const changes = { ...d.changes } as Record<string, FieldChange>;
  const rl = changes.rate_limits;
  if (rl !== undefined) changes.rate_limits = { from: scopedLimits(rl.from), to: scopedLimits(rl.to) };
  return changes;
}

/** A recorded `rate_limits` value with each limit's scope filled in; a value that is not an object as it was. */
const scopedLimits = (limits: unknown): unknown => (limits !== null && typeof limits === 'object' ? withRateLimitScopes(limits as Record<string, Partial<RateLimit>>) : limits);

/** The settings of a policy record (its fields minus id, organisation, version and times). */
export function settingsOf(p: Policy): PolicySettings {
  return Object.fromEntries(POLICY_FIELDS.map((f) => [f, p[f]])) as unknown as PolicySettings;
}

/**
 * Fold one event of a `policy-<id>` stream into the policy record (the state is the record as reads return it).
 * A stream starts with PolicyCreated; other events on a null state, and unknown types, only move the version.
 * Source: docs/decisions.md (Policies, agents, kill switches: PolicyCreated, PolicyUpdated, PolicyEnabled, PolicyDisabled).
 */
export function evolvePolicy(state: Policy | null, event: PolicyEvent): Policy | null {
  switch (event.type) {
    case PolicyEvents.Created: {
      // A policy created before action_budget, downgrades, guardrails and period_budgets existed has none of them, and
      // its rate limits count per process.
      const { id, at, ...settings } = withPolicyDefaults(event.data as unknown as PolicyCreatedData);
      return { id, organization_id: event.metadata.organization_id, ...settings, version: event.stream_version, created_at: at, updated_at: at };
    }
    case PolicyEvents.Updated: {
      if (!state) return state;
      const d = event.data as unknown as PolicyUpdatedData;
      const next: Policy = { ...state, version: event.stream_version, updated_at: d.at };
      for (const [field, change] of Object.entries(updatedChanges(d)) as Array<[keyof PolicySettings, FieldChange]>) {
        (next as Record<string, unknown>)[field] = change.to;
      }
      return next;
    }
    case PolicyEvents.Enabled:
    case PolicyEvents.Disabled: {
      if (!state) return state;
      const d = event.data as unknown as PolicyToggledData;
      return { ...state, enabled: event.type === PolicyEvents.Enabled, version: event.stream_version, updated_at: d.at };
    }
    default:
      return state && { ...state, version: event.stream_version };
  }
}

/** Fold a stream (or its first `upTo` versions). */
export function foldPolicy(events: PolicyEvent[], upTo = Infinity): Policy | null {
  return events.filter((e) => e.stream_version <= upTo).reduce<Policy | null>(evolvePolicy, null);
}

/**
 * The history of a policy: one entry per stream event, oldest first, with its version, time, actor (and the acting
 * key's name, as captured in the event's metadata when it was appended) and each
 * field it changed (`{from, to}`; PolicyCreated lists every field with `from: null`). Events recorded before a field
 * existed read with its default (`withPolicyDefaults`, {@link updatedChanges}).
 */
export function policyHistory(events: Array<PolicyEvent & Pick<StoredEvent, 'recorded_at'>>): PolicyHistoryEntry[] {
  return events.map((e) => {
    const at = typeof (e.data as { at?: unknown }).at === 'string' ? ((e.data as { at: string }).at) : e.recorded_at;
    const base = { version: e.stream_version, event: e.type, at, actor: e.metadata.actor, actor_name: e.metadata.actor_name ?? null };
    switch (e.type) {
      case PolicyEvents.Created: {
        const d = withPolicyDefaults(e.data as unknown as PolicyCreatedData);
        return { ...base, changes: Object.fromEntries(POLICY_FIELDS.map((f) => [f, { from: null, to: d[f] }])) };
      }
      case PolicyEvents.Updated:
        return { ...base, changes: updatedChanges(e.data as unknown as PolicyUpdatedData) };
      case PolicyEvents.Enabled:
        return { ...base, changes: { enabled: { from: false, to: true } } };
      case PolicyEvents.Disabled:
        return { ...base, changes: { enabled: { from: true, to: false } } };
      default:
        return { ...base, changes: {} };
    }
  });
}
