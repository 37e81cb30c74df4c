/**
 * The tool gateway's records: tool, resource and prompt descriptors, the tool-call envelope, a resource's content, a
 * rendered prompt, and the Model Context Protocol exchange the gateway forwards to the mcp service.
 * Field names follow the spec's REST facade (snake_case: `input_schema`, `mime_type`); the MCP endpoint renders the
 * same records in the protocol's camelCase (`inputSchema`, `mimeType`).
 * Source: spec §Tool, resource and prompt descriptors, §Tool gateway; architecture §4 (Tool call errors, MCP).
 */
import { z } from 'zod';

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
