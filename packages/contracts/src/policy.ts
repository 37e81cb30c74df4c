import { z } from 'zod';
import { OpaqueIdSchema, UsdSchema, paginationShape } from './common.js';
import { RiskLevelSchema } from './enums.js';
import { ApprovalsRequiredSchema, SeparationOfDutiesSchema } from './approval-rule.js';

/**
 * Policies, kill switches and the agent registry: wire records, request bodies, queries and domain events
 * of `services/policies`. Source: spec §create_policy tool; architecture §3, §4.
 */

// ---------------------------------------------------------------------------------------------------------
// Policies
// ---------------------------------------------------------------------------------------------------------

/** An action name as policies list it (same bounds as ActionDefinition.name). */
export const ActionNameSchema = z.string().min(1).max(256);

/** Wildcard key of `rate_limits`: the limit applies to every action the policy covers. */
export const RATE_LIMIT_ANY_ACTION = '*';

/**
 * Who a rate limit counts together (docs/sdk.md, Fleet-wide limits):
 * - `agent`: every process of each agent the policy covers, counted per agent (the default for a new limit);
 * - `organization`: all of the organisation's agents together;
 * - `process`: each governing process alone (an SDK governor counts its own calls).
 * `agent` and `organization` limits are counted by the platform and spent through leases, in fixed windows of
 * `window_seconds` aligned to the Unix epoch; `process` limits keep a sliding window in the process.
 */
export const RATE_LIMIT_SCOPES = ['agent', 'organization', 'process'] as const;
export type RateLimitScope = (typeof RATE_LIMIT_SCOPES)[number];

/**
 * The scope a rate limit stored without one has: `process`, what every limit meant before scopes existed.
 * {@link withPolicyDefaults} fills it in; a limit written now without a scope gets `agent` (its schema's default).
 */
export const LEGACY_RATE_LIMIT_SCOPE: RateLimitScope = 'process';

/**
 * One rate limit: at most `max_calls` calls within a window of `window_seconds` seconds, counted over `scope`
 * ({@link RATE_LIMIT_SCOPES}; absent in a request = `agent`).
 */
export const RateLimitSchema = z.strictObject({
  /** Calls allowed per window; an integer ≥ 1. */
  max_calls: z.number().int('expected an integer').min(1, 'must be 1 or more'),
  /** Window length in seconds; > 0 (fractions allowed). */
  window_seconds: z.number().finite().positive('must be greater than 0'),
  scope: z.enum(RATE_LIMIT_SCOPES).default('agent').describe('Who the limit counts together: agent (every process of each agent, per agent; the default), organization (all agents together) or process (each process alone)'),
});
export type RateLimit = z.infer<typeof RateLimitSchema>;

/** Who a period budget counts together: each agent the policy covers on its own, or the organisation's agents together. */
export const PERIOD_BUDGET_SCOPES = ['agent', 'organization'] as const;
export type PeriodBudgetScope = (typeof PERIOD_BUDGET_SCOPES)[number];

/** Calendar periods of a period budget, in UTC: the clock hour, the day from 00:00, the month from its first day. */
export const BUDGET_PERIODS = ['hour', 'day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/**
 * One budget over time: at most `max_usd` USD spent within each calendar `period` (UTC), per agent or for the
 * organisation (`scope`). Exceeding it is `budget_exceeded` (rule `period_budget`) naming the period.
 */
export const PeriodBudgetSchema = z.strictObject({
  scope: z.enum(PERIOD_BUDGET_SCOPES).describe('agent (each agent the policy covers, on its own) or organization (all its agents together)'),
  period: z.enum(BUDGET_PERIODS).describe('The calendar period in UTC: hour, day or month'),
  max_usd: UsdSchema.describe('USD allowed within one period'),
});
export type PeriodBudget = z.infer<typeof PeriodBudgetSchema>;

/** `period_budgets`: at most one per (scope, period) pair, so at most six. */
export const PeriodBudgetsSchema = z
  .array(PeriodBudgetSchema)
  .max(PERIOD_BUDGET_SCOPES.length * BUDGET_PERIODS.length)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((b, i) => {
      const key = `${b.scope}:${b.period}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i, 'period'], message: `a second ${b.scope} budget per ${b.period}: give each (scope, period) pair at most once` });
      seen.add(key);
    });
  });

/** `rate_limits`: action name (or `*` for every action) → its limit. */
export const RateLimitsSchema = z.record(ActionNameSchema, RateLimitSchema);

const ActionList = z.array(ActionNameSchema).max(1000);
const AgentIds = z.array(OpaqueIdSchema).max(1000);

/** A dotted path into an action's arguments (`amount`, `payment.amount`, `messages.2.content`: array indices as numbers). */
export const ArgumentPathSchema = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^.]+(\.[^.]+)*$/, 'expected a dotted path such as "amount" or "messages.2.content" (no empty segment)');

/** `action` of a downgrade rule meaning every action. */
export const DOWNGRADE_ANY_ACTION = '*';

/** A scalar a value substitution may map to. */
const ScalarSchema = z.union([z.string().max(10_000), z.number().finite(), z.boolean()]);

/**
 * One downgrade rule: instead of blocking the action, the engine changes one argument and lets it run.
 * - `action`: the action it applies to, or `*` for every action.
 * - `argument`: a dotted path into the arguments (see {@link ArgumentPathSchema}).
 * - exactly one of:
 *   - `max`: a numeric cap; a number above it becomes `max` (a non-number, or an absent argument, is left alone);
 *   - `replace`: value substitution, the argument's current value (as text: `"gpt-4o"`, `"100"`, `"true"`) → the
 *     value to use instead (`{"gpt-4o": "gpt-4o-mini"}`).
 */
export const DowngradeRuleSchema = z
  .strictObject({
    action: z.union([ActionNameSchema, z.literal(DOWNGRADE_ANY_ACTION)]),
    argument: ArgumentPathSchema,
    max: z.number().finite().optional(),
    replace: z
      .record(z.string().max(10_000), ScalarSchema)
      .refine((r) => Object.keys(r).length > 0, 'must map at least one value')
      .refine((r) => Object.keys(r).length <= 100, 'at most 100 values')
      .optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.max === undefined) === (r.replace === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['max'], message: 'give exactly one of max (a numeric cap) or replace (value substitution)' });
    }
  });
export type DowngradeRule = z.infer<typeof DowngradeRuleSchema>;

/** `downgrades`: at most 100 rules, applied in order. */
export const DowngradesSchema = z.array(DowngradeRuleSchema).max(100);

/**
 * The PII categories the personal-data guardrail detects:
 * - `email`; `phone` (validated with libphonenumber-js); `payment_card` (13–19 digits passing the Luhn check);
 * - `iban` (ISO 13616 checksum, via ibantools); `us_ssn` (AAA-GG-SSSS with the SSA's invalid ranges excluded);
 * - `ip_address` (IPv4 or IPv6); `secret` (well-known API-key prefixes, and high-entropy tokens).
 */
export const PII_CATEGORIES = ['email', 'phone', 'payment_card', 'iban', 'us_ssn', 'ip_address', 'secret'] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];

/**
 * Moderation categories (the OpenAI-compatible `/v1/moderations` names). A top-level name covers its sub-categories:
 * `hate` also matches `hate/threatening` scores.
 */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;
export type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];

/** What a guardrail does when it triggers: `block` stops the action, `warn` lets it run with a warning. */
export const GUARDRAIL_MODES = ['block', 'warn'] as const;
/** The PII guardrail's modes: also `redact`, which masks each match in the arguments and lets the action run. */
export const PII_GUARDRAIL_MODES = ['block', 'warn', 'redact'] as const;

/**
 * What the PII guardrail does with personal data in an action's result (a tool's result through the MCP proxy):
 * `block` withholds the result, `redact` masks each match before the agent sees it, `warn` passes it with a warning.
 */
export const PII_RESULT_MODES = ['block', 'redact', 'warn'] as const;
export type PiiResultMode = (typeof PII_RESULT_MODES)[number];

/**
 * Personal-data guardrail. `categories` omitted = all of {@link PII_CATEGORIES}; `mode` defaults to block;
 * `results` omitted = results are not scanned.
 */
export const PiiGuardrailSchema = z.strictObject({
  mode: z.enum(PII_GUARDRAIL_MODES).default('block').describe('How the guardrail acts: block stops the action, warn lets it run with a warning, redact masks each match in the arguments and lets it run.'),
  results: z.enum(PII_RESULT_MODES).optional().describe('What the guardrail does with personal data in an action’s result (a tool’s result through the MCP proxy): block withholds the result, redact masks each match before the agent sees it, warn passes it with a warning. Omitted: results are not scanned.'),
  categories: z.array(z.enum(PII_CATEGORIES)).min(1, 'list at least one category, or omit categories for all').max(PII_CATEGORIES.length).optional(),
});

/**
 * Moderation guardrail: the action triggers when a provider's score of a listed category (omitted = all of
 * {@link MODERATION_CATEGORIES}) is at or above `threshold` (0 to 1). The scores come in with the decision input.
 */
export const ModerationGuardrailSchema = z.strictObject({
  mode: z.enum(GUARDRAIL_MODES).default('block'),
  threshold: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1'),
  categories: z.array(z.enum(MODERATION_CATEGORIES)).min(1, 'list at least one category, or omit categories for all').max(MODERATION_CATEGORIES.length).optional(),
});

/**
 * Loop guardrail: `threshold` identical calls (same action, same canonical-arguments hash) within `window_seconds`
 * run; the next one triggers.
 */
export const LoopGuardrailSchema = z.strictObject({
  mode: z.enum(GUARDRAIL_MODES).default('block'),
  threshold: z.number().int('expected an integer').min(1, 'must be 1 or more').max(10_000, 'must be at most 10000'),
  window_seconds: z.number().finite().positive('must be greater than 0').max(86_400, 'must be at most 86400 (one day)'),
});

/**
 * Idempotency guardrail: for the listed actions, a repeat of the same idempotency key (the caller's, else the hash
 * of the canonical arguments) within `ttl_seconds` is not executed again; the first call's result is returned.
 */
export const IdempotencyGuardrailSchema = z.strictObject({
  actions: z.array(ActionNameSchema).min(1, 'list at least one action').max(1000),
  ttl_seconds: z.number().finite().positive('must be greater than 0').max(2_592_000, 'must be at most 2592000 (30 days)'),
});

/**
 * `auto_kill_switch`: the platform engages an agent's own kill switch when the share of its governed decisions that
 * stopped the action (`block_rate`, a fraction above 0 and at most 1) over the last `window_seconds` (10 to 86400)
 * exceeds `block_rate`, once at least `min_actions` (1 to 100000) decisions were counted in that window. Counted:
 * ledger entries of the SDKs and the MCP proxy (status `blocked` stopped) and the decision API's `reserve: true`
 * decisions; a plain evaluate counts nothing. Recorded as actor `rule:auto_kill_switch:<policy id>`; only a person
 * releases it. Source: docs/notifications.md (Automatic kill switch).
 */
export const AutoKillSwitchSchema = z.strictObject({
  block_rate: z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1').describe('Share of stopped decisions (0 < x ≤ 1) above which the agent is stopped'),
  window_seconds: z.number().int('expected an integer').min(10, 'must be at least 10').max(86_400, 'must be at most 86400 (one day)').default(300).describe('Sliding window, in seconds (default 300)'),
  min_actions: z.number().int('expected an integer').min(1, 'must be 1 or more').max(100_000, 'must be at most 100000').default(50).describe('Fewest decisions in the window before the rule may trip (default 50)'),
});
export type AutoKillSwitch = z.infer<typeof AutoKillSwitchSchema>;

/** `guardrails`: each optional; `{}` = none. */
export const GuardrailsSchema = z.strictObject({
  pii: PiiGuardrailSchema.optional(),
  moderation: ModerationGuardrailSchema.optional(),
  loop: LoopGuardrailSchema.optional(),
  idempotency: IdempotencyGuardrailSchema.optional(),
});
export type Guardrails = z.infer<typeof GuardrailsSchema>;

/**
 * Body of `POST /api/v1/policies` (strict: an unknown field is a 422 naming it). The create_policy tool's
 * arguments (the spec: name required; description, enabled, session_budget, run_budget, denied_actions,
 * rate_limits) plus allowed_actions, approval_required_actions and the agent scope `agent_ids`.
 * - `enabled` defaults to true.
 * - `session_budget` / `run_budget`: USD ≥ 0 per session / per run; absent = no budget.
 * - `allowed_actions`: absent (or null) = every action not denied is allowed; a list = only those.
 * - `agent_ids`: absent or empty = the policy applies to every agent of the organisation.
 * - `action_budget`: USD ≥ 0 for one action; an action whose estimated cost is above it is budget_exceeded.
 * - `downgrades`: rules that change an action's arguments instead of blocking it (see {@link DowngradeRuleSchema}).
 * - `guardrails`: pii, moderation, loop and idempotency, each optional (see {@link GuardrailsSchema}).
 * - `period_budgets`: USD per calendar hour, day or month, per agent or for the organisation ({@link PeriodBudgetSchema}).
 * - `approvals_required` (1 or 2, default 1) and `separation_of_duties` (default false): how the approval of an action
 *   this policy escalates (`approval_required_actions`) is decided ({@link ApprovalRuleSchema}; docs/auth.md).
 * - `auto_kill_switch`: engage the agent's kill switch when its block rate spikes ({@link AutoKillSwitchSchema}); null or absent = none.
 * `session_budget`, `run_budget`, `period_budgets` and rate limits of scope `agent` or `organization` count every
 * process of the fleet (the platform keeps the count; processes spend leases of it).
 */
export const CreatePolicySchema = z.strictObject({
  name: z.string().min(1).max(256),
  description: z.string().max(10_000).nullable().optional(),
  enabled: z.boolean().default(true),
  session_budget: UsdSchema.nullable().optional(),
  run_budget: UsdSchema.nullable().optional(),
  denied_actions: ActionList.optional(),
  allowed_actions: ActionList.nullable().optional(),
  approval_required_actions: ActionList.optional(),
  rate_limits: RateLimitsSchema.optional(),
  agent_ids: AgentIds.optional(),
  action_budget: UsdSchema.nullable().optional(),
  downgrades: DowngradesSchema.optional(),
  guardrails: GuardrailsSchema.optional(),
  period_budgets: PeriodBudgetsSchema.optional(),
  approvals_required: ApprovalsRequiredSchema.optional(),
  separation_of_duties: SeparationOfDutiesSchema.optional(),
  auto_kill_switch: AutoKillSwitchSchema.nullable().optional(),
});
export type CreatePolicy = z.infer<typeof CreatePolicySchema>;

/**
 * Body of `PATCH /api/v1/policies/{id}` (JSON merge patch semantics, strict, at least one field). `null`
 * clears description, session_budget, run_budget, action_budget, allowed_actions and auto_kill_switch; lists, rate_limits, downgrades,
 * guardrails and period_budgets are replaced whole (send `[]` / `{}` to empty them). `enabled` alone emits PolicyEnabled / PolicyDisabled.
 */
export const UpdatePolicySchema = z
  .strictObject({
    name: z.string().min(1).max(256),
    description: z.string().max(10_000).nullable(),
    enabled: z.boolean(),
    session_budget: UsdSchema.nullable(),
    run_budget: UsdSchema.nullable(),
    denied_actions: ActionList,
    allowed_actions: ActionList.nullable(),
    approval_required_actions: ActionList,
    rate_limits: RateLimitsSchema,
    agent_ids: AgentIds,
    action_budget: UsdSchema.nullable(),
    downgrades: DowngradesSchema,
    guardrails: GuardrailsSchema,
    period_budgets: PeriodBudgetsSchema,
    approvals_required: ApprovalsRequiredSchema,
    separation_of_duties: SeparationOfDutiesSchema,
    auto_kill_switch: AutoKillSwitchSchema.nullable(),
  })
  .partial()
  .refine((p) => Object.keys(p).length > 0, { message: 'at least one field to change is required' });
export type UpdatePolicy = z.infer<typeof UpdatePolicySchema>;

/** The policy fields that events carry and history audits, in display order. */
export const POLICY_FIELDS = [
  'name',
  'description',
  'enabled',
  'session_budget',
  'run_budget',
  'denied_actions',
  'allowed_actions',
  'approval_required_actions',
  'rate_limits',
  'agent_ids',
  'action_budget',
  'downgrades',
  'guardrails',
  'period_budgets',
  'approvals_required',
  'separation_of_duties',
  'auto_kill_switch',
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

/** The policy fields added after the first version, as a record written before them reads them. */
export interface LaterPolicyFields {
  action_budget: number | null;
  downgrades: DowngradeRule[];
  guardrails: Guardrails;
  period_budgets: PeriodBudget[];
  approvals_required: number;
  separation_of_duties: boolean;
  auto_kill_switch: AutoKillSwitch | null;
}

/**
 * `rate_limits` as stored, each limit with its scope: one stored before scopes existed counted per process, and keeps
 * that meaning ({@link LEGACY_RATE_LIMIT_SCOPE}). Returns the same object when every limit has a scope. Pure.
 */
export function withRateLimitScopes<T extends Record<string, { scope?: RateLimitScope }>>(limits: T): { [K in keyof T]: T[K] & { scope: RateLimitScope } } {
  let out: Record<string, { scope?: RateLimitScope }> | null = null;
  for (const [action, limit] of Object.entries(limits)) {
    if (limit.scope !== undefined) continue;
    out ??= { ...limits };
    out[action] = { ...limit, scope: LEGACY_RATE_LIMIT_SCOPE };
  }
  return (out ?? limits) as { [K in keyof T]: T[K] & { scope: RateLimitScope } };
}

/**
 * A policy record (or settings, or PolicyCreated data) with the fields it predates filled in: no action budget
 * (null), no downgrades ([]), no guardrails ({}), no period budgets ([]), one approval by anyone (`approvals_required` 1,
 * `separation_of_duties` false), no automatic kill switch (null), and a rate limit without a scope counted per
 * process ({@link withRateLimitScopes}). Records written before those fields existed read through this.
 */
export function withPolicyDefaults<T extends object>(p: T): T & LaterPolicyFields {
  const out = { action_budget: null, downgrades: [], guardrails: {}, period_budgets: [], approvals_required: 1, separation_of_duties: false, auto_kill_switch: null, ...p } as T & LaterPolicyFields & { rate_limits?: Record<string, { scope?: RateLimitScope }> };
  if (out.rate_limits !== undefined && out.rate_limits !== null) out.rate_limits = withRateLimitScopes(out.rate_limits);
  return out;
}

/** A policy's settings with every optional one normalised (null / [] / {}). */
export const PolicySettingsSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  /** USD per session; null = none. */
  session_budget: z.number().nullable(),
  /** USD per run; null = none. */
  run_budget: z.number().nullable(),
  denied_actions: z.array(z.string()),
  /** null = every action not denied is allowed. */
  allowed_actions: z.array(z.string()).nullable(),
  approval_required_actions: z.array(z.string()),
  rate_limits: z.record(z.string(), RateLimitSchema),
  /** Empty = every agent of the organisation. */
  agent_ids: z.array(z.string()),
  /** USD per action; null = none. */
  action_budget: z.number().nullable(),
  /** Empty = none. */
  downgrades: z.array(DowngradeRuleSchema),
  /** `{}` = none. */
  guardrails: GuardrailsSchema,
  /** Empty = none. */
  period_budgets: z.array(PeriodBudgetSchema),
  /** Approvals an escalated action needs from different people: 1 or 2. */
  approvals_required: z.number().int(),
  /** Only a person, not a key and not the agent's owner or last changer, may decide its approvals. */
  separation_of_duties: z.boolean(),
  /** The automatic kill switch rule; null = none. */
  auto_kill_switch: AutoKillSwitchSchema.nullable(),
});
export type PolicySettings = z.infer<typeof PolicySettingsSchema>;

/**
 * The policy record as every read returns it. `id` is a UUIDv7; `version` is the version of its stream
 * `policy-<id>` (1 after creation, +1 per event). Times ISO 8601 UTC.
 */
export const PolicySchema = PolicySettingsSchema.extend({
  id: z.string(),
  organization_id: z.string(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Policy = z.infer<typeof PolicySchema>;

/** `?version=N`: a stream version, an integer ≥ 1. */
const VersionParam = z
  .string()
  .regex(/^[1-9][0-9]{0,8}$/, 'expected a version number (an integer from 1)')
  .transform(Number);

/** Query of `GET /api/v1/policies/{id}`: optionally `version` (that version, folded from the stream). */
export const GetPolicyQuerySchema = z.strictObject({ version: VersionParam.optional() });
export type GetPolicyQuery = z.infer<typeof GetPolicyQuerySchema>;

/** Query of `GET /api/v1/policies/{id}/history` (no parameters; an unknown one is a 422). */
export const PolicyHistoryQuerySchema = z.strictObject({});

/**
 * Query of `GET /api/v1/policies`. Filters compose with AND; unknown parameters are a 422.
 * - `enabled`: `true` or `false`.
 * - `agent_id`: policies that apply to that agent (those scoped to it, and those with no scope).
 * - `name`: exact name.
 * Order: newest first (created_at, then id).
 */
export const ListPoliciesQuerySchema = z.strictObject({
  enabled: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  agent_id: OpaqueIdSchema.optional(),
  name: z.string().min(1).max(256).optional(),
  ...paginationShape(50, 1000),
});
export type ListPoliciesQuery = z.infer<typeof ListPoliciesQuerySchema>;

/** A page of policies. */
export const PolicyPageSchema = z.object({ policies: z.array(PolicySchema), total: z.number().int(), skip: z.number().int(), limit: z.number().int() });

/** One field change: its value before and after (null when it had none). */
export const FieldChangeSchema = z.object({ from: z.unknown(), to: z.unknown() });
export type FieldChange = { from: unknown; to: unknown };

/** Each changed field of `fields` with its value before and after. */
const changesOf = <F extends readonly [string, ...string[]]>(fields: F) => z.partialRecord(z.enum(fields), z.object({ from: z.unknown(), to: z.unknown() }) as z.ZodType<FieldChange>);

/** One entry of a policy's history: an event of its stream, who caused it, and each field it changed. */
export const PolicyHistoryEntrySchema = z.object({
  version: z.number().int(),
  event: z.string(),
  at: z.string(),
  /** `key:<key id>` of the API key that made the change. */
  actor: z.string().describe('Who made the change: `key:<key id>` of the API key'),
  /** The name the key had when it made the change (captured then); null for a key without a name, or a change recorded before names were. */
  actor_name: z.string().nullable().describe('The name the acting key had at the time of the change (kept when the key is renamed or revoked); null when it had none'),
  changes: z.record(z.string(), FieldChangeSchema),
});
export type PolicyHistoryEntry = z.infer<typeof PolicyHistoryEntrySchema>;

/** `GET /api/v1/policies/{id}/history`: every event of the policy's stream, oldest first. */
export const PolicyHistorySchema = z.object({ policy_id: z.string(), history: z.array(PolicyHistoryEntrySchema) });
export type PolicyHistory = z.infer<typeof PolicyHistorySchema>;

/** Domain events of the policy stream `policy-<id>`. Source: docs/decisions.md (Policies, agents, kill switches). */
export const PolicyEvents = {
  Created: 'PolicyCreated',
  Updated: 'PolicyUpdated',
  Enabled: 'PolicyEnabled',
  Disabled: 'PolicyDisabled',
} as const;

/** Stream id of a policy. */
export const policyStream = (id: string) => `policy-${id}`;

/** Data of PolicyCreated: the id, the time (`at`, ISO 8601 UTC) and every normalised setting. */
export const PolicyCreatedDataSchema = PolicySettingsSchema.extend({ id: z.string(), at: z.string() });
export type PolicyCreatedData = z.infer<typeof PolicyCreatedDataSchema>;

/** Data of PolicyUpdated: each changed field (never `enabled`) with its value before and after. */
export const PolicyUpdatedDataSchema = z.object({ id: z.string(), at: z.string(), changes: changesOf(POLICY_FIELDS) });
export type PolicyUpdatedData = z.infer<typeof PolicyUpdatedDataSchema>;

/** Data of PolicyEnabled / PolicyDisabled. */
export const PolicyToggledDataSchema = z.object({ id: z.string(), at: z.string() });
export type PolicyToggledData = z.infer<typeof PolicyToggledDataSchema>;

// ---------------------------------------------------------------------------------------------------------
// Kill switches
// ---------------------------------------------------------------------------------------------------------

/** Kill-switch scopes: the whole organisation, or one agent. */
export const KILL_SWITCH_SCOPES = ['organization', 'agent'] as const;
export type KillSwitchScope = (typeof KILL_SWITCH_SCOPES)[number];

/**
 * A kill switch's state. A switch never set reads `engaged: false` with null `changed_at` / `changed_by` / `actor_name`.
 * `changed_by` is the actor of the last change (`key:<key id>`), `actor_name` that key's name at the time (null when it
 * had none); `version` the switch stream's version (0 = never set).
 */
export const KillSwitchStateSchema = z.object({
  scope: z.enum(KILL_SWITCH_SCOPES),
  /** The agent, for scope `agent`; null for the organisation's switch. */
  agent_id: z.string().nullable(),
  engaged: z.boolean(),
  reason: z.string().nullable(),
  changed_at: z.string().nullable(),
  changed_by: z.string().nullable().describe('Who made the last change: `key:<key id>`, `user:<user id>`, or `rule:auto_kill_switch:<policy id>` when a policy\'s automatic kill switch engaged it'),
  actor_name: z.string().nullable().describe('The name the acting key had at the time of the last change; null when it had none'),
  version: z.number().int(),
});
export type KillSwitchState = z.infer<typeof KillSwitchStateSchema>;

/** Body of `PUT /api/v1/kill-switches/organization` and `PUT /api/v1/kill-switches/agents/{agent_id}`. */
export const SetKillSwitchSchema = z.strictObject({
  engaged: z.boolean(),
  /** Why it was engaged or released; recorded on the event. */
  reason: z.string().max(10_000).optional(),
});
export type SetKillSwitch = z.infer<typeof SetKillSwitchSchema>;

/** `GET /api/v1/kill-switches`: the organisation's switch and every engaged agent switch. */
export const KillSwitchOverviewSchema = z.object({ organization: KillSwitchStateSchema, agents: z.array(KillSwitchStateSchema) });
export type KillSwitchOverview = z.infer<typeof KillSwitchOverviewSchema>;

/** Query of `GET /api/v1/kill-switches` (no parameters). */
export const KillSwitchQuerySchema = z.strictObject({});

/** Domain events of a kill-switch stream. The actor is in the event metadata. */
export const KillSwitchEvents = { Engaged: 'KillSwitchEngaged', Released: 'KillSwitchReleased' } as const;

/** Data of KillSwitchEngaged / KillSwitchReleased. */
export const KillSwitchChangedDataSchema = z.object({ scope: z.enum(KILL_SWITCH_SCOPES), agent_id: z.string().nullable(), reason: z.string().nullable(), at: z.string() });
export type KillSwitchChangedData = z.infer<typeof KillSwitchChangedDataSchema>;

// ---------------------------------------------------------------------------------------------------------
// Agent registry
// ---------------------------------------------------------------------------------------------------------

/** A registered action definition with its optional fields normalised to null. */
export const RegisteredActionSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  /** JSON Schema of the action's parameters. */
  parameters: z.record(z.string(), z.unknown()).nullable(),
  risk_level: RiskLevelSchema.nullable(),
  /** Typical cost of one call, USD. */
  typical_cost_usd: z.number().nullable(),
});
export type RegisteredAction = z.infer<typeof RegisteredActionSchema>;

/** What a registration declares: every field of `agent.register` but agent_id, normalised. */
export const AgentDefinitionSchema = z.object({
  name: z.string().nullable(),
  description: z.string().nullable(),
  framework: z.string().nullable(),
  owner: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  actions: z.array(RegisteredActionSchema),
});
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** The agent fields that registrations carry and updates audit. */
export const AGENT_FIELDS = ['name', 'description', 'framework', 'owner', 'metadata', 'actions'] as const;
export type AgentField = (typeof AGENT_FIELDS)[number];

/** The agent's own kill switch, as shown on the agent. */
export const AgentKillSwitchSchema = KillSwitchStateSchema.pick({ engaged: true, reason: true, changed_at: true, changed_by: true, actor_name: true });

/**
 * The agent record. `agent_id` is the client's id (1–256 characters, unique per organisation); `version` is the
 * version of its registry stream (1 after the first registration, +1 per changing re-registration).
 */
export const AgentSchema = AgentDefinitionSchema.extend({
  agent_id: z.string(),
  organization_id: z.string(),
  registered_at: z.string(),
  updated_at: z.string(),
  version: z.number().int(),
  /**
   * Who last changed the registration (its first registration or last changing re-registration): `user:<user id>` of a
   * signed-in person or `key:<key id>`; null for a registration last changed before this was recorded.
   */
  changed_by: z.string().nullable().describe('Who last changed the registration: `user:<user id>` of a person or `key:<key id>`; null when not recorded'),
  /** That person's e-mail or that key's name at the time; null when none. */
  changed_by_name: z.string().nullable().describe("The e-mail of the person (or the key's name) who last changed the registration; null when none"),
  kill_switch: AgentKillSwitchSchema,
});
export type Agent = z.infer<typeof AgentSchema>;

/** `agents.register` reply: whether this call registered the agent (201) or re-registered it (200). */
export const AgentRegisterResultSchema = z.object({ created: z.boolean(), agent: AgentSchema });
export type AgentRegisterResult = z.infer<typeof AgentRegisterResultSchema>;

/** Query of `GET /api/v1/agents`: pagination only. Order: agent_id ascending. */
export const ListAgentsQuerySchema = z.strictObject({ ...paginationShape(50, 1000) });
export type ListAgentsQuery = z.infer<typeof ListAgentsQuerySchema>;

/** A page of agents. */
export const AgentPageSchema = z.object({ agents: z.array(AgentSchema), total: z.number().int(), skip: z.number().int(), limit: z.number().int() });

/** Domain events of the agent stream `agent-<deterministicId(org, agent_id)>`. */
export const AgentEvents = { Registered: 'AgentRegistered', Updated: 'AgentUpdated' } as const;

/** Data of AgentRegistered: the agent id, the time and its normalised definition. */
export const AgentRegisteredDataSchema = AgentDefinitionSchema.extend({ agent_id: z.string(), at: z.string() });
export type AgentRegisteredData = z.infer<typeof AgentRegisteredDataSchema>;

/** Data of AgentUpdated: each field a re-registration changed, before and after. */
export const AgentUpdatedDataSchema = z.object({ agent_id: z.string(), at: z.string(), changes: changesOf(AGENT_FIELDS) });
export type AgentUpdatedData = z.infer<typeof AgentUpdatedDataSchema>;
