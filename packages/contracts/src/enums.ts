import { z } from 'zod';

/**
 * Intervention types, lowercase on the wire. The spec's list filter shows six; architecture §4
 * decides the four guardrail types are lowercase too and that all ten are accepted everywhere.
 * Source: spec §Intervention types, architecture §4 (Guardrail type casing).
 */
export const INTERVENTION_TYPES = [
  'hard_block',
  'approval_required',
  'rate_limited',
  'budget_exceeded',
  'pii_blocked',
  'content_blocked',
  'loop_detected',
  'idempotent_replay',
  'downgrade',
  'warning',
] as const;
export const InterventionTypeSchema = z.enum(INTERVENTION_TYPES);
export type InterventionType = z.infer<typeof InterventionTypeSchema>;

/** Intervention outcomes. Source: spec §Intervention outcomes. */
export const INTERVENTION_OUTCOMES = [
  'blocked',
  'escalated',
  'approved_after_review',
  'rejected_after_review',
  'modified',
  'warned',
] as const;
export const InterventionOutcomeSchema = z.enum(INTERVENTION_OUTCOMES);
export type InterventionOutcome = z.infer<typeof InterventionOutcomeSchema>;

/** Risk levels, most to least severe. Source: spec §Risk levels. */
export const RISK_LEVELS = ['critical', 'high', 'medium', 'low', 'minimal'] as const;
export const RiskLevelSchema = z.enum(RISK_LEVELS);
export type RiskLevel = z.infer<typeof RiskLevelSchema>;

/** Guardrail discriminators. Source: spec §Guardrail context payload. */
export const GUARDRAILS = ['pii', 'moderation', 'loop', 'idempotency'] as const;

/** Which guardrail discriminator each guardrail intervention type carries. */
export const GUARDRAIL_FOR_TYPE: Partial<Record<InterventionType, (typeof GUARDRAILS)[number]>> = {
  pii_blocked: 'pii',
  content_blocked: 'moderation',
  loop_detected: 'loop',
  idempotent_replay: 'idempotency',
};

/** Outcomes that count as "blocked" for stats (top blocked actions, high-risk blocks, default cost prevented). */
export const BLOCKING_OUTCOMES: readonly InterventionOutcome[] = ['blocked', 'rejected_after_review'];

/** Risk levels that count as "high risk" for `high_risk_blocks`. */
export const HIGH_RISK_LEVELS: readonly RiskLevel[] = ['critical', 'high'];
