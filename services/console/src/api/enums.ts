/**
 * The enum values the filters offer. Kept here as plain arrays (importing `@agp/contracts` at run time would bundle
 * zod); the type checks below fail the console's type check if the contract adds or drops a value.
 * Source: spec §Intervention types, outcomes, risk levels; architecture §4 (Guardrail type casing).
 */
import type { ApprovalStatus, AuditEntryType, AuditObjectType, InterventionOutcome, InterventionType, RiskLevel, RunStatus } from '@agp/contracts';

/** `true` only when the unions A and B hold the same values. */
type SameUnion<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The ten intervention types, in the contract's order. */
export const INTERVENTION_TYPES = ['hard_block', 'approval_required', 'rate_limited', 'budget_exceeded', 'pii_blocked', 'content_blocked', 'loop_detected', 'idempotent_replay', 'downgrade', 'warning'] as const;

/** The six intervention outcomes. */
export const INTERVENTION_OUTCOMES = ['blocked', 'escalated', 'approved_after_review', 'rejected_after_review', 'modified', 'warned'] as const;

/** Risk levels, most to least severe. */
export const RISK_LEVELS = ['critical', 'high', 'medium', 'low', 'minimal'] as const;

/** Approval states. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;

/** Run states (the list_runs filter). */
export const RUN_STATUSES = ['running', 'completed', 'failed'] as const;

/** What an audit log entry is about. */
export const AUDIT_OBJECT_TYPES = ['policy', 'kill_switch', 'agent', 'mcp_server', 'mcp_tool', 'key', 'member'] as const;

/** The audit log's entry types. */
export const AUDIT_ENTRY_TYPES = [
  'policy.created',
  'policy.updated',
  'policy.enabled',
  'policy.disabled',
  'kill_switch.engaged',
  'kill_switch.released',
  'agent.registered',
  'agent.updated',
  'mcp_server.registered',
  'mcp_server.updated',
  'mcp_server.deleted',
  'mcp_tool.accepted',
  'key.created',
  'key.revoked',
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.removed',
] as const;

// Compile-time: each list above holds exactly the contract's values.
const sameAsContract: [
  SameUnion<(typeof INTERVENTION_TYPES)[number], InterventionType>,
  SameUnion<(typeof INTERVENTION_OUTCOMES)[number], InterventionOutcome>,
  SameUnion<(typeof RISK_LEVELS)[number], RiskLevel>,
  SameUnion<(typeof APPROVAL_STATUSES)[number], ApprovalStatus>,
  SameUnion<(typeof RUN_STATUSES)[number], RunStatus>,
  SameUnion<(typeof AUDIT_OBJECT_TYPES)[number], AuditObjectType>,
  SameUnion<(typeof AUDIT_ENTRY_TYPES)[number], AuditEntryType>,
] = [true, true, true, true, true, true, true];
void sameAsContract;
