import { z } from 'zod';
import { OpaqueIdSchema, enumFilter, paginationShape } from './common.js';
import { RiskLevelSchema } from './enums.js';
import { InterventionOutcomeChangedDataSchema } from './events.js';
import { ApprovalsRequiredSchema } from './approval-rule.js';

/**
 * The approval inbox. An intervention recorded with outcome `escalated` (through `POST /api/v1/interventions`,
 * an `intervention.create` or an `approval.request` ingest event) opens approval `apr-<intervention id>`.
 * Approving moves the intervention's outcome to `approved_after_review`, rejecting to `rejected_after_review`;
 * an approval nobody decides in time expires to `rejected_after_review` with reason `expired`.
 * Source: architecture §4 (Approvals); spec §approve_action, reject_action.
 */

/** Approval states: `pending → approved | rejected | expired`, each final. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export const ApprovalStatusSchema = z.enum(APPROVAL_STATUSES);
export type ApprovalStatus = z.infer<typeof ApprovalStatusSchema>;

/** Prefix of approval ids: approval `apr-<intervention id>` belongs to intervention `<intervention id>`. */
export const APPROVAL_ID_PREFIX = 'apr-';

/** The approval id of an intervention. */
export const approvalId = (interventionId: string) => `${APPROVAL_ID_PREFIX}${interventionId}`;

/** The intervention id of an approval id, or null when `id` is not an approval id. */
export function interventionIdOfApproval(id: string): string | null {
  return id.startsWith(APPROVAL_ID_PREFIX) && id.length > APPROVAL_ID_PREFIX.length ? id.slice(APPROVAL_ID_PREFIX.length) : null;
}

/** Reason recorded on the outcome change of an approval that expired undecided. */
export const APPROVAL_EXPIRED_REASON = 'expired';

/** Who decided: a signed-in person (`user`) or an API key (`key`). */
export const APPROVER_TYPES = ['user', 'key'] as const;

/**
 * Who gave an approval or decided: `type` `user` (a signed-in person: `id` their user id, `email` and `name` from their
 * sign-in) or `key` (an API key: `id` the key id, `email` the `approver_email` it sent, `name` the key's name then).
 * `email` and `name` are null when unknown. Source: docs/auth.md (Named approvers).
 */
export const ApproverSchema = z.object({
  type: z.enum(APPROVER_TYPES),
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
});
export type Approver = z.infer<typeof ApproverSchema>;

/** One approval given: by whom, when (ISO 8601 UTC) and with what comment (the decision's `notes`; null when none). */
export const ApprovalGivenSchema = z.object({ by: ApproverSchema, at: z.string(), comment: z.string().nullable() });
export type ApprovalGiven = z.infer<typeof ApprovalGivenSchema>;

/**
 * An approval as every read returns it. The request fields are the intervention's (enriched values once
 * enrichment ran). Times ISO 8601 UTC; `estimated_cost_usd` in USD.
 * - `requested_at`: when the platform recorded the escalated intervention (its `created_at`).
 * - `expires_at`: when a pending approval expires (requested_at + AGP_APPROVAL_TTL_SECONDS, or the request's
 *   `expires_in_seconds`).
 * - `decided_at`, `approver_email`, `notes`: set by a decision; `decided_at` is also set on expiry.
 * - `decision_reason`: `expired` for an expired approval, else null.
 * - `actor`: who decided: `key:<key id>` of the API key that sent the decision (`user:<user id>` for a person), `system` for an expiry, null while
 *   pending; `actor_name`: that key's name when it decided (captured in the event, so a renamed or revoked key keeps
 *   it), null when it had none or for an expiry.
 * - `approvals_required` (1 or 2) and `separation_of_duties`: the escalating policy's rule (docs/auth.md). With 2, the
 *   approval stays `pending` until two different approvers approved; a reject by any approver rejects it.
 * - `approvals`: each approval given so far, oldest first (by, at, comment); the last one of an approved approval is
 *   the deciding one.
 * - `decided_by`: who made the deciding approve or reject (null while pending and for an expiry); `notes` is their
 *   comment.
 */
export const ApprovalRecordSchema = z.object({
  id: z.string(),
  intervention_id: z.string(),
  status: ApprovalStatusSchema,
  agent_id: z.string(),
  run_id: z.string().nullable(),
  action_name: z.string(),
  policy_id: z.string().nullable(),
  policy_name: z.string().nullable(),
  risk_level: RiskLevelSchema.nullable(),
  reason: z.string().nullable(),
  agent_intent: z.string().nullable(),
  estimated_cost_usd: z.number().nullable(),
  original_inputs: z.record(z.string(), z.unknown()),
  requested_at: z.string(),
  expires_at: z.string(),
  decided_at: z.string().nullable(),
  approver_email: z.string().nullable(),
  notes: z.string().nullable(),
  decision_reason: z.string().nullable(),
  actor: z.string().nullable().describe('Who decided: `key:<key id>` of the API key that sent the decision, `system` for an expiry, null while pending'),
  actor_name: z.string().nullable().describe('The name the deciding key had when it decided; null when it had none, for an expiry, or while pending'),
  approvals_required: z.number().int().describe('Approvals from different approvers needed before the action runs: 1 or 2'),
  separation_of_duties: z.boolean().describe("Only a signed-in person may decide, not an API key, and not the agent's owner or last changer"),
  approvals: z.array(ApprovalGivenSchema).describe('Each approval given so far, oldest first'),
  decided_by: ApproverSchema.nullable().describe('Who made the deciding approve or reject; null while pending and for an expiry'),
  organization_id: z.string(),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

/**
 * Query of `GET /api/v1/approvals`. `status` takes one value or a comma-separated list (OR); filters compose
 * with AND; unknown parameters are a 422. Newest first (requested_at, then id).
 * Source: docs/api.md (Approvals); spec §Limits: skip default 0, limit default 50, max 1000.
 */
export const ListApprovalsQuerySchema = z.strictObject({
  status: enumFilter(APPROVAL_STATUSES).optional(),
  agent_id: OpaqueIdSchema.optional(),
  run_id: OpaqueIdSchema.optional(),
  ...paginationShape(50, 1000),
});
export type ListApprovalsQuery = z.infer<typeof ListApprovalsQuerySchema>;

/** A page of approvals: `{approvals, total, skip, limit}`. */
export const ApprovalPageSchema = z.object({
  approvals: z.array(ApprovalRecordSchema),
  total: z.number().int(),
  skip: z.number().int(),
  limit: z.number().int(),
});
export type ApprovalPage = z.infer<typeof ApprovalPageSchema>;

/**
 * Body of `POST /api/v1/approvals/{id}/approve` and `/reject`. `approver_email` is required (a valid email
 * address); `notes` optional, at most 10 000 characters. Unknown fields are a 422.
 * Source: spec §approve_action, reject_action arguments.
 */
export const ApprovalDecisionSchema = z.strictObject({
  approver_email: z.email().max(320),
  notes: z.string().max(10_000).optional(),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** The approval decisions a caller can make. */
export type ApprovalDecisionKind = 'approve' | 'reject';

/**
 * Data of the InterventionOutcomeChanged event an approval appends: the outcome change plus, for a human
 * decision, the id of the API key that made it and that key's name at the time (the approver's email is in
 * `approver_email` and the actor); for a signed-in person, `user_id`, with the session's id as `key_id` and their
 * e-mail as `key_name` (docs/auth.md).
 */
export const ApprovalOutcomeChangedDataSchema = InterventionOutcomeChangedDataSchema.extend({
  key_id: z.string().optional(),
  key_name: z.string().optional(),
  user_id: z.string().optional(),
  /** The signed-in person's e-mail and name from their sign-in (absent for a key, or when the provider gave none). */
  user_email: z.string().optional(),
  user_name: z.string().optional(),
});
export type ApprovalOutcomeChangedData = z.infer<typeof ApprovalOutcomeChangedDataSchema>;

/**
 * Data of InterventionApprovalGiven: one approval of an approval that needs more than one (`approvals_required` 2),
 * which stays pending; who gave it as in {@link ApprovalOutcomeChangedDataSchema}, the comment as `notes`. The last
 * approval is the InterventionOutcomeChanged that approves.
 */
export const ApprovalGivenDataSchema = z.object({
  id: z.string(),
  approver_email: z.string(),
  notes: z.string().optional(),
  key_id: z.string(),
  key_name: z.string().optional(),
  user_id: z.string().optional(),
  user_email: z.string().optional(),
  user_name: z.string().optional(),
  approvals_required: ApprovalsRequiredSchema,
});
export type ApprovalGivenData = z.infer<typeof ApprovalGivenDataSchema>;

/**
 * Who an approval event names (InterventionApprovalGiven, or a decision's InterventionOutcomeChanged): a signed-in
 * person (`user_id`; e-mail from `user_email`, else `key_name`, which held it before `user_email` was recorded) or the
 * API key (`key_id`, the `approver_email` it sent, its name). Null for an event without either (an expiry). Pure.
 */
export function approverOf(d: Partial<Pick<ApprovalGivenData, 'user_id' | 'user_email' | 'user_name' | 'key_name' | 'approver_email' | 'key_id'>>): Approver | null {
  if (d.user_id) return { type: 'user', id: d.user_id, email: d.user_email ?? d.key_name ?? null, name: d.user_name ?? null };
  if (d.key_id) return { type: 'key', id: d.key_id, email: d.approver_email ?? null, name: d.key_name ?? null };
  return null;
}

