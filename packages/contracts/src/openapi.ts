/**
 * The OpenAPI 3.1 document the gateway serves at `GET /api/v1/openapi.json`, generated: its `paths` from the HTTP
 * route table (http-routes.ts) and the wire rows the routes name (wire.ts), its schemas from the zod contracts.
 * Nothing in it is written by hand but the texts of the route table. Linted by `node scripts/lint-openapi.mjs`
 * (redocly, recommended rules). Source: docs/decisions.md (One typed wire registry); scripts/lint-openapi.mjs (lint).
 */
import { z } from 'zod';
import { ApprovalDecisionSchema, ApprovalPageSchema, ApprovalRecordSchema } from './approval.js';
import { EvaluateActionSchema, PolicyEvaluationSchema } from './decision.js';
import {
  EvalBenchmarksSchema,
  EvalComparisonSchema,
  EvalRunDetailSchema,
  EvalRunPageSchema,
  EvalRunSchema,
  EvalScenarioResultSchema,
  EvalScenarioSchema,
  EvalSummarySchema,
  GeneratedScenarioSchema,
  GeneratedScenariosSchema,
  GenerateScenariosSchema,
  SubmitEvalRunSchema,
} from './evals.js';
import { AgentGovernanceSchema } from './governance.js';
import { GuardrailContextSchema } from './guardrail.js';
import { HTTP_ROUTES, HTTP_TAGS, JsonRpcErrorResponseSchema, JsonRpcResponseSchema, routeOperation, routeRole, type HttpRoute, type RouteKey } from './http-routes.js';
import { IngestEventSchema, IngestResponseSchema, MAX_JSON_DEPTH } from './ingest.js';
import { CreateInterventionSchema, InterventionDetailSchema, InterventionPageSchema, InterventionRecordSchema, InterventionStatsSchema } from './intervention.js';
import {
  McpPromptDescriptorSchema,
  McpPromptListSchema,
  McpPromptResultSchema,
  McpResourceContentSchema,
  McpResourceDescriptorSchema,
  McpResourceListSchema,
  McpToolCallSchema,
  McpToolDescriptorSchema,
  McpToolEnvelopeSchema,
  McpToolListSchema,
} from './mcp.js';
import { describeFields } from './openapi-fields.js';
import {
  AgentSchema,
  AgentPageSchema,
  CreatePolicySchema,
  KillSwitchOverviewSchema,
  KillSwitchStateSchema,
  PolicyHistorySchema,
  PolicyPageSchema,
  PolicySchema,
  RegisteredActionSchema,
  SetKillSwitchSchema,
  UpdatePolicySchema,
} from './policy.js';
import { ProblemSchema } from './problem.js';
import {
  DivergenceDetailSchema,
  ReplayAggregatesSchema,
  ReplayAnalysisSchema,
  ReplayBundleSchema,
  ReplayHistoryPageSchema,
  ReplayRunHistoryPageSchema,
  ReplaySubmissionDetailSchema,
  ReplaySubmissionSchema,
  RunEvaluationSchema,
  RunsEvaluationSchema,
  SubmitReplaySchema,
} from './replay.js';
import { AgentStatsSchema, EstimationAccuracySchema, LedgerEntrySchema, RunDetailSchema, RunPageSchema, RunSchema, StatsDailySchema, StatsSummarySchema } from './stats.js';
import { ApiKeySchema, CallerKeySchema, CreatedApiKeySchema } from './keys.js';
import { RawJsonSchema } from './wire.js';
import { CreateWebhookSchema, WEBHOOK_PAYLOADS, WebhookDeliveryPageSchema, WebhookDeliverySchema, WebhookPageSchema, WebhookSchema, WebhookWithSecretSchema } from './webhooks.js';

type Json = Record<string, unknown>;
/** Which side of a schema: what a client sends (`input`: before defaults and transforms) or receives (`output`). */
type Io = 'input' | 'output';

/**
 * Schemas published under `components.schemas`, one per record and page of the API, so generated clients have a name
 * for each (`Run`, `Policy`, `EvalRunDetail`…). A route whose body or reply is one of them (same zod schema) references
 * it by `$ref`, and so does every schema that contains it, wherever it occurs: on the side it was published for
 * (`io`), and on both sides when its input and output JSON Schemas are the same (e.g. a guardrail context, sent in a
 * created intervention and returned on every read). `description` says what the record is.
 */
const COMPONENTS: ReadonlyArray<{ name: string; schema: z.ZodType; io: Io; description: string }> = [
  // Interventions and ingest
  { name: 'Intervention', schema: InterventionRecordSchema, io: 'output', description: 'A time the policy engine prevented or modified an agent action (spec §Intervention record).' },
  { name: 'InterventionDetail', schema: InterventionDetailSchema, io: 'output', description: 'An intervention with its audit trail (the original strings enrichment replaced).' },
  { name: 'InterventionPage', schema: InterventionPageSchema, io: 'output', description: 'A page of interventions, newest first.' },
  { name: 'InterventionStats', schema: InterventionStatsSchema, io: 'output', description: 'Intervention statistics: totals, breakdowns by type and outcome, a daily series and top lists.' },
  { name: 'CreateIntervention', schema: CreateInterventionSchema, io: 'input', description: 'The fields of an intervention to record.' },
  { name: 'GuardrailContext', schema: GuardrailContextSchema, io: 'output', description: 'The typed guardrail payload of a guardrail block, versioned by guardrail_schema_version.' },
  { name: 'IngestEvent', schema: IngestEventSchema, io: 'input', description: 'One event of an ingest batch: its client id, type, timestamp and body.' },
  { name: 'IngestResponse', schema: IngestResponseSchema, io: 'output', description: 'What an ingest batch did, event by event.' },
  // Webhooks
  { name: 'Webhook', schema: WebhookSchema, io: 'output', description: 'A webhook subscription: where signed deliveries go, for which event kinds and filter (never its secret).' },
  { name: 'WebhookWithSecret', schema: WebhookWithSecretSchema, io: 'output', description: 'A webhook subscription with its signing secret, answered on creation and rotation only.' },
  { name: 'WebhookPage', schema: WebhookPageSchema, io: 'output', description: 'A page of webhook subscriptions, oldest first.' },
  { name: 'CreateWebhook', schema: CreateWebhookSchema, io: 'input', description: 'A webhook subscription to create.' },
  { name: 'WebhookDelivery', schema: WebhookDeliverySchema, io: 'output', description: 'One delivery of one event to one subscription, with its attempts.' },
  { name: 'WebhookDeliveryPage', schema: WebhookDeliveryPageSchema, io: 'output', description: 'A page of deliveries, newest first.' },
  // Approvals
  { name: 'Approval', schema: ApprovalRecordSchema, io: 'output', description: 'A request for a human decision on an escalated action.' },
  { name: 'ApprovalPage', schema: ApprovalPageSchema, io: 'output', description: 'A page of approvals, newest first.' },
  { name: 'ApprovalDecision', schema: ApprovalDecisionSchema, io: 'input', description: 'Who approves or rejects, and why.' },
  // Policies, agents, kill switches, decisions
  { name: 'Policy', schema: PolicySchema, io: 'output', description: 'A policy: budgets, action lists, rate limits, downgrades and guardrails, scoped to agents or to all.' },
  { name: 'PolicyPage', schema: PolicyPageSchema, io: 'output', description: 'A page of policies, newest first.' },
  { name: 'PolicyHistory', schema: PolicyHistorySchema, io: 'output', description: 'Every version of a policy: who changed what, when.' },
  { name: 'CreatePolicy', schema: CreatePolicySchema, io: 'input', description: 'The settings of a new policy.' },
  { name: 'UpdatePolicy', schema: UpdatePolicySchema, io: 'input', description: 'The settings of a policy to change (absent fields keep their value).' },
  { name: 'EvaluateAction', schema: EvaluateActionSchema, io: 'input', description: 'An action an agent is about to run, to be decided by the policies.' },
  { name: 'PolicyEvaluation', schema: PolicyEvaluationSchema, io: 'output', description: 'The decision on an action and the rules that triggered it.' },
  { name: 'Agent', schema: AgentSchema, io: 'output', description: 'A registered agent with its action definitions and its kill switch.' },
  { name: 'AgentPage', schema: AgentPageSchema, io: 'output', description: 'A page of agents, by agent id.' },
  { name: 'RegisteredAction', schema: RegisteredActionSchema, io: 'output', description: 'An action an agent registered: what it does, its parameters, risk level and typical cost.' },
  { name: 'AgentGovernance', schema: AgentGovernanceSchema, io: 'output', description: 'What governs an agent now: its policies and kill switches (the SDK snapshot).' },
  { name: 'AgentStats', schema: AgentStatsSchema, io: 'output', description: "An agent's runs, actions, costs, top actions and interventions." },
  { name: 'KillSwitch', schema: KillSwitchStateSchema, io: 'output', description: 'A kill switch of the organisation or of one agent.' },
  { name: 'KillSwitchOverview', schema: KillSwitchOverviewSchema, io: 'output', description: "The organisation's kill switch and the engaged agent switches." },
  { name: 'SetKillSwitch', schema: SetKillSwitchSchema, io: 'input', description: 'Engage or release a kill switch, and why.' },
  // Runs, ledger, stats
  { name: 'Run', schema: RunSchema, io: 'output', description: 'One run of an agent: status, times, action count and costs.' },
  { name: 'RunPage', schema: RunPageSchema, io: 'output', description: 'A page of runs, newest first.' },
  { name: 'RunDetail', schema: RunDetailSchema, io: 'output', description: 'A run with a page of its ledger entries, oldest first.' },
  { name: 'LedgerEntry', schema: LedgerEntrySchema, io: 'output', description: 'One recorded action of a run: inputs, outputs, estimated and actual cost, duration.' },
  { name: 'StatsSummary', schema: StatsSummarySchema, io: 'output', description: 'Aggregate totals: runs, actions, costs, averages.' },
  { name: 'StatsDaily', schema: StatsDailySchema, io: 'output', description: 'Cost and run counts per day.' },
  { name: 'EstimationAccuracy', schema: EstimationAccuracySchema, io: 'output', description: 'How client cost estimates compare with provider-reported costs.' },
  // Evals
  { name: 'EvalRun', schema: EvalRunSchema, io: 'output', description: 'An eval run as the history lists it (without its scenarios).' },
  { name: 'EvalRunDetail', schema: EvalRunDetailSchema, io: 'output', description: 'An eval run with its scorecard and every scenario.' },
  { name: 'EvalRunPage', schema: EvalRunPageSchema, io: 'output', description: 'A page of eval runs, newest first.' },
  { name: 'EvalSummary', schema: EvalSummarySchema, io: 'output', description: "An eval run's scorecard: rates, grade, damage prevented, detection time, CI status." },
  { name: 'EvalScenario', schema: EvalScenarioSchema, io: 'output', description: 'One scenario of a stored eval run.' },
  { name: 'EvalComparison', schema: EvalComparisonSchema, io: 'output', description: 'Two eval runs compared: deltas, grade change, regressions, improvements.' },
  { name: 'EvalBenchmarks', schema: EvalBenchmarksSchema, io: 'output', description: 'The benchmark trends of each suite and agent.' },
  { name: 'SubmitEvalRun', schema: SubmitEvalRunSchema, io: 'input', description: 'An eval run submitted by a harness or a CI job.' },
  { name: 'EvalScenarioResult', schema: EvalScenarioResultSchema, io: 'input', description: 'One scenario result of a submitted eval run.' },
  { name: 'GenerateScenarios', schema: GenerateScenariosSchema, io: 'input', description: 'Which agent to generate adversarial scenarios for, and how many per category.' },
  { name: 'GeneratedScenarios', schema: GeneratedScenariosSchema, io: 'output', description: 'The generated scenarios and what each pass did.' },
  { name: 'GeneratedScenario', schema: GeneratedScenarioSchema, io: 'output', description: 'One generated scenario with its category, violations and runnable source.' },
  // Replay
  { name: 'SubmitReplay', schema: SubmitReplaySchema, io: 'input', description: 'The summary of a local replay of a run.' },
  { name: 'ReplaySubmission', schema: ReplaySubmissionSchema, io: 'output', description: 'A stored replay submission (the organisation-wide history lists it without its divergence details).' },
  { name: 'ReplaySubmissionDetail', schema: ReplaySubmissionDetailSchema, io: 'output', description: 'A replay submission with its divergence details.' },
  { name: 'DivergenceDetail', schema: DivergenceDetailSchema, io: 'output', description: 'One divergent step of a replay: the recorded and the replayed output.' },
  { name: 'ReplayAggregates', schema: ReplayAggregatesSchema, io: 'output', description: 'Submissions, actions replayed, divergences and cost saved over a set of submissions.' },
  { name: 'ReplayHistoryPage', schema: ReplayHistoryPageSchema, io: 'output', description: "A page of the organisation's replay history with its aggregates." },
  { name: 'ReplayRunHistoryPage', schema: ReplayRunHistoryPageSchema, io: 'output', description: "A page of one run's replay history, each submission with its divergence details." },
  { name: 'ReplayBundle', schema: ReplayBundleSchema, io: 'output', description: 'Everything needed to replay a run: the run, its actions, interventions and the policies in force.' },
  { name: 'ReplayAnalysis', schema: ReplayAnalysisSchema, io: 'output', description: 'Divergences across every replay of a run.' },
  { name: 'RunEvaluation', schema: RunEvaluationSchema, io: 'output', description: "A run's actions decided again by today's or a candidate policy." },
  { name: 'RunsEvaluation', schema: RunsEvaluationSchema, io: 'output', description: 'Counterfactual evaluation over many runs.' },
  // Tool gateway
  { name: 'McpToolDescriptor', schema: McpToolDescriptorSchema, io: 'output', description: 'A tool: name, description and the JSON Schema of its arguments.' },
  { name: 'McpToolList', schema: McpToolListSchema, io: 'output', description: 'The tools of the tool gateway.' },
  { name: 'McpToolCall', schema: McpToolCallSchema, io: 'input', description: 'A tool call: the tool and its arguments.' },
  { name: 'McpToolEnvelope', schema: McpToolEnvelopeSchema, io: 'output', description: 'The result of a tool call: success, data, error and metadata.' },
  { name: 'McpResourceDescriptor', schema: McpResourceDescriptorSchema, io: 'output', description: 'A resource: uri, name, description and media type.' },
  { name: 'McpResourceList', schema: McpResourceListSchema, io: 'output', description: 'The resources and resource templates of the tool gateway.' },
  { name: 'McpResourceContent', schema: McpResourceContentSchema, io: 'output', description: "A resource's content." },
  { name: 'McpPromptDescriptor', schema: McpPromptDescriptorSchema, io: 'output', description: 'A prompt: name, description and arguments.' },
  { name: 'McpPromptList', schema: McpPromptListSchema, io: 'output', description: 'The prompts of the tool gateway.' },
  { name: 'McpPromptResult', schema: McpPromptResultSchema, io: 'output', description: 'A rendered prompt.' },
  // API keys
  { name: 'ApiKey', schema: ApiKeySchema, io: 'output', description: 'An API key as listed: id, name, scope, expiry and revocation (never its secret).' },
  { name: 'CreatedApiKey', schema: CreatedApiKeySchema, io: 'output', description: 'A created API key with its secret, shown this once.' },
  { name: 'CallerKey', schema: CallerKeySchema, io: 'output', description: 'The calling key: its organisation, name, scope and expiry.' },
  // Protocol envelopes
  { name: 'Problem', schema: ProblemSchema, io: 'output', description: 'RFC 9457 problem details of an error answer.' },
  { name: 'JsonRpcResponse', schema: JsonRpcResponseSchema, io: 'output', description: 'A JSON-RPC 2.0 response of the MCP endpoint.' },
  { name: 'JsonRpcError', schema: JsonRpcErrorResponseSchema, io: 'output', description: 'A JSON-RPC 2.0 error of the MCP endpoint.' },
];

/**
 * Whether a component's input and output JSON Schemas agree, so one `$ref` serves requests and responses alike.
 * Computed once per component.
 */
const SAME_BOTH_SIDES = new Map<z.ZodType, boolean>();
function sameBothSides(s: z.ZodType): boolean {
  let same = SAME_BOTH_SIDES.get(s);
  if (same === undefined) {
    const side = (io: Io) => JSON.stringify(z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }));
    same = side('input') === side('output');
    SAME_BOTH_SIDES.set(s, same);
  }
  return same;
}

/** The component that is `s` on side `io` (published for that side, or the same on both), if any. */
function componentOf(s: z.core.$ZodType, io: Io) {
  return COMPONENTS.find((c) => (c.schema as z.core.$ZodType) === s && (c.io === io || sameBothSides(c.schema)));
}
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The licence the document declares. The repository ships no LICENSE file and every package is `private`, so no
 * licence is granted: say so (an SPDX `LicenseRef-` identifier, since SPDX lists no "proprietary" licence) rather
 * than name an open-source licence nobody chose. Replace when the project adopts one. See docs/decisions.md.
 */
export const OPENAPI_LICENSE = { name: 'Proprietary (no licence granted)', identifier: 'LicenseRef-AGP-Proprietary' } as const;

/**
 * The one zod-to-JSON-Schema conversion of the document: JSON Schema 2020-12 of `s` without `$schema`, every
 * {@link COMPONENTS} schema inside it replaced by its `$ref` (the root never is), what JSON Schema cannot express as
 * `{}`, and the fields described ({@link describeFields}).
 */
function schemaOf(s: z.ZodType, io: Io): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: ({ zodSchema, jsonSchema }) => {
      if ((zodSchema as z.core.$ZodType) === s) return;
      const component = componentOf(zodSchema, io);
      if (!component) return;
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Json)[key];
      Object.assign(jsonSchema, ref(component.name));
    },
  }) as Json;
  return describeFields(rest);
}

/** `$ref` to the component that is `s` on side `io`, else {@link schemaOf}. */
function schemaOrRef(s: z.ZodType, io: Io): Json {
  const component = componentOf(s, io);
  return component ? ref(component.name) : schemaOf(s, io);
}

/**
 * What each problem status means, unless a route says more precisely (`HttpRoute.problems`).
 * Source: architecture §4 (Errors).
 */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Malformed JSON body (on any method, GET included), a bad percent-encoding in a path parameter, or a NUL (%00) in the URL',
  401: 'Missing or unknown bearer token',
  403: 'Read-only key used for a write (or a key below admin on a key-management route)',
  404: 'Unknown id (or another organisation’s)',
  409: 'Conflict',
  413: 'Body over 5 MiB (on any method, GET included)',
  415: 'A body (on any method, GET included) that is not application/json',
  422: `Invalid field values; every bad field is listed, enums with their allowed values (also: JSON nested deeper than ${MAX_JSON_DEPTH} levels, a NUL or an unpaired surrogate in text)`,
  503: 'A dependency (a service, the key store) is unavailable; retry after Retry-After',
};

/**
 * Answers every operation can give, whatever its route, because the edge (services/gateway/src/edge.ts) and the HTTP
 * server answer them before any route: 400 (malformed JSON, a bad percent-encoding, %00 in the URL), 401, 413 and 415
 * (a body is parsed on every method), 422, 503 (the key store or a service is down). 431 is Node's HTTP parser
 * refusing a request line and headers over 16 KiB, without a body.
 */
const EDGE_PROBLEMS = [400, 401, 413, 415, 422, 503] as const;
const HEADERS_TOO_LARGE = { '431': { description: 'Request line and headers (a long URL) over 16 KiB; answered by the HTTP server, without a body' } };
/**
 * 304 of a GET: `If-None-Match: *` matches any current representation (RFC 9110 §13.1.2), so every GET that would
 * answer 200 answers 304 without a body; a route with an ETag also for its current ETag.
 */
const notModified = (etag: boolean) => ({ '304': { description: `Not Modified, no body: If-None-Match is \`*\`${etag ? ' or holds the current ETag' : ' (any current representation)'}` } });

/** The problem-details body of an error answer. */
const PROBLEM_CONTENT = { 'application/problem+json': { schema: ref('Problem') } };

/**
 * The one error-response builder: each status with its text and body, problem details unless the route's
 * `errorBodies` says otherwise (its media types, and problem details too when it says `problem`).
 * @throws on a status without a text.
 */
function problemResponses(statuses: Iterable<number>, texts: Readonly<Record<number, string>> = {}, bodies: HttpRoute['errorBodies'] = {}): Json {
  return Object.fromEntries(
    [...statuses].map((status) => {
      const other = bodies[status];
      const description = other?.description ?? texts[status] ?? STATUS_TEXT[status];
      if (!description) throw new Error(`OpenAPI: no text for problem status ${status}`);
      const content = other
        ? { ...Object.fromEntries(Object.entries(other.content).map(([type, s]) => [type, { schema: schemaOrRef(s, 'output') }])), ...(other.problem ? PROBLEM_CONTENT : {}) }
        : PROBLEM_CONTENT;
      return [String(status), { description, content }];
    }),
  );
}

/** Part `part` of the route's row's request schema (`query`, `body`, `path`), or undefined when it has none. */
function wirePart(message: RouteKey, part: 'query' | 'body' | 'path'): z.ZodType | undefined {
  const request: z.ZodType = routeOperation(message).request;
  return request instanceof z.ZodObject ? (request.shape as Record<string, z.ZodType>)[part] : undefined;
}

/** The reply as HTTP sends it: the route's override, else the wire row's reply without its RawJson alternative. */
function replyOf(route: HttpRoute): z.ZodType | null {
  if (route.reply !== undefined) return route.reply;
  const reply: z.ZodType = routeOperation(route.message).reply;
  if (!(reply instanceof z.ZodUnion)) return reply;
  const options = (reply.options as z.ZodType[]).filter((o) => o !== RawJsonSchema);
  return options.length === 1 ? options[0] : z.union(options);
}

/** The `{name}` parameters of an OpenAPI path, in order. */
const pathParamNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

/** `parameters` of a route: path (schemas from the wire row's `path`), request headers, then query (from its `query`). */
function parameters(route: HttpRoute): Json[] {
  const where = `OpenAPI: ${route.method} ${route.path}`;
  const pathShape = wirePart(route.message, 'path');
  const fields = pathShape instanceof z.ZodObject ? (pathShape.shape as Record<string, z.ZodType>) : {};
  const path = pathParamNames(route.path).map((name) => {
    const doc = route.params?.[name];
    const field = fields[doc?.field ?? name];
    if (!field) throw new Error(`${where}: the wire row ${route.message} has no path field for {${name}}`);
    const schema = schemaOf(field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field, 'input');
    return { name, in: 'path', required: true, ...(doc?.description ? { description: doc.description } : {}), schema };
  });
  const headers = Object.entries(route.requestHeaders ?? {}).map(([name, description]) => ({ name, in: 'header', required: false, schema: { type: 'string' }, description }));
  const query = wirePart(route.message, 'query');
  const js = query ? schemaOf(query, 'input') : {};
  const props = (js.properties ?? {}) as Record<string, Json>;
  const required = new Set((js.required ?? []) as string[]);
  for (const name of Object.keys(route.queryDocs ?? {})) if (!props[name]) throw new Error(`${where}: no query parameter ${name} in ${route.message}`);
  const queryParams = Object.entries(props).map(([name, s]) => {
    const items = s.items as Json | undefined;
    // An enum filter takes one value or several: an array of the enum, serialised comma-separated (`?type=a,b`: style
    // form, explode false). The repeated form (`?type=a&type=b`, openapi-fetch's default) is accepted as well.
    const list = s.type === 'array' && items?.enum ? (items.enum as string[]) : null;
    const description = route.queryDocs?.[name] ?? (list ? `One of ${list.join(', ')}; or several, comma-separated (OR): \`${name}=${list.slice(0, 2).join(',')}\`.` : (s.description as string | undefined));
    const schema = list ? { type: 'array', items: { type: 'string', enum: list }, minItems: 1 } : s;
    return { name, in: 'query', required: required.has(name), ...(list ? { style: 'form', explode: false } : {}), schema, ...(description ? { description } : {}) };
  });
  return [...path, ...headers, ...queryParams];
}

/** The operation object of one route. */
function operation(route: HttpRoute): Json {
  const body = route.body ?? wirePart(route.message, 'body');
  const reply = replyOf(route);
  const content = route.content
    ? Object.fromEntries(Object.entries(route.content).map(([type, s]) => [type, { schema: schemaOrRef(s, 'output') }]))
    : reply
      ? { 'application/json': { schema: schemaOrRef(reply, 'output') } }
      : undefined;
  const headers = route.responseHeaders ? Object.fromEntries(Object.entries(route.responseHeaders).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) : undefined;
  const success = (description: string, withBody = true) => ({ description, ...(headers ? { headers } : {}), ...(content && withBody ? { content } : {}) });
  const params = parameters(route);
  // Every route: what the edge answers (EDGE_PROBLEMS, 431); a write: 403 for a read key (an admin route: for a read
  // or write key); a path parameter: 404;
  // a GET: 304 (If-None-Match); the route's own statuses (`problems`, `errorBodies`).
  const statuses = new Set<number>([...EDGE_PROBLEMS, ...Object.keys(route.problems ?? {}).map(Number), ...Object.keys(route.errorBodies ?? {}).map(Number)]);
  const write = routeOperation(route.message).scope !== 'read';
  const role = routeRole(route);
  if (write || role !== 'viewer') statuses.add(403);
  if (pathParamNames(route.path).length) statuses.add(404);
  // A route naming an agent: 403 for an agent-bound key naming another (HttpRoute.agentId); a write naming none: 403
  // for any agent-bound key, unless the row allows them (HttpRoute.boundKeys).
  const boundRefused = write && !route.agentId && route.boundKeys !== 'allowed';
  const problems = route.agentId || boundRefused ? { ...route.problems, 403: boundAgentText(route, write) } : route.problems;
  if (route.agentId) statuses.add(403);
  const conditional = route.method === 'GET' && route.status === 200;
  return {
    operationId: route.operationId,
    tags: [...route.tags],
    // The role a caller needs (a key: the role of its scope; a person: their membership's role): docs/auth.md. A row
    // that takes no credentials (signing in and out) has none.
    ...(route.auth === 'none' ? { security: [] } : { 'x-agp-role': role }),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(route.requestContent
      ? { requestBody: { required: true, content: Object.fromEntries(Object.entries(route.requestContent).map(([type, s]) => [type, { schema: schemaOrRef(s, 'input') }])) } }
      : body
        ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOrRef(body, 'input') } } } }
        : {}),
    responses: {
      [String(route.status)]: success(route.returns),
      ...Object.fromEntries(Object.entries(route.alsoReturns ?? {}).map(([status, description]) => [status, success(description, !route.noBody?.includes(Number(status)))])),
      ...(conditional ? notModified(/If-None-Match/.test(route.responseHeaders?.ETag ?? '')) : {}),
      ...problemResponses([...statuses].sort((a, b) => a - b), problems, route.errorBodies),
      ...HEADERS_TOO_LARGE,
    },
  };
}

/**
 * The 403 text of a route naming an agent (`HttpRoute.agentId`), or of a write an agent-bound key may not call: the
 * route's own or the usual scope text, then what an agent-bound key is refused for (docs/decisions.md, Agent-bound keys).
 */
function boundAgentText(route: HttpRoute, write: boolean): string {
  const ref = route.agentId;
  const bound = !ref
    ? 'an agent-bound key (this route acts for the whole organisation, not one agent; nothing is done)'
    : ref.in === 'events'
      ? "an agent-bound key: each event naming another agent in body.agent_id is refused on its own (403 in that event's answer)"
      : `an agent-bound key naming another agent in ${ref.in}.${ref.name}${'each' in ref && ref.each ? `.<i>.${ref.each}` : ''} (the detail names the field and the bound agent; nothing is done)`;
  const usual = route.problems?.[403] ?? (write ? STATUS_TEXT[403] : undefined);
  return usual ? `${usual}; or ${bound}` : `${bound[0].toUpperCase()}${bound.slice(1)}`;
}

/** OpenAPI `paths` of `routes`: one path item per path, one operation per method, in table order. */
function pathsOf(routes: readonly HttpRoute[]): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return paths;
}

/**
 * The first sentence of the document's description: every area of the API, named from {@link HTTP_TAGS} (so an area
 * added there is listed here too), and where the guides are.
 */
const API_AREAS = `The API has ${HTTP_TAGS.length} areas, each a tag below with its operations: ${HTTP_TAGS.map((t) => t.name).join(', ')}. Guides: docs/api.md and the other pages of docs/ in the repository.`;

/**
 * OpenAPI `webhooks`: one POST per event kind the platform sends ({@link WEBHOOK_PAYLOADS}), with its payload and the
 * Standard Webhooks headers (docs/notifications.md).
 */
function webhooksOf(): Json {
  const header = (description: string) => ({ required: true, schema: { type: 'string' }, description });
  return Object.fromEntries(
    Object.entries(WEBHOOK_PAYLOADS).map(([kind, schema]) => [
      kind,
      {
        post: {
          operationId: `webhook_${kind.replace('.', '_')}`,
          summary: (schema.meta() as { description?: string } | undefined)?.description ?? kind,
          description: 'Signed per the Standard Webhooks specification with the subscription\'s secret; any 2xx acknowledges, 410 disables the subscription, anything else (or no answer in 10 s) is retried.',
          parameters: [
            { name: 'webhook-id', in: 'header', ...header('The delivery id: the same on every attempt (deduplicate on it)') },
            { name: 'webhook-timestamp', in: 'header', ...header('Seconds since the epoch when this attempt was signed') },
            { name: 'webhook-signature', in: 'header', ...header('`v1,<base64 HMAC-SHA256>`, space-separated, one per valid secret (two during a rotation overlap)') },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: schemaOf(schema, 'output') } } },
          responses: { '2XX': { description: 'Delivered' }, '410': { description: 'Gone: the subscription is disabled' } },
        },
      },
    ]),
  );
}

/**
 * The OpenAPI 3.1 document, generated from the HTTP route table, the wire table and the zod contracts (never written
 * by hand). Served at `GET /api/v1/openapi.json` with `serverUrl` `/`.
 * @throws Error when the route table names a path parameter, query parameter or problem status it cannot document.
 */
export function buildOpenApiDocument(serverUrl = '/'): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'AGP — Agent Governance Platform API',
      version: '1.0.0',
      license: { ...OPENAPI_LICENSE },
      description:
        API_AREAS +
        ' Every endpoint requires `Authorization: Bearer <key>` (or `X-API-Key`); the scope of a key is read (queries), write (also changes) or admin (also manages API keys: /api/v1/keys), and `GET /api/v1/auth/key` names it. A person signed in through OpenID Connect (`/auth/login`) is authenticated by the `agp_session` cookie instead, and acts with the role of their membership (viewer < approver < policy_admin < admin); each operation  `x-agp-role` is the role it needs (a read key acts as viewer, a write key as policy_admin, an admin key as admin). Errors are RFC 9457 problem details. Limits of every JSON body: at most 5 MiB (413; some routes less, as they say); objects and arrays nested at most ' +
        MAX_JSON_DEPTH +
        ' levels deep (`{}` is one level), counted from the body, from each ingest event, and from the arguments of an MCP tool call or prompt — deeper is 422 naming the limit and the path where it was crossed (for ingest, that event alone, in the 207 answer); no NUL character and no unpaired UTF-16 surrogate in any string or member name (422 naming the field).',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }, { apiKey: [] }, { session: [] }],
    tags: HTTP_TAGS.map((t) => ({ ...t })),
    paths: pathsOf(HTTP_ROUTES),
    webhooks: webhooksOf(),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An AGP API key: `agp_...`' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        session: { type: 'apiKey', in: 'cookie', name: 'agp_session', description: 'The session cookie of a person signed in through OpenID Connect (`GET /auth/login`); a write with it needs an `Origin` header equal to the public URL' },
      },
      schemas: Object.fromEntries(COMPONENTS.map((c) => [c.name, { description: c.description, ...schemaOf(c.schema, c.io) }])),
    },
  };
}
