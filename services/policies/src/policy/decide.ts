import {
  POLICY_FIELDS,
  PolicyEvents,
  type CreatePolicy,
  type Policy,
  type PolicyCreatedData,
  type PolicySettings,
  type PolicyToggledData,
  type PolicyUpdatedData,
  type UpdatePolicy,
} from '@agp/contracts';
import { ConflictError, NotFoundError } from '@agp/runtime';
import { diff } from '../values.js';
import { settingsOf } from './policy.js';

/** Command metadata: time and ids come in, never from a clock inside the decider (the style guide). */
export interface PolicyCommandMeta {
  /** Current time, ISO 8601 UTC. */
  now: string;
  organization_id: string;
}

/** An event a decider emits: its type and data (the service adds ids and metadata). */
export interface Decided<D> {
  type: string;
  data: D;
}

/** Remove repeated entries of a list, keeping the first of each. */
const unique = (xs: string[]) => [...new Set(xs)];

/**
 * The create body with every optional setting normalised: null for "none", [] / {} for empty, lists de-duplicated.
 * Rate limits keep the scope the body parsed with (`agent` when it named none).
 */
export function normaliseSettings(body: CreatePolicy): PolicySettings {
  return {
    name: body.name,
    description: body.description ?? null,
    enabled: body.enabled,
    session_budget: body.session_budget ?? null,
    run_budget: body.run_budget ?? null,
    denied_actions: unique(body.denied_actions ?? []),
    allowed_actions: body.allowed_actions ? unique(body.allowed_actions) : null,
    approval_required_actions: unique(body.approval_required_actions ?? []),
    rate_limits: body.rate_limits ?? {},
    agent_ids: unique(body.agent_ids ?? []),
    action_budget: body.action_budget ?? null,
    downgrades: body.downgrades ?? [],
    guardrails: body.guardrails ?? {},
    period_budgets: body.period_budgets ?? [],
    approvals_required: body.approvals_required ?? 1,
    separation_of_duties: body.separation_of_duties ?? false,
    auto_kill_switch: body.auto_kill_switch ?? null,
  };
}

/** CreatePolicy: a validated body becomes PolicyCreated for the new id (a UUIDv7 from the caller). */
export function decideCreate(body: CreatePolicy, id: string, meta: PolicyCommandMeta): Decided<PolicyCreatedData> {
  return { type: PolicyEvents.Created, data: { id, at: meta.now, ...normaliseSettings(body) } };
}

/**
 * UpdatePolicy (PATCH): the events that take `state` to the patched policy.
 * - Changed fields other than `enabled` → one PolicyUpdated carrying each as `{from, to}`.
 * - A changed `enabled` → PolicyEnabled or PolicyDisabled (after the PolicyUpdated, if any).
 * - Nothing changed → no events.
 * @param ifMatch the version the caller expects (If-Match), or null for none.
 * @throws NotFoundError when the policy does not exist or is another organisation's (never revealed).
 * @throws ConflictError (409) when `ifMatch` is not the current version.
 */
export function decideUpdate(state: Policy | null, patch: UpdatePolicy, ifMatch: number | null, meta: PolicyCommandMeta): Decided<PolicyUpdatedData | PolicyToggledData>[] {
  if (!state || state.organization_id !== meta.organization_id) throw new NotFoundError('policy not found');
  if (ifMatch !== null && ifMatch !== state.version) throw new ConflictError(`If-Match version ${ifMatch} does not match the current version ${state.version}`);
  const normalised: Partial<PolicySettings> = { ...patch };
  for (const f of ['denied_actions', 'approval_required_actions', 'agent_ids'] as const) if (patch[f]) normalised[f] = unique(patch[f]);
  if (patch.allowed_actions) normalised.allowed_actions = unique(patch.allowed_actions);
  const { enabled, ...changes } = diff(POLICY_FIELDS, settingsOf(state), normalised);
  const out: Decided<PolicyUpdatedData | PolicyToggledData>[] = [];
  if (Object.keys(changes).length > 0) out.push({ type: PolicyEvents.Updated, data: { id: state.id, at: meta.now, changes } });
  if (enabled) out.push({ type: enabled.to ? PolicyEvents.Enabled : PolicyEvents.Disabled, data: { id: state.id, at: meta.now } });
  return out;
}
