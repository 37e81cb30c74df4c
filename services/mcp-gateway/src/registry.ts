/**
 * The tool gateway's registry: the one list of tools, resources, resource templates and prompts that both surfaces
 * serve (the REST facade `/api/v1/mcp/*` and the Model Context Protocol endpoint `/api/v1/mcp`).
 *
 * Each entry has a zod input schema (exported as JSON Schema in `input_schema`) and a handler that asks the owning
 * service through the wire registry (`Wire` in `@agp/contracts`). An entry declares the wire rows it calls; it
 * changes state exactly when one of them is a write row, and the {@link Asker} it is given refuses a write row to a
 * read key, so a read key can never change anything through a tool, whatever the handler does.
 * Source: spec §Tool gateway, §Tool, resource and prompt descriptors; architecture §4 (Tool call errors, MCP).
 */
import { z } from 'zod';
import {
  HTTP_ROUTES,
  Wire,
  type HttpRoute,
  scopeAllows,
  type McpCatalog,
  type McpPromptResult,
  type McpResourceContent,
  type McpToolErrorCode,
  type McpToolOutcome,
  type WireKey,
  type WireReply,
  type WireRequestInput,
} from '@agp/contracts';
import { boundKeyRefusal, boundKeyRouteRefusal } from '@agp/auth';
import { call, RemoteProblemError, type Sender } from '@agp/bus';
import { AgpError, ForbiddenError, NotFoundError, ValidationError, assertJsonInput, fieldErrors, isRawJson, jsonInputErrors, type RequestContext } from '@agp/runtime';

/** The mime type of every platform:// resource. Source: spec §Resources shown. */
export const JSON_MIME = 'application/json';

/**
 * Ask the service that owns `key`, as the caller: the reply data, with a raw JSON page (`{$json}`) parsed.
 * @throws ForbiddenError (403) when `key` is a write row and the caller's key is a read key; nothing is sent.
 * @throws as `call` in `@agp/bus`: ValidationError (422), RemoteProblemError (the service's 404, 409, 422…),
 *   ServiceUnavailableError (503).
 */
export type Asker = <K extends WireKey>(key: K, body: WireRequestInput<K>) => Promise<Exclude<WireReply<K>, { $json: string }>>;

/** What every handler gets: the caller's context, the {@link Asker} bound to it, and the clock. */
export interface EntryContext {
  ctx: RequestContext;
  ask: Asker;
  now: () => Date;
}

/** A tool: its name, label, description, zod input, the wire rows it calls, and its handler. */
export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  /** A short human label (the console's and MCP's `title`). */
  title: string;
  /** What it does, its units (USD, ms) and what it changes, for an LLM to act on. */
  description: string;
  input: S;
  /** Every wire row the handler may call; a write row among them makes the tool one that changes state. */
  calls: readonly WireKey[];
  /** The tool's result (an object) from its parsed arguments. Throws AgpErrors (404, 409, 422) for the envelope. */
  run(e: EntryContext, args: z.output<S>): Promise<Record<string, unknown>>;
}

/** A resource with a fixed URI. */
export interface ResourceDefinition {
  uri: string;
  name: string;
  description: string;
  calls: readonly WireKey[];
  read(e: EntryContext): Promise<unknown>;
}

/** A resource template: an RFC 6570 level-1 URI template (`platform://runs/{run_id}`). */
export interface ResourceTemplateDefinition {
  uriTemplate: string;
  name: string;
  description: string;
  calls: readonly WireKey[];
  /** The resource at `params` (the template's variables, percent-decoded). @throws NotFoundError when it does not exist. */
  read(e: EntryContext, params: Record<string, string>): Promise<unknown>;
}

/** What a prompt renders: the REST facade's `{summary, details}` and the text of the MCP user message. */
export interface RenderedPrompt {
  summary: string;
  details: Record<string, unknown>;
  /** The user message an MCP `prompts/get` returns: the instructions, with the data they rest on. */
  text: string;
}

/**
 * A prompt. Its arguments are the keys of `input` (a zod object); one is required exactly when the schema refuses
 * `undefined`. MCP sends prompt arguments as strings, so numeric arguments coerce.
 */
export interface PromptDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  /** What each argument means, by name. */
  argumentDocs: Readonly<Record<string, string>>;
  calls: readonly WireKey[];
  render(e: EntryContext, args: z.output<S>): Promise<RenderedPrompt>;
}

/** Every entry of a registry. */
export interface RegistryEntries {
  tools: readonly ToolDefinition[];
  resources: readonly ResourceDefinition[];
  templates: readonly ResourceTemplateDefinition[];
  prompts: readonly PromptDefinition[];
}

/** Define a tool, keeping its argument types. */
export const defineTool = <S extends z.ZodObject>(t: ToolDefinition<S>): ToolDefinition => t as unknown as ToolDefinition;
/** Define a prompt, keeping its argument types. */
export const definePrompt = <S extends z.ZodObject>(p: PromptDefinition<S>): PromptDefinition => p as unknown as PromptDefinition;

/** Whether an entry that calls `calls` changes state: one of them is a write row, or an admin row whose route is not a GET. */
export const changesState = (calls: readonly WireKey[]) => calls.some((k) => Wire[k].scope === 'write' || (Wire[k].scope === 'admin' && HTTP_ROUTES.some((r) => r.message === k && r.method !== 'GET')));

/**
 * `schema` as the JSON Schema of its input (what a caller sends), without `$schema`. It always has `type`,
 * `properties` and `required` (`[]` when every argument is optional): spec §Tool, resource and prompt descriptors
 * ("a JSON Schema object with type, properties, required"); zod leaves `required` out when it would be empty.
 */
export function inputJsonSchema(schema: z.ZodObject): { type: 'object'; properties: Record<string, unknown>; required: string[] } {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...json, type: 'object', properties: (json.properties as Record<string, unknown>) ?? {}, required: (json.required as string[] | undefined) ?? [] };
}

/** The error code of a failed call, from what the handler threw (a problem's status). */
function errorCode(status: number): McpToolErrorCode {
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409 || status === 412) return 'conflict';
  if (status === 400 || status === 422) return 'invalid_arguments';
  if (status === 503 || status === 504) return 'unavailable';
  return 'internal';
}

/** The compiled form of a URI template: its regular expression and variable names. */
interface CompiledTemplate {
  def: ResourceTemplateDefinition;
  regex: RegExp;
  names: string[];
}

/** The HTTP rows of each wire message (a message may have several: the organisation's and an agent's kill switch). */
const ROUTES_BY_MESSAGE = new Map<string, HttpRoute[]>();
for (const r of HTTP_ROUTES) ROUTES_BY_MESSAGE.set(r.message, [...(ROUTES_BY_MESSAGE.get(r.message) ?? []), r]);

/**
 * The HTTP row a tool's call of wire message `key` stands for: among the message's rows, the one whose path
 * parameters are exactly those the call gives (`set_kill_switch` with an `agent_id` is the agent's row, without it the
 * organisation's); undefined for a message no route answers.
 */
function routeOfCall(key: string, path: Readonly<Record<string, unknown>> | undefined): HttpRoute | undefined {
  const rows = ROUTES_BY_MESSAGE.get(key) ?? [];
  const given = Object.keys(path ?? {}).sort().join(',');
  return rows.find((r) => [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort().join(',') === given) ?? rows[0];
}

/**
 * The registry both surfaces serve. Built once per process from {@link RegistryEntries}; holds no per-request state.
 * @throws Error at construction when two entries share a name or URI (a programming error).
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly resources = new Map<string, ResourceDefinition>();
  private readonly templates: CompiledTemplate[] = [];
  private readonly prompts = new Map<string, PromptDefinition>();
  private readonly described: McpCatalog;

  constructor(
    entries: RegistryEntries,
    private readonly bus: Sender,
    private readonly now: () => Date = () => new Date(),
  ) {
    const unique = <T>(map: Map<string, T>, key: string, value: T) => {
      if (map.has(key)) throw new Error(`tool gateway registry: ${key} is defined twice`);
      map.set(key, value);
    };
    for (const t of entries.tools) unique(this.tools, t.name, t);
    for (const r of entries.resources) unique(this.resources, r.uri, r);
    for (const p of entries.prompts) unique(this.prompts, p.name, p);
    for (const def of entries.templates) {
      const names: string[] = [];
      const source = def.uriTemplate.split(/(\{[a-z_]+\})/).map((part) => {
        const m = /^\{([a-z_]+)\}$/.exec(part);
        if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(m[1]);
        return '([^/?#]+)';
      });
      this.templates.push({ def, regex: new RegExp(`^${source.join('')}$`), names });
    }
    this.described = {
      tools: entries.tools.map((t) => ({ name: t.name, title: t.title, description: t.description, input_schema: inputJsonSchema(t.input), changes_state: changesState(t.calls) })),
      resources: entries.resources.map((r) => ({ uri: r.uri, name: r.name, description: r.description, mime_type: JSON_MIME })),
      resource_templates: entries.templates.map((t) => ({ uri_template: t.uriTemplate, name: t.name, description: t.description, mime_type: JSON_MIME })),
      prompts: entries.prompts.map((p) => ({
        name: p.name,
        description: p.description,
        arguments: Object.entries(p.input.shape).map(([name, schema]) => ({ name, description: p.argumentDocs[name] ?? '', required: !(schema as z.ZodType).safeParse(undefined).success })),
      })),
    };
  }

  /** Every descriptor, in registry order (`mcp.catalog`). */
  catalog(): McpCatalog {
    return this.described;
  }

  /** The handler context of a caller: an {@link Asker} that refuses write rows to a read key. */
  entryContext(ctx: RequestContext): EntryContext {
    const ask: Asker = async (key, body) => {
      if (!scopeAllows(ctx.scope, Wire[key].scope)) throw new ForbiddenError(Wire[key].scope === 'admin' ? `${key} needs an admin key; this is a ${ctx.scope} key` : `a ${ctx.scope} key cannot change state; use a write key`);
      // An agent-bound key: the same rule as the row's HTTP route (docs/decisions.md, Agent-bound keys).
      if (ctx.agent_id && Wire[key].scope !== 'read') {
        const parts = (body ?? {}) as { path?: Record<string, unknown>; body?: unknown };
        const route = routeOfCall(key, parts.path);
        const refusal = route ? boundKeyRefusal(ctx, route, parts) : boundKeyRouteRefusal(ctx, `the ${key} operation`);
        if (refusal) throw new ForbiddenError(refusal);
      }
      const data = await call(this.bus, key, ctx, body);
      return (isRawJson(data) ? JSON.parse(data.$json) : data) as never;
    };
    return { ctx, ask, now: this.now };
  }

  /**
   * Call tool `name` with `args` as the caller (`mcp.call-tool`). Never throws: every failure is an outcome with
   * `success: false` and an error code (unknown_tool, invalid_arguments with `details.errors: [{path, message,
   * allowed?}]`, forbidden, not_found, conflict, unavailable, internal; see MCP_TOOL_ERROR_STATUS). Arguments holding
   * a NUL or a lone surrogate anywhere, or nested past MAX_JSON_DEPTH (64), are invalid_arguments (`jsonInputErrors`,
   * the edge's check of every JSON body), for both surfaces, before anything is sent.
   */
  async callTool(ctx: RequestContext, name: string, args: Record<string, unknown>): Promise<McpToolOutcome> {
    const fail = (code: McpToolErrorCode, message: string, details?: Record<string, unknown>): McpToolOutcome => ({ success: false, data: null, error: { code, message, ...(details ? { details } : {}) } });
    // Bad arguments, named as the caller sent them (`arguments.<name>`), in the message as in `details.errors`.
    const invalid = (errors: Array<{ path: string; message: string }>) =>
      fail('invalid_arguments', `${errors.length} invalid argument${errors.length === 1 ? '' : 's'}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
    // A field the service refused: its path names the argument it came from (`query.start_date` → `arguments.start_date`).
    const asArguments = <E extends { path: string }>(errors: E[]) => errors.map((e) => ({ ...e, path: e.path.replace(/^(body|query|path)\./, 'arguments.') }));
    const tool = this.tools.get(name);
    if (!tool) return fail('unknown_tool', `no tool named ${JSON.stringify(name)}; GET /api/v1/mcp/tools lists them (${[...this.tools.keys()].join(', ')})`);
    if (changesState(tool.calls) && !scopeAllows(ctx.scope, 'write')) return fail('forbidden', `${name} changes state and needs a write key; this is a ${ctx.scope} key`);
    // The edge's check of every JSON body, here for both surfaces (the MCP endpoint's body bypasses the edge's parser):
    // nesting past MAX_JSON_DEPTH, NUL or a lone surrogate anywhere in the arguments is invalid_arguments, nothing sent.
    const unacceptable = jsonInputErrors(args, 'arguments');
    if (unacceptable.length) return invalid(unacceptable);
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) return invalid(fieldErrors(parsed.error, 'arguments'));
    try {
      return { success: true, data: await tool.run(this.entryContext(ctx), parsed.data), error: null };
    } catch (err) {
      if (err instanceof ValidationError) return invalid(asArguments(err.errors));
      if (err instanceof RemoteProblemError) {
        const errors = err.problem.errors ? asArguments(err.problem.errors) : undefined;
        const code = errorCode(err.status);
        if (code === 'invalid_arguments' && errors?.length) return invalid(errors);
        return fail(code, err.problem.detail, errors ? { errors } : undefined);
      }
      if (err instanceof AgpError) return fail(errorCode(err.status), err.message);
      throw err;
    }
  }

  /**
   * Read resource `uri` (`mcp.read-resource`): a fixed URI, or one a template matches.
   * @throws ValidationError (422, `uri.<variable>`) when a template variable holds a NUL or a lone surrogate.
   * @throws NotFoundError (404) when nothing has that URI or the record it names does not exist (or is another
   *   organisation's); the owning service's problems otherwise.
   */
  async readResource(ctx: RequestContext, uri: string): Promise<McpResourceContent> {
    const e = this.entryContext(ctx);
    const fixed = this.resources.get(uri);
    if (fixed) return { uri, mime_type: JSON_MIME, data: await fixed.read(e) };
    for (const t of this.templates) {
      const m = t.regex.exec(uri);
      if (!m) continue;
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(t.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
      } catch {
        throw new NotFoundError(`no resource ${uri}: a template variable is not valid percent-encoding`);
      }
      assertJsonInput(params, 'uri');
      return { uri, mime_type: JSON_MIME, data: await t.def.read(e, params) };
    }
    throw new NotFoundError(`no resource ${uri}; GET /api/v1/mcp/resources lists the resources and templates`);
  }

  /**
   * Render prompt `name` with `args` (`mcp.get-prompt`).
   * @throws NotFoundError (404) for an unknown prompt; ValidationError (422, `body.arguments.<name>`) for a missing
   *   required or an invalid argument, one holding a NUL or a lone surrogate, or arguments nested past MAX_JSON_DEPTH; the owning services' problems otherwise.
   */
  async getPrompt(ctx: RequestContext, name: string, args: Record<string, unknown>): Promise<McpPromptResult> {
    const p = this.prompts.get(name);
    if (!p) throw new NotFoundError(`no prompt named ${JSON.stringify(name)}; GET /api/v1/mcp/prompts lists them (${[...this.prompts.keys()].join(', ')})`);
    assertJsonInput(args, 'body.arguments');
    const parsed = p.input.safeParse(args);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error, 'body.arguments');
      throw new ValidationError(`${errors.length} invalid argument${errors.length === 1 ? '' : 's'} of prompt ${name}: ${errors.map((x) => `${x.path}: ${x.message}`).join('; ')}`, errors);
    }
    const r = await p.render(this.entryContext(ctx), parsed.data);
    return { prompt: name, description: p.description, data: { summary: r.summary, details: r.details }, messages: [{ role: 'user', content: { type: 'text', text: r.text } }] };
  }
}
