import { z } from 'zod';

/**
 * How an escalated action's approval is decided, set per policy and carried from the policy engine's `escalate`
 * decision into the escalated intervention, which opens its approval with it. Source: docs/auth.md (Named approvers,
 * separation of duties, approvals_required).
 * - `approvals_required`: how many different people (or keys, without separation of duties) must approve before the
 *   action runs: 1 (the default) or 2. A reject by any approver rejects.
 * - `separation_of_duties`: the approval must be decided by a signed-in person, not an API key, and not by the person
 *   who owns the agent (its registration's `owner`, matched with their e-mail or user id) or last changed its
 *   registration.
 */

/** Most approvals a policy may require. */
export const MAX_APPROVALS_REQUIRED = 2;

/** `approvals_required`: an integer from 1 to {@link MAX_APPROVALS_REQUIRED}. */
export const ApprovalsRequiredSchema = z
  .number()
  .int('expected an integer')
  .min(1, 'must be 1 or 2')
  .max(MAX_APPROVALS_REQUIRED, `must be 1 or ${MAX_APPROVALS_REQUIRED}`)
  .describe('How many different people must approve before the action runs: 1 or 2');

/** `separation_of_duties`: true = only a person may decide, and not the agent's owner or last changer. */
export const SeparationOfDutiesSchema = z.boolean().describe("Only a signed-in person may decide, never an API key, and not the person who owns the agent or last changed its registration");

/** The approval rule an escalation carries (see the module docs). */
export const ApprovalRuleSchema = z.object({ approvals_required: ApprovalsRequiredSchema, separation_of_duties: SeparationOfDutiesSchema });
/** See {@link ApprovalRuleSchema}. */
export type ApprovalRule = z.infer<typeof ApprovalRuleSchema>;

/** The rule of a policy that says nothing: one approval, by anyone allowed to approve. */
export const DEFAULT_APPROVAL_RULE: Readonly<ApprovalRule> = Object.freeze({ approvals_required: 1, separation_of_duties: false });
