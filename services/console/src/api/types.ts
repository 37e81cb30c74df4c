/**
 * The wire types the console reads, taken from `@agp/contracts` as types only (`import type`: erased at build, so no
 * zod reaches the bundle). The console still talks to the platform only over HTTP; these are the shapes the OpenAPI
 * document describes, so a contract change that breaks a page fails the console's type check.
 */
export type {
  Agent,
  ApprovalRecord,
  AuditCheckpoint,
  AuditCheckpointPage,
  AuditEntry,
  AuditErasure,
  AuditInclusionProof,
  AuditKeys,
  AuditRetention,
  AuditTrailEntry,
  BudgetPeriod,
  AuthConfig,
  AuthMe,
  CallerKey,
  EstimationAccuracy,
  InterventionDetail,
  InterventionRecord,
  InterventionStats,
  KillSwitchOverview,
  KillSwitchState,
  LedgerEntry,
  McpPromptDescriptor,
  McpResourceContent,
  McpResourceDescriptor,
  McpResourceTemplateDescriptor,
  McpToolDescriptor,
  McpToolEnvelope,
  PeriodBudget,
  PeriodBudgetScope,
  Policy,
  PolicyHistory,
  PolicyHistoryEntry,
  QuotaCounter,
  QuotaCounterPage,
  RateLimitScope,
  Run,
  RunDetail,
  SlackChannel,
  SlackConnection,
  StatsDaily,
  StatsSummary,
  Webhook,
  WebhookDelivery,
  WebhookWithSecret,
} from '@agp/contracts';
export { APPROVAL_STATUSES, AUDIT_ENTRY_TYPES, AUDIT_OBJECT_TYPES, INTERVENTION_OUTCOMES, INTERVENTION_TYPES, RISK_LEVELS, RUN_STATUSES } from './enums.js';

/** A page of a list endpoint: the rows under `key` plus `total`, `skip` and `limit`. */
export type Page<K extends string, T> = { [P in K]: T[] } & { total: number; skip: number; limit: number };

/** `platform://stats/dashboard` data (spec §Tool gateway). Counts are integers, cost in USD, success_rate 0..1. */
export interface DashboardStats {
  total_runs: number;
  total_actions: number;
  total_cost_usd: number;
  success_rate: number;
  pending_approvals: number;
  interventions_24h: number;
}
