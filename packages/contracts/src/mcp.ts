/**
 * The tool gateway's records: tool, resource and prompt descriptors, the tool-call envelope, a resource's content, a
 * rendered prompt, and the Model Context Protocol exchange the gateway forwards to the mcp service.
 * Field names follow the spec's REST facade (snake_case: `input_schema`, `mime_type`); the MCP endpoint renders the
 * same records in the protocol's camelCase (`inputSchema`, `mimeType`).
 * Source: spec §Tool, resource and prompt descriptors, §Tool gateway; architecture §4 (Tool call errors, MCP).
 */
import { z } from 'zod';
import { OpaqueIdSchema, paginationShape } from './common.js';

/**
 * A JSON Schema object as `input_schema` carries it: `{type: 'object', properties, required, ...}`; `required` lists
 * the required arguments, `[]` when there are none (spec §Tool, resource and prompt descriptors).
 */
export const JsonSchemaObjectSchema = z.looseObject({ type: z.literal('object'), properties: z.record(z.string(), z.unknown()), required: z.array(z.string()) });

/**
 * A tool descriptor (spec: name, description, input_schema). `title` is a short human label and `changes_state`
 * says whether the tool changes anything (a read key gets 403 `forbidden` on those).
 */
export const McpToolDescriptorSchema = z.object({
  name: z.string(),
  title: z.string(),
  description: z.string(),
  input_schema: JsonSchemaObjectSchema,
  changes_state: z.boolean(),
});
export type McpToolDescriptor = z.infer<typeof McpToolDescriptorSchema>;

/** A resource descriptor (spec: uri, name, description, mime_type). */
export const McpResourceDescriptorSchema = z.object({ uri: z.string(), name: z.string(), description: z.string(), mime_type: z.string() });
export type McpResourceDescriptor = z.infer<typeof McpResourceDescriptorSchema>;

/** A resource template: an RFC 6570 level-1 URI template (`platform://runs/{run_id}`) with the same fields. */
export const McpResourceTemplateDescriptorSchema = z.object({ uri_template: z.string(), name: z.string(), description: z.string(), mime_type: z.string() });
export type McpResourceTemplateDescriptor = z.infer<typeof McpResourceTemplateDescriptorSchema>;

/** One argument of a prompt (spec: name, description, required). */
export const McpPromptArgumentSchema = z.object({ name: z.string(), description: z.string(), required: z.boolean() });

/** A prompt descriptor (spec: name, description, arguments). */
export const McpPromptDescriptorSchema = z.object({ name: z.string(), description: z.string(), arguments: z.array(McpPromptArgumentSchema) });
export type McpPromptDescriptor = z.infer<typeof McpPromptDescriptorSchema>;

/** Everything the registry serves, in registry order. */
export const McpCatalogSchema = z.object({
  tools: z.array(McpToolDescriptorSchema),
  resources: z.array(McpResourceDescriptorSchema),
  resource_templates: z.array(McpResourceTemplateDescriptorSchema),
  prompts: z.array(McpPromptDescriptorSchema),
});
export type McpCatalog = z.infer<typeof McpCatalogSchema>;

/** `GET /api/v1/mcp/tools` and `GET /mcp/tools`. */
export const McpToolListSchema = McpCatalogSchema.pick({ tools: true });
/** `GET /api/v1/mcp/resources` and `GET /mcp/resources`: the resources, and the templates beside them. */
export const McpResourceListSchema = McpCatalogSchema.pick({ resources: true, resource_templates: true });
/** `GET /api/v1/mcp/prompts` and `GET /mcp/prompts`. */
export const McpPromptListSchema = McpCatalogSchema.pick({ prompts: true });

/** A tool name as a caller may send it. */
export const McpNameSchema = z.string().min(1).max(256);

/** Body of `POST /api/v1/mcp/call`: `{tool_name, arguments}`; `arguments` defaults to `{}`. Unknown fields are a 422. */
export const McpToolCallSchema = z.strictObject({
  tool_name: McpNameSchema,
  arguments: z.record(z.string(), z.unknown()).default({}),
});
export type McpToolCall = z.infer<typeof McpToolCallSchema>;

/**
 * The error codes of a failed tool call and the HTTP status the REST facade answers with each. Architecture §4 fixes
 * the first five; `conflict` (a decision already taken, a version that moved) and `unavailable` (a service is down)
 * are added so that neither is reported as `internal` (docs/decisions.md (The tool gateway and MCP)).
 */
export const MCP_TOOL_ERROR_STATUS = {
  unknown_tool: 404,
  invalid_arguments: 422,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
  internal: 500,
} as const;
/** One of {@link MCP_TOOL_ERROR_STATUS}'s keys. */
export type McpToolErrorCode = keyof typeof MCP_TOOL_ERROR_STATUS;
export const McpToolErrorCodeSchema = z.enum(Object.keys(MCP_TOOL_ERROR_STATUS) as [McpToolErrorCode, ...McpToolErrorCode[]]);

/** The error of a failed tool call: a code, a message an LLM can act on, and details (`errors: [{path, message}]`). */
export const McpToolErrorSchema = z.object({ code: McpToolErrorCodeSchema, message: z.string(), details: z.record(z.string(), z.unknown()).optional() });
export type McpToolError = z.infer<typeof McpToolErrorSchema>;

/** What a tool call produced, as the mcp service answers it: `{success, data, error}` (data null on failure). */
export const McpToolOutcomeSchema = z.object({ success: z.boolean(), data: z.unknown(), error: McpToolErrorSchema.nullable() });
export type McpToolOutcome = z.infer<typeof McpToolOutcomeSchema>;

/**
 * The envelope of `POST /api/v1/mcp/call`: the outcome plus `metadata.execution_time_ms`, the time the gateway spent
 * on the call in ms. Source: spec §Tool gateway; architecture §4 (Tool call errors).
 */
export const McpToolEnvelopeSchema = McpToolOutcomeSchema.extend({ metadata: z.object({ execution_time_ms: z.number() }) });
export type McpToolEnvelope = z.infer<typeof McpToolEnvelopeSchema>;

/** A resource URI as a caller may send it. */
export const McpResourceUriSchema = z.string().min(1).max(2048);

/** `GET /api/v1/mcp/resources/{uri}`: `{uri, mime_type, data}`. */
export const McpResourceContentSchema = z.object({ uri: z.string(), mime_type: z.string(), data: z.unknown() });
export type McpResourceContent = z.infer<typeof McpResourceContentSchema>;

/** Body of `POST /api/v1/mcp/prompts/{name}`: `{arguments}` (defaults to `{}`). */
export const McpPromptGetSchema = z.strictObject({ arguments: z.record(z.string(), z.unknown()).default({}) });

/** A message of a rendered prompt, as MCP `prompts/get` returns it. */
export const McpPromptMessageSchema = z.object({ role: z.enum(['user', 'assistant']), content: z.object({ type: z.literal('text'), text: z.string() }) });

/**
 * `POST /api/v1/mcp/prompts/{name}`: `{prompt, data: {summary, details}}` as the spec gives it, plus the prompt's
 * `description` and the `messages` an MCP `prompts/get` returns for the same arguments.
 */
export const McpPromptResultSchema = z.object({
  prompt: z.string(),
  description: z.string(),
  data: z.object({ summary: z.string(), details: z.record(z.string(), z.unknown()) }),
  messages: z.array(McpPromptMessageSchema),
});
export type McpPromptResult = z.infer<typeof McpPromptResultSchema>;

/** Largest MCP request body the gateway forwards, in bytes (a bus message holds at most 1 MiB). */
export const MCP_MAX_BODY_BYTES = 900 * 1024;

/**
 * One HTTP exchange of the MCP endpoint (`/api/v1/mcp`, Streamable HTTP) as the gateway forwards it to the mcp
 * service: the method, the headers the protocol reads (lower-case names) and the body as received, unparsed, so a
 * malformed body is answered by the protocol (JSON-RPC -32700), not by the gateway.
 */
export const McpHttpExchangeSchema = z.strictObject({
  method: z.enum(['GET', 'POST', 'DELETE']),
  url: z.string().min(1).max(4096),
  headers: z.record(z.string(), z.string()),
  body: z.string().max(MCP_MAX_BODY_BYTES),
});
export type McpHttpExchange = z.infer<typeof McpHttpExchangeSchema>;

/** The protocol's answer to an {@link McpHttpExchangeSchema}: status, headers and body text (JSON or empty). */
export const McpHttpAnswerSchema = z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: z.string() });
export type McpHttpAnswer = z.infer<typeof McpHttpAnswerSchema>;

/**
 * An upstream MCP server's name within its organisation: the `{name}` of `/api/v1/mcp/servers/{name}` and of the
 * hosted proxy's path. Lower-case letters, digits, `-` and `_`, starting with a letter or digit, at most 64.
 * Source: docs/mcp-proxy.md.
 */
export const McpServerNameSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, { error: 'lower-case letters, digits, - and _, starting with a letter or digit, at most 64 characters' });

/** How a tool call that escalates is approved: `platform` (a human in the console or API) or `client` (the user, asked in the agent's client through elicitation). */
export const McpApprovalModeSchema = z.enum(['platform', 'client']);

/** Shortest and longest `timeout_ms` of an upstream, in ms; the default when a registration leaves it out. */
export const MCP_UPSTREAM_TIMEOUT_MS = { min: 100, max: 600_000, default: 30_000 } as const;

/** An upstream's URL as stored: absolute http(s), at most 2048 characters (whether the platform may call it is the outbound address check's, at registration). */
export const McpUpstreamUrlSchema = z
  .string()
  .max(2048)
  .refine((v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol), { error: 'an absolute http or https URL' });

/**
 * The settings of a registered upstream MCP server: everything of a registration but its `headers` (which are
 * secrets, sealed at rest and never answered). The hosted proxy passes them to the governed proxy as they are.
 * `action_prefix` + a tool's name is the action name decided; `tool_costs_usd` the estimated cost per tool, in USD;
 * `hide_denied_tools` leaves the tools an agent may never call out of `tools/list`; `timeout_ms` bounds each upstream
 * request, in ms. Source: the MCP proxy's registration fields (docs/mcp-proxy.md).
 */
export const McpUpstreamSettingsSchema = z.strictObject({
  name: McpServerNameSchema.describe('The server’s name, unique in the organisation: lower-case letters, digits, - and _, at most 64 characters'),
  url: McpUpstreamUrlSchema.describe('The upstream’s MCP endpoint: an absolute http or https URL, at most 2048 characters, without credentials'),
  action_prefix: z.string().max(256).describe('Prefix of the action name policies decide: action_prefix + the tool’s name (default `<name>.`)'),
  tool_costs_usd: z.record(z.string().min(1).max(256), z.number().finite().min(0)).describe('Estimated cost of one call, in USD, by tool name (full precision, no rounding)'),
  hide_denied_tools: z.boolean().describe('Leave the tools an agent may never call out of `tools/list`'),
  timeout_ms: z.number().int().min(MCP_UPSTREAM_TIMEOUT_MS.min).max(MCP_UPSTREAM_TIMEOUT_MS.max).describe(`Bound of each upstream request, in ms (${MCP_UPSTREAM_TIMEOUT_MS.min} to ${MCP_UPSTREAM_TIMEOUT_MS.max})`),
  approval: McpApprovalModeSchema.describe('Who approves a tool call that escalates: platform (a human in the console or API) or client (the user, through elicitation)'),
});
/** See {@link McpUpstreamSettingsSchema}. */
export type McpUpstreamSettings = z.infer<typeof McpUpstreamSettingsSchema>;

/** Most headers a registration may carry. */
export const MCP_UPSTREAM_MAX_HEADERS = 32;
/** Header names the proxy sets itself toward the upstream; a registration may not set them. Lower case. */
export const MCP_UPSTREAM_RESERVED_HEADERS: readonly string[] = ['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];

/**
 * The `headers` of a registration: header name (an RFC 9110 token, not one of {@link MCP_UPSTREAM_RESERVED_HEADERS})
 * to value (at most 8192 characters, no control character but tab: a CR or LF would split the request). Secrets:
 * write-only, sealed at rest, sent only to the upstream.
 */
export const McpUpstreamHeadersSchema = z
  .record(
    z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, { error: 'a header name: an RFC 9110 token (letters, digits and !#$%&\'*+.^_`|~-)' })
      .refine((n) => !MCP_UPSTREAM_RESERVED_HEADERS.includes(n.toLowerCase()), { error: `set by the proxy itself: not one of ${MCP_UPSTREAM_RESERVED_HEADERS.join(', ')}` }),
    // eslint-disable-next-line no-control-regex
    z.string().max(8192).regex(/^[^\u0000-\u0008\u000a-\u001f\u007f]*$/, { error: 'a header value without control characters (CR, LF, NUL, …)' }),
  )
  .refine((h) => Object.keys(h).length <= MCP_UPSTREAM_MAX_HEADERS, { error: `at most ${MCP_UPSTREAM_MAX_HEADERS} headers` })
  .refine((h) => new Set(Object.keys(h).map((n) => n.toLowerCase())).size === Object.keys(h).length, { error: 'each header name once (names are case-insensitive)' });
/** See {@link McpUpstreamHeadersSchema}. */
export type McpUpstreamHeaders = z.infer<typeof McpUpstreamHeadersSchema>;

/**
 * Body of a registration (`POST /api/v1/mcp/servers`): the settings, each but `name` and `url` optional
 * (`action_prefix` defaults to `<name>.`, `tool_costs_usd` to `{}`, `hide_denied_tools` to false, `timeout_ms` to
 * 30000, `approval` to `platform`), and the write-only `headers`. Unknown fields are a 422.
 */
export const McpServerRegistrationSchema = z.strictObject({
  ...McpUpstreamSettingsSchema.shape,
  action_prefix: McpUpstreamSettingsSchema.shape.action_prefix.optional(),
  tool_costs_usd: McpUpstreamSettingsSchema.shape.tool_costs_usd.default({}),
  hide_denied_tools: z.boolean().default(false),
  timeout_ms: McpUpstreamSettingsSchema.shape.timeout_ms.default(MCP_UPSTREAM_TIMEOUT_MS.default),
  approval: McpApprovalModeSchema.default('platform'),
  headers: McpUpstreamHeadersSchema.default({}).describe('Headers sent to the upstream (e.g. Authorization): write-only, sealed at rest, never answered'),
});
/** See {@link McpServerRegistrationSchema} (defaults applied, `action_prefix` still optional). */
export type McpServerRegistration = z.infer<typeof McpServerRegistrationSchema>;

/**
 * A registered server as the API answers it: its settings, the names of its headers (never their values), when it
 * was registered and last changed (ISO 8601 UTC) and its version (higher after each change;
 * recorded tool lists and accepts count too).
 */
export const McpServerSchema = McpUpstreamSettingsSchema.extend({
  header_names: z.array(z.string()).describe('Names of the headers sent to the upstream; their values are never answered'),
  created_at: z.string().describe('When it was registered, ISO 8601 UTC'),
  updated_at: z.string().describe('When it last changed, ISO 8601 UTC'),
  version: z.number().int().min(1).describe('Version: 1 at registration, higher after each change (it counts the events of the server’s stream, recorded tool lists and accepts included; If-Match on PATCH)'),
});
/** See {@link McpServerSchema}. */
export type McpServer = z.infer<typeof McpServerSchema>;

/** Route parameter `{name}` of a registered server. */
export const McpServerPathSchema = z.strictObject({ name: McpServerNameSchema });

/**
 * Body of `PATCH /api/v1/mcp/servers/{name}`: any non-empty subset of a registration's fields but `name`. `headers`,
 * when given, replaces the whole set (`{}` removes every header). Unknown fields (and `name`) are a 422.
 */
export const McpServerPatchSchema = z
  .strictObject({
    url: McpUpstreamUrlSchema.optional(),
    action_prefix: McpUpstreamSettingsSchema.shape.action_prefix.optional(),
    tool_costs_usd: McpUpstreamSettingsSchema.shape.tool_costs_usd.optional(),
    hide_denied_tools: z.boolean().optional(),
    timeout_ms: McpUpstreamSettingsSchema.shape.timeout_ms.optional(),
    approval: McpApprovalModeSchema.optional(),
    headers: McpUpstreamHeadersSchema.optional().describe('Replaces the whole set of headers ({} removes them); write-only, sealed at rest'),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), { error: 'at least one field to change: url, action_prefix, tool_costs_usd, hide_denied_tools, timeout_ms, approval or headers' });
/** See {@link McpServerPatchSchema}. */
export type McpServerPatch = z.infer<typeof McpServerPatchSchema>;

/** Query of `GET /api/v1/mcp/servers`: `skip` (default 0) and `limit` (1–1000, default 50); servers by name. */
export const ListMcpServersQuerySchema = z.strictObject({ ...paginationShape(50, 1000) });
/** See {@link ListMcpServersQuerySchema}. */
export type ListMcpServersQuery = z.infer<typeof ListMcpServersQuerySchema>;

/** A page of registered servers, by name. */
export const McpServerPageSchema = z.object({
  servers: z.array(McpServerSchema).describe('The servers of the page, by name'),
  total: z.number().int().describe('Servers registered in the organisation'),
  skip: z.number().int().describe('Servers skipped'),
  limit: z.number().int().describe('Page size asked for'),
});
/** See {@link McpServerPageSchema}. */
export type McpServerPage = z.infer<typeof McpServerPageSchema>;

/** Domain events of a registered server's stream `mcp-server-<deterministicId(org, name)>`. */
export const McpServerEvents = { Registered: 'McpServerRegistered', Updated: 'McpServerUpdated', Deleted: 'McpServerDeleted' } as const;

/**
 * Data of McpServerRegistered and McpServerUpdated: the whole settings after the change, the header names and the
 * headers as one value sealed by the platform's SecretBox (`agp1.…`, bound to the organisation and the name; null when
 * there are none), and the time (ISO 8601 UTC). A header value never appears in an event unsealed.
 */
export const McpServerChangedDataSchema = McpUpstreamSettingsSchema.extend({ header_names: z.array(z.string()), sealed_headers: z.string().nullable(), at: z.string() });
/** See {@link McpServerChangedDataSchema}. */
export type McpServerChangedData = z.infer<typeof McpServerChangedDataSchema>;

/** Data of McpServerDeleted: the name and the time (ISO 8601 UTC). */
export const McpServerDeletedDataSchema = z.object({ name: McpServerNameSchema, at: z.string() });
/** See {@link McpServerDeletedDataSchema}. */
export type McpServerDeletedData = z.infer<typeof McpServerDeletedDataSchema>;

/**
 * Reply of `mcp-servers.open` (only the gateway's hosted proxy asks it): a registered server's settings and its
 * headers opened, to send to the upstream, and its tool pins (`{tool, hash, pinned_hash}`, see McpToolPinSchema). Never
 * an HTTP answer.
 */
export const McpServerOpenedSchema = z.object({ settings: McpUpstreamSettingsSchema, headers: z.record(z.string(), z.string()), pins: z.array(z.object({ tool: z.string(), hash: z.string(), pinned_hash: z.string().nullable() })) });
/** See {@link McpServerOpenedSchema}. */
export type McpServerOpened = z.infer<typeof McpServerOpenedSchema>;

// ------------------------------------------------------------------------------------------------- tool pinning

/**
 * A tool's name as an upstream lists it and as `{tool}` of `/api/v1/mcp/servers/{name}/tools/{tool}/accept` names it:
 * 1 to 256 characters (MCP names tools with letters, digits, `_`, `-` and `.`; longer or other names are the upstream's
 * to choose, so the path takes any but a control character).
 */
// eslint-disable-next-line no-control-regex
export const McpToolNameSchema = z.string().min(1).max(256).regex(/^[^\u0000-\u001f\u007f]+$/, { error: 'a tool name: 1 to 256 characters, no control characters' });

/**
 * A tool's standing against its pin: `pinned` (what the upstream lists is what was accepted), `changed` (its
 * description or input schema differs from the accepted one: held), `new` (listed after the first list was pinned and
 * never accepted: held). Source: docs/mcp-proxy.md (Tool pinning).
 */
export const McpToolPinStatusSchema = z.enum(['pinned', 'changed', 'new']);
/** See {@link McpToolPinStatusSchema}. */
export type McpToolPinStatus = z.infer<typeof McpToolPinStatusSchema>;

/** Most tools of one upstream the platform pins (a longer list is refused, and every call of that server held). */
export const MCP_MAX_PINNED_TOOLS = 1000;

/** A tool as the hosted proxy saw the upstream list it: name, description ('' when none) and input schema (MCP's `inputSchema`). */
export const McpSeenToolSchema = z.strictObject({
  name: McpToolNameSchema,
  description: z.string().max(100_000),
  input_schema: z.record(z.string(), z.unknown()),
});
/** See {@link McpSeenToolSchema}. */
export type McpSeenTool = z.infer<typeof McpSeenToolSchema>;

/**
 * Body of `POST /api/v1/mcp/servers/{name}/tools` (`mcp-servers.tools-seen`; the hosted proxy and `agp mcp proxy`
 * send it): the whole tool list the server's upstream answered `tools/list` with (every page), at most
 * {@link MCP_MAX_PINNED_TOOLS}. Unknown fields are a 422.
 */
export const McpToolsSeenSchema = z.strictObject({ tools: z.array(McpSeenToolSchema).max(MCP_MAX_PINNED_TOOLS).describe(`The upstream’s whole tool list: {name, description, input_schema} each, at most ${MCP_MAX_PINNED_TOOLS}`) });
/** See {@link McpToolsSeenSchema}. */
export type McpToolsSeen = z.infer<typeof McpToolsSeenSchema>;

/**
 * A tool's standing for one agent (`GET /api/v1/mcp/servers/{name}/tools?agent_id=`): `action` is the action name
 * its calls are governed as (the server's `action_prefix` + the tool's name); `decision` what the policies applying to
 * the agent decide of it by name alone (`allowed`, `denied`: every call blocked and, with `hide_denied_tools`, left
 * out of the agent's tool list; `escalates`: every call waits for a human), with the deciding `policy` (the oldest
 * that does; null when allowed); `held` whether its pin holds its calls (status changed or new, or no longer listed). By name
 * only: budgets, rate limits, guardrails and kill switches are decided per call. Source: docs/mcp-proxy.md (Tool standing).
 */
export const McpToolStandingSchema = z.object({
  agent_id: z.string().describe('The agent asked about'),
  action: z.string().describe('The action name its calls are governed as: the server’s action_prefix + the tool’s name'),
  decision: z.enum(['allowed', 'denied', 'escalates']).describe('By name alone: allowed; denied (every call blocked, hidden with hide_denied_tools); escalates (every call waits for approval)'),
  policy: z.object({ id: z.string(), name: z.string() }).nullable().describe('The policy that denies or escalates it (the oldest that does); null when allowed'),
  held: z.boolean().describe('Whether its pin holds its calls: status changed or new (until accepted), or no longer listed by the upstream'),
});
/** See {@link McpToolStandingSchema}. */
export type McpToolStanding = z.infer<typeof McpToolStandingSchema>;

/** Query of `GET /api/v1/mcp/servers/{name}/tools`: optionally `agent_id`, to answer each tool's standing for that agent. */
export const McpToolsQuerySchema = z.strictObject({
  agent_id: OpaqueIdSchema.optional().describe('An agent id (1–256 characters): each tool then carries its `standing` for that agent (registered or not)'),
});
/** See {@link McpToolsQuerySchema}. */
export type McpToolsQuery = z.infer<typeof McpToolsQuerySchema>;

/**
 * One pinned tool of a registered server. `hash` is the SHA-256 (hex) of the canonical JSON of
 * `{name, description, inputSchema}` as the upstream last listed the tool, `pinned_hash` the one accepted (null for a
 * tool never accepted); `description` and `input_schema` are as last listed, `pinned_description` and
 * `pinned_input_schema` as accepted (null when never). `listed`: whether the upstream's last list had it. Times are
 * ISO 8601 UTC.
 */
export const McpToolPinSchema = z.object({
  tool: z.string().describe('The tool’s name'),
  status: McpToolPinStatusSchema.describe('pinned: as accepted; changed: description or input schema differ from the accepted ones (calls held); new: never accepted (calls held)'),
  hash: z.string().describe('SHA-256 (hex) of the canonical JSON of {name, description, inputSchema} as last listed'),
  pinned_hash: z.string().nullable().describe('The accepted hash; null for a tool never accepted'),
  description: z.string().describe('The description as last listed'),
  input_schema: z.record(z.string(), z.unknown()).describe('The input schema as last listed'),
  pinned_description: z.string().nullable().describe('The accepted description; null when never accepted'),
  pinned_input_schema: z.record(z.string(), z.unknown()).nullable().describe('The accepted input schema; null when never accepted'),
  listed: z.boolean().describe('Whether the upstream’s last tool list had the tool'),
  seen_at: z.string().describe('When the upstream last listed it this way, ISO 8601 UTC'),
  accepted_at: z.string().nullable().describe('When its pin was taken or last accepted, ISO 8601 UTC; null when never'),
  standing: McpToolStandingSchema.optional().describe('Only with `agent_id`: the tool’s standing for that agent'),
});
/** See {@link McpToolPinSchema}. */
export type McpToolPin = z.infer<typeof McpToolPinSchema>;

/** `GET /api/v1/mcp/servers/{name}/tools`: the server's pinned tools by name, how many await acceptance, when the list was last seen. */
export const McpToolPinListSchema = z.object({
  server: McpServerNameSchema.describe('The server’s name'),
  tools: z.array(McpToolPinSchema).describe('Its tools by name, listed or not'),
  awaiting_acceptance: z.number().int().describe('Listed tools whose status is changed or new (their calls are held)'),
  seen_at: z.string().nullable().describe('When the platform last read the upstream’s tool list, ISO 8601 UTC; null before the first time'),
});
/** See {@link McpToolPinListSchema}. */
export type McpToolPinList = z.infer<typeof McpToolPinListSchema>;

/** Route parameters of `POST /api/v1/mcp/servers/{name}/tools/{tool}/accept`. */
export const McpToolPathSchema = z.strictObject({ name: McpServerNameSchema, tool: McpToolNameSchema });

/**
 * Body of `POST /api/v1/mcp/servers/{name}/tools/{tool}/accept`: optionally the `hash` the reviewer saw (`hash` of the
 * listing); when the tool has changed again since, the accept is a 409. Unknown fields are a 422.
 */
export const McpToolAcceptSchema = z.strictObject({ hash: z.string().regex(/^[0-9a-f]{64}$/, { error: 'a SHA-256 hash, 64 lower-case hex digits' }).optional().describe('The hash reviewed; accepted only while the tool is still listed with it') });
/** See {@link McpToolAcceptSchema}. */
export type McpToolAccept = z.infer<typeof McpToolAcceptSchema>;

/** A pin as the hosted proxy needs it: the tool, the hash last listed and the accepted one. */
export const McpToolPinStateSchema = z.object({ tool: z.string(), hash: z.string(), pinned_hash: z.string().nullable() });
/** See {@link McpToolPinStateSchema}. */
export type McpToolPinState = z.infer<typeof McpToolPinStateSchema>;

/** Reply of `POST /api/v1/mcp/servers/{name}/tools`: the pins of the tools listed, after the list was recorded. */
export const McpToolPinStatesSchema = z.object({ pins: z.array(McpToolPinStateSchema).describe('{tool, hash, pinned_hash} of each listed tool; a tool is held unless its hash is its pinned_hash') });

/**
 * Events of tool pinning, in the server's stream (read by folding the stream; McpServerToolAccepted is also an entry
 * of the audit log, `mcp_tool.accepted`).
 */
export const McpServerPinEvents = { ToolsSeen: 'McpServerToolsSeen', ToolAccepted: 'McpServerToolAccepted' } as const;

/** Data of McpServerToolsSeen: the server's name, the whole list with each tool's hash, the time (ISO 8601 UTC). */
export const McpServerToolsSeenDataSchema = z.object({ name: McpServerNameSchema, tools: z.array(McpSeenToolSchema.extend({ hash: z.string() })), at: z.string() });
/** See {@link McpServerToolsSeenDataSchema}. */
export type McpServerToolsSeenData = z.infer<typeof McpServerToolsSeenDataSchema>;

/** Data of McpServerToolAccepted: the server's name, the tool, the hash accepted, the time (ISO 8601 UTC). */
export const McpServerToolAcceptedDataSchema = z.object({ name: McpServerNameSchema, tool: z.string(), hash: z.string(), at: z.string() });
/** See {@link McpServerToolAcceptedDataSchema}. */
export type McpServerToolAcceptedData = z.infer<typeof McpServerToolAcceptedDataSchema>;
