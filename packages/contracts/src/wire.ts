/**
 * The wire registry: every request/reply message the services exchange, in one table. Each row gives the message's
 * subject (its key; on NATS `<AGP_SUBJECT_PREFIX>.<subject>`), the service that answers it, the scope a caller needs
 * (`read` or `write`; an `admin` key may call both), the zod schema of its request body and of its reply data, and a one-line summary.
 *
 * Request bodies mirror the HTTP request they come from: `path` (route parameters), `query`, `body` and `headers`,
 * so a field error's path (`query.limit`, `body.name`, `path.id`) is the same whichever side validates.
 * Everything else (the typed caller `call`, `serveRpc`, the gateway's scope check, the OpenAPI document) is derived
 * from this table: adding a message is one row here plus one handler in its service.
 * Source: architecture §1 (services over NATS), §4 (Auth scopes).
 */
import { z } from 'zod';
import { ApprovalDecisionSchema, ApprovalPageSchema, ApprovalRecordSchema, ListApprovalsQuerySchema } from './approval.js';
import { OpaqueIdSchema } from './common.js';
import {
  CreateWebhookSchema,
  ListWebhookDeliveriesQuerySchema,
  ListWebhooksQuerySchema,
  RotateWebhookSecretSchema,
  UpdateWebhookSchema,
  WebhookDeliveryPageSchema,
  WebhookDeliveryPathSchema,
  WebhookDeliverySchema,
  WebhookPageSchema,
  WebhookPathSchema,
  WebhookSchema,
  WebhookWithSecretSchema,
} from './webhooks.js';
import { PutSlackConnectionSchema, SlackConnectionQuerySchema, SlackConnectionSchema, SlackInteractivityReplySchema, SlackInteractivityRequestSchema } from './slack.js';
import { KeyScopeSchema, type Scope } from './keys.js';
import { EvaluateActionSchema, PolicyEvaluationSchema } from './decision.js';
import {
  EvalBenchmarksQuerySchema,
  EvalBenchmarksSchema,
  EvalComparisonSchema,
  EvalRunDetailSchema,
  EvalRunPageSchema,
  GenerateScenariosSchema,
  GeneratedScenariosSchema,
  LatestEvalRunQuerySchema,
  ListEvalRunsQuerySchema,
  SubmitEvalRunSchema,
} from './evals.js';
import { AgentRegisterSchema } from './fleet.js';
import { AgentGovernancePathSchema, AgentGovernanceSchema } from './governance.js';
import {
  McpCatalogSchema,
  McpHttpAnswerSchema,
  McpHttpExchangeSchema,
  McpNameSchema,
  McpPromptGetSchema,
  McpPromptResultSchema,
  McpResourceContentSchema,
  McpResourceUriSchema,
  McpToolCallSchema,
  McpToolOutcomeSchema,
  ListMcpServersQuerySchema,
  McpServerOpenedSchema,
  McpToolAcceptSchema,
  McpToolPathSchema,
  McpToolPinListSchema,
  McpToolsQuerySchema,
  McpToolPinSchema,
  McpToolPinStatesSchema,
  McpToolsSeenSchema,
  McpServerPageSchema,
  McpServerPatchSchema,
  McpServerPathSchema,
  McpServerRegistrationSchema,
  McpServerSchema,
} from './mcp.js';
import { IngestResponseSchema } from './ingest.js';
import { AuditLogPageSchema, AuditLogQuerySchema } from './audit-log.js';
import {
  AuditCheckpointPageSchema,
  AuditCheckpointSchema,
  AuditConsistencyProofSchema,
  AuditConsistencyQuerySchema,
  AuditErasureSchema,
  AuditInclusionProofSchema,
  AuditInclusionQuerySchema,
  AuditRangeProofSchema,
  AuditRangeQuerySchema,
  AuditRecordPageSchema,
  AuditRecordsQuerySchema,
  AuditRetentionSchema,
  CreateAuditErasureSchema,
  ListAuditCheckpointsQuerySchema,
} from './audit-trail.js';
import { ProjectionRetriedSchema, RetryProjectionDeadLetterSchema } from './dead-letters.js';
import { LeaseAnswerSchema, LeaseRequestSchema, ListQuotasQuerySchema, QuotaCounterPageSchema } from './quota.js';
import {
  EvaluateRunSchema,
  EvaluateRunsSchema,
  ReplayAnalysisSchema,
  ReplayBundleHeadSchema,
  ReplayBundlePartQuerySchema,
  ReplayBundlePartSchema,
  ReplayHistoryPageSchema,
  ReplayRunHistoryPageSchema,
  ReplayHistoryQuerySchema,
  ReplaySubmissionDetailSchema,
  RunEvaluationSchema,
  RunsEvaluationSchema,
  SubmitReplaySchema,
} from './replay.js';
import {
  CreateInterventionSchema,
  EnrichmentCoverageSchema,
  InterventionDetailSchema,
  InterventionPageSchema,
  InterventionRecordSchema,
  InterventionStatsQuerySchema,
  InterventionStatsSchema,
  ListInterventionsQuerySchema,
} from './intervention.js';
import {
  AgentPageSchema,
  AgentRegisterResultSchema,
  AgentSchema,
  CreatePolicySchema,
  GetPolicyQuerySchema,
  KillSwitchOverviewSchema,
  KillSwitchQuerySchema,
  KillSwitchStateSchema,
  ListAgentsQuerySchema,
  ListPoliciesQuerySchema,
  PolicyHistoryQuerySchema,
  PolicyHistorySchema,
  PolicyPageSchema,
  PolicySchema,
  SetKillSwitchSchema,
  UpdatePolicySchema,
} from './policy.js';
import {
  AgentInterventionCountsQuerySchema,
  AgentInterventionCountsSchema,
  AgentStatsQuerySchema,
  AgentStatsSchema,
  EstimationAccuracyQuerySchema,
  EstimationAccuracySchema,
  ExportCursorSchema,
  GetRunQuerySchema,
  LedgerExportPageSchema,
  LedgerExportQuerySchema,
  ListRunsQuerySchema,
  RunDetailSchema,
  RunPageSchema,
  StatsDailyQuerySchema,
  StatsDailySchema,
  StatsSummaryQuerySchema,
  StatsSummarySchema,
} from './stats.js';

/** The services that answer requests on the bus. */
export const SERVICES = ['ingest', 'interventions', 'policies', 'stats', 'mcp', 'evals', 'replay'] as const;
/** One of {@link SERVICES}. */
export type ServiceName = (typeof SERVICES)[number];

/** What an API key may do (`read` ⊂ `write` ⊂ `admin`); {@link KEY_SCOPES}. Source: spec (Auth). */
export type { Scope };

/**
 * A reply body already serialised as JSON text. Large read replies (a list page of 1000 records) travel as text end
 * to end: read as `jsonb::text` from PostgreSQL and written to the HTTP response unchanged, never parsed and
 * re-serialised in between. The gateway sends `$json` with `content-type: application/json`.
 */
export const RawJsonSchema = z.strictObject({ $json: z.string() });
/** See {@link RawJsonSchema}. */
export type RawJson = z.infer<typeof RawJsonSchema>;

/**
 * The caller's context on every request/reply message, resolved by the gateway from the bearer token: the
 * organisation every query and append is scoped to, the key's scope, id (the actor on appended events, `key:<id>`) and
 * name (recorded beside the actor as `actor_name`, so the name that acted stays with the record), the agent it is bound
 * to (`agent_id`, when it is), the request id, and
 * the W3C `traceparent` when the caller sent one. Source: architecture §4 (Auth).
 */
export const RequestContextSchema = z.object({
  organization_id: z.string(),
  scope: KeyScopeSchema,
  key_id: z.string(),
  /** The key's name at the time of the request; null or absent for a key made without one. */
  key_name: z.string().nullable().optional(),
  /**
   * The agent the key is bound to (docs/decisions.md, Agent-bound keys): a request naming another agent is refused
   * (403). Null or absent for a key bound to no agent.
   */
  agent_id: z.string().nullable().optional(),
  /**
   * The person acting, when the request came with a session cookie (docs/auth.md): then `key_id` is the session's id,
   * `key_name` the person's e-mail and `scope` the scope of their role for this request. Absent for an API key.
   */
  user_id: z.string().optional(),
  /** The signed-in person's e-mail (from their sign-in), when a person acts; recorded on what they decide (docs/auth.md). */
  user_email: z.string().nullable().optional(),
  /** The signed-in person's display name, when a person acts and the provider gave one. */
  user_name: z.string().nullable().optional(),
  correlation_id: z.string(),
  traceparent: z.string().optional(),
});
/** See {@link RequestContextSchema}. */
export type RequestContext = z.infer<typeof RequestContextSchema>;

/** Who a request's changes are recorded as: `user:<id>` for a signed-in person, else `key:<key id>`. Pure. */
export function actorOf(ctx: Pick<RequestContext, 'key_id' | 'user_id'>): string {
  return ctx.user_id ? `user:${ctx.user_id}` : `key:${ctx.key_id}`;
}

/** A reply that is `page` as an object or, on the hot path, as {@link RawJson} text of the same shape. */
const orRawJson = <S extends z.ZodType>(page: S) => z.union([RawJsonSchema, page]);

/** One row of the {@link Wire} table. */
export interface WireMessage<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType, S extends ServiceName = ServiceName> {
  /** The service whose queue group answers the message. */
  service: S;
  /** The scope a caller's key needs. */
  scope: Scope;
  /** Schema of the request body (`RpcRequest.body`). */
  request: Req;
  /** Schema of the reply data (`RpcReply.data` when `ok`). */
  reply: Res;
  /** What the message does, in one line. */
  summary: string;
}

const row = <Req extends z.ZodType, Res extends z.ZodType, S extends ServiceName>(m: WireMessage<Req, Res, S>): WireMessage<Req, Res, S> => m;

/** Route parameter `{id}` as the gateway sends it. */
const IdPath = z.strictObject({ id: OpaqueIdSchema });
/** Route parameter `{id}` of an approval: `apr-` and an intervention id, so a little longer than {@link IdPath}. */
const ApprovalIdPath = z.strictObject({ id: z.string().min(1).max(300) });

/** Body of `ingest.batch`: a chunk of a client batch (raw events, each validated on its own) and its offset in that batch. */
export const IngestChunkSchema = z.strictObject({ events: z.array(z.unknown()), offset: z.number().int().min(0).default(0) });
export type IngestChunk = z.infer<typeof IngestChunkSchema>;

/**
 * Largest `POST /api/v1/ingest/` body the gateway forwards as its bytes (`ingest.raw`), in bytes. The bytes are the
 * NATS message's payload (no escaping; the request's context travels in a header: {@link WireBytesSchema}), so
 * anything under NATS's 1 MiB `max_payload` less the header would fit; 448 KiB leaves room for a body sent as a JSON
 * string instead, whose escaping can double it. A larger body is parsed at the gateway and
 * split into `ingest.batch` chunks. Source: docs/decisions.md (The gateway forwards the ingest body's bytes).
 */
export const INGEST_RAW_MAX_BYTES = 448 * 1024;

/**
 * A request body that is bytes, not a JSON value: on NATS such a message's payload is the bytes as they are and the
 * rest of the request (the pattern, the caller's context) travels as JSON in the `Agp-Rpc` header (packages/bus,
 * nats-transport.ts); in process the bytes are copied. A `Buffer` is a `Uint8Array` and passes.
 * Source: docs/decisions.md (The gateway forwards the ingest body's bytes).
 */
export const WireBytesSchema = z.custom<Uint8Array>((v) => v instanceof Uint8Array, { message: 'expected bytes (a Uint8Array)' });

/**
 * Body of `ingest.raw`: the bytes of a whole `POST /api/v1/ingest/` body (`{"batch": [...]}`, UTF-8), unparsed, at
 * most {@link INGEST_RAW_MAX_BYTES}; empty when the request had no body. The ingest service decodes and parses them
 * once (400 malformed JSON, 422 envelope).
 */
export const IngestRawSchema = WireBytesSchema.refine((b) => b.length <= INGEST_RAW_MAX_BYTES, { message: `at most ${INGEST_RAW_MAX_BYTES} bytes` });
/** See {@link IngestRawSchema}. */
export type IngestRaw = z.infer<typeof IngestRawSchema>;

/** Reply of `evals.submit`: the stored run, and whether this submission stored it (false: its id was seen before). */
export const EvalSubmitResultSchema = z.object({ created: z.boolean(), eval_run: EvalRunDetailSchema });

/** Reply of `replay.submit`: the stored submission, and whether this request stored it (false: its id was seen before). */
export const ReplaySubmitResultSchema = z.object({ created: z.boolean(), submission: ReplaySubmissionDetailSchema });

/** Route parameter `{run_id}` of the replay routes. */
const RunIdPath = z.strictObject({ run_id: OpaqueIdSchema });

/** Reply of `interventions.delete`. */
export const DeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });
/** Reply of `interventions.enrich`: the record's enrichment was queued again. */
export const EnrichQueuedSchema = z.object({ id: z.string(), enrichment_status: z.literal('pending') });

/**
 * The row `<service>.retry-projection-dead-letter` of each service that owns projections (`PROJECTION_OWNERS`): apply
 * one of the organisation's projection dead letters again through the projection that dead-lettered it, in the
 * owner (the gateway runs no service's projection code). The same row for each owner, answered for its own projections.
 * Scope `write` (it changes state); its only route (`POST /api/v1/dead-letters/{id}/retry`) needs an admin key, and the
 * handler refuses any other (403).
 */
const retryProjectionDeadLetter = <S extends ServiceName>(service: S) =>
  row({
    service,
    scope: 'write',
    request: z.object({ body: RetryProjectionDeadLetterSchema }),
    reply: ProjectionRetriedSchema,
    summary: `apply one of the organisation's dead letters of a ${service} projection again (removed once applied; 404 unknown, 409 its checkpoint is before it, 422 refused or failed again)`,
  });

/**
 * Every request/reply message between services. The key is the subject. Source: docs/decisions.md (One typed wire registry).
 */
export const Wire = {
  'ingest.batch': row({
    service: 'ingest',
    scope: 'write',
    request: IngestChunkSchema,
    reply: IngestResponseSchema,
    summary: 'validate a chunk of an ingest batch event by event and publish the valid events to the ingest log',
  }),

  'ingest.raw': row({
    service: 'ingest',
    scope: 'write',
    request: IngestRawSchema,
    reply: IngestResponseSchema,
    summary: 'parse an ingest request body sent as its bytes, validate it event by event and publish the valid events to the ingest log',
  }),

  'interventions.create': row({
    service: 'interventions',
    scope: 'write',
    request: z.object({ body: CreateInterventionSchema }),
    reply: InterventionRecordSchema,
    summary: 'record one intervention synchronously (read-your-writes)',
  }),
  'interventions.list': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({ query: ListInterventionsQuerySchema }),
    reply: orRawJson(InterventionPageSchema),
    summary: 'one filtered page of interventions, newest first, with the total',
  }),
  'interventions.get': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({ path: IdPath }),
    reply: InterventionDetailSchema,
    summary: 'one intervention with its audit trail and enrichment status',
  }),
  'interventions.stats': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({ query: InterventionStatsQuerySchema }),
    reply: InterventionStatsSchema,
    summary: 'intervention totals, breakdowns, daily series and top lists',
  }),
  'interventions.delete': row({
    service: 'interventions',
    scope: 'write',
    request: z.object({ path: IdPath }),
    reply: DeletedSchema,
    summary: 'remove an intervention from the read models (its stream keeps the history)',
  }),
  'interventions.enrich': row({
    service: 'interventions',
    scope: 'write',
    request: z.object({ path: IdPath }),
    reply: EnrichQueuedSchema,
    summary: 'queue LLM enrichment of one intervention again',
  }),
  'interventions.agent-counts': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({ path: z.strictObject({ agent_id: OpaqueIdSchema }), query: AgentInterventionCountsQuerySchema.prefault({}) }),
    reply: AgentInterventionCountsSchema,
    summary: "one agent's intervention counts, all time or in a date window (for the stats service's agent stats)",
  }),
  'interventions.enrichment-coverage': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({}),
    reply: EnrichmentCoverageSchema,
    summary: "the organisation's live interventions counted by enrichment status (for the tool gateway)",
  }),
  'interventions.retry-projection-dead-letter': retryProjectionDeadLetter('interventions'),
  'approvals.list': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({ query: ListApprovalsQuerySchema }),
    reply: orRawJson(ApprovalPageSchema),
    summary: 'one page of approvals, filtered by status',
  }),
  'approvals.get': row({
    service: 'interventions',
    scope: 'read',
    request: z.object({ path: ApprovalIdPath }),
    reply: ApprovalRecordSchema,
    summary: 'one approval',
  }),
  'approvals.approve': row({
    service: 'interventions',
    scope: 'write',
    request: z.object({ path: ApprovalIdPath, body: ApprovalDecisionSchema }),
    reply: ApprovalRecordSchema,
    summary: 'approve a pending approval (its intervention becomes approved_after_review)',
  }),
  'approvals.reject': row({
    service: 'interventions',
    scope: 'write',
    request: z.object({ path: ApprovalIdPath, body: ApprovalDecisionSchema }),
    reply: ApprovalRecordSchema,
    summary: 'reject a pending approval (its intervention becomes rejected_after_review)',
  }),

  'policies.create': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ body: CreatePolicySchema }),
    reply: PolicySchema,
    summary: 'create a policy at version 1',
  }),
  'policies.list': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: ListPoliciesQuerySchema }),
    reply: orRawJson(PolicyPageSchema),
    summary: 'one filtered page of policies',
  }),
  'policies.get': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ path: IdPath, query: GetPolicyQuerySchema }),
    reply: PolicySchema,
    summary: 'a policy now, or as it was at a version',
  }),
  'policies.update': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ path: IdPath, headers: z.object({ if_match: z.string().nullable() }), body: UpdatePolicySchema }),
    reply: PolicySchema,
    summary: 'change a policy (JSON merge patch), optionally only at an expected version (If-Match)',
  }),
  'policies.history': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ path: IdPath, query: PolicyHistoryQuerySchema }),
    reply: PolicyHistorySchema,
    summary: "a policy's versions with actor and per-field changes",
  }),
  'policies.evaluate': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ body: EvaluateActionSchema }),
    reply: PolicyEvaluationSchema,
    summary: "decide one action of an agent against the organisation's enabled policies, kill switches and the run's spend (changes nothing)",
  }),
  'agents.register': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ body: AgentRegisterSchema }),
    reply: AgentRegisterResultSchema,
    summary: 'register an agent with its actions, or re-register it',
  }),
  'agents.list': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: ListAgentsQuerySchema }),
    reply: orRawJson(AgentPageSchema),
    summary: 'one page of the agent registry',
  }),
  'agents.get': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ path: IdPath }),
    reply: AgentSchema,
    summary: 'one agent with its actions and kill switch',
  }),
  'agents.governance': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ path: AgentGovernancePathSchema }),
    reply: AgentGovernanceSchema,
    summary: "one agent's governance snapshot: the enabled policies that apply to it and its kill switches (what the decision API decides against)",
  }),
  'kill-switches.list': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: KillSwitchQuerySchema }),
    reply: KillSwitchOverviewSchema,
    summary: "the organisation's kill switch and every engaged agent switch",
  }),
  'kill-switches.set': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ path: z.strictObject({ agent_id: OpaqueIdSchema.optional() }), body: SetKillSwitchSchema }),
    reply: KillSwitchStateSchema,
    summary: "engage or release the organisation's kill switch (no agent_id) or one agent's",
  }),
  'mcp-servers.register': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ body: McpServerRegistrationSchema }),
    reply: McpServerSchema,
    summary: 'register an upstream MCP server (its headers sealed at rest, never answered)',
  }),
  'mcp-servers.list': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: ListMcpServersQuerySchema }),
    reply: McpServerPageSchema,
    summary: "one page of the organisation's registered upstream MCP servers, by name",
  }),
  'mcp-servers.get': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ path: McpServerPathSchema }),
    reply: McpServerSchema,
    summary: 'one registered upstream MCP server (header names, never values)',
  }),
  'mcp-servers.update': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ path: McpServerPathSchema, headers: z.object({ if_match: z.string().nullable() }), body: McpServerPatchSchema }),
    reply: McpServerSchema,
    summary: 'change fields of a registered upstream MCP server (headers replace the whole set), optionally only at an expected version (If-Match)',
  }),
  'mcp-servers.delete': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ path: McpServerPathSchema }),
    reply: z.null(),
    summary: 'delete a registered upstream MCP server',
  }),
  'mcp-servers.open': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ body: McpServerPathSchema }),
    reply: McpServerOpenedSchema,
    summary: "a registered server's settings and its headers opened, for the gateway's hosted MCP proxy only (never an HTTP route)",
  }),
  'mcp-servers.tools': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ path: McpServerPathSchema, query: McpToolsQuerySchema.prefault({}) }),
    reply: McpToolPinListSchema,
    summary: "a registered server's pinned tools: each with its status (pinned, changed, new), the hashes and what changed, and with agent_id its standing for that agent",
  }),
  'mcp-servers.accept-tool': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ path: McpToolPathSchema, body: McpToolAcceptSchema }),
    reply: McpToolPinSchema,
    summary: "accept a tool's changed or new description and input schema: its pin becomes what the upstream lists now, and its calls flow again",
  }),
  'mcp-servers.tools-seen': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ path: McpServerPathSchema, body: McpToolsSeenSchema }),
    reply: McpToolPinStatesSchema,
    summary: "record the tool list a registered server's upstream answered (pinned on the first list after registration; later changes held) and answer the pins, for the MCP proxy (hosted and local)",
  }),
  'quotas.leases': row({
    service: 'policies',
    scope: 'write',
    request: z.object({ body: LeaseRequestSchema }),
    reply: LeaseAnswerSchema,
    summary: "acquire, renew, report on and release a holder's leases of fleet-wide limits",
  }),
  'quotas.list': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: ListQuotasQuerySchema }),
    reply: QuotaCounterPageSchema,
    summary: "one filtered page of the organisation's fleet-wide counters",
  }),
  'policies.retry-projection-dead-letter': retryProjectionDeadLetter('policies'),
  'audit-log.list': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ query: AuditLogQuerySchema }),
    reply: AuditLogPageSchema,
    summary: 'one filtered page of the organisation’s log of administrative changes, newest first (the gateway pages through it for an export)',
  }),
  'audit.checkpoints': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: ListAuditCheckpointsQuerySchema }),
    reply: AuditCheckpointPageSchema,
    summary: 'one page of the organisation’s signed checkpoints of its verifiable audit trail, newest first, with the latest',
  }),
  'audit.checkpoint': row({
    service: 'policies',
    scope: 'write',
    request: z.object({}),
    reply: AuditCheckpointSchema,
    summary: 'sign a checkpoint of the organisation’s audit trail now (the latest when the log has not grown since)',
  }),
  'audit.inclusion': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: AuditInclusionQuerySchema }),
    reply: AuditInclusionProofSchema,
    summary: 'the inclusion proof of one record of the organisation’s audit trail in a tree of a given size',
  }),
  'audit.consistency': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: AuditConsistencyQuerySchema }),
    reply: AuditConsistencyProofSchema,
    summary: 'the consistency proof between two sizes of the organisation’s audit trail (the log only appended)',
  }),
  'audit.erase': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ body: CreateAuditErasureSchema }),
    reply: AuditErasureSchema,
    summary: 'erase the personal data (committed fields: values and salts) of one agent’s, one run’s or one intervention’s audit records; the proofs still verify',
  }),
  'audit.retention-get': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({}),
    reply: AuditRetentionSchema,
    summary: 'the organisation’s audit retention in days (null: keep everything)',
  }),
  'audit.retention-put': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ body: AuditRetentionSchema }),
    reply: AuditRetentionSchema,
    summary: 'set the organisation’s audit retention; older records lose their committed fields',
  }),
  'audit.records': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: AuditRecordsQuerySchema }),
    reply: AuditRecordPageSchema,
    summary: 'one page of the organisation’s audit-trail records in leaf order: each leaf hash as logged and the record as the store holds it now',
  }),
  'audit.range': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ query: AuditRangeQuerySchema }),
    reply: AuditRangeProofSchema,
    summary: 'the range proof of the leaves [start, end) of the organisation’s audit trail in a tree of a given size',
  }),
  'webhooks.create': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ body: CreateWebhookSchema }),
    reply: WebhookWithSecretSchema,
    summary: 'create a webhook subscription; its signing secret is answered this once',
  }),
  'webhooks.list': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ query: ListWebhooksQuerySchema }),
    reply: WebhookPageSchema,
    summary: "one page of the organisation's webhook subscriptions, oldest first (never a secret)",
  }),
  'webhooks.get': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ path: WebhookPathSchema }),
    reply: WebhookSchema,
    summary: 'one webhook subscription (never its secret)',
  }),
  'webhooks.update': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ path: WebhookPathSchema, body: UpdateWebhookSchema }),
    reply: WebhookSchema,
    summary: 'change fields of a webhook subscription (enabling it again resets its failure count)',
  }),
  'webhooks.delete': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ path: WebhookPathSchema }),
    reply: z.null(),
    summary: 'delete a webhook subscription and its pending deliveries',
  }),
  'webhooks.rotate-secret': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ path: WebhookPathSchema, body: RotateWebhookSecretSchema }),
    reply: WebhookWithSecretSchema,
    summary: "replace a subscription's signing secret; the old one keeps signing for the overlap; the new one is answered this once",
  }),
  'webhooks.deliveries': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ path: WebhookPathSchema, query: ListWebhookDeliveriesQuerySchema }),
    reply: WebhookDeliveryPageSchema,
    summary: "one page of a subscription's deliveries, newest first",
  }),
  'webhooks.redeliver': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ path: WebhookDeliveryPathSchema }),
    reply: WebhookDeliverySchema,
    summary: 'send a delivery again now, with the same webhook-id and a fresh retry schedule',
  }),
  'integrations.slack-put': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ body: PutSlackConnectionSchema }),
    reply: SlackConnectionSchema,
    summary: "set the organisation's Slack connection (bot token and signing secret sealed, write-only; channels with filters)",
  }),
  'integrations.slack-get': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ query: SlackConnectionQuerySchema }),
    reply: SlackConnectionSchema,
    summary: "the organisation's Slack connection (never the token or the secret)",
  }),
  'integrations.slack-delete': row({
    service: 'policies',
    scope: 'admin',
    request: z.object({ query: SlackConnectionQuerySchema }),
    reply: z.null(),
    summary: "remove the organisation's Slack connection (messages not yet posted are dropped)",
  }),
  'integrations.slack-interactivity': row({
    service: 'policies',
    scope: 'read',
    request: z.object({ body: SlackInteractivityRequestSchema }),
    reply: SlackInteractivityReplySchema,
    summary: "a Slack interactivity callback as received: verified with the organisation's signing secret, then an Approve or Reject click decides the approval as the mapped person",
  }),

  'stats.summary': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ query: StatsSummaryQuerySchema }),
    reply: StatsSummarySchema,
    summary: 'fleet totals, all time or the last N days',
  }),
  'stats.daily': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ query: StatsDailyQuerySchema }),
    reply: StatsDailySchema,
    summary: 'the last 30 days, zero-filled',
  }),
  'stats.estimation-accuracy': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ query: EstimationAccuracyQuerySchema }),
    reply: EstimationAccuracySchema,
    summary: "how far the clients' cost estimates are from what the providers charged",
  }),
  'stats.agent': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ path: z.strictObject({ agent_id: OpaqueIdSchema }), query: AgentStatsQuerySchema.prefault({}) }),
    reply: AgentStatsSchema,
    summary: "one agent's runs, cost, intervention counts and top actions, all time or the last N days",
  }),
  'runs.list': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ query: ListRunsQuerySchema }),
    reply: orRawJson(RunPageSchema),
    summary: 'one filtered page of runs',
  }),
  'runs.get': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ path: IdPath, query: GetRunQuerySchema }),
    reply: RunDetailSchema,
    summary: 'one run with its ledger entries',
  }),
  'ledger.export-page': row({
    service: 'stats',
    scope: 'read',
    request: z.object({ query: LedgerExportQuerySchema, cursor: ExportCursorSchema.nullish() }),
    reply: LedgerExportPageSchema,
    summary: 'one keyset page of a ledger export, already formatted (the gateway streams the pages)',
  }),
  'stats.retry-projection-dead-letter': retryProjectionDeadLetter('stats'),

  'evals.submit': row({
    service: 'evals',
    scope: 'write',
    request: z.object({ body: SubmitEvalRunSchema }),
    reply: EvalSubmitResultSchema,
    summary: 'store an eval run from a harness or CI job and compute its scorecard (the same submission id is stored once)',
  }),
  'evals.list': row({
    service: 'evals',
    scope: 'read',
    request: z.object({ query: ListEvalRunsQuerySchema }),
    reply: EvalRunPageSchema,
    summary: 'the eval run history, newest first, filtered by suite, agent and branch',
  }),
  'evals.latest': row({
    service: 'evals',
    scope: 'read',
    request: z.object({ query: LatestEvalRunQuerySchema }),
    reply: EvalRunDetailSchema,
    summary: 'the latest scorecard, optionally of one suite, agent or branch',
  }),
  'evals.get': row({
    service: 'evals',
    scope: 'read',
    request: z.object({ path: IdPath }),
    reply: EvalRunDetailSchema,
    summary: 'one eval run with its scenarios',
  }),
  'evals.compare': row({
    service: 'evals',
    scope: 'read',
    request: z.object({ path: z.strictObject({ baseline_id: OpaqueIdSchema, current_id: OpaqueIdSchema }) }),
    reply: EvalComparisonSchema,
    summary: 'compare two eval runs: deltas, grade change, regressions, improvements',
  }),
  'evals.benchmarks': row({
    service: 'evals',
    scope: 'read',
    request: z.object({ query: EvalBenchmarksQuerySchema }),
    reply: EvalBenchmarksSchema,
    summary: 'per suite and agent: the trend of the last N runs, the best and the latest',
  }),
  'evals.generate-scenarios': row({
    service: 'evals',
    scope: 'write',
    request: z.object({ body: GenerateScenariosSchema }),
    reply: GeneratedScenariosSchema,
    summary: "generate adversarial scenarios for an agent from its actions and policies (template pass) and an LLM (semantic pass)",
  }),
  'evals.retry-projection-dead-letter': retryProjectionDeadLetter('evals'),

  'replay.submit': row({
    service: 'replay',
    scope: 'write',
    request: z.object({ path: RunIdPath, body: SubmitReplaySchema }),
    reply: ReplaySubmitResultSchema,
    summary: "store the summary of a run's local replay (the same submission id is stored once)",
  }),
  'replay.history': row({
    service: 'replay',
    scope: 'read',
    request: z.object({ query: ReplayHistoryQuerySchema }),
    reply: ReplayHistoryPageSchema,
    summary: "the organisation's replay history, newest first, with its aggregates",
  }),
  'replay.run-history': row({
    service: 'replay',
    scope: 'read',
    request: z.object({ path: RunIdPath, query: ReplayHistoryQuerySchema }),
    reply: ReplayRunHistoryPageSchema,
    summary: "one run's replay submissions, newest first, each with its divergence details, and their aggregates",
  }),
  'replay.bundle': row({
    service: 'replay',
    scope: 'read',
    request: z.object({ path: RunIdPath }),
    reply: ReplayBundleHeadSchema,
    summary: "a run's bundle assembled and hashed, without its actions: the run, its interventions, the policy versions in force when it ran, its sha256 and how many parts its actions take",
  }),
  'replay.bundle-part': row({
    service: 'replay',
    scope: 'read',
    request: z.object({ path: RunIdPath, query: ReplayBundlePartQuerySchema }),
    reply: ReplayBundlePartSchema,
    summary: "one part of the actions of a bundle `replay.bundle` assembled, named by its sha256 (409 when the run changed since)",
  }),
  'replay.analysis': row({
    service: 'replay',
    scope: 'read',
    request: z.object({ path: RunIdPath }),
    reply: ReplayAnalysisSchema,
    summary: "divergences across every replay of a run: by step, by action, and the trend",
  }),
  'replay.evaluate-run': row({
    service: 'replay',
    // A read: it stores nothing. A candidate policy or patch in the body needs a write key: the handler answers 403.
    scope: 'read',
    request: z.object({ path: RunIdPath, body: EvaluateRunSchema }),
    reply: RunEvaluationSchema,
    summary: "a recorded run's actions decided again by today's policies or a candidate (counterfactual; changes nothing)",
  }),
  'replay.evaluate-runs': row({
    service: 'replay',
    // As replay.evaluate-run: scope read, 403 from the handler for a candidate with a read key.
    scope: 'read',
    request: z.object({ body: EvaluateRunsSchema }),
    reply: RunsEvaluationSchema,
    summary: "many recorded runs decided again by today's policies or a candidate, with totals in USD (changes nothing)",
  }),
  'replay.retry-projection-dead-letter': retryProjectionDeadLetter('replay'),

  'mcp.catalog': row({
    service: 'mcp',
    scope: 'read',
    request: z.object({}),
    reply: McpCatalogSchema,
    summary: 'the tool gateway registry: every tool, resource, resource template and prompt descriptor',
  }),
  'mcp.call-tool': row({
    service: 'mcp',
    scope: 'read',
    request: z.object({ body: McpToolCallSchema }),
    reply: McpToolOutcomeSchema,
    summary: 'call one tool; a tool that changes state refuses a read key (forbidden) itself',
  }),
  'mcp.read-resource': row({
    service: 'mcp',
    scope: 'read',
    request: z.object({ path: z.strictObject({ uri: McpResourceUriSchema }) }),
    reply: McpResourceContentSchema,
    summary: 'read one resource by URI (a fixed platform:// URI or one matching a template)',
  }),
  'mcp.get-prompt': row({
    service: 'mcp',
    scope: 'read',
    request: z.object({ path: z.strictObject({ name: McpNameSchema }), body: McpPromptGetSchema }),
    reply: McpPromptResultSchema,
    summary: 'render one prompt with its arguments, from live data',
  }),
  'mcp.http': row({
    service: 'mcp',
    scope: 'read',
    request: McpHttpExchangeSchema,
    reply: McpHttpAnswerSchema,
    summary: 'one Model Context Protocol exchange of the /api/v1/mcp endpoint (Streamable HTTP, JSON responses)',
  }),
} as const satisfies Record<string, WireMessage>;

/** A subject of the {@link Wire} table. */
export type WireKey = keyof typeof Wire;
/** What a caller passes as the request body of `K` (the schema's input). */
export type WireRequestInput<K extends WireKey> = z.input<(typeof Wire)[K]['request']>;
/** What a handler of `K` receives (the schema's output: defaults applied, values coerced). */
export type WireRequest<K extends WireKey> = z.output<(typeof Wire)[K]['request']>;
/** The reply data of `K`. */
export type WireReply<K extends WireKey> = z.output<(typeof Wire)[K]['reply']>;
/** The subjects answered by `S`. */
export type WireKeyOf<S extends ServiceName> = { [K in WireKey]: (typeof Wire)[K]['service'] extends S ? K : never }[WireKey];

/** The {@link Wire} row of `subject`, or undefined when the table has none. */
export function wireMessage(subject: string): WireMessage | undefined {
  return Object.hasOwn(Wire, subject) ? Wire[subject as WireKey] : undefined;
}

/** The subjects answered by `service`, in table order. */
export function wireKeysOf<S extends ServiceName>(service: S): Array<WireKeyOf<S>> {
  return (Object.keys(Wire) as WireKey[]).filter((k) => Wire[k].service === service) as Array<WireKeyOf<S>>;
}

/** Queue groups, one per service, so replicas share requests. */
export const QueueGroups = { ingest: 'ingest', interventions: 'interventions', policies: 'policies', stats: 'stats', mcp: 'mcp', evals: 'evals', replay: 'replay' } as const satisfies Record<ServiceName, string>;
