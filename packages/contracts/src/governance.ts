/**
 * What an agent-side client reads to enforce policies where the agent acts: the governance snapshot of one agent
 * (`GET /api/v1/agents/{agent_id}/governance`: its applicable enabled policies and the kill switches that apply to
 * it, with a strong ETag) and the Server-Sent Events of its push channel (`GET /api/v1/agents/{agent_id}/governance/events`:
 * policy changes, kill-switch changes and approval decisions). Source: the SDK's live policies, kill switches and
 * approvals; spec §Policies, §Kill switches, §Approvals; docs/decisions.md (governance push channel).
 */
import { z } from 'zod';
import { ApprovalStatusSchema } from './approval.js';
import { OpaqueIdSchema } from './common.js';
import { KILL_SWITCH_SCOPES, PolicyEvents, KillSwitchEvents, PolicySchema } from './policy.js';
import { InterventionEvents } from './events.js';

/** A kill switch as the policy engine reads it: engaged or not, and why. */
const EngineSwitchSchema = z.object({ engaged: z.boolean(), reason: z.string().nullable() });

/**
 * The governance snapshot of one agent: what `POST /api/v1/policies/evaluate` decides the agent's actions against.
 * - `policies`: the organisation's enabled policies scoped to the agent or to every agent, oldest first (created_at,
 *   then id) — the order `decide()` of `@agp/policy-engine` breaks ties by.
 * - `kill_switches`: the organisation's switch and the agent's (an empty list when the agent's was never set), in
 *   the shape `decide()` takes (`EngineKillSwitches`).
 * The ETag of the answer is a hash of this object's canonical JSON, so equal snapshots have equal ETags.
 */
export const AgentGovernanceSchema = z.object({
  agent_id: z.string(),
  policies: z.array(PolicySchema),
  kill_switches: z.object({
    organization: EngineSwitchSchema,
    agents: z.array(EngineSwitchSchema.extend({ agent_id: z.string() })),
  }),
});
/** See {@link AgentGovernanceSchema}. */
export type AgentGovernance = z.infer<typeof AgentGovernanceSchema>;

/** Route parameter `{agent_id}` of the governance routes. */
export const AgentGovernancePathSchema = z.strictObject({ agent_id: OpaqueIdSchema });

/**
 * The event-store event types the push channel follows: the policy and kill-switch streams' events, and the
 * outcome changes of interventions (an escalated one's outcome change is its approval's decision).
 */
export const GOVERNANCE_SOURCE_EVENT_TYPES: readonly string[] = [...Object.values(PolicyEvents), ...Object.values(KillSwitchEvents), InterventionEvents.OutcomeChanged];

/** Default most push-channel streams one gateway process serves one organisation (`AGP_GOVERNANCE_MAX_STREAMS`). */
export const GOVERNANCE_MAX_STREAMS_PER_ORG = 100;
/** Interval of the push channel's `: heartbeat` comment, in ms. */
export const GOVERNANCE_HEARTBEAT_MS = 15_000;
/** Bytes a stream may hold unsent before its client is dropped as too slow (it resumes with Last-Event-ID). */
export const GOVERNANCE_MAX_UNSENT_BYTES = 1024 * 1024;

/** SSE `event:` names of the push channel. */
export const GOVERNANCE_SSE_EVENTS = ['ready', 'policy.changed', 'kill_switch.changed', 'approval.decided'] as const;
/** One of {@link GOVERNANCE_SSE_EVENTS}. */
export type GovernanceSseEvent = (typeof GOVERNANCE_SSE_EVENTS)[number];

/**
 * `ready`: sent once when the stream is live (after any replay of `Last-Event-ID`). Its `id:` is the position the
 * stream is at: a client that reconnects with it as `Last-Event-ID` misses nothing.
 */
export const GovernanceReadySchema = z.object({ agent_id: z.string(), position: z.string().meta({ description: 'The event store position the stream is at (decimal)' }) });

/**
 * `policy.changed`: a policy that applies (or applied) to the agent was created, updated, enabled or disabled.
 * `agent_ids` is its scope after the change ([] = every agent). Refetch the snapshot (send its ETag) to apply it.
 */
export const GovernancePolicyChangedSchema = z.object({
  policy_id: z.string(),
  version: z.number().int(),
  change: z.enum(['created', 'updated', 'enabled', 'disabled']),
  /** Fields the change set (`updated`), by name. */
  fields: z.array(z.string()),
  agent_ids: z.array(z.string()),
  actor: z.string(),
  at: z.string(),
});

/** `kill_switch.changed`: the organisation's switch or the agent's was engaged or released. */
export const GovernanceKillSwitchChangedSchema = z.object({
  scope: z.enum(KILL_SWITCH_SCOPES),
  agent_id: z.string().nullable(),
  engaged: z.boolean(),
  reason: z.string().nullable(),
  changed_by: z.string(),
  at: z.string(),
});

/** `approval.decided`: one of the agent's approvals was approved, rejected or expired. */
export const GovernanceApprovalDecidedSchema = z.object({
  approval_id: z.string(),
  intervention_id: z.string(),
  agent_id: z.string(),
  status: ApprovalStatusSchema.exclude(['pending']),
  decided_by: z.string(),
  notes: z.string().nullable(),
  at: z.string(),
});

/**
 * The `data:` of one push-channel event (JSON), by its `event:` name. Every event but the heartbeat comment
 * (`: heartbeat`, every 15 s) has an `id:`: the event store's global position (decimal, increasing), for `Last-Event-ID`.
 */
export const GovernanceEventDataSchema = z
  .union([GovernanceReadySchema, GovernancePolicyChangedSchema, GovernanceKillSwitchChangedSchema, GovernanceApprovalDecidedSchema])
  .meta({
    description:
      'A text/event-stream. Each event: `id:` the event store position (decimal, increasing; send the last one back as `Last-Event-ID` to resume), `event:` ready | policy.changed | kill_switch.changed | approval.decided, `data:` one JSON object. A comment line `: heartbeat` comes every 15 s.',
  });
