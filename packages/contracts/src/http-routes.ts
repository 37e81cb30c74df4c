/**
 * The HTTP route table: one row per `/api/v1` route of the gateway, naming the {@link Wire} message it becomes on
 * the bus and everything the OpenAPI document says about it. It is the gateway's router: the gateway matches each
 * request to its row once, checks the caller's scope, reads the body as the row says, and forwards the row (`forward`)
 * or calls the row's handler (one typed map keyed by {@link HandledOperationId}); the document's `paths` (openapi.ts),
 * test/http-routes.test.ts and the cross-tenant matrix read the same rows. The query, body and reply schemas come from the wire row
 * (`request.shape.query`, `request.shape.body`, `reply` without its RawJson alternative); a row overrides them only
 * where the HTTP shape differs from the wire shape.
 * Source: the spec; docs/decisions.md (One typed wire registry); architecture §4 (Auth, Errors).
 */
import { z } from 'zod';
import { EVAL_MAX_BODY_BYTES, EVAL_MAX_SCENARIOS, EvalRunDetailSchema, GENERATE_SCENARIOS_TIMEOUT_MS } from './evals.js';
import { INGEST_MAX_EVENTS, IngestBatchSchema, IngestEventSchema } from './ingest.js';
import { MCP_MAX_BODY_BYTES, MCP_TOOL_ERROR_STATUS, McpPromptListSchema, McpResourceListSchema, McpToolEnvelopeSchema, McpToolListSchema, type McpToolErrorCode } from './mcp.js';
import { GOVERNANCE_MAX_STREAMS_PER_ORG, GovernanceEventDataSchema } from './governance.js';
import { AgentSchema } from './policy.js';
import { REPLAY_EVALUATE_MAX_RUN_IDS, REPLAY_EVALUATE_MAX_RUNS, REPLAY_EVALUATE_MAX_STEPS, REPLAY_MAX_BODY_BYTES, REPLAY_MAX_DETAILS, ReplayBundleSchema, ReplaySubmissionDetailSchema } from './replay.js';
import { PURPOSE_QUERY_DOC } from './purpose.js';
import { EXPORT_FORMATS, LedgerEntrySchema, STATS_MAX_DAYS } from './stats.js';
import { GatewayOps, type GatewayOp, type GatewayOpKey } from './gateway-ops.js';
import { KEY_SCOPES } from './keys.js';
import { AUDIT_FORMATS, AUDIT_OBJECT_TYPES, AUDIT_PAGE_MAX, AuditLogPageSchema } from './audit-log.js';
import { ROLES, SCOPE_ROLE, type Role } from './members.js';
import { Wire, type WireKey } from './wire.js';

/** The HTTP methods the gateway routes. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What the document says about one `{name}` parameter of a route's path. */
export interface HttpPathParam {
  /** What the value is. */
  description?: string;
  /** The field of the wire row's `path` the value fills, when it is named differently (`{id}` → `agent_id`). */
  field?: string;
}

/** What a route names: a wire message (answered by a service over the bus) or a gateway operation (answered by the gateway). */
export type RouteKey = WireKey | GatewayOpKey;

/**
 * The row a route names: its {@link Wire} row, or its {@link GatewayOps} row (the gateway answers it itself). Either
 * gives the scope the caller's key needs, the request parts and the reply.
 * @throws Error for a name in neither table (a programming error).
 */
export function routeOperation(key: RouteKey): GatewayOp {
  if (Object.hasOwn(Wire, key)) return Wire[key as WireKey];
  if (Object.hasOwn(GatewayOps, key)) return GatewayOps[key as GatewayOpKey];
  throw new Error(`no wire message or gateway operation named ${key}`);
}

/**
 * Where a route names the agent it acts as or for, so that a key bound to an agent is held to it (docs/decisions.md,
 * Agent-bound keys): `path`, `body` or `header` with the name of the field or header (the gateway edge compares it
 * with the key's agent before the route runs, `checkBoundAgent` in `@agp/auth`); with `each`, the body field is a list
 * and `each` names the agent field of every item (`body.acquire.<i>.agent_id`); `events`: each ingest event's
 * `body.agent_id`, compared per event by the ingest service (its answer refuses that event alone, 403).
 */
export type HttpAgentRef = { in: 'path' | 'body' | 'header'; name: string; each?: string } | { in: 'events' };

/** One route of the gateway. */
export interface HttpRoute {
  method: HttpMethod;
  /** The path in OpenAPI form, without a trailing slash (`/api/v1/policies/{id}`); the gateway also answers it with one. */
  path: string;
  /**
   * The wire message the route becomes on the bus, or the gateway operation that answers it ({@link routeOperation});
   * its `scope` is the scope the caller's key needs.
   */
  message: RouteKey;
  /**
   * The gateway answers this route by forwarding it as it is, with no handler of its own: the route's path
   * parameters become the wire request's `path` (renamed by {@link HttpPathParam.field}), the query string its `query`
   * and the JSON body its `body` (each only when the wire row's request has that part; an absent body is `{}`); the
   * reply goes out with {@link status} as JSON (none for a `null` {@link reply}). `timeoutMs` is how long the gateway
   * waits for the reply, in ms (else the bus default). A route without it has a hand-written handler in the gateway
   * (it streams, sets headers, maps statuses or answers from the gateway itself).
   */
  forward?: true | { timeoutMs: number };
  /** Status of the success answer. */
  status: number;
  /** Other success statuses with the same body, and what each means (`POST /api/v1/agents`: 200 re-registered). */
  alsoReturns?: Readonly<Record<number, string>>;
  /** Unique name of the operation in the document. */
  operationId: string;
  /** Names from {@link HTTP_TAGS}. */
  tags: readonly string[];
  /** One line: what the route does. */
  summary: string;
  /** More than one line's worth, when needed. */
  description?: string;
  /**
   * Where the request names an agent: a key bound to an agent is refused (403 naming the field and the bound agent,
   * nothing written) when it names another. Absent: the route names no agent.
   */
  agentId?: HttpAgentRef;
  /**
   * A write route that names no agent (no `agentId`) which an agent-bound key may still call, because an agent's own
   * process needs it and the service holds the key to its agent (deciding the approvals its agent waits for; the
   * MCP endpoint, whose state-changing tools a bound key cannot call). Every other write route without `agentId`
   * answers an agent-bound key 403 before it runs (docs/decisions.md, Agent-bound keys). Reads are open to bound keys.
   */
  boundKeys?: 'allowed';
  /** Docs of the `{name}` parameters of `path`, by name. */
  params?: Readonly<Record<string, HttpPathParam>>;
  /** Descriptions of query parameters, by name (the schemas come from the wire row's `query`). */
  queryDocs?: Readonly<Record<string, string>>;
  /** Request headers the route reads, with what they mean. */
  requestHeaders?: Readonly<Record<string, string>>;
  /** The HTTP body when it differs from the wire row's `body` (ingest: the client's batch, sent on as chunks). */
  body?: z.ZodType;
  /**
   * Largest body the gateway parses for this route, in bytes, when it is below the 5 MiB every route accepts (a body
   * sent on as one bus message must fit it); a larger one is refused with 413 before anything is sent.
   */
  maxBodyBytes?: number;
  /** What the success answer is, in a few words. */
  returns: string;
  /** The HTTP reply when it differs from the wire row's reply: another schema, or `null` for no body (204). */
  reply?: z.ZodType | null;
  /** The request body by media type, when it is not (only) JSON (OTLP trace ingest: protobuf or JSON); replaces {@link body} in the document. */
  requestContent?: Readonly<Record<string, z.ZodType>>;
  /** The reply by media type, when it is not (only) JSON (the ledger export streams json, jsonl or csv). */
  content?: Readonly<Record<string, z.ZodType>>;
  /** Headers of the success answer, with what they hold. */
  responseHeaders?: Readonly<Record<string, string>>;
  /**
   * Problem answers beyond those every route of its kind gives (401 and 422 always; 403 on a write; 404 with a path
   * parameter; 400, 413, 415 with a body), or a more precise text for one of those, by status.
   */
  problems?: Readonly<Record<number, string>>;
  /**
   * Error answers whose body is not (only) problem details, by status: the media types and schemas the route answers
   * with, and whether problem details are the other possible body (`problem: true`, when the edge can answer the
   * status before the route's handler). Tool calls answer their envelope; the MCP endpoint JSON-RPC error objects.
   */
  errorBodies?: Readonly<Record<number, HttpErrorBody>>;
  /** Statuses of {@link alsoReturns} answered without a body (the MCP endpoint's 202). */
  noBody?: readonly number[];
  /**
   * How the gateway reads the request body. `json` (the default): parsed, at most {@link maxBodyBytes}, refused whole
   * (422) when nested too deep or holding text PostgreSQL cannot store. `bytes`: read whole as bytes (5 MiB) and sent
   * on unparsed, never refused whole for its depth or text (ingest: the ingest service answers per event). `handler`:
   * left unread for the route's handler (the MCP endpoint answers JSON-RPC errors, OTLP reads protobuf).
   */
  bodyAs?: 'json' | 'bytes' | 'handler';
  /**
   * A success of this route changes what the governance push channel streams (policies, kill switches, approval
   * decisions): the gateway wakes its feed as soon as it has answered, so its own streams do not wait for the next poll.
   */
  wakesGovernance?: true;
  /** Other paths that answer exactly as this one (the un-prefixed tool gateway lists, `/mcp/tools`); not in the document. */
  alsoAt?: readonly string[];
  /** The handler answers every method on this path (the MCP endpoint: its protocol answers 405 itself); the document lists {@link method}. */
  anyMethod?: true;
  /**
   * The role a caller needs, when it is not the role of the operation's scope ({@link SCOPE_ROLE}: read → viewer,
   * write → policy_admin, admin → admin); approving needs `approver`. The gateway checks it in one place for keys (by
   * their scope's role) and people (by their membership's role): {@link routeRole}.
   */
  role?: Role;
  /**
   * `none`: the route needs no credentials (signing in and out: `/auth/*`); its handler does its own checks. Absent: an
   * API key or a session cookie is required.
   */
  auth?: 'none';
}

/**
 * The role a caller needs for `route`: its {@link HttpRoute.role}, else the role of its operation's scope
 * ({@link SCOPE_ROLE}). The one source of the role check at the gateway edge, the OpenAPI document and the role matrix test. Pure.
 */
export function routeRole(route: HttpRoute): Role {
  return route.role ?? SCOPE_ROLE[routeOperation(route.message).scope];
}

/** One entry of {@link HttpRoute.errorBodies}. */
export interface HttpErrorBody {
  /** What the answer means. */
  description: string;
  /** The bodies by media type. */
  content: Readonly<Record<string, z.ZodType>>;
  /** Problem details (`application/problem+json`) may answer this status too. */
  problem?: boolean;
}

/**
 * A JSON-RPC 2.0 error object as the MCP endpoint answers it (`application/json`): the protocol's own error answers
 * (parse error, invalid request, not acceptable, body too large) are JSON-RPC, not problem details.
 * Source: JSON-RPC 2.0 §5.1; MCP Streamable HTTP transport.
 */
export const JsonRpcErrorResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

/**
 * OTLP `ExportTraceServiceResponse` in OTLP JSON: `partialSuccess` is absent when every span was accepted; else
 * `rejectedSpans` (an int64, a decimal string) and `errorMessage` naming why. Source: OTLP specification (partial success).
 */
export const OtlpExportTraceResponseSchema = z
  .object({
    partialSuccess: z
      .object({
        rejectedSpans: z.string().meta({ description: 'How many spans were refused (int64 as a decimal string)' }),
        errorMessage: z.string().meta({ description: 'Why: each refused span (id and name) with its reason' }),
      })
      .optional(),
  })
  .meta({ description: 'OTLP ExportTraceServiceResponse (opentelemetry-proto collector/trace/v1)' });

/** OTLP `ExportTraceServiceRequest` in OTLP JSON, as documented (the gateway decodes it: docs/ingest.md, OTLP trace ingest). */
const OtlpExportTraceRequestJsonSchema = z
  .object({ resourceSpans: z.array(z.record(z.string(), z.unknown())).optional() })
  .meta({ description: 'OTLP ExportTraceServiceRequest in OTLP JSON (lowerCamelCase fields, hex trace and span ids, enums as integers)' });

/** A protobuf-encoded OTLP message, as the document shows a binary body. */
const otlpProtobuf = (message: string) => z.string().meta({ format: 'binary', description: `OTLP ${message} in protobuf (opentelemetry-proto v1.9.0)` });

/** The document's tags (one per area), in display order, with their descriptions. */
export const HTTP_TAGS = [
  { name: 'Interventions', description: 'What the guardrails recorded: list, statistics, one record with its audit trail, deletion, re-enrichment.' },
  { name: 'Ingest', description: 'Batches of client events (interventions, agent registrations, runs, actions, approval requests), answered per event.' },
  { name: 'Approvals', description: 'The approval inbox: escalated interventions waiting for a human decision.' },
  { name: 'Policies', description: 'Versioned policies with their change history.' },
  { name: 'Agents', description: 'The agent registry: each agent with its actions and kill switch.' },
  { name: 'Kill switches', description: "The organisation's kill switch and each agent's." },
  { name: 'MCP servers', description: 'The registry of upstream MCP servers the hosted MCP proxy reaches: settings, and headers that are sealed at rest and never answered.' },
  { name: 'Sign-in', description: 'People sign in through the organisation’s OpenID provider; a session cookie then authenticates API requests like a key (docs/auth.md).' },
  { name: 'Webhooks', description: 'Signed webhook subscriptions (Standard Webhooks): which event kinds go where, their deliveries and retries; managing them needs admin (docs/notifications.md).' },
  { name: 'Members', description: 'The organisation’s members and their roles (viewer < approver < policy_admin < admin); managing them needs admin.' },
  { name: 'Stats', description: 'Fleet totals, the daily series, estimation accuracy and per-agent stats.' },
  { name: 'Runs', description: 'Agent runs with their actions (ledger entries).' },
  { name: 'Ledger', description: 'The action ledger, exported as a stream.' },
  {
    name: 'Evals',
    description:
      'Eval runs submitted by a harness or a CI job, with the scorecard the platform computes (block rate, correctness, damage prevented, detection time, grade, CI status); the history, the latest scorecard, run comparison, benchmarks, and adversarial scenario generation.',
  },
  {
    name: 'Replay',
    description:
      "Local replays of recorded runs: the run bundle a client downloads to replay a run, the summaries clients submit afterwards, the organisation's replay history with its aggregates, and the divergence analysis of a run.",
  },
  {
    name: 'Tool gateway',
    description:
      'Tools, resources and prompts for a language model managing the platform: a REST facade, and the Model Context Protocol endpoint (Streamable HTTP) at /api/v1/mcp serving the same registry.',
  },
  {
    name: 'Keys',
    description: `The organisation's API keys (scopes ${KEY_SCOPES.join(' ⊂ ')}): create (the secret is answered once), list (never the secret), revoke; managing keys needs an admin key. And the calling key itself (any key).`,
  },
  {
    name: 'Quotas',
    description:
      'Fleet-wide limits (session, run and period budgets; agent- and organisation-scoped rate limits): the counters the platform keeps, and the leases governing processes spend them through, deciding locally.',
  },
  { name: 'Audit log', description: 'Every administrative change (policies, kill switches, agents, keys, members and roles, MCP servers) with actor, time, object, before and after; admin only.' },
  {
    name: 'Audit trail',
    description:
      'The verifiable audit trail: each governance record of the organisation (interventions and their outcome changes and approvals, policy versions, kill-switch changes, agent registrations, keys, members, MCP servers, deletions) is a leaf of an RFC 9162 Merkle tree; signed checkpoints (C2SP signed notes, Ed25519) and inclusion and consistency proofs let anyone check the log offline with the keys of `/.well-known/agp-audit-keys`. See docs/audit.md.',
  },
  {
    name: 'Dead letters',
    description:
      'What the platform could never store or apply, kept with the reason for an operator (admin key): ingest messages a consumer could never store, and stored events a projection could never apply or refused on a data-quality rule. Ingest dead letters can be retried.',
  },
] as const;

/** A JSON-RPC 2.0 response the MCP endpoint answers with 200: a result, or an error object. Source: JSON-RPC 2.0 §5. */
export const JsonRpcResponseSchema = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number(), z.null()]), result: z.unknown() }),
  JsonRpcErrorResponseSchema,
]);

/** Statuses where the edge (body parser, key store) may answer a tool call with problem details instead of the envelope. */
const TOOL_ERROR_PROBLEM_TOO: ReadonlySet<number> = new Set([422, 503]);

/**
 * The error answers of `POST /api/v1/mcp/call`, from {@link MCP_TOOL_ERROR_STATUS}: each status with the envelope
 * (`success: false`, `error.code` one of the codes listed), and problem details too where the edge answers it first
 * (a body that is not `{tool_name, arguments}`: 422; the key store down: 503). `internal` (500) is left out: it is
 * a defect, never a documented answer.
 */
function toolErrorBodies(): Record<number, HttpErrorBody> {
  const byStatus = new Map<number, McpToolErrorCode[]>();
  for (const [code, status] of Object.entries(MCP_TOOL_ERROR_STATUS) as Array<[McpToolErrorCode, number]>) if (status < 500 || status === 503) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      status,
      {
        description: `The envelope with error.code ${codes.join(' or ')}${TOOL_ERROR_PROBLEM_TOO.has(status) ? '; or problem details from the edge (a body that is not {tool_name, arguments}, the key store down)' : ''}`,
        content: { 'application/json': McpToolEnvelopeSchema },
        ...(TOOL_ERROR_PROBLEM_TOO.has(status) ? { problem: true } : {}),
      },
    ]),
  );
}

/** Headers of the tool gateway's list answers, which clients may cache. */
const LIST_CACHE_HEADERS = { ETag: 'Hash of the list; send it back in If-None-Match for a 304', 'Cache-Control': 'private, max-age=60' } as const;
const ETAG = { ETag: 'The policy version, quoted; send it back in If-Match' };
const APPROVAL_ID: HttpPathParam = { description: 'Approval id, `apr-<intervention id>`.' };
const APPROVAL_CONFLICT = 'Already decided (the detail names by whom and when; a concurrent decision is re-read, so the loser learns who won) or expired';

/** What a kill-switch PUT does when others set the same switch at the same moment. */
const KILL_SWITCH_PUT =
  'Idempotent: setting the state the switch already has changes nothing. Concurrent PUTs of the same switch are serialised: each re-reads the switch when another landed first and decides again, so all answer 200 with the state they left, and the last one applied is the final state.';

/**
 * The 409 of an idempotent write that re-reads and decides again when another change lands at the same moment: it
 * remains only when that happens 10 times in a row. The detail never names internal streams.
 */
/** The `{name}` of a registered upstream MCP server. */
const MCP_SERVER_NAME: HttpPathParam = { description: 'Server name: lower-case letters, digits, - and _, at most 64 characters' };
/** What the registry checks of an upstream's URL. */
const MCP_SERVER_URL_TEXT =
  'The `url` must be http or https, carry no user name or password, and its host must not resolve to a loopback, link-local (cloud metadata), private or other non-public address unless AGP_OUTBOUND_ALLOWED_HOSTS names it (422 naming `url`). Header values are sealed with the platform\'s secrets key (AES-256-GCM) and never appear in an answer, a tool output or a log.';
const WEBHOOK_URL_TEXT =
  'The `url` must be http or https, at most 2048 characters, carry no user name or password, and its host must not resolve to a loopback, link-local (cloud metadata), private or other non-public address unless AGP_OUTBOUND_ALLOWED_HOSTS names it (422 naming `body.url`); redirects are never followed. `events`: the kinds to send; `filter`: agent_ids, intervention_types, min_risk_level, budget_thresholds, block_rate ({threshold, window_seconds, min_actions} for block_rate.spike).';
const CONCURRENT_CONFLICT = (what: string) =>
  `${what} changed concurrently 10 times in a row (each concurrent change is re-read and decided again); retry the request`;

/**
 * The HTTP body of `POST /api/v1/ingest` as documented: {@link IngestBatchSchema} with each item an ingest event.
 * The gateway checks only the envelope and sends the items on in chunks; the ingest service checks each event.
 */
const IngestHttpBodySchema = IngestBatchSchema.extend({ batch: z.array(IngestEventSchema).max(INGEST_MAX_EVENTS) });

/** What the routes that keep eval data apart say about it (docs/api.md, Eval data). */
const EVAL_DATA_NOTE =
  'Eval data (runs, actions and interventions recorded by an eval harness, `purpose: "eval"`) is left out unless `purpose` asks for it: `purpose=eval`, `purpose=production,eval` or `purpose=all`.';

/** The rows of {@link HTTP_ROUTES} with their literal types (operation ids, `forward`), for {@link HandledOperationId}. */
const ROUTES = [
  // Interventions and ingest (services/interventions, services/ingest)
  {
    method: 'GET',
    path: '/api/v1/interventions',
    message: 'interventions.list',
    status: 200,
    operationId: 'listInterventions',
    tags: ['Interventions'],
    summary: 'List interventions, newest first',
    description: EVAL_DATA_NOTE,
    queryDocs: { purpose: PURPOSE_QUERY_DOC },
    returns: 'A page',
    problems: { 400: 'A `cursor` this list did not issue, or `cursor` with `skip`; a malformed JSON body; a NUL (%00) in the URL' },
  },
  {
    method: 'POST',
    path: '/api/v1/interventions',
    message: 'interventions.create',
    agentId: { in: 'body', name: 'agent_id' },
    status: 201,
    operationId: 'createIntervention',
    tags: ['Interventions'],
    summary: 'Record an intervention (synchronous path)',
    returns: 'The stored record',
    responseHeaders: { Location: 'URL of the new record' },
  },
  {
    method: 'GET',
    path: '/api/v1/interventions/stats',
    message: 'interventions.stats',
    forward: true,
    status: 200,
    operationId: 'interventionStats',
    tags: ['Interventions'],
    summary: 'Aggregate intervention statistics',
    description: EVAL_DATA_NOTE,
    queryDocs: { purpose: PURPOSE_QUERY_DOC },
    returns: 'Statistics',
  },
  { method: 'GET', path: '/api/v1/interventions/{id}', message: 'interventions.get', forward: true, status: 200, operationId: 'getIntervention', tags: ['Interventions'], summary: 'One intervention with its audit trail', returns: 'The record' },
  {
    method: 'DELETE',
    path: '/api/v1/interventions/{id}',
    message: 'interventions.delete',
    forward: true,
    status: 204,
    operationId: 'deleteIntervention',
    tags: ['Interventions'],
    summary: 'Remove a record from every read model (its stream stays for audit)',
    returns: 'Deleted',
    reply: null,
    problems: { 409: CONCURRENT_CONFLICT('The record') },
  },
  {
    method: 'POST',
    path: '/api/v1/interventions/{id}/enrich',
    message: 'interventions.enrich',
    forward: true,
    status: 202,
    operationId: 'enrichIntervention',
    tags: ['Interventions'],
    summary: 'Re-run LLM enrichment of one record (write key); 409 when no AGP_LLM_API_KEY is configured',
    returns: 'Queued',
    problems: { 409: 'Enrichment is off: no AGP_LLM_API_KEY is configured' },
  },
  {
    method: 'POST',
    path: '/api/v1/ingest',
    message: 'ingest.raw',
    agentId: { in: 'events' },
    bodyAs: 'bytes',
    status: 207,
    operationId: 'ingest',
    tags: ['Ingest'],
    summary: `Submit up to ${INGEST_MAX_EVENTS} events (5 MiB); answers 207 once they are durable`,
    description:
      'Also answered at `/api/v1/ingest/` (the trailing-slash spelling of the spec, which the client library uses); both are the same route. ' +
      'Run consistency: a run belongs to one agent and never ends before it starts. Within one request, the first run.start of a run stands for it: a later run.start or run.end of that run naming another agent is refused per event with 409, and a run.end whose ended_at (default: its timestamp) is before that run.start’s started_at with 422 (both naming the field). Across requests the order events arrive in is not known at ingest: they are accepted, and the stats read model refuses the event that would contradict the run it holds (the run keeps its agent and times; `duration_ms` is never negative), recording it with its reason for operators (`agp_projection_dead_letters`, metric `agp_stats_run_events_refused_total`).',
    body: IngestHttpBodySchema,
    returns: 'Per-event results',
    problems: { 503: 'The ingest service is unavailable; nothing was accepted' },
  },

  {
    method: 'POST',
    path: '/api/v1/otlp/v1/traces',
    message: 'ingest.batch',
    agentId: { in: 'events' },
    bodyAs: 'handler',
    status: 200,
    operationId: 'otlpTraces',
    tags: ['Ingest'],
    summary: 'OTLP/HTTP trace receiver: GenAI spans become runs and ledger actions with costs (write key)',
    description:
      'Point an OpenTelemetry OTLP/HTTP exporter here (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, the write key as `Authorization=Bearer%20<key>` in `OTEL_EXPORTER_OTLP_HEADERS`). Bodies: protobuf (`application/x-protobuf`) or OTLP JSON (`application/json`), gzip allowed, at most 5 MiB after decompression. Spans are mapped by the OpenTelemetry GenAI semantic conventions 1.37.0: each span is filed under its trace (the run) and the `service.name` of its resource (the agent), so the result does not depend on export order; `invoke_agent` spans become run.start and run.end of the run (named by `gen_ai.agent.name`, its session `gen_ai.conversation.id`), `execute_tool` spans ledger actions named by the tool, `chat` / `text_completion` / `generate_content` / `embeddings` spans ledger actions with the model, token usage and a cost (the operator table AGP_OTLP_PRICE_TABLE first, else the price database @pydantic/genai-prices); spans without `gen_ai.*` attributes and `create_agent` spans are ignored; other GenAI spans, or spans missing a required attribute, are refused and counted in `partialSuccess` with the reason. Events take the normal ingest path: the same span sent twice is stored once. The answer is encoded like the request. See docs/ingest.md (OTLP trace ingest).',
    requestContent: { 'application/x-protobuf': otlpProtobuf('ExportTraceServiceRequest'), 'application/json': OtlpExportTraceRequestJsonSchema },
    returns: 'An ExportTraceServiceResponse (partial success names the refused spans and why)',
    content: { 'application/x-protobuf': otlpProtobuf('ExportTraceServiceResponse'), 'application/json': OtlpExportTraceResponseSchema },
    problems: {
      400: 'The body is not a well-formed ExportTraceServiceRequest of its content type (malformed protobuf or JSON)',
      413: 'The body is over 5 MiB after decompression',
      415: 'The content type is neither application/x-protobuf nor application/json, or the content encoding is not gzip, deflate, br, zstd or identity',
      503: 'The ingest service is unavailable and nothing was accepted; retry (exporters do)',
    },
  },

  // Approvals (services/interventions)
  { method: 'GET', path: '/api/v1/approvals', message: 'approvals.list', forward: true, status: 200, operationId: 'listApprovals', tags: ['Approvals'], summary: 'List approvals, newest first (e.g. `?status=pending` for the inbox)', returns: 'A page' },
  { method: 'GET', path: '/api/v1/approvals/{id}', message: 'approvals.get', forward: true, status: 200, operationId: 'getApproval', tags: ['Approvals'], summary: 'One approval', params: { id: APPROVAL_ID }, returns: 'The approval', problems: { 404: 'Unknown approval id (or another organisation’s)' } },
  {
    method: 'POST',
    path: '/api/v1/approvals/{id}/approve',
    message: 'approvals.approve',
    role: 'approver',
    wakesGovernance: true,
    boundKeys: 'allowed',
    forward: true,
    status: 200,
    operationId: 'approveApproval',
    tags: ['Approvals'],
    summary: "Approve a pending approval; the intervention's outcome becomes approved_after_review",
    params: { id: APPROVAL_ID },
    returns: 'The decided approval',
    problems: { 404: 'Unknown approval id (or another organisation’s)', 409: APPROVAL_CONFLICT },
  },
  {
    method: 'POST',
    path: '/api/v1/approvals/{id}/reject',
    message: 'approvals.reject',
    role: 'approver',
    wakesGovernance: true,
    boundKeys: 'allowed',
    forward: true,
    status: 200,
    operationId: 'rejectApproval',
    tags: ['Approvals'],
    summary: "Reject a pending approval; the intervention's outcome becomes rejected_after_review",
    params: { id: APPROVAL_ID },
    returns: 'The decided approval',
    problems: { 404: 'Unknown approval id (or another organisation’s)', 409: APPROVAL_CONFLICT },
  },

  // Policies, agents, kill switches (services/policies)
  { method: 'GET', path: '/api/v1/policies', message: 'policies.list', forward: true, status: 200, operationId: 'listPolicies', tags: ['Policies'], summary: 'List policies, newest first', returns: 'A page' },
  {
    method: 'POST',
    path: '/api/v1/policies',
    message: 'policies.create',
    wakesGovernance: true,
    status: 201,
    operationId: 'createPolicy',
    tags: ['Policies'],
    summary: 'Create a policy (version 1)',
    returns: 'The policy',
    responseHeaders: { ...ETAG, Location: 'URL of the new policy' },
  },
  {
    method: 'POST',
    path: '/api/v1/policies/evaluate',
    message: 'policies.evaluate',
    agentId: { in: 'body', name: 'agent_id' },
    forward: true,
    status: 200,
    operationId: 'evaluatePolicies',
    tags: ['Policies'],
    summary: 'Decide one action (a decision API, as OPA’s is): allow, block, a guardrail block, escalate, rate_limited, budget_exceeded, loop_detected, downgrade or warn',
    description:
      'Evaluates the action against the organisation’s enabled policies that apply to the agent, its kill switches and, with `run_id`, the run’s spend so far and its recent actions (for rate limits, and hashed for the loop and idempotency guardrails). Precedence: kill switches (the organisation’s, then the agent’s); deny and allow lists; guardrails that block (pii, moderation — scores passed in `moderation_scores` —, idempotency); approval required; budgets (action, then run, then session); rate limits; loop; downgrade; warnings (guardrails in warn mode, budgets past 80%). Across policies the most restrictive decision wins (block, pii_blocked, content_blocked, idempotent_replay, escalate, budget_exceeded, rate_limited, loop_detected, downgrade, warn, allow), ties by the oldest policy. A downgrade answers `modified_inputs`; a guardrail answers its `guardrail_context` (spec §Guardrail context payload). A read: it changes nothing and any key may ask.',
    returns: 'The decision, with every rule that triggered and the state it was taken against',
    problems: { 503: 'The stats service could not be asked for the run’s spend; retry' },
  },
  { method: 'GET', path: '/api/v1/policies/{id}', message: 'policies.get', status: 200, operationId: 'getPolicy', tags: ['Policies'], summary: 'A policy: current, or as it was at `version`', returns: 'The policy', responseHeaders: ETAG },
  {
    method: 'PATCH',
    path: '/api/v1/policies/{id}',
    message: 'policies.update',
    wakesGovernance: true,
    status: 200,
    operationId: 'updatePolicy',
    tags: ['Policies'],
    summary: 'Change fields of a policy (merge patch); `If-Match: <version>` guards against lost updates',
    requestHeaders: { 'If-Match': 'Expected current version, e.g. `3` or `"3"`' },
    returns: 'The policy after the change',
    responseHeaders: ETAG,
    problems: { 409: `If-Match is not the current version (the detail names both), or ${CONCURRENT_CONFLICT('the policy')}` },
  },
  { method: 'GET', path: '/api/v1/policies/{id}/history', message: 'policies.history', forward: true, status: 200, operationId: 'policyHistory', tags: ['Policies'], summary: 'Every change of a policy, oldest first, with actor and field changes', returns: 'The history' },
  // The registry of upstream MCP servers (services/policies)
  {
    method: 'POST',
    path: '/api/v1/mcp/servers',
    message: 'mcp-servers.register',
    forward: true,
    status: 201,
    operationId: 'registerMcpServer',
    tags: ['MCP servers'],
    summary: 'Register an upstream MCP server; its headers are sealed at rest and never answered (only their names)',
    description: MCP_SERVER_URL_TEXT,
    returns: 'The server: its settings and header names',
    problems: { 409: 'The name is taken in the organisation', 422: 'A bad field (each named), or a `url` the platform does not call', 503: 'Headers given but no secrets key is set (distributed mode without AGP_SECRETS_KEY)' },
  },
  { method: 'GET', path: '/api/v1/mcp/servers', message: 'mcp-servers.list', forward: true, status: 200, operationId: 'listMcpServers', tags: ['MCP servers'], summary: "The organisation's registered upstream MCP servers, by name", returns: 'A page' },
  { method: 'GET', path: '/api/v1/mcp/servers/{name}', message: 'mcp-servers.get', forward: true, status: 200, operationId: 'getMcpServer', tags: ['MCP servers'], summary: 'One registered upstream MCP server (header names, never values)', params: { name: MCP_SERVER_NAME }, returns: 'The server' },
  {
    method: 'PATCH',
    path: '/api/v1/mcp/servers/{name}',
    message: 'mcp-servers.update',
    status: 200,
    operationId: 'updateMcpServer',
    tags: ['MCP servers'],
    summary: 'Change fields of a registered server (any but `name`); `headers` replaces the whole set; `If-Match: <version>` guards against lost updates',
    description: MCP_SERVER_URL_TEXT,
    params: { name: MCP_SERVER_NAME },
    requestHeaders: { 'If-Match': 'Expected current version, e.g. `3` or `"3"`' },
    returns: 'The server after the change',
    problems: { 409: `If-Match is not the current version (the detail names both), or ${CONCURRENT_CONFLICT('the server')}`, 503: 'Headers given but no secrets key is set (distributed mode without AGP_SECRETS_KEY)' },
  },
  { method: 'DELETE', path: '/api/v1/mcp/servers/{name}', message: 'mcp-servers.delete', forward: true, status: 204, operationId: 'deleteMcpServer', tags: ['MCP servers'], summary: 'Delete a registered upstream MCP server (its stream stays for audit)', params: { name: MCP_SERVER_NAME }, returns: 'Deleted', reply: null, problems: { 409: CONCURRENT_CONFLICT('The server') } },
  {
    method: 'GET',
    path: '/api/v1/mcp/servers/{name}/tools',
    message: 'mcp-servers.tools',
    forward: true,
    status: 200,
    operationId: 'listMcpServerTools',
    tags: ['MCP servers'],
    summary: "A registered server's pinned tools: each tool's status (pinned, changed, new), its hashes, and its description and input schema as listed and as accepted; with `agent_id`, each tool's standing for that agent",
    description:
      'The hosted MCP proxy pins the first tool list it reads from the upstream after registration; a tool whose description or input schema differs from its pin (`changed`), or that appears later (`new`), is held: its calls are refused with a tool error until it is accepted. With `agent_id` (any agent id, registered or not), each tool carries its `standing` for that agent: `decision` is what the enabled policies applying to the agent decide of the action `action_prefix` + tool by name alone (`denied`: in a `denied_actions` list or missing from an `allowed_actions` list, the check `hide_denied_tools` makes; `escalates`: in an `approval_required_actions` list; else `allowed`), with the deciding policy, and `held` whether its pin holds its calls. Budgets, rate limits, guardrails and kill switches are decided per call and are not part of it.',
    params: { name: MCP_SERVER_NAME },
    returns: 'The pins',
  },
  {
    method: 'POST',
    path: '/api/v1/mcp/servers/{name}/tools',
    message: 'mcp-servers.tools-seen',
    forward: true,
    status: 200,
    operationId: 'recordMcpServerTools',
    tags: ['MCP servers'],
    summary: "Record the tool list the server's upstream answered, and get the pins (what the MCP proxy sends; `agp mcp proxy` for a registered server)",
    description: 'The first list recorded after registration is pinned as it is; a later list that differs records the changed and new tools, which stay held until accepted. A list equal to the pins records nothing.',
    params: { name: MCP_SERVER_NAME },
    returns: 'The pins of the listed tools',
  },
  {
    method: 'POST',
    path: '/api/v1/mcp/servers/{name}/tools/{tool}/accept',
    message: 'mcp-servers.accept-tool',
    forward: true,
    status: 200,
    operationId: 'acceptMcpServerTool',
    tags: ['MCP servers'],
    summary: "Accept a held tool's description and input schema as the upstream lists them now: its calls flow again (within 5 s in the hosted proxy)",
    params: { name: MCP_SERVER_NAME, tool: { description: 'The tool’s name as the upstream lists it' } },
    returns: 'The tool’s pin after the change',
    problems: { 404: 'No such server, or the upstream never listed the tool', 409: `\`hash\` is not what the upstream lists now (the tool changed again), or ${CONCURRENT_CONFLICT('the server')}` },
  },
  { method: 'GET', path: '/api/v1/agents', message: 'agents.list', forward: true, status: 200, operationId: 'listAgents', tags: ['Agents'], summary: 'The agent registry, by agent_id', returns: 'A page' },
  {
    method: 'POST',
    path: '/api/v1/agents',
    message: 'agents.register',
    agentId: { in: 'body', name: 'agent_id' },
    status: 201,
    alsoReturns: { 200: 'Re-registered (changed or identical)' },
    operationId: 'registerAgent',
    tags: ['Agents'],
    summary: 'Register an agent and its actions, or re-register it (replaces its definition)',
    returns: 'Registered',
    reply: AgentSchema, // the wire reply is {created, agent}; `created` picks the status
    responseHeaders: { Location: 'URL of the agent' },
    problems: { 409: CONCURRENT_CONFLICT('The agent') },
  },
  { method: 'GET', path: '/api/v1/agents/{id}', message: 'agents.get', forward: true, status: 200, operationId: 'getAgent', tags: ['Agents'], summary: 'One agent with its actions and kill switch', returns: 'The agent' },
  {
    method: 'GET',
    path: '/api/v1/agents/{agent_id}/governance',
    message: 'agents.governance',
    agentId: { in: 'path', name: 'agent_id' },
    status: 200,
    operationId: 'getAgentGovernance',
    tags: ['Agents'],
    summary: "One agent's governance snapshot: the enabled policies that apply to it and the kill switches (the organisation's and its own)",
    description:
      'What `POST /api/v1/policies/evaluate` decides the agent’s actions against, for an agent-side client that decides locally: the organisation’s enabled policies scoped to the agent or to every agent, oldest first, and the kill switches in the shape the policy engine takes. The agent need not be registered. Answers 304 Not Modified, without a body, when If-None-Match holds the current ETag (a strong hash of the snapshot’s canonical JSON).',
    params: { agent_id: { description: 'Agent id' } },
    requestHeaders: { 'If-None-Match': 'The ETag of the snapshot the client holds' },
    returns: 'The snapshot',
    responseHeaders: { ETag: 'Strong hash of the snapshot; send it back in If-None-Match for a 304', 'Cache-Control': 'private, no-cache' },
    problems: { 404: 'Not answered for an unknown agent (one never registered gets the organisation-wide snapshot): only for a path that is no route' },
  },
  {
    method: 'GET',
    path: '/api/v1/agents/{agent_id}/governance/events',
    message: 'agents.governance',
    agentId: { in: 'path', name: 'agent_id' },
    status: 200,
    operationId: 'streamAgentGovernance',
    tags: ['Agents'],
    summary: "The agent's push channel (Server-Sent Events): policy changes, kill-switch changes and approval decisions, live",
    description: `Events of the caller's organisation that concern the agent: \`policy.changed\` (a policy scoped to it or to every agent was created, updated, enabled or disabled; refetch the snapshot), \`kill_switch.changed\` (the organisation's switch or the agent's), \`approval.decided\` (one of its approvals approved, rejected or expired). Each event's \`id:\` is the event store's global position; with \`Last-Event-ID\` the stream first replays what happened after it, then goes live. A \`ready\` event marks the stream live (its id is the position reached). A \`: heartbeat\` comment every 15 s. At most ${GOVERNANCE_MAX_STREAMS_PER_ORG} streams per organisation per gateway process (\`AGP_GOVERNANCE_MAX_STREAMS\`); a client that does not read its stream (over 1 MiB unsent) is disconnected and resumes with Last-Event-ID. A read key may subscribe.`,
    params: { agent_id: { description: 'Agent id' } },
    requestHeaders: { 'Last-Event-ID': 'The id of the last event received: replay what happened after it, then go live' },
    returns: 'An unending text/event-stream',
    content: { 'text/event-stream': GovernanceEventDataSchema },
    problems: { 404: 'Not answered for an unknown agent (one never registered gets the organisation-wide events)', 422: 'A bad agent id or Last-Event-ID (not a decimal position)', 429: 'The organisation already holds the most streams a gateway serves it; retry after Retry-After seconds' },
  },
  { method: 'GET', path: '/api/v1/kill-switches', message: 'kill-switches.list', forward: true, status: 200, operationId: 'listKillSwitches', tags: ['Kill switches'], summary: 'The organisation kill switch and every engaged agent kill switch', returns: 'Kill switches' },
  {
    method: 'PUT',
    path: '/api/v1/kill-switches/organization',
    message: 'kill-switches.set',
    wakesGovernance: true,
    forward: true,
    status: 200,
    operationId: 'setOrganizationKillSwitch',
    tags: ['Kill switches'],
    summary: 'Engage or release the organisation-wide kill switch',
    description: KILL_SWITCH_PUT,
    returns: 'The new state',
    problems: { 409: CONCURRENT_CONFLICT('The kill switch') },
  },
  {
    method: 'PUT',
    path: '/api/v1/kill-switches/agents/{agent_id}',
    message: 'kill-switches.set',
    agentId: { in: 'path', name: 'agent_id' },
    wakesGovernance: true,
    forward: true,
    status: 200,
    operationId: 'setAgentKillSwitch',
    tags: ['Kill switches'],
    summary: 'Engage or release one agent’s kill switch (any agent id, registered or not)',
    description: KILL_SWITCH_PUT,
    returns: 'The new state',
    problems: { 404: 'Not answered: every agent id has a switch in the caller’s organisation, registered or not (another organisation’s agent of the same id is not touched)', 409: CONCURRENT_CONFLICT('The kill switch') },
  },

  // Fleet-wide quotas (services/policies)
  {
    method: 'POST',
    path: '/api/v1/quotas/leases',
    message: 'quotas.leases',
    agentId: { in: 'body', name: 'acquire', each: 'agent_id' },
    forward: true,
    status: 200,
    operationId: 'leaseQuotas',
    tags: ['Quotas'],
    summary: 'Acquire, renew, report on and release leases of fleet-wide limits, for all of a holder’s limits in one call',
    description:
      'A governing process (the agent SDK, or any client deciding locally) asks for a slice of what is left of each limit it decides against and admits actions against it without asking again while the lease lasts. Reports are applied first (each `seq` once; `spent` is the total admitted against the lease, actual costs included; `release` returns the unspent rest at once), then acquisitions: `need` is granted whole or not at all (`exhausted`), and the platform may grant more, up to its slice rule (at most 5 % of the limit, and a fair share of the rest among the holders). An unrenewed lease expires after the lease TTL, and its unspent quota returns half a TTL later (a grace for late reports). Counters are kept per organisation, policy, limit, scope key and window; two replicas never grant the same quota twice.',
    returns: 'The leases, one per acquire item then one per report item still active, and the ids released',
    problems: {
      404: 'The policy (or a lease id) is not the organisation’s, or the policy has no such limit: nothing is granted',
      409: 'A report names a lease of another holder, or one already released or expired: nothing of it is applied',
      422: 'A bad field (the detail names each): a negative, non-finite or huge amount, a malformed limit, a session or run id missing for a session or run budget',
    },
  },
  {
    method: 'GET',
    path: '/api/v1/quotas',
    message: 'quotas.list',
    forward: true,
    status: 200,
    operationId: 'listQuotas',
    tags: ['Quotas'],
    summary: 'The organisation’s fleet-wide counters: each limit’s committed, spent and remaining quota per scope key and window',
    returns: 'A page of counters, most recently changed first',
  },

  // Stats, runs, the ledger (services/stats)
  {
    method: 'GET',
    path: '/api/v1/stats',
    message: 'stats.summary',
    forward: true,
    status: 200,
    operationId: 'statsSummary',
    tags: ['Stats'],
    summary: 'Aggregate totals: runs, actions, cost, averages',
    // Documented without the trailing slash (redocly's no-path-trailing-slash); see docs/decisions.md, "OpenAPI: /api/v1/stats path".
    description: `Also answered at \`/api/v1/stats/\` (the trailing-slash spelling of the spec); both are the same route. \`total_cost_usd\` (USD) sums, per action, the provider-reported \`actual_cost_usd\` where there is one, else the client estimate \`cost_usd\`; \`total_estimated_cost_usd\` and \`total_actual_cost_usd\` sum each alone. ${EVAL_DATA_NOTE}`,
    queryDocs: { days: `Look back this many UTC days including today (1..${STATS_MAX_DAYS}); absent = all time`, purpose: PURPOSE_QUERY_DOC },
    returns: 'Totals',
  },
  {
    method: 'GET',
    path: '/api/v1/stats/daily',
    message: 'stats.daily',
    forward: true,
    status: 200,
    operationId: 'statsDaily',
    tags: ['Stats'],
    summary: 'Cost and run counts per UTC day, last 30 days, zero-filled',
    description: `A day’s \`cost_usd\` (USD) sums, per action, the actual cost where reported, else the estimate; \`estimated_cost_usd\` and \`actual_cost_usd\` sum each alone. ${EVAL_DATA_NOTE}`,
    queryDocs: { purpose: PURPOSE_QUERY_DOC },
    returns: '30 days, oldest first',
  },
  {
    method: 'GET',
    path: '/api/v1/stats/estimation-accuracy',
    message: 'stats.estimation-accuracy',
    forward: true,
    status: 200,
    operationId: 'statsEstimationAccuracy',
    tags: ['Stats'],
    summary: 'Skew of estimated vs actual cost: mean, p50, p95, worst offenders, histograms',
    description: EVAL_DATA_NOTE,
    queryDocs: { purpose: PURPOSE_QUERY_DOC },
    returns: 'Estimation accuracy',
  },
  {
    method: 'GET',
    path: '/api/v1/runs',
    message: 'runs.list',
    forward: true,
    status: 200,
    operationId: 'listRuns',
    tags: ['Runs'],
    summary: 'List runs, newest first',
    description: `A run’s \`cost_usd\` (USD) sums, per action, the provider-reported actual cost where there is one, else the client estimate; \`estimated_cost_usd\` and \`actual_cost_usd\` sum each alone. \`min_cost\` compares with \`cost_usd\`. ${EVAL_DATA_NOTE} \`GET /api/v1/runs/{id}\` answers any run, whatever its purpose.`,
    queryDocs: {
      status: 'One of running, completed, failed',
      min_cost: 'Minimum run cost_usd, USD (per action the actual cost where reported, else the estimate)',
      agent_id: 'Agent id',
      purpose: PURPOSE_QUERY_DOC,
      skip: 'Offset; absent: 0. Not together with `cursor`',
      limit: 'Page size; default 50, maximum 1000',
    },
    returns: 'A page of runs',
    problems: { 400: 'A `cursor` this list did not issue, or `cursor` with `skip`; a malformed JSON body; a NUL (%00) in the URL' },
  },
  {
    method: 'GET',
    path: '/api/v1/runs/{id}',
    message: 'runs.get',
    forward: true,
    status: 200,
    operationId: 'getRun',
    tags: ['Runs'],
    summary: 'One run with its actions (ledger entries), oldest first',
    queryDocs: { actions_skip: 'Offset into the actions; default 0', actions_limit: 'Actions per page; default and maximum 1000' },
    returns: 'The run',
  },
  {
    method: 'GET',
    path: '/api/v1/agents/{id}/stats',
    message: 'stats.agent',
    forward: true,
    status: 200,
    operationId: 'getAgentStats',
    tags: ['Agents', 'Stats'],
    summary: 'Per-agent totals, intervention counts and top actions, all time or the last N days',
    description: EVAL_DATA_NOTE,
    params: { id: { description: 'Agent id', field: 'agent_id' } },
    queryDocs: {
      days: `Look back this many UTC days including today (1..${STATS_MAX_DAYS}): runs started, actions and interventions timestamped in them; absent = all time`,
      purpose: PURPOSE_QUERY_DOC,
    },
    returns: 'Agent stats',
    problems: { 404: 'No runs, actions or interventions of this agent at all, whatever `days` says (or another organisation’s)' },
  },
  {
    method: 'GET',
    path: '/api/v1/ledger/export',
    message: 'ledger.export-page',
    status: 200,
    operationId: 'exportLedger',
    tags: ['Ledger'],
    summary: 'Stream the action ledger as json, jsonl or csv (attachment)',
    description:
      'CSV (RFC 4180, CRLF, a header row): the numeric columns cost_usd, actual_cost_usd and duration_ms are plain numbers. Every other cell is text, and a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is neutralised against CSV (formula) injection as OWASP recommends: it is prefixed with a single quote `\'` and quoted, e.g. `=HYPERLINK("x")` is written `"\'=HYPERLINK(""x"")"`, so a spreadsheet shows it as text and never evaluates it. json and jsonl carry every value unchanged; use them for a lossless copy. ' + EVAL_DATA_NOTE,
    queryDocs: {
      format: `One of ${EXPORT_FORMATS.join(', ')}`,
      start_date: 'ISO 8601 date or date-time; inclusive',
      end_date: 'ISO 8601 date (inclusive of that day) or date-time',
      agent_id: 'Only this agent',
      purpose: PURPOSE_QUERY_DOC,
    },
    returns: 'The ledger entries, oldest first',
    // The wire carries keyset pages of formatted text; the gateway streams them as one document.
    content: { 'application/json': z.array(LedgerEntrySchema), 'application/x-ndjson': z.string(), 'text/csv': z.string() },
    responseHeaders: { 'Content-Disposition': 'attachment; filename="ledger-<YYYY-MM-DD>.<format>"' },
  },

  // Evals (services/evals)
  {
    method: 'POST',
    path: '/api/v1/evals',
    message: 'evals.submit',
    status: 201,
    alsoReturns: { 200: 'This submission id was stored before: the run as it was stored then (nothing is stored again)' },
    operationId: 'submitEvalRun',
    tags: ['Evals'],
    summary: `Submit an eval run from a harness or CI job (at most ${EVAL_MAX_SCENARIOS} scenarios, ${EVAL_MAX_BODY_BYTES / 1024} KiB); the platform computes its scorecard`,
    description:
      'Also answered at `/api/v1/evals/` (the spelling of the spec). `id` is the submission id, an idempotency key: the same id sent again answers 200 with the run stored the first time. The summary is computed by the platform: block_rate = blocked ÷ adversarial scenarios (expected `block`), correctness_rate = scenarios whose status matched `expected` ÷ all, damage_prevented_usd (USD) = the damage_usd of the blocked attacks, avg_detection_time_ms (ms), grade (A ≥ 0.95 block rate and correctness, B ≥ 0.85, C ≥ 0.70, D ≥ 0.50, else F) and, with a commit_sha only, ci_status: pass when the block rate is at least `threshold` (default 0.9) and no scenario regressed against the latest run of the same suite and agent on `default_branch` (default main).',
    returns: 'The stored run with its scorecard',
    reply: EvalRunDetailSchema, // the wire reply is {created, eval_run}; `created` picks the status
    maxBodyBytes: EVAL_MAX_BODY_BYTES,
    responseHeaders: { Location: 'URL of the run' },
    problems: { 413: `Body over ${EVAL_MAX_BODY_BYTES / 1024} KiB, or a scorecard (scenarios with their defaults filled in) over what one answer holds` },
  },
  {
    method: 'GET',
    path: '/api/v1/evals',
    message: 'evals.list',
    forward: true,
    status: 200,
    operationId: 'listEvalRuns',
    tags: ['Evals'],
    summary: 'The eval run history, newest first (runs without their scenarios)',
    description: 'Also answered at `/api/v1/evals/`. A page holds fewer than `limit` runs when more would not fit one answer (about 1 MiB); continue from `skip` plus the runs returned.',
    queryDocs: { suite: 'Only runs of this suite', agent_id: 'Only runs of this agent', branch: 'Only runs on this branch', skip: 'Offset; default 0', limit: 'Page size; default 50, maximum 200' },
    returns: 'A page of runs',
  },
  {
    method: 'GET',
    path: '/api/v1/evals/latest',
    message: 'evals.latest',
    forward: true,
    status: 200,
    operationId: 'getLatestEvalRun',
    tags: ['Evals'],
    summary: 'The latest scorecard, optionally of one suite, agent or branch',
    queryDocs: { suite: 'Only runs of this suite', agent_id: 'Only runs of this agent', branch: 'Only runs on this branch' },
    returns: 'The newest matching run with its scenarios',
    problems: { 404: 'No run matches (none yet, or none of this suite, agent or branch)' },
  },
  {
    method: 'GET',
    path: '/api/v1/evals/benchmarks',
    message: 'evals.benchmarks',
    forward: true,
    status: 200,
    operationId: 'evalBenchmarks',
    tags: ['Evals'],
    summary: 'Per suite and agent: the trend of block rate, correctness and grade over the last N runs, the best run and the latest',
    description: 'Pairs come in suite then agent order. A page holds fewer than `limit` pairs when more would not fit one answer (about 1 MiB); continue from `skip` plus the pairs returned.',
    queryDocs: { runs: 'Runs in each trend, oldest first; default 10, maximum 100', suite: 'Only this suite', agent_id: 'Only this agent', skip: 'Pairs to skip; default 0', limit: 'Pairs per page; default 20, maximum 100' },
    returns: 'The benchmarks',
  },
  {
    method: 'GET',
    path: '/api/v1/evals/compare/{baseline_id}/{current_id}',
    message: 'evals.compare',
    forward: true,
    status: 200,
    operationId: 'compareEvalRuns',
    tags: ['Evals'],
    summary: 'Compare two runs: block-rate and correctness deltas (percentage points), grade change, regressions, improvements, scenarios on one side only, per-category deltas',
    description: 'Scenarios are matched by name. A scenario present in one run only is listed apart and never counted as passing. `warnings` says when the runs used different suites or agents, or when a list was shortened to fit one answer.',
    params: { baseline_id: { description: 'The earlier run (the reference)' }, current_id: { description: 'The run compared with it' } },
    returns: 'The comparison',
    problems: { 404: 'Either run is unknown (or another organisation’s)' },
  },
  { method: 'GET', path: '/api/v1/evals/{id}', message: 'evals.get', forward: true, status: 200, operationId: 'getEvalRun', tags: ['Evals'], summary: 'One eval run with its scenarios (the run detail)', returns: 'The run', problems: { 404: 'Unknown run id (or another organisation’s)' } },
  {
    method: 'POST',
    path: '/api/v1/evals/generate-scenarios',
    message: 'evals.generate-scenarios',
    forward: { timeoutMs: GENERATE_SCENARIOS_TIMEOUT_MS },
    status: 200,
    operationId: 'generateEvalScenarios',
    tags: ['Evals'],
    summary: 'Generate adversarial scenarios for an agent: a template pass from its actions and policies, and a semantic pass through the LLM (skipped without an LLM key)',
    returns: 'The generated scenarios, each with its category, violation breakdown and runnable source text',
    problems: { 404: 'Unknown agent (or another organisation’s)' },
  },

  // Replay (services/replay)
  {
    method: 'POST',
    path: '/api/v1/replay/{run_id}/results',
    message: 'replay.submit',
    status: 201,
    alsoReturns: { 200: 'This submission id was stored before: the submission as it was stored then (nothing is stored again)' },
    operationId: 'submitReplay',
    tags: ['Replay'],
    summary: `Submit the summary of a local replay of a run (at most ${REPLAY_MAX_DETAILS} divergence details, ${REPLAY_MAX_BODY_BYTES / 1024} KiB)`,
    description:
      '`id` is the submission id, an idempotency key: the same id sent again answers 200 with the submission stored the first time. Status is one of completed (no divergence), partial (some actions replayed cleanly, others diverged), diverged (none replayed cleanly) or failed (the replay broke), and must agree with `divergences`. `cost_savings` in USD; `duration_ms` in ms (default completed_at − started_at).',
    params: { run_id: { description: 'The replayed run; it must exist in the organisation' } },
    returns: 'The stored submission',
    reply: ReplaySubmissionDetailSchema, // the wire reply is {created, submission}; `created` picks the status
    maxBodyBytes: REPLAY_MAX_BODY_BYTES,
    responseHeaders: { Location: "URL of the run's replay history" },
    problems: { 404: 'Unknown run (or another organisation’s)', 422: 'A bad field, named: negative counts or savings, divergences above actions_replayed, an unknown status, completed_at before started_at' },
  },
  {
    method: 'GET',
    path: '/api/v1/replay/history',
    message: 'replay.history',
    forward: true,
    status: 200,
    operationId: 'listReplayHistory',
    tags: ['Replay'],
    summary: "The organisation's replay history, newest first, with the aggregates of the replay page",
    description: 'Also answered at `/api/v1/replay/history/` (the spelling of the spec). `aggregates` covers every submission of the organisation, not only the page: submissions, Σ actions_replayed, Σ divergences, cost_saved_usd = Σ cost_savings (USD).',
    queryDocs: { skip: 'Offset; default 0', limit: 'Page size; default 50, maximum 200 (more is a 422)' },
    returns: 'A page of submissions with the aggregates',
  },
  {
    method: 'GET',
    path: '/api/v1/replay/history/{run_id}',
    message: 'replay.run-history',
    forward: true,
    status: 200,
    operationId: 'listRunReplayHistory',
    tags: ['Replay'],
    summary: "One run's replay submissions, newest first, each with its divergence details, and their aggregates",
    description: 'Unlike the organisation-wide history (which gives only `divergence_details_count`), each submission carries its `divergence_details`: one entry per divergent step (`step`, `action_name`, the recorded output `expected` and the replayed output `actual`), as submitted.',
    queryDocs: { skip: 'Offset; default 0', limit: 'Page size; default 50, maximum 200 (more is a 422)' },
    returns: 'A page of submissions with their divergence details and the aggregates (empty for a run never replayed)',
    problems: { 404: 'Not answered: a run never replayed (or unknown) answers an empty page' },
  },
  {
    method: 'GET',
    path: '/api/v1/replay/{run_id}/bundle',
    message: 'replay.bundle',
    status: 200,
    operationId: 'getReplayBundle',
    tags: ['Replay'],
    summary: 'Download the run bundle: the run, every action in order with inputs, outputs and costs, its interventions, and the policy versions in force when it started',
    description:
      'A versioned JSON document (bundle_version 1). `sha256` is the hex SHA-256 of the canonical JSON of the document without `sha256` and `generated_at` (keys sorted at every depth, no whitespace); the ETag is that hash, quoted, and If-None-Match with it answers 304 without a body. The replay service assembles and hashes the bundle and hands its actions to the gateway in parts, so the bundle is not bounded by one bus message; a run that changes while its bundle is being sent ends the response early (ask again). A run without actions answers a valid bundle with an empty `actions`.',
    params: { run_id: { description: 'The run to replay' } },
    returns: 'The bundle',
    reply: ReplayBundleSchema, // the wire reply is the head with the hash; the gateway adds the actions, part by part
    responseHeaders: { ETag: 'The bundle’s sha256, quoted; send it back in If-None-Match for a 304' },
    problems: { 404: 'Unknown run (or another organisation’s)', 413: 'The run’s interventions and policies together are over what one bus message holds (about 1 MiB)' },
  },
  {
    method: 'GET',
    path: '/api/v1/replay/{run_id}/analysis',
    message: 'replay.analysis',
    forward: true,
    status: 200,
    operationId: 'getReplayAnalysis',
    tags: ['Replay'],
    summary: 'Divergences across every submission of a run: the rate, the steps and actions that diverge most, and the trend per submission',
    description: 'divergence_rate = Σ divergences ÷ Σ actions_replayed (null when nothing was replayed). by_step and by_action count divergence details (at most 50 each, the most divergent first); `share` = submissions naming it ÷ all submissions. trend: one point per submission, oldest first (the latest 200), rate = divergences ÷ actions_replayed.',
    params: { run_id: { description: 'The run' } },
    returns: 'The analysis (zeros and empty lists for a run never replayed)',
    problems: { 404: 'Unknown run (or another organisation’s)' },
  },
  {
    method: 'POST',
    path: '/api/v1/replay/{run_id}/evaluate',
    message: 'replay.evaluate-run',
    forward: { timeoutMs: 60_000 },
    status: 200,
    operationId: 'evaluateReplayRun',
    tags: ['Replay'],
    summary: "Counterfactual evaluation: a recorded run's actions decided again by today's policies, or by a candidate policy (full, or a PATCH on an existing one)",
    description:
      'Each recorded action, in order, goes through the policy engine with the state it would have had at that step: `now` = the action’s timestamp; run (and session) spend = Σ cost of the earlier steps the counterfactual lets through (stopped steps add nothing); recent calls (rate limits) = those earlier steps. A step’s cost is its actual cost where reported, else its estimate (USD). Policies: the organisation’s enabled policies that apply to the run’s agent; `candidate_policy` adds a full policy; `policy_patch` merges a JSON merge patch into the policy it names. Nothing is stored. Kill switches are not applied (the question is what the policies decide). A read: any key may evaluate today’s policies; a candidate or patch needs a write key.',
    params: { run_id: { description: 'The recorded run' } },
    returns: `Every step decided again (the first ${REPLAY_EVALUATE_MAX_STEPS} listed) and the totals in USD: prevented, actually spent, would spend, difference`,
    problems: {
      403: 'A read key with a candidate_policy or policy_patch',
      404: 'Unknown run (or another organisation’s), or the patched policy does not exist',
      422: 'A bad field, named (the candidate is checked as POST / PATCH /api/v1/policies check it)',
    },
  },
  {
    method: 'POST',
    path: '/api/v1/replay/evaluate',
    message: 'replay.evaluate-runs',
    forward: { timeoutMs: 120_000 },
    status: 200,
    operationId: 'evaluateReplayRuns',
    tags: ['Replay'],
    summary: `Counterfactual evaluation over many runs (a date range, an agent, or at most ${REPLAY_EVALUATE_MAX_RUN_IDS} run ids; at most ${REPLAY_EVALUATE_MAX_RUNS} runs)`,
    description: `Each matching run is evaluated as \`POST /api/v1/replay/{run_id}/evaluate\` does, with the same policy set. Filters compose with AND; \`start_date\` / \`end_date\` bound the run’s started_at (a date-only end_date includes that day, UTC). At most ${REPLAY_EVALUATE_MAX_RUNS} runs are evaluated, the newest first; when more match, \`truncated\` is true and \`runs_matched\` counts them all. Unknown ids in \`run_ids\` are left out. \`purpose\` (production, eval, several, or all) picks the runs by purpose; absent, eval runs are left out unless named in \`run_ids\`. Nothing is stored; a candidate or patch needs a write key.`,
    returns: 'One summary per run and the overall totals in USD',
    problems: {
      403: 'A read key with a candidate_policy or policy_patch',
      404: 'The patched policy does not exist',
      422: `A bad field, named: more than ${REPLAY_EVALUATE_MAX_RUN_IDS} run_ids, a bad date, a bad candidate`,
    },
  },

  // API keys and the calling key (answered by the gateway itself: it owns the key store)
  {
    method: 'GET',
    path: '/api/v1/auth/key',
    message: 'auth.key',
    status: 200,
    operationId: 'getCallerKey',
    tags: ['Keys'],
    summary: 'The calling key: its id, organisation, name, scope and expiry (any key)',
    returns: 'The calling key',
  },
  {
    method: 'GET',
    path: '/api/v1/auth/me',
    message: 'auth.me',
    status: 200,
    operationId: 'getCaller',
    tags: ['Sign-in'],
    summary: 'Who calls: the signed-in person (session cookie) or the API key, the current organisation, the role and the other memberships',
    returns: 'The caller',
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource/api/v1/mcp',
    message: 'oauth.resource',
    auth: 'none',
    status: 200,
    operationId: 'getMcpResourceMetadata',
    tags: ['Sign-in'],
    summary: 'OAuth protected-resource metadata (RFC 9728) of the MCP endpoint /api/v1/mcp',
    description:
      'Where an MCP client gets an access token for `/api/v1/mcp`: the OpenID provider (`authorization_servers`) and the resource identifier the token must name as its audience. A 401 of the MCP endpoint names this document in `WWW-Authenticate` (`resource_metadata`). Answers 404 when sign-in is off (`AGP_AUTH_MODE=keys`): MCP clients then use API keys.',
    returns: 'The metadata',
    problems: { 404: 'OAuth is off (AGP_AUTH_MODE=keys)' },
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource/api/v1/mcp/proxy/{server}',
    message: 'oauth.proxy-resource',
    auth: 'none',
    status: 200,
    operationId: 'getMcpProxyResourceMetadata',
    tags: ['Sign-in'],
    summary: 'OAuth protected-resource metadata (RFC 9728) of a hosted MCP proxy endpoint /api/v1/mcp/proxy/{server}',
    description:
      'As for `/api/v1/mcp`, for the hosted proxy of `{server}`; the resource identifier is that endpoint. Whether the server is registered is not told here (the endpoint answers that to an authenticated caller). Answers 404 when sign-in is off (`AGP_AUTH_MODE=keys`).',
    params: { server: MCP_SERVER_NAME },
    returns: 'The metadata',
    problems: { 404: 'OAuth is off (AGP_AUTH_MODE=keys)', 422: 'A server name that cannot be registered (`path.server`)' },
  },
  {
    method: 'GET',
    path: '/auth/config',
    message: 'auth.config',
    auth: 'none',
    status: 200,
    operationId: 'getSignInConfig',
    tags: ['Sign-in'],
    summary: 'How people sign in here: API keys, the organisation’s OpenID provider, or both (AGP_AUTH_MODE)',
    description: 'Public: the console reads it to offer the provider’s sign-in, a key field, or both. Answers in every mode.',
    returns: 'The sign-in settings',
  },
  {
    method: 'PUT',
    path: '/api/v1/auth/session',
    message: 'auth.session',
    status: 200,
    operationId: 'switchOrganization',
    tags: ['Sign-in'],
    summary: "Switch the signed-in session to another of the person's organisations",
    description:
      'The session (cookie) acts in `organization_id` from now on, with the person’s role there. A person may only switch to an organisation they are a member of (403 otherwise, and the session is unchanged). An API key or an access token belongs to what it was issued for and cannot switch (409).',
    returns: 'Who calls, in the new organisation (as GET /api/v1/auth/me)',
    problems: { 403: 'Not a member of that organisation, or Origin missing or not the public URL (CSRF)', 409: 'The caller is not a signed-in session (an API key or an access token)' },
  },
  {
    method: 'GET',
    path: '/auth/login',
    message: 'auth.login',
    auth: 'none',
    status: 302,
    operationId: 'signIn',
    tags: ['Sign-in'],
    summary: "Start signing in: redirects to the organisation's OpenID provider (Authorization Code with PKCE)",
    description:
      '`return_to` must be a path of this site (`/approvals`); a URL with a scheme or host (an open redirect) is refused with 422. Answers 404 when sign-in is off (`AGP_AUTH_MODE=keys`) and 503 when the provider cannot be reached (existing sessions and keys keep working).',
    queryDocs: { return_to: 'A path of this site to return to after signing in; default /' },
    reply: null,
    returns: 'A redirect (Location) to the provider',
    responseHeaders: { Location: "The provider's authorization endpoint" },
    problems: { 404: 'Sign-in is off (AGP_AUTH_MODE=keys)', 503: 'The OpenID provider cannot be reached; retry' },
  },
  {
    method: 'GET',
    path: '/auth/callback',
    message: 'auth.callback',
    auth: 'none',
    status: 302,
    operationId: 'signInCallback',
    tags: ['Sign-in'],
    summary: "Finish signing in: the provider's answer is checked and a session cookie is set",
    description:
      'The `state` must be one this platform issued within 10 minutes and not used yet (a forged or replayed state is refused with 400); the code is exchanged with its PKCE verifier and the ID token checked (issuer, audience, nonce). The person is found or created from the `sub` claim; an invited e-mail takes up its membership; an e-mail in AGP_ADMIN_EMAILS becomes admin of the initial organisation. A person with no membership is refused with 403. Sets the `agp_session` cookie (HttpOnly, SameSite=Lax, Secure behind https) and redirects to `return_to`.',
    reply: null,
    returns: 'A redirect (Location) to the path signing in started from',
    responseHeaders: { Location: 'The return_to path', 'Set-Cookie': 'agp_session: the opaque session id' },
    problems: { 400: 'A forged, replayed or expired state, or the provider answered an error', 403: 'The person is a member of no organisation', 404: 'Sign-in is off (AGP_AUTH_MODE=keys)', 503: 'The OpenID provider cannot be reached; retry' },
  },
  {
    method: 'POST',
    path: '/auth/logout',
    message: 'auth.logout',
    auth: 'none',
    status: 204,
    operationId: 'signOut',
    tags: ['Sign-in'],
    summary: "Sign out: the cookie's session is revoked at once and the cookie cleared",
    description: 'Needs an `Origin` header equal to the public URL when a session cookie is sent (CSRF); without a session it just clears the cookie.',
    reply: null,
    returns: 'Signed out',
    problems: { 403: 'Origin missing or not the public URL (AGP_PUBLIC_URL)', 404: 'Sign-in is off (AGP_AUTH_MODE=keys)' },
  },
  {
    method: 'GET',
    path: '/api/v1/members',
    message: 'members.list',
    status: 200,
    operationId: 'listMembers',
    tags: ['Members'],
    summary: "The organisation's members and invited e-mail addresses, with their roles (admin)",
    returns: 'The members',
    problems: { 403: 'Not an admin' },
  },
  {
    method: 'POST',
    path: '/api/v1/members',
    message: 'members.create',
    status: 201,
    operationId: 'createMember',
    tags: ['Members'],
    summary: 'Invite an e-mail address with a role (admin); it takes the membership up at its first sign-in',
    description: `\`role\` is one of ${ROLES.join(', ')}.`,
    returns: 'The member (status invited, or active when the person has signed in before)',
    problems: { 403: 'Not an admin', 409: 'The e-mail is a member already', 422: `A bad field, named: an email that is not an address, a role not among ${ROLES.join(', ')}` },
  },
  {
    method: 'PATCH',
    path: '/api/v1/members/{id}',
    message: 'members.update',
    status: 200,
    operationId: 'updateMember',
    tags: ['Members'],
    summary: "Change a member's role (admin); it applies to the member's next request",
    params: { id: { description: 'Member id' } },
    returns: 'The member',
    problems: { 403: 'Not an admin', 404: 'Unknown member id (or another organisation’s)', 409: 'The last admin cannot lose the admin role', 422: `A role not among ${ROLES.join(', ')}` },
  },
  {
    method: 'DELETE',
    path: '/api/v1/members/{id}',
    message: 'members.remove',
    status: 200,
    operationId: 'removeMember',
    tags: ['Members'],
    summary: "Remove a member (admin); the member's sessions in the organisation end",
    params: { id: { description: 'Member id' } },
    returns: 'The removed member',
    problems: { 403: 'Not an admin', 404: 'Unknown member id (or another organisation’s)', 409: 'The last admin cannot be removed' },
  },
  {
    method: 'POST',
    path: '/api/v1/keys',
    message: 'keys.create',
    status: 201,
    operationId: 'createApiKey',
    tags: ['Keys'],
    summary: "Create an API key of the caller's organisation (admin key); the secret is in this answer only",
    description: `\`name\` labels the key: it is recorded as \`actor_name\` beside the actor (\`key:<id>\`) on what the key changes. \`scope\` is one of ${KEY_SCOPES.join(', ')}. \`expires_at\` (optional) must be in the future. The key works at once; only its SHA-256 is stored, so \`key\` cannot be shown again.`,
    returns: 'The key, with its secret `key` (shown once)',
    responseHeaders: { Location: 'URL of the key list' },
    problems: { 403: 'Not an admin key', 422: `A bad field, named: an empty or over-long name, a scope not among ${KEY_SCOPES.join(', ')} (listed as allowed), an expires_at that is not a date-time in the future` },
  },
  {
    method: 'GET',
    path: '/api/v1/keys',
    message: 'keys.list',
    status: 200,
    operationId: 'listApiKeys',
    tags: ['Keys'],
    summary: "The organisation's API keys, newest first, revoked and expired ones included (admin key); never a secret",
    queryDocs: { skip: 'Offset; default 0', limit: 'Page size; default 50, maximum 1000' },
    returns: 'A page of keys',
    problems: { 403: 'Not an admin key' },
  },
  {
    method: 'DELETE',
    path: '/api/v1/keys/{id}',
    message: 'keys.revoke',
    status: 200,
    operationId: 'revokeApiKey',
    tags: ['Keys'],
    summary: 'Revoke an API key of the organisation (admin key); idempotent',
    description:
      'The key is refused (401) at once by the gateway that answered, and by every other gateway within its key cache period (10 s; while the key store is down, within AGP_KEY_STALE_MS of its last check). Revoking a revoked key answers it again with its first revoked_at. The key stays listed, with status revoked.',
    params: { id: { description: 'Key id' } },
    returns: 'The revoked key',
    problems: { 403: 'Not an admin key', 404: 'Unknown key id (or another organisation’s)' },
  },

  // Dead letters (answered by the gateway from the platform's database, through the writers' query modules)
  {
    method: 'GET',
    path: '/api/v1/dead-letters',
    message: 'dead-letters.list',
    status: 200,
    operationId: 'listDeadLetters',
    tags: ['Dead letters'],
    summary: "The organisation's ingest and projection dead letters, the most recently failed first (admin key)",
    description:
      'Each with its reason, when it first and last failed, how often, and the event: an ingest dead letter holds the log message a consumer could never store (its events as ingest validated them); a projection dead letter holds the stored event a projection could never apply, or refused on a data-quality rule (`reason` starting with `refused:`). A projection that meets the event again (a replay) updates `last_seen` and `attempts`.',
    queryDocs: { skip: 'Offset; default 0', limit: 'Page size; default 50, maximum 200', kind: 'Only `ingest` or only `projection` dead letters', projection: 'Only the dead letters of this projection (e.g. `stats-read-model`); implies kind=projection' },
    returns: 'A page of dead letters',
    problems: { 403: 'Not an admin key', 422: 'A bad query field, named: skip, limit, a kind not among ingest, projection (listed as allowed), or projection with kind=ingest' },
  },
  {
    method: 'POST',
    path: '/api/v1/dead-letters/{id}/retry',
    message: 'dead-letters.retry',
    status: 200,
    operationId: 'retryDeadLetter',
    tags: ['Dead letters'],
    summary: "Retry a dead letter (admin key): an ingest dead letter's events through ingest, a projection dead letter's event through its projection; removed once accepted",
    description:
      "An ingest dead letter (`ingest-<n>`): the events go through ingest's validation again, as the organisation's events, with the calling key as actor. All accepted: the dead letter is removed and the answer holds ingest's answer per event (a consumer that still cannot store them keeps them as a new dead letter). Any refused: 422 naming ingest's reasons, and the dead letter stays with `last_seen`, `attempts` and `reason` updated. Ingest answering an event as a duplicate (already stored, or the log still holds the original message: for 2 minutes after it was published) is a 409, the dead letter kept. " +
      "A projection dead letter (`projection-<projection>-<position>`): the service that owns the projection reads the stored event from the log and applies it through that projection alone, in the projection's transaction; the projection's checkpoint does not move. Applied: the dead letter is removed and the answer names the projection and the event. Refused again (a data-quality rule) or failed again: 422 with the new reason, the dead letter kept with `last_seen`, `attempts` and `reason` updated. The projection's checkpoint before the event (a replay under way, which applies it itself): 409, nothing changed.",
    params: { id: { description: 'Dead letter id (`ingest-<n>` or `projection-<projection>-<position>`)' } },
    returns: "The retried dead letter's id, and ingest's answer (ingest) or the projection and event applied (projection)",
    problems: {
      403: 'Not an admin key',
      404: 'No dead letter with this id in the organisation (another organisation’s, or one already retried)',
      409: 'Ingest answered an event as a duplicate; or the projection has not passed the event yet (it applies it itself), or the log no longer holds its event, or it is a subscription no service retries (the enrichment worker’s): replay it; the dead letter is kept',
      422: 'Ingest refused an event again, or the projection refused or failed to apply the event again; the dead letter is kept with last_seen, attempts and reason updated',
      503: 'Ingest, the service owning the projection or the database is unavailable; nothing changed',
    },
  },

  // Tool gateway (services/mcp): the REST facade and the MCP endpoint
  {
    method: 'GET',
    path: '/api/v1/mcp/tools',
    message: 'mcp.catalog',
    alsoAt: ['/mcp/tools'],
    status: 200,
    operationId: 'listMcpTools',
    tags: ['Tool gateway'],
    summary: 'Every tool with its JSON Schema input (also at GET /mcp/tools)',
    returns: '{tools}',
    reply: McpToolListSchema,
    responseHeaders: LIST_CACHE_HEADERS,
    description: 'Answers 304 Not Modified, without a body, when If-None-Match holds the current ETag.',
  },
  {
    method: 'POST',
    path: '/api/v1/mcp/call',
    message: 'mcp.call-tool',
    boundKeys: 'allowed',
    status: 200,
    operationId: 'callMcpTool',
    tags: ['Tool gateway'],
    summary: 'Call a tool; the answer is always the envelope {success, data, error, metadata}',
    description:
      'A failed call answers the envelope with `success: false` and `error: {code, message, details?}`, with the HTTP status of its code: unknown_tool 404, invalid_arguments 422 (details.errors names each bad field), forbidden 403 (a read key calling a tool that changes state), not_found 404, conflict 409, unavailable 503, internal 500.',
    returns: 'The envelope',
    reply: McpToolEnvelopeSchema,
    errorBodies: toolErrorBodies(),
  },
  {
    method: 'GET',
    path: '/api/v1/mcp/resources',
    message: 'mcp.catalog',
    alsoAt: ['/mcp/resources'],
    status: 200,
    operationId: 'listMcpResources',
    tags: ['Tool gateway'],
    summary: 'Every resource and resource template (also at GET /mcp/resources)',
    returns: '{resources, resource_templates}',
    reply: McpResourceListSchema,
    responseHeaders: LIST_CACHE_HEADERS,
    description: 'Answers 304 Not Modified, without a body, when If-None-Match holds the current ETag.',
  },
  {
    method: 'GET',
    path: '/api/v1/mcp/resources/{uri}',
    message: 'mcp.read-resource',
    forward: true,
    status: 200,
    operationId: 'readMcpResource',
    tags: ['Tool gateway'],
    summary: 'Read a resource: {uri, mime_type, data}',
    params: { uri: { description: 'The resource URI, percent-encoded (`platform%3A%2F%2Fstats%2Fdashboard`) or raw (`platform://stats/dashboard`)' } },
    returns: 'The resource',
    problems: { 404: 'No resource has this URI and no template matches it, or the record is unknown (or another organisation’s)' },
  },
  {
    method: 'GET',
    path: '/api/v1/mcp/prompts',
    message: 'mcp.catalog',
    alsoAt: ['/mcp/prompts'],
    status: 200,
    operationId: 'listMcpPrompts',
    tags: ['Tool gateway'],
    summary: 'Every prompt with its arguments (also at GET /mcp/prompts)',
    returns: '{prompts}',
    reply: McpPromptListSchema,
    responseHeaders: LIST_CACHE_HEADERS,
    description: 'Answers 304 Not Modified, without a body, when If-None-Match holds the current ETag.',
  },
  {
    method: 'POST',
    path: '/api/v1/mcp/prompts/{name}',
    message: 'mcp.get-prompt',
    forward: true,
    status: 200,
    operationId: 'getMcpPrompt',
    tags: ['Tool gateway'],
    summary: 'Render a prompt from live data: {prompt, description, data: {summary, details}, messages}',
    params: { name: { description: 'Prompt name' } },
    returns: 'The rendered prompt',
    problems: { 404: 'Unknown prompt name', 422: 'A required argument is missing, or an argument is invalid' },
  },
  {
    method: 'POST',
    path: '/api/v1/mcp',
    message: 'mcp.http',
    boundKeys: 'allowed',
    bodyAs: 'handler',
    anyMethod: true,
    status: 200,
    operationId: 'mcpEndpoint',
    tags: ['Tool gateway'],
    summary: 'The Model Context Protocol endpoint (Streamable HTTP, JSON responses, stateless)',
    description:
      'Speaks MCP revision 2026-07-28 (stateless: `server/discover`, version and capabilities in `_meta`) and the 2025 revisions through the SDK’s legacy stateless mode. Methods: server/discover, initialize (2025), tools/list, tools/call, resources/list, resources/read, resources/templates/list, prompts/list, prompts/get, ping. Authenticate with the same bearer key as the REST API, or, with sign-in on, an OAuth access token of the organisation’s OpenID provider (the 401 names the protected-resource metadata, RFC 9728); a read key or a viewer cannot call a tool that changes state.',
    returns: 'A JSON-RPC 2.0 response (202 without a body for a notification)',
    body: z.unknown().meta({ description: 'A JSON-RPC 2.0 request or notification' }),
    reply: z.unknown().meta({ description: 'A JSON-RPC 2.0 response' }),
    requestHeaders: { 'MCP-Protocol-Version': 'The protocol revision (2025 revisions; 2026-07-28 carries it in `_meta`)', Accept: 'application/json, text/event-stream' },
    content: { 'application/json': JsonRpcResponseSchema, 'text/event-stream': z.string().meta({ description: 'One `event: message` whose data is the JSON-RPC 2.0 response' }) },
    alsoReturns: { 202: 'A notification or a response was accepted (no body)' },
    noBody: [202],
    errorBodies: {
      400: { description: 'A JSON-RPC error: parse error, invalid request, batch, or unsupported protocol version', content: { 'application/json': JsonRpcErrorResponseSchema } },
      403: { description: 'A JSON-RPC error: Origin not allowed (DNS rebinding protection)', content: { 'application/json': JsonRpcErrorResponseSchema } },
      406: { description: 'A JSON-RPC error: Accept does not name both application/json and text/event-stream', content: { 'application/json': JsonRpcErrorResponseSchema } },
      413: { description: `A JSON-RPC error: body over ${MCP_MAX_BODY_BYTES / 1024} KiB`, content: { 'application/json': JsonRpcErrorResponseSchema } },
      415: { description: 'A JSON-RPC error: the body is not application/json', content: { 'application/json': JsonRpcErrorResponseSchema } },
      503: { description: 'The tool gateway (a JSON-RPC error) or the key store (problem details) is unavailable; retry', content: { 'application/json': JsonRpcErrorResponseSchema }, problem: true },
    },
  },
  {
    method: 'POST',
    path: '/api/v1/mcp/proxy/{server}',
    message: 'mcp-proxy.http',
    bodyAs: 'handler',
    anyMethod: true,
    agentId: { in: 'header', name: 'AGP-Agent-Id' },
    status: 200,
    operationId: 'mcpProxy',
    tags: ['MCP servers'],
    summary: 'The hosted MCP proxy: a registered upstream MCP server over Streamable HTTP, every tools/call governed',
    description:
      'An MCP endpoint standing for the organisation’s registered server `{server}` (POST /api/v1/mcp/servers): revision 2026-07-28 (stateless, `server/discover`) and the 2025 revisions (the SDK’s stateless mode, GET and DELETE answering 405; or, for a client whose `initialize` carries `AGP-MCP-Session: stateful`, a session with `Mcp-Session-Id` that relays the upstream’s notifications, sampling and elicitation requests, asks the client for a registration’s `approval: client`, and is one run, ended by DELETE or 5 minutes unused). Every `tools/call` is decided by the platform’s policies as the caller’s agent (an agent-bound key’s agent, else the `AGP-Agent-Id` header, else the client’s `clientInfo.name`, else `mcp-client`) and recorded in the run named by `AGP-Run-Id` (else one run per agent and key while the proxy holds it); a refused call is a tool result with `isError: true`, not an error answer. A call waiting for an approval streams `notifications/progress` (SSE) when it carries a progress token. The registration’s headers go to the upstream only; the caller’s key never does. An upstream that is down, slow past `timeout_ms` or answers garbage is a tool error naming the server.',
    params: { server: MCP_SERVER_NAME },
    returns: 'A JSON-RPC 2.0 response, as JSON or as an SSE stream (progress notifications, then the response); 202 without a body for a notification',
    body: z.unknown().meta({ description: 'A JSON-RPC 2.0 request or notification' }),
    reply: z.unknown().meta({ description: 'A JSON-RPC 2.0 response' }),
    requestHeaders: {
      'MCP-Protocol-Version': 'The protocol revision (2025 revisions; 2026-07-28 carries it in `_meta`)',
      Accept: 'application/json, text/event-stream',
      'AGP-Agent-Id': 'The agent the calls are governed as (a key bound to an agent: only that agent)',
      'AGP-Run-Id': 'The run the calls are recorded in (1-256 characters)',
      'AGP-MCP-Session': '`stateful` on a 2025 `initialize`: open a session (its answer carries `Mcp-Session-Id`); `stateless` (the default): none',
      'Mcp-Session-Id': 'The session of a 2025 client that opened one (GET: its stream of the upstream’s notifications and requests; DELETE: close it)',
    },
    content: { 'application/json': JsonRpcResponseSchema, 'text/event-stream': z.string().meta({ description: '`event: message` frames: progress notifications, then the JSON-RPC 2.0 response' }) },
    alsoReturns: { 202: 'A notification or a response was accepted (no body)' },
    noBody: [202],
    problems: { 403: 'An agent-bound key naming another agent, or a console session (the proxy needs an API key or an OAuth access token)', 404: 'No server of that name is registered in the caller’s organisation (a JSON-RPC error `-32001` instead for an `Mcp-Session-Id` this gateway does not hold for the caller)', 422: 'A server name that cannot be registered (`path.server`), an `AGP-Agent-Id` or `AGP-Run-Id` header over 256 characters, or an `AGP-MCP-Session` other than `stateful` or `stateless`' },
    errorBodies: {
      400: { description: 'A JSON-RPC error: parse error, invalid request, or unsupported protocol version; problem details for a bad percent-encoding in `{server}`', content: { 'application/json': JsonRpcErrorResponseSchema }, problem: true },
      404: { description: 'Problem details: no such server registered; a JSON-RPC error (`-32001`, Session not found): an `Mcp-Session-Id` this gateway does not hold for the caller (closed, expired, another key’s, or opened on another gateway)', content: { 'application/json': JsonRpcErrorResponseSchema }, problem: true },
      405: { description: 'A JSON-RPC error: GET or DELETE without a session (`Mcp-Session-Id`)', content: { 'application/json': JsonRpcErrorResponseSchema } },
      406: { description: 'A JSON-RPC error: Accept does not name both application/json and text/event-stream', content: { 'application/json': JsonRpcErrorResponseSchema } },
      413: { description: `A JSON-RPC error: body over ${MCP_MAX_BODY_BYTES / 1024} KiB`, content: { 'application/json': JsonRpcErrorResponseSchema } },
      415: { description: 'A JSON-RPC error: the body is not application/json', content: { 'application/json': JsonRpcErrorResponseSchema } },
    },
  },

  // Audit log (the policies service's projection of the administrative events; the gateway streams the exports)
  {
    method: 'GET',
    path: '/api/v1/audit-log',
    message: 'audit-log.list',
    status: 200,
    operationId: 'listAuditLog',
    tags: ['Audit log'],
    role: 'admin',
    summary: 'The log of administrative changes, newest first (admin): one page, or the whole filtered range as CSV or JSON Lines',
    description:
      'Every change to policies, kill switches, agents, API keys, members and roles, and registered MCP servers, with the actor (`user`, `key` or `system`), the time, the object and the object before and after. Secrets (key plaintexts and hashes, MCP server header values, session ids) never appear. `format=csv` or `format=jsonl` (or `Accept: text/csv` / `application/jsonl`) streams every matching entry as an attachment (newest first; `cursor`, `skip` and `limit` are ignored). CSV: RFC 4180, CRLF, a header row, `before` and `after` as JSON text, and a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return prefixed with `\'` against formula injection. See docs/auth.md (Audit log).',
    queryDocs: {
      actor: '`key:<key id>`, `user:<user id>` or `system`',
      object_type: `One or more of ${AUDIT_OBJECT_TYPES.join(', ')} (repeat or comma-separate)`,
      object_id: 'Only changes of this object (policy id, `organization` or `agents/<agent_id>` for a kill switch, agent id, server name, key id, member id)',
      type: 'One or more entry types, e.g. `policy.updated,key.created` (repeat or comma-separate)',
      from: 'ISO 8601 date or date-time; inclusive',
      to: 'ISO 8601 date (inclusive of that day) or date-time; inclusive',
      format: `One of ${AUDIT_FORMATS.join(', ')}; default json (one page)`,
      cursor: 'The `next_cursor` of the page before (json only)',
      skip: 'Offset (json only; not with cursor)',
      limit: `Page size; default 50, maximum ${AUDIT_PAGE_MAX} (json only)`,
    },
    requestHeaders: { Accept: '`text/csv` or `application/jsonl` (also `application/x-ndjson`) stream the export as `format` does; `format` wins when both are given' },
    returns: 'A page of entries, or the export',
    content: { 'application/json': AuditLogPageSchema, 'application/jsonl': z.string(), 'text/csv': z.string() },
    responseHeaders: { 'Content-Disposition': 'On an export: attachment; filename="audit-log-<YYYY-MM-DD>.<csv|jsonl>"' },
    problems: { 400: 'A cursor this list did not issue, or both cursor and skip', 403: 'Below admin' },
  },
  // The verifiable audit trail (the policies service's tree of governance records; docs/audit.md)
  {
    method: 'GET',
    path: '/api/v1/audit/checkpoints',
    message: 'audit.checkpoints',
    forward: true,
    status: 200,
    operationId: 'listAuditCheckpoints',
    tags: ['Audit trail'],
    summary: 'The signed checkpoints (tree heads) of the organisation’s audit trail, newest first, with the latest and the current tree size',
    description:
      'Each checkpoint is a C2SP signed note: the origin, the tree size, the RFC 9162 root hash (base64) and a `time` line, then a blank line and one Ed25519 signature line per key. Verify it with the verifier keys of `/.well-known/agp-audit-keys` (docs/audit.md). Checkpoints are signed every AGP_AUDIT_CHECKPOINT_INTERVAL_MS when the log has grown, and on request (POST).',
    queryDocs: { skip: 'Offset', limit: 'Page size; default 50, maximum 200' },
    returns: 'A page of checkpoints',
  },
  {
    method: 'POST',
    path: '/api/v1/audit/checkpoints',
    message: 'audit.checkpoint',
    forward: true,
    status: 200,
    operationId: 'createAuditCheckpoint',
    tags: ['Audit trail'],
    summary: 'Sign a checkpoint of the organisation’s audit trail now (write); when the log has not grown since the latest, the latest is answered',
    returns: 'The checkpoint',
    problems: { 503: 'No signing key (distributed mode without AGP_SECRETS_KEY or AGP_AUDIT_SIGNING_KEY)' },
  },
  {
    method: 'GET',
    path: '/api/v1/audit/proofs/inclusion',
    message: 'audit.inclusion',
    forward: true,
    status: 200,
    operationId: 'getAuditInclusionProof',
    tags: ['Audit trail'],
    summary: 'The inclusion proof of one record in the tree of `tree_size` leaves: the leaf (the canonical record), its index and the audit path',
    description: 'Hash the leaf (SHA-256 of 0x00 and its UTF-8 bytes), walk the path (RFC 9162 §2.1.3.2) and compare with the root of a checkpoint of the same tree size.',
    queryDocs: { record: 'The record’s id (the leaf’s `id`: the id of the event it records, e.g. an audit-log entry’s `id`)', tree_size: 'The tree the proof is for (a checkpoint’s tree_size); absent: the current size' },
    returns: 'The proof',
    problems: { 404: 'No record of that id in the organisation’s log (another organisation’s included)', 422: 'A bad parameter (each named): a tree_size that does not hold the record or is larger than the log' },
  },
  {
    method: 'GET',
    path: '/api/v1/audit/proofs/consistency',
    message: 'audit.consistency',
    forward: true,
    status: 200,
    operationId: 'getAuditConsistencyProof',
    tags: ['Audit trail'],
    summary: 'The consistency proof between the trees of `from` and `to` leaves: that the log only appended in between',
    description: 'Verify it (RFC 9162 §2.1.4.2) against the roots of two checkpoints of those sizes.',
    queryDocs: { from: 'The older tree size', to: 'The newer tree size, at least from and at most the log’s size' },
    returns: 'The proof',
    problems: { 422: 'A bad parameter (each named): from after to, or a size larger than the log' },
  },
  {
    method: 'GET',
    path: '/api/v1/audit/records',
    message: 'audit.records',
    forward: true,
    status: 200,
    operationId: 'listAuditRecords',
    tags: ['Audit trail'],
    summary: 'The records of the organisation’s audit trail in leaf order, for an evidence pack: each leaf hash as logged, and the record as the event store holds it now serialised as a leaf',
    description:
      'The range is the leaves [start, end); without them, the leaves stored in [from, to) (leaves are in stored order). A record whose `leaf` does not hash to its `leaf_hash` was changed in the store after it was logged; `missing` is true when the store no longer holds it. `agp audit export` pages through this route (docs/audit.md, Evidence packs).',
    queryDocs: {
      from: 'ISO 8601 date-time, inclusive',
      to: 'ISO 8601 date-time, exclusive',
      start: 'First leaf index (inclusive); wins over from',
      end: 'Leaf index to stop before (exclusive); wins over to',
      cursor: 'The next_cursor of the page before',
      limit: 'Page size; default 500, maximum 2000',
    },
    returns: 'A page of records',
    problems: { 422: 'A bad parameter (each named): a date that is not ISO 8601, end before start, a cursor this route did not issue, or a range beyond the log' },
  },
  {
    method: 'GET',
    path: '/api/v1/audit/proofs/range',
    message: 'audit.range',
    forward: true,
    status: 200,
    operationId: 'getAuditRangeProof',
    tags: ['Audit trail'],
    summary: 'The range proof of the leaves [start, end) in the tree of `tree_size` leaves: the hashes that, with those leaves, give the tree’s root',
    description: 'Recompute the root from the leaf hashes of [start, end) and the proof (docs/audit.md, Range proofs) and compare it with a checkpoint of the same tree size.',
    queryDocs: { start: 'First leaf (inclusive)', end: 'Leaf to stop before (exclusive)', tree_size: 'The tree the proof is for, at least end; absent: the current size' },
    returns: 'The proof',
    problems: { 422: 'A bad parameter (each named): end before start, a tree_size below end or larger than the log' },
  },
  {
    method: 'GET',
    path: '/.well-known/agp-audit-keys',
    message: 'audit.keys',
    auth: 'none',
    status: 200,
    operationId: 'getAuditKeys',
    tags: ['Audit trail'],
    summary: 'The public keys that sign the audit trail’s checkpoints (no credentials): signed-note verifier keys and raw Ed25519 keys, every key that ever signed',
    returns: 'The keys',
  },
  {
    method: 'POST',
    path: '/api/v1/audit/erasures',
    message: 'audit.erase',
    forward: true,
    status: 201,
    operationId: 'createAuditErasure',
    tags: ['Audit trail'],
    summary: 'Erase the personal data of one agent’s, one run’s or one intervention’s audit records (admin): the committed fields’ values and salts; leaves, checkpoints and proofs stay valid',
    description:
      'Give exactly one of `agent_id`, `run_id` or `intervention_id`, and a `reason`. The committed fields (`AUDIT_COMMITTED_FIELDS`: inputs, reasons, intents, notes, guardrail context, …) of the matching records — their interventions with every outcome change, approval and deletion, and for an agent its kill-switch changes — are removed from the stored events and the read models, and their salts deleted. The leaves hold only commitments, so every inclusion and consistency proof still verifies; an evidence pack lists the fields as redacted. The erasure is itself a record of the log (AuditRecordsErased). Records logged before commitments existed (leaf version 1) are left as they are. Runs in the request (bounded by that agent’s, run’s or intervention’s records).',
    returns: 'What was erased',
    problems: { 403: 'Not an admin', 422: 'A bad field (each named): not exactly one of agent_id, run_id and intervention_id, an empty or over-long reason' },
  },
  {
    method: 'GET',
    path: '/api/v1/audit/retention',
    message: 'audit.retention-get',
    forward: true,
    status: 200,
    operationId: 'getAuditRetention',
    tags: ['Audit trail'],
    summary: 'The organisation’s audit retention in days (admin); null keeps everything',
    returns: 'The retention',
    problems: { 403: 'Not an admin' },
  },
  {
    method: 'PUT',
    path: '/api/v1/audit/retention',
    message: 'audit.retention-put',
    forward: true,
    status: 200,
    operationId: 'putAuditRetention',
    tags: ['Audit trail'],
    summary: 'Set the organisation’s audit retention (admin): records older than it lose their committed fields (values and salts); the leaves and proofs stay',
    description:
      'A whole number of days from 1 to 36500, or null to keep everything (the default). The policies service applies it every AGP_AUDIT_RETENTION_INTERVAL_MS and right after a change; each run that erased anything is itself a record of the log (AuditRecordsErased, scope `retention`). The EU AI Act (Art. 19, 26(6)) asks for logs to be kept at least six months: 183 days or more.',
    returns: 'The retention',
    problems: { 403: 'Not an admin', 422: 'audit_retention_days is not a whole number from 1 to 36500 or null' },
  },
  // Webhook subscriptions and their deliveries (services/policies)
  {
    method: 'POST',
    path: '/api/v1/webhooks',
    message: 'webhooks.create',
    forward: true,
    status: 201,
    operationId: 'createWebhook',
    tags: ['Webhooks'],
    summary: 'Create a webhook subscription (admin); its signing secret is in this answer only',
    description: WEBHOOK_URL_TEXT,
    returns: 'The subscription with its secret (shown once)',
    problems: { 403: 'Not an admin', 422: 'A bad field (each named): a `url` with credentials, another scheme, over 2048 characters or an address the platform does not call; an unknown event kind', 503: 'No secrets key is set (distributed mode without AGP_SECRETS_KEY)' },
  },
  { method: 'GET', path: '/api/v1/webhooks', message: 'webhooks.list', forward: true, status: 200, operationId: 'listWebhooks', tags: ['Webhooks'], summary: "The organisation's webhook subscriptions, oldest first (admin; never a secret)", returns: 'A page', problems: { 403: 'Not an admin' } },
  { method: 'GET', path: '/api/v1/webhooks/{id}', message: 'webhooks.get', forward: true, status: 200, operationId: 'getWebhook', tags: ['Webhooks'], summary: 'One webhook subscription (admin; never its secret)', params: { id: { description: 'Subscription id' } }, returns: 'The subscription', problems: { 403: 'Not an admin' } },
  {
    method: 'PATCH',
    path: '/api/v1/webhooks/{id}',
    message: 'webhooks.update',
    forward: true,
    status: 200,
    operationId: 'updateWebhook',
    tags: ['Webhooks'],
    summary: 'Change fields of a webhook subscription (admin); enabling it again resets its failure count',
    description: WEBHOOK_URL_TEXT,
    params: { id: { description: 'Subscription id' } },
    returns: 'The subscription',
    problems: { 403: 'Not an admin' },
  },
  { method: 'DELETE', path: '/api/v1/webhooks/{id}', message: 'webhooks.delete', forward: true, status: 204, operationId: 'deleteWebhook', tags: ['Webhooks'], summary: 'Delete a webhook subscription and its deliveries (admin)', params: { id: { description: 'Subscription id' } }, returns: 'Deleted', reply: null, problems: { 403: 'Not an admin' } },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{id}/rotate-secret',
    message: 'webhooks.rotate-secret',
    forward: true,
    status: 200,
    operationId: 'rotateWebhookSecret',
    tags: ['Webhooks'],
    summary: "Replace a subscription's signing secret (admin); deliveries carry a signature with each secret until the overlap ends",
    description: '`overlap_seconds` (default 86400, at most 604800): how long deliveries are also signed with the old secret, so receivers can switch without losing one. The new secret is in this answer only.',
    params: { id: { description: 'Subscription id' } },
    returns: 'The subscription with its new secret (shown once)',
    problems: { 403: 'Not an admin', 503: 'No secrets key is set (distributed mode without AGP_SECRETS_KEY)' },
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{id}/deliveries',
    message: 'webhooks.deliveries',
    forward: true,
    status: 200,
    operationId: 'listWebhookDeliveries',
    tags: ['Webhooks'],
    summary: "A subscription's deliveries, newest first (admin): status, attempts, last response code and latency, next attempt",
    params: { id: { description: 'Subscription id' } },
    returns: 'A page',
    problems: { 403: 'Not an admin' },
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver',
    message: 'webhooks.redeliver',
    forward: true,
    status: 200,
    operationId: 'redeliverWebhook',
    tags: ['Webhooks'],
    summary: 'Send a delivery again now (admin), with the same webhook-id and a fresh retry schedule',
    params: { id: { description: 'Subscription id' }, delivery_id: { description: 'Delivery id (its webhook-id)' } },
    returns: 'The delivery, pending',
    problems: { 403: 'Not an admin', 409: 'The subscription is disabled: enable it first' },
  },

  // Slack approvals (services/policies; the callback read by the gateway)
  {
    method: 'PUT',
    path: '/api/v1/integrations/slack',
    message: 'integrations.slack-put',
    forward: true,
    status: 200,
    operationId: 'putSlackConnection',
    tags: ['Webhooks'],
    summary: "Set the organisation's Slack connection (admin): approval requests are posted to its channels with Approve / Reject buttons",
    description:
      '`bot_token` (xoxb-…) and `signing_secret` are stored sealed with the platform’s secrets key and never answered; `channels`: 1 to 20 `{channel, filter}`, a request going to each channel whose filter (agent_ids, intervention_types, min_risk_level) it passes. The Slack app’s interactivity request URL is `/api/v1/integrations/slack/interactivity`. Replaces any connection whole.',
    returns: 'The connection (no token, no secret)',
    problems: { 403: 'Not an admin', 422: 'A bad field (each named)', 503: 'No secrets key is set (distributed mode without AGP_SECRETS_KEY)' },
  },
  { method: 'GET', path: '/api/v1/integrations/slack', message: 'integrations.slack-get', forward: true, status: 200, operationId: 'getSlackConnection', tags: ['Webhooks'], summary: "The organisation's Slack connection (admin; never the token or the secret)", returns: 'The connection', problems: { 403: 'Not an admin', 404: 'No Slack connection is set' } },
  { method: 'DELETE', path: '/api/v1/integrations/slack', message: 'integrations.slack-delete', forward: true, status: 204, operationId: 'deleteSlackConnection', tags: ['Webhooks'], summary: "Remove the organisation's Slack connection (admin)", returns: 'Removed', reply: null, problems: { 403: 'Not an admin', 404: 'No Slack connection is set' } },
  {
    method: 'POST',
    path: '/api/v1/integrations/slack/interactivity',
    message: 'integrations.slack-interactivity',
    auth: 'none',
    bodyAs: 'handler',
    status: 200,
    operationId: 'slackInteractivity',
    tags: ['Webhooks'],
    summary: 'Slack’s interactivity callback: a click on Approve or Reject of an approval message (signed by Slack, no API key)',
    description:
      'Slack signs each request with the app’s signing secret (`X-Slack-Signature: v0=<HMAC-SHA256 of "v0:<timestamp>:<body>">`, `X-Slack-Request-Timestamp` within 5 minutes); an unsigned, wrongly signed or stale request is a 401 and changes nothing. The Slack user is mapped to the organisation’s member with the same e-mail (Slack’s `users.info`), who decides the approval with their role and the policy’s separation of duties; the message is then updated in place with the outcome and the approver. A user who is not a member, or whose role may not decide approvals, gets an ephemeral refusal in Slack (200, `refused`).',
    requestContent: { 'application/x-www-form-urlencoded': z.object({ payload: z.string().describe('The interaction, JSON (type block_actions)') }) },
    returns: 'What was done: decided, refused or ignored',
    problems: { 401: 'Unsigned, wrongly signed or stale (more than 5 minutes off)', 413: 'The body is over 1 MiB' },
  },
] as const satisfies readonly HttpRoute[];

/**
 * Every route of the gateway (not /api/v1/openapi.json, which is public), declared once: the gateway's router, its
 * scope check, its metrics labels, the OpenAPI document and the route tests all read these rows.
 * Source: docs/decisions.md (One typed wire registry).
 */
export const HTTP_ROUTES: readonly HttpRoute[] = ROUTES;

/** One row of {@link HTTP_ROUTES} with its literal types. */
export type HttpRouteRow = (typeof ROUTES)[number];

/**
 * The operation id of every row the gateway does not simply forward (no `forward`): each has exactly one handler in the
 * gateway's route map, which the compiler checks against this type.
 */
export type HandledOperationId = Exclude<HttpRouteRow, { forward: unknown }>['operationId'];

/** A path turned into a matcher: its regular expression and, per segment, whether it is literal (for precedence). */
interface CompiledRoute {
  route: HttpRoute;
  regex: RegExp;
  literals: boolean[];
}

let compiled: { byMethod: Map<string, CompiledRoute[]>; anyMethod: CompiledRoute[] } | null = null;

/** A path pattern (`/api/v1/policies/{id}`) of `route` as a matcher. */
function compile(route: HttpRoute, path: string): CompiledRoute {
  const segments = path.split('/').slice(1);
  const literals = segments.map((s) => !/^\{[^}]+\}$/.test(s));
  const source = segments.map((s, i) => (literals[i] ? s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : '[^/]+')).join('/');
  return { route, regex: new RegExp(`^/${source}$`), literals };
}

/**
 * The table's routes by method (each row's path and its {@link HttpRoute.alsoAt} paths), compiled once, each method's
 * list with literal segments before parameters; and the rows that answer any method ({@link HttpRoute.anyMethod}).
 */
function compiledRoutes(): NonNullable<typeof compiled> {
  if (compiled) return compiled;
  const byMethod = new Map<string, CompiledRoute[]>();
  const anyMethod: CompiledRoute[] = [];
  for (const route of HTTP_ROUTES) {
    const list = byMethod.get(route.method) ?? [];
    for (const path of [route.path, ...(route.alsoAt ?? [])]) list.push(compile(route, path));
    byMethod.set(route.method, list);
    if (route.anyMethod) anyMethod.push(compile(route, route.path));
  }
  // `/api/v1/interventions/stats` wins over `/api/v1/interventions/{id}`: at the first segment where two paths differ
  // in kind, the literal one comes first.
  const rank = (a: CompiledRoute, b: CompiledRoute) => {
    for (let i = 0; i < Math.min(a.literals.length, b.literals.length); i++) if (a.literals[i] !== b.literals[i]) return a.literals[i] ? -1 : 1;
    return 0;
  };
  for (const list of byMethod.values()) list.sort(rank);
  compiled = { byMethod, anyMethod };
  return compiled;
}

/**
 * The raw values of `route`'s `{name}` parameters in `path` (a path {@link matchHttpRoute} matched to it), by name,
 * still percent-encoded. Pure.
 */
export function httpRouteParams(route: HttpRoute, path: string): Record<string, string> {
  const given = (path.replace(/\/+$/, '') || '/').split('/');
  const out: Record<string, string> = {};
  route.path.split('/').forEach((segment, i) => {
    const m = /^\{([^}]+)\}$/.exec(segment);
    if (m) out[m[1]] = given[i];
  });
  return out;
}

/**
 * The route of {@link HTTP_ROUTES} that answers `method` on `path` (at its path or one of its `alsoAt` paths; a row
 * with `anyMethod` by every method), or undefined when none does. The gateway calls it once per request.
 * @param method the HTTP method, upper case (`POST`); HEAD is matched as GET.
 * @param path the request path without the query (`/api/v1/policies/p-1`); a trailing slash is ignored; ids are
 *   matched as sent (still percent-encoded).
 */
export function matchHttpRoute(method: string, path: string): HttpRoute | undefined {
  const p = path.replace(/\/+$/, '') || '/';
  const { byMethod, anyMethod } = compiledRoutes();
  return (byMethod.get(method === 'HEAD' ? 'GET' : method)?.find((c) => c.regex.test(p)) ?? anyMethod.find((c) => c.regex.test(p)))?.route;
}
