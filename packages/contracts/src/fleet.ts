import { z } from 'zod';
import { DateTimeSchema, OpaqueIdSchema, UsdSchema } from './common.js';
import { RiskLevelSchema } from './enums.js';
import { PurposeSchema } from './purpose.js';
import { ApprovalsRequiredSchema, SeparationOfDutiesSchema } from './approval-rule.js';

/**
 * Fleet ingest bodies: agent registrations, run lifecycle, ledger entries and approval requests.
 * They travel through `POST /api/v1/ingest/` with the same per-event 207 semantics and dedupe as
 * `intervention.create`. Source: architecture §4 (Ingest, Runs).
 */

/** Run states. `running → completed | failed`, driven by run.start and run.end. Source: spec §list_runs. */
export const RUN_STATUSES = ['running', 'completed', 'failed'] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** How a run ended (the terminal run states). */
export const RUN_END_STATUSES = ['completed', 'failed'] as const;

/** Longest duration one ledger entry may report, in ms (30 days). */
export const MAX_DURATION_MS = 30 * 86_400_000;

/** Status of one ledger entry (one executed or attempted action). */
export const ACTION_STATUSES = ['success', 'error', 'blocked'] as const;
export const ActionStatusSchema = z.enum(ACTION_STATUSES);
export type ActionStatus = z.infer<typeof ActionStatusSchema>;

const Json = z.record(z.string(), z.unknown());

/**
 * One action an agent can take, as registered: name, description, the JSON Schema of its parameters,
 * its risk level and typical cost in USD. Evals scenario generation reads these.
 */
export const ActionDefinitionSchema = z.strictObject({
  name: z.string().min(1).max(256),
  description: z.string().max(10_000).optional(),
  parameters: Json.optional(),
  risk_level: RiskLevelSchema.optional(),
  typical_cost_usd: UsdSchema.optional(),
});
export type ActionDefinition = z.infer<typeof ActionDefinitionSchema>;

/** `agent.register` (and `POST /api/v1/agents`): an agent and its action definitions. Re-registering replaces them. */
export const AgentRegisterSchema = z.strictObject({
  agent_id: OpaqueIdSchema,
  name: z.string().min(1).max(256).optional(),
  description: z.string().max(10_000).optional(),
  framework: z.string().max(256).optional(),
  owner: z.string().max(256).optional(),
  metadata: Json.optional(),
  actions: z.array(ActionDefinitionSchema).max(1000).optional(),
});
export type AgentRegister = z.infer<typeof AgentRegisterSchema>;

/** `run.start`: a run of an agent begins (status `running`). `started_at` defaults to the event timestamp. */
export const RunStartSchema = z.strictObject({
  run_id: OpaqueIdSchema,
  agent_id: OpaqueIdSchema,
  name: z.string().max(256).optional(),
  session_id: OpaqueIdSchema.optional(),
  started_at: DateTimeSchema.optional(),
  metadata: Json.optional(),
  /** `eval` for a run an eval harness records (kept out of the stats and lists by default); absent = production. */
  purpose: PurposeSchema.optional(),
});
export type RunStart = z.infer<typeof RunStartSchema>;

/** `run.end`: a run finishes as `completed` or `failed`. `ended_at` defaults to the event timestamp. */
export const RunEndSchema = z.strictObject({
  run_id: OpaqueIdSchema,
  agent_id: OpaqueIdSchema,
  status: z.enum(RUN_END_STATUSES),
  ended_at: DateTimeSchema.optional(),
  error: z.string().max(10_000).optional(),
  /** The run's purpose, when the client states it again: it must be the run's (a run.end naming another is refused). */
  purpose: PurposeSchema.optional(),
});
export type RunEnd = z.infer<typeof RunEndSchema>;

/**
 * `action.record`: one ledger entry. `cost_usd` is the client's estimate; `actual_cost_usd` is what the
 * language-model provider reported, when it did. `duration_ms` in milliseconds. `timestamp` defaults to the
 * event timestamp.
 */
export const ActionRecordSchema = z.strictObject({
  run_id: OpaqueIdSchema,
  agent_id: OpaqueIdSchema,
  action_name: z.string().min(1).max(256),
  status: ActionStatusSchema,
  inputs: Json.optional(),
  outputs: z.unknown().optional(),
  cost_usd: UsdSchema.optional(),
  actual_cost_usd: UsdSchema.optional(),
  duration_ms: z.number().finite().min(0).max(MAX_DURATION_MS, `must be at most ${MAX_DURATION_MS} ms (30 days)`).optional(),
  timestamp: DateTimeSchema.optional(),
  error: z.string().max(10_000).optional(),
  /** The purpose of the action's run when the run is first seen through this action; an action always counts as its run's. */
  purpose: PurposeSchema.optional(),
});
export type ActionRecord = z.infer<typeof ActionRecordSchema>;

/**
 * `approval.request`: an agent asks a human before acting. It is recorded as an `approval_required`
 * intervention with outcome `escalated`, which opens approval `apr-<intervention id>`.
 * `expires_in_seconds` overrides the platform's approval expiry (default 24 h) for this request.
 */
export const ApprovalRequestSchema = z.strictObject({
  agent_id: OpaqueIdSchema,
  action_name: z.string().min(1).max(256),
  run_id: OpaqueIdSchema.optional(),
  policy_id: OpaqueIdSchema.optional(),
  policy_name: z.string().max(256).optional(),
  risk_level: RiskLevelSchema.optional(),
  reason: z.string().max(10_000).optional(),
  agent_intent: z.string().max(10_000).optional(),
  description: z.string().max(10_000).optional(),
  estimated_cost_usd: UsdSchema.optional(),
  original_inputs: Json.optional(),
  expires_in_seconds: z.number().int().min(1).max(30 * 86_400).optional(),
  /** The purpose of the intervention it records (`eval` when an eval harness asks); absent = production. */
  purpose: PurposeSchema.optional(),
  /** Approvals needed from different approvers before the action runs: 1 (absent) or 2. */
  approvals_required: ApprovalsRequiredSchema.optional(),
  /** Only a signed-in person other than the agent's owner or last changer may decide (absent = false). */
  separation_of_duties: SeparationOfDutiesSchema.optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;
