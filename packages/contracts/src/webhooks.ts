/**
 * Signed webhooks: subscriptions (`/api/v1/webhooks`), their deliveries, and the payload of each event kind. A
 * subscription names a URL, the event kinds it wants and an optional filter; the platform signs every delivery per the
 * Standard Webhooks specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the subscription's
 * secret, which is answered once (on creation and on rotation). Source: docs/notifications.md.
 */
import { z } from 'zod';
import { OpaqueIdSchema, paginationShape } from './common.js';
import { INTERVENTION_TYPES, InterventionOutcomeSchema, InterventionTypeSchema, RISK_LEVELS, RiskLevelSchema } from './enums.js';
import { GovernanceApprovalDecidedSchema, GovernanceKillSwitchChangedSchema, GovernancePolicyChangedSchema } from './governance.js';

/** Every event kind a subscription may name; the platform sends each (docs/notifications.md, Event kinds and payloads). */
export const WEBHOOK_EVENT_KINDS = [
  'approval.requested',
  'approval.decided',
  'intervention.created',
  'kill_switch.changed',
  'policy.changed',
  'budget.threshold',
  'block_rate.spike',
  'eval.regression',
  'delivery.disabled',
] as const;
/** One of {@link WEBHOOK_EVENT_KINDS}. */
export const WebhookEventKindSchema = z.enum(WEBHOOK_EVENT_KINDS);
/** See {@link WebhookEventKindSchema}. */
export type WebhookEventKind = z.infer<typeof WebhookEventKindSchema>;

/** Longest webhook URL, in characters. */
export const WEBHOOK_URL_MAX = 2048;

/**
 * A webhook URL as accepted: absolute http or https, at most {@link WEBHOOK_URL_MAX} characters, no user name or
 * password. Whether the platform may call its host (the outbound address check) is decided at creation and again at
 * each delivery.
 */
export const WebhookUrlSchema = z
  .string()
  .max(WEBHOOK_URL_MAX, `at most ${WEBHOOK_URL_MAX} characters`)
  .refine((v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol), { error: 'an absolute http or https URL' })
  .refine((v) => !URL.canParse(v) || (new URL(v).username === '' && new URL(v).password === ''), { error: 'a URL may not carry a user name or password' })
  .describe(`Where deliveries are POSTed: an absolute http or https URL, at most ${WEBHOOK_URL_MAX} characters, without credentials`);

/** The `budget.threshold` percentages a subscription may choose (default all three). */
export const BUDGET_THRESHOLD_PERCENTS = [50, 80, 100] as const;

/**
 * The `block_rate.spike` rule of a subscription: it is sent when an agent's share of stopping decisions over the last
 * `window_seconds` exceeds `threshold`, once at least `min_actions` decisions were counted in the window; again only
 * after the rate fell back to `threshold` or below. Defaults: 0.5, 300 s, 20.
 */
export const BlockRateRuleSchema = z.strictObject({
  threshold: z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1').default(0.5).describe('Share of stopped decisions (0 < x ≤ 1) above which it is sent (default 0.5)'),
  window_seconds: z.number().int('expected an integer').min(10, 'must be at least 10').max(86_400, 'must be at most 86400 (one day)').default(300).describe('Sliding window, in seconds (default 300)'),
  min_actions: z.number().int('expected an integer').min(1, 'must be 1 or more').max(100_000, 'must be at most 100000').default(20).describe('Fewest decisions in the window before it may be sent (default 20)'),
});
/** See {@link BlockRateRuleSchema}. */
export type BlockRateRule = z.infer<typeof BlockRateRuleSchema>;
/** The rule of a subscription without `filter.block_rate`. */
export const DEFAULT_BLOCK_RATE_RULE: BlockRateRule = { threshold: 0.5, window_seconds: 300, min_actions: 20 };

/**
 * Which events of its kinds a subscription receives; every part is optional and they compose with AND. An event that
 * does not carry the filtered property (a policy change has no intervention type) passes that part.
 */
export const WebhookFilterSchema = z
  .strictObject({
    agent_ids: z.array(OpaqueIdSchema).min(1).max(100).optional().describe('Only events concerning one of these agents (an organisation-wide event concerns every agent)'),
    intervention_types: z.array(InterventionTypeSchema).min(1).optional().describe(`Only interventions and approvals of these types: ${INTERVENTION_TYPES.join(', ')}`),
    min_risk_level: RiskLevelSchema.optional().describe(`Only interventions and approvals at this risk level or above (${RISK_LEVELS.join(' > ')})`),
    budget_thresholds: z
      .array(z.union([z.literal(50), z.literal(80), z.literal(100)]))
      .min(1)
      .optional()
      .describe('For budget.threshold: which percentages of a budget to be told about (50, 80, 100; default all)'),
    block_rate: BlockRateRuleSchema.optional().describe('For block_rate.spike: the threshold, window and minimum volume (default 0.5, 300 s, 20 decisions)'),
  })
  .describe('Which events of the chosen kinds are sent; parts compose with AND');
/** See {@link WebhookFilterSchema}. */
export type WebhookFilter = z.infer<typeof WebhookFilterSchema>;

const EventsSchema = z
  .array(WebhookEventKindSchema)
  .min(1)
  .max(WEBHOOK_EVENT_KINDS.length)
  .refine((a) => new Set(a).size === a.length, { error: 'each kind at most once' })
  .describe(`The event kinds to send: ${WEBHOOK_EVENT_KINDS.join(', ')}`);

/** Body of `POST /api/v1/webhooks`. */
export const CreateWebhookSchema = z.strictObject({
  url: WebhookUrlSchema,
  events: EventsSchema,
  filter: WebhookFilterSchema.optional(),
  enabled: z.boolean().default(true).describe('Whether deliveries are sent (default true)'),
  description: z.string().max(500).optional().describe('Free text, at most 500 characters'),
});
/** See {@link CreateWebhookSchema}. */
export type CreateWebhook = z.infer<typeof CreateWebhookSchema>;

/**
 * Body of `PATCH /api/v1/webhooks/{id}`: any field of a creation; `filter: null` clears the filter. Enabling again resets
 * the failure count. An empty patch changes nothing and answers the subscription.
 */
export const UpdateWebhookSchema = z.strictObject({
  url: WebhookUrlSchema.optional(),
  events: EventsSchema.optional(),
  filter: WebhookFilterSchema.nullable().optional(),
  enabled: z.boolean().optional(),
  description: z.string().max(500).nullable().optional(),
});
/** See {@link UpdateWebhookSchema}. */
export type UpdateWebhook = z.infer<typeof UpdateWebhookSchema>;

/** Why a subscription was disabled by the platform: `gone` (the receiver answered 410), `failing` (too many consecutive failures). */
export const WebhookDisabledReasonSchema = z.enum(['gone', 'failing']);

/** A subscription as every read answers it; never its secret. Times ISO 8601 UTC. */
export const WebhookSchema = z.object({
  id: z.string().describe('Subscription id (`wh_…`)'),
  url: z.string().describe('Where deliveries are POSTed'),
  events: z.array(WebhookEventKindSchema).describe('The event kinds sent to it'),
  filter: WebhookFilterSchema.nullable().describe('Which events of those kinds are sent; null: all'),
  enabled: z.boolean().describe('Whether deliveries are sent'),
  description: z.string().nullable().describe('Free text'),
  disabled_reason: WebhookDisabledReasonSchema.nullable().describe('Why the platform disabled it (`gone`: the receiver answered 410; `failing`: consecutive failures); null when enabled or disabled by a person'),
  consecutive_failures: z.number().int().describe('Failed delivery attempts since the last success'),
  previous_secret_expires_at: z.string().nullable().describe('Until when deliveries are also signed with the secret before the last rotation; null when none'),
  created_at: z.string().describe('When it was created, ISO 8601 UTC'),
  updated_at: z.string().describe('When it was last changed, ISO 8601 UTC'),
});
/** See {@link WebhookSchema}. */
export type Webhook = z.infer<typeof WebhookSchema>;

/** Answer of creation and of rotation: the subscription and its signing secret (`whsec_…`), shown this once. */
export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().describe('The signing secret (`whsec_` and base64), for a Standard Webhooks library; answered only now'),
});
/** See {@link WebhookWithSecretSchema}. */
export type WebhookWithSecret = z.infer<typeof WebhookWithSecretSchema>;

/** Query of `GET /api/v1/webhooks`. */
export const ListWebhooksQuerySchema = z.strictObject({ ...paginationShape(50, 200) });
/** A page of subscriptions, oldest first. */
export const WebhookPageSchema = z.object({
  webhooks: z.array(WebhookSchema).describe('The subscriptions of this page'),
  total: z.number().int().describe('Subscriptions in all'),
  skip: z.number().int().describe('Records skipped'),
  limit: z.number().int().describe('Page size'),
});
/** See {@link WebhookPageSchema}. */
export type WebhookPage = z.infer<typeof WebhookPageSchema>;

/** Path of the subscription routes. */
export const WebhookPathSchema = z.strictObject({ id: OpaqueIdSchema });

/** Body of `POST /api/v1/webhooks/{id}/rotate-secret`: how long the old secret keeps signing, in seconds (0 to 7 days; default 24 h). */
export const RotateWebhookSecretSchema = z.strictObject({
  overlap_seconds: z.number().int().min(0).max(7 * 86_400).default(86_400).describe('How long deliveries are also signed with the old secret, in seconds (default 86400, at most 604800)'),
});

/** Delivery states: `pending` (waiting for its next attempt), `delivered` (2xx), `failed` (410, out of retries, or its subscription disabled). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** One delivery of one event to one subscription. Its `id` is the `webhook-id` header, the same on every attempt. */
export const WebhookDeliverySchema = z.object({
  id: z.string().describe('The delivery id, sent as `webhook-id` on every attempt (receivers deduplicate on it)'),
  webhook_id: z.string().describe('The subscription'),
  event: WebhookEventKindSchema.describe('The event kind delivered'),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).describe('pending (waiting for its next attempt), delivered (a 2xx answer) or failed (410, or out of retries)'),
  attempts: z.number().int().describe('Attempts made'),
  response_status: z.number().int().nullable().describe('HTTP status of the last attempt; null when none answered (timeout, reset, refused address)'),
  latency_ms: z.number().int().nullable().describe('Duration of the last attempt, in ms'),
  last_error: z.string().nullable().describe('Why the last attempt failed, when it did'),
  next_attempt_at: z.string().nullable().describe('When the next attempt is due (ISO 8601 UTC); null when delivered or failed'),
  created_at: z.string().describe('When the event was enqueued for this subscription, ISO 8601 UTC'),
  delivered_at: z.string().nullable().describe('When a 2xx answer arrived, ISO 8601 UTC; null until then'),
});
/** See {@link WebhookDeliverySchema}. */
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

/** Query of `GET /api/v1/webhooks/{id}/deliveries`: newest first. */
export const ListWebhookDeliveriesQuerySchema = z.strictObject({ status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(), ...paginationShape(50, 200) });
/** A page of deliveries. */
export const WebhookDeliveryPageSchema = z.object({
  deliveries: z.array(WebhookDeliverySchema).describe('The deliveries of this page'),
  total: z.number().int().describe('Deliveries in all (with the filter)'),
  skip: z.number().int().describe('Records skipped'),
  limit: z.number().int().describe('Page size'),
});
/** See {@link WebhookDeliveryPageSchema}. */
export type WebhookDeliveryPage = z.infer<typeof WebhookDeliveryPageSchema>;

/** Path of `POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver`. */
export const WebhookDeliveryPathSchema = z.strictObject({ id: OpaqueIdSchema, delivery_id: OpaqueIdSchema });

// ------------------------------------------------------------------------------------------------ payloads

/** Intervention fields that `intervention.created` and `approval.requested` carry. */
export const WebhookInterventionSchema = z.object({
  id: z.string().describe('Intervention id'),
  type: InterventionTypeSchema.describe('Intervention type'),
  outcome: InterventionOutcomeSchema.describe('Intervention outcome'),
  action_name: z.string().describe('The action the agent attempted'),
  agent_id: z.string().describe('The agent'),
  run_id: z.string().nullable().describe('The run, when known'),
  policy_id: z.string().nullable().describe('The policy that triggered it, when known'),
  risk_level: RiskLevelSchema.nullable().describe('Risk level as recorded (before enrichment)'),
  reason: z.string().nullable().describe('Why, as recorded (before enrichment)'),
  estimated_cost_usd: z.number().nullable().describe('Estimated cost of the action, in USD'),
  timestamp: z.string().describe('When it happened, ISO 8601 UTC'),
});

/** `data` of `intervention.created`: the intervention as recorded (before enrichment). */
export const WebhookInterventionCreatedSchema = z.object({ intervention: WebhookInterventionSchema.describe('The intervention as recorded') });
/** `data` of `approval.requested`: the approval's id, its intervention, and when it expires. */
export const WebhookApprovalRequestedSchema = z.object({
  approval_id: z.string().describe('The approval (`apr-<intervention id>`): approve or reject it at /api/v1/approvals/{id}/approve|reject'),
  intervention: WebhookInterventionSchema.describe('The escalated intervention'),
  expires_at: z.string().nullable().describe('When the approval expires undecided, ISO 8601 UTC'),
});
/** `data` of `delivery.disabled`: which subscription the platform disabled, and why. */
export const WebhookDeliveryDisabledSchema = z.object({
  webhook_id: z.string().describe('The subscription disabled'),
  url: z.string().describe('Its URL'),
  reason: WebhookDisabledReasonSchema.describe('gone (its receiver answered 410) or failing (consecutive failures)'),
  consecutive_failures: z.number().int().describe('Failed attempts in a row when it was disabled'),
  last_response_status: z.number().int().nullable().describe('HTTP status of the last attempt; null when none answered'),
});

/** `data` of `eval.regression`: a submitted eval run with scenarios that passed on its suite's CI baseline and fail now. */
export const WebhookEvalRegressionSchema = z.object({
  eval_run_id: z.string().describe('The submitted run (`GET /api/v1/evals/{id}`)'),
  baseline_id: z.string().describe('The run it was compared with: the latest of the suite and agent on the default branch (`GET /api/v1/evals/compare/{baseline_id}/{eval_run_id}` lists the scenarios)'),
  suite: z.string().describe('The eval suite'),
  agent_id: z.string().describe('The agent evaluated'),
  branch: z.string().nullable().describe('The branch of the run, when given'),
  commit_sha: z.string().nullable().describe('The commit of the run, when given'),
  regressions: z.number().int().describe('How many scenarios passed on the baseline and fail now (at least 1)'),
  grade: z.string().describe('The run’s grade'),
  block_rate: z.number().nullable().describe('The run’s block rate, a fraction 0..1'),
  ci_status: z.string().nullable().describe('pass or fail when the run has a commit; null otherwise'),
});

/** `data` of `budget.threshold`: a fleet-wide budget counter's spend passed a percentage of its limit. */
export const WebhookBudgetThresholdSchema = z.object({
  policy_id: z.string().describe('The policy whose budget it is'),
  limit: z.string().describe('The budget: `run_budget`, `session_budget` or `period_budget:<scope>:<period>`'),
  scope_key: z.string().describe('What the budget counts: the run id, session id, agent id or organisation id'),
  agent_id: z.string().nullable().describe('The agent, for a budget counted per agent; null otherwise'),
  window_start: z.string().nullable().describe('Start of the budget period, ISO 8601 UTC; null for run and session budgets'),
  window_end: z.string().nullable().describe('End of the budget period (exclusive), ISO 8601 UTC; null for run and session budgets'),
  threshold_percent: z.union([z.literal(50), z.literal(80), z.literal(100)]).describe('The percentage passed: 50, 80 or 100'),
  limit_usd: z.number().describe('The budget, in USD'),
  spent_usd: z.number().describe('Spent in it when the percentage was passed, in USD'),
});
/** `data` of `block_rate.spike`: an agent's share of stopping decisions over the subscription's window passed its threshold. */
export const WebhookBlockRateSpikeSchema = z.object({
  agent_id: z.string().describe('The agent'),
  block_rate: z.number().describe('Stopped decisions over all decisions in the window, a fraction 0..1'),
  stopped: z.number().int().describe('Decisions in the window that stopped the action'),
  decisions: z.number().int().describe('Decisions in the window'),
  window_seconds: z.number().int().describe('The window, in seconds'),
  threshold: z.number().describe('The subscription’s threshold, a fraction 0..1'),
  min_actions: z.number().int().describe('The subscription’s minimum volume'),
  at: z.string().describe('When the spike was seen, ISO 8601 UTC'),
});

/** Every delivery's body: `{type, timestamp, data}` (the Standard Webhooks payload structure); `data` by `type`. */
const envelope = <K extends WebhookEventKind, D extends z.ZodType>(type: K, data: D, description: string) =>
  z
    .object({
      type: z.literal(type).describe('The event kind'),
      timestamp: z.string().describe('When the event happened, ISO 8601 UTC'),
      organization_id: z.string().describe('The organisation it happened in'),
      data: data.describe('The event, by kind'),
    })
    .meta({ description });

/**
 * The payload of each event kind the platform sends, by kind: the OpenAPI document's `webhooks` section names each one.
 */
export const WEBHOOK_PAYLOADS = {
  'approval.requested': envelope('approval.requested', WebhookApprovalRequestedSchema, 'An escalated intervention opened an approval'),
  'approval.decided': envelope('approval.decided', GovernanceApprovalDecidedSchema, 'An approval was approved, rejected or expired'),
  'intervention.created': envelope('intervention.created', WebhookInterventionCreatedSchema, 'An intervention was recorded'),
  'kill_switch.changed': envelope('kill_switch.changed', GovernanceKillSwitchChangedSchema, "The organisation's or an agent's kill switch was engaged or released"),
  'policy.changed': envelope('policy.changed', GovernancePolicyChangedSchema, 'A policy was created, updated, enabled or disabled'),
  'budget.threshold': envelope('budget.threshold', WebhookBudgetThresholdSchema, 'A budget’s spend passed 50, 80 or 100 % of it'),
  'block_rate.spike': envelope('block_rate.spike', WebhookBlockRateSpikeSchema, 'An agent’s share of stopping decisions over a sliding window passed a threshold'),
  'eval.regression': envelope('eval.regression', WebhookEvalRegressionSchema, 'A submitted eval run regressed against its suite’s baseline'),
  'delivery.disabled': envelope('delivery.disabled', WebhookDeliveryDisabledSchema, 'Another subscription of the organisation was disabled by the platform'),
} as const;

/** The event kinds the platform sends today (the keys of {@link WEBHOOK_PAYLOADS}). */
export const WEBHOOK_SENT_KINDS = Object.keys(WEBHOOK_PAYLOADS) as Array<keyof typeof WEBHOOK_PAYLOADS>;
