/**
 * The Model Context Protocol over the tool gateway's registry, through the official v2 SDK
 * (`@modelcontextprotocol/server`): revision 2026-07-28 (stateless: `server/discover`, version and capabilities in each
 * request's `_meta`, cacheable list results with `ttlMs`) and the 2025 revisions through the SDK's legacy stateless
 * mode. The gateway forwards each HTTP exchange of `/api/v1/mcp` here as one `mcp.http` message, with the caller's
 * context resolved from the bearer key; a fresh low-level `Server` answers it and nothing outlives the exchange, so any
 * replica answers any request.
 *
 * Mapping: `tools/call` of an unknown tool is JSON-RPC -32602; a tool that fails (bad arguments, forbidden for a read
 * key, not found, conflict, a service down) is a result with `isError: true` whose text names the error code; a
 * successful call carries the data as JSON text and as `structuredContent`. `resources/read` of an unknown URI is the
 * SDK's ResourceNotFoundError; `prompts/get` of an unknown prompt or with a missing required argument is -32602.
 * Source: architecture §4 (MCP); docs/mcp.md (The MCP endpoint).
 */
import type { AuthInfo, McpHttpHandler, McpRequestContext, Server, Tool } from '@modelcontextprotocol/server';
import { MCP_MAX_BODY_BYTES, RequestContextSchema, type McpHttpAnswer, type McpHttpExchange } from '@agp/contracts';
import { AgpError, NotFoundError, ValidationError, type Logger, type RequestContext } from '@agp/runtime';
import type { ToolRegistry } from './registry.js';
import type { ConformanceFixtures } from '../test/conformance-fixtures.js';

/** The SDK module. */
type Sdk = typeof import('@modelcontextprotocol/server');
let sdkModule: Promise<Sdk> | null = null;
/**
 * The SDK, imported on the first MCP request rather than at start: it holds ~27 MB of RSS (measured with
 * `process.memoryUsage()` around the import) that an embedded platform nobody asks over MCP need not pay (docs/performance.md,
 * Embedded memory: idle RSS < 250 MB).
 */
export function loadSdk(): Promise<Sdk> {
  return (sdkModule ??= import('@modelcontextprotocol/server'));
}

/** Entries per page of `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`. */
export const MCP_PAGE_SIZE = 100;
/** How long a client may cache a list result (`ttlMs`, 2026-07-28), in ms. */
export const MCP_LIST_TTL_MS = 60_000;

/** The server's name and version in `server/discover` and `initialize`. */
export const MCP_SERVER_INFO = { name: 'agp', title: 'AGP, the Agent Governance Platform', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'Tools, resources and prompts to govern a fleet of AI agents: read interventions, runs, costs (USD) and the approval inbox; decide approvals, create and change policies, and engage kill switches. Tools marked destructive change state and need a write key. Start with get_dashboard_stats or platform://compliance/summary.';

/** A page of `items` from an opaque cursor (the offset, base64url). @throws ProtocolError -32602 for a bad cursor. */
function page<T>(sdk: Sdk, items: readonly T[], cursor: string | undefined): { slice: T[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    const n = Number(Buffer.from(cursor, 'base64url').toString());
    if (!Number.isInteger(n) || n < 0 || n > items.length || Buffer.from(String(n)).toString('base64url') !== cursor) {
      throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, 'Invalid cursor');
    }
    start = n;
  }
  const end = start + MCP_PAGE_SIZE;
  return { slice: items.slice(start, end), ...(end < items.length ? { nextCursor: Buffer.from(String(end)).toString('base64url') } : {}) };
}

/** The caller's context the gateway resolved, carried in the SDK's `authInfo`. @throws ProtocolError when absent. */
function callerOf(sdk: Sdk, authInfo: AuthInfo | undefined): RequestContext {
  const parsed = RequestContextSchema.safeParse(authInfo?.extra?.agp);
  if (!parsed.success) throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InternalError, 'no caller context');
  return parsed.data;
}

/** A failure of a resource read or a prompt as a JSON-RPC error: 404 → not found, 422 → -32602, else -32603. */
function protocolErrorOf(sdk: Sdk, err: unknown, uri?: string): never {
  const { ProtocolError, ProtocolErrorCode } = sdk;
  if (err instanceof NotFoundError || (err instanceof AgpError && err.status === 404)) {
    if (uri !== undefined) throw new sdk.ResourceNotFoundError(uri, err.message);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
  }
  if (err instanceof ValidationError) {
    // Named as MCP sends them: `arguments.<name>` (the REST facade's 422 says `body.arguments.<name>`).
    const errors = err.errors.map((e) => ({ ...e, path: e.path.replace(/^body\./, '') }));
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message.replace(/\bbody\.arguments\./g, 'arguments.'), { errors });
  }
  if (err instanceof AgpError && err.status < 500) throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
  if (err instanceof AgpError) throw new ProtocolError(ProtocolErrorCode.InternalError, err.message);
  throw err;
}

/** Protocol revisions without JSON-RPC batching (removed in 2025-06-18); 2025-03-26 and older had it. */
const NO_BATCH_BEFORE = '2025-06-18';

/** A JSON-RPC error answer the protocol layer gives itself, before the SDK. */
function refusal(status: number, code: number, message: string): McpHttpAnswer {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }) };
}

/**
 * The answer to a `prompts/get` whose arguments are not all strings: JSON-RPC -32602 (invalid params) naming each bad
 * argument, as MCP defines prompt arguments as strings. The SDK would refuse them while parsing the request and answer
 * -32603 (internal error), which tells a client the server failed rather than its input. Null for anything else.
 */
function promptArgumentsError(body: string): McpHttpAnswer | null {
  if (!body.includes('prompts/get')) return null;
  let msg: unknown;
  try {
    msg = JSON.parse(body);
  } catch {
    return null; // the SDK answers malformed JSON itself (-32700)
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return null;
  const { id, method, params } = msg as { id?: unknown; method?: unknown; params?: { arguments?: unknown } };
  if (method !== 'prompts/get' || typeof params !== 'object' || params === null) return null;
  const args = params.arguments;
  if (args === undefined) return null;
  const bad =
    typeof args !== 'object' || args === null || Array.isArray(args)
      ? ['arguments (an object of strings)']
      : Object.entries(args).filter(([, v]) => typeof v !== 'string').map(([k, v]) => `arguments.${k} (${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v})`);
  if (bad.length === 0) return null;
  const error = { code: -32602, message: `Invalid params: prompt arguments are strings; not a string: ${bad.join(', ')}` };
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error }) };
}

/** Options of {@link McpProtocol}. */
export interface McpProtocolOptions {
  /** Browser origins allowed besides localhost-class ones (AGP_MCP_ALLOWED_ORIGINS): their hostnames. */
  allowedOrigins?: readonly string[];
  /**
   * Host names the endpoint answers to (AGP_MCP_ALLOWED_HOSTS). When set, a request whose `Host` is not one of them
   * (nor localhost-class) is refused with 403; unset, Host is not checked. @default unset
   */
  allowedHosts?: readonly string[];
  /** Serve the conformance suite's fixtures (test-only) beside the registry's entries. @default false */
  fixtures?: boolean;
}

/** The MCP endpoint's protocol handling: one HTTP exchange in, one answer out. */
export class McpProtocol {
  private ready: Promise<{ sdk: Sdk; handler: McpHttpHandler; fixtures: ConformanceFixtures | null }> | null = null;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly logger: Logger,
    private readonly options: McpProtocolOptions = {},
  ) {}

  /** The SDK, its handler and the fixtures, made on the first exchange. */
  private start() {
    return (this.ready ??= Promise.all([loadSdk(), this.options.fixtures ? import('../test/conformance-fixtures.js') : null]).then(([sdk, test]) => ({
      sdk,
      // Test-only code, loaded only when the fixtures are on (the bundler still carries it, for the conformance run).
      fixtures: test ? test.conformanceFixtures(sdk) : null,
      // `auto`: one JSON body, unless a handler sends a notification before its result (only the fixtures' progress
      // tool does), which upgrades the answer to SSE; the gateway forwards the finished body either way.
      handler: sdk.createMcpHandler((c) => this.server(c), {
        legacy: 'stateless',
        responseMode: 'auto',
        maxRequestBodySize: MCP_MAX_BODY_BYTES,
        onerror: (err) => this.logger.debug({ err }, 'mcp request refused or failed'),
      }),
    })));
  }

  /** Hostnames from `list` (origins or bare names), plus the localhost-class ones. */
  private static hostnames(sdk: Sdk, list: readonly string[] | undefined): string[] {
    return [
      ...sdk.localhostAllowedOrigins(),
      ...(list ?? []).map((o) => {
        try {
          return new URL(o).hostname;
        } catch {
          return o;
        }
      }),
    ];
  }

  /**
   * Answer one exchange as the caller `ctx`: Origin validation (403, DNS rebinding), then the SDK's handler.
   * Never throws for bad input: a malformed body, a batch or a wrong `MCP-Protocol-Version` is a JSON-RPC error
   * answer with its 4xx status.
   */
  async handle(ctx: RequestContext, x: McpHttpExchange): Promise<McpHttpAnswer> {
    const { sdk, handler } = await this.start();
    const origin = sdk.validateOriginHeader(x.headers.origin, McpProtocol.hostnames(sdk, this.options.allowedOrigins));
    if (!origin.ok) return refusal(403, -32600, `Origin not allowed: ${origin.message}`);
    if (this.options.allowedHosts?.length) {
      const host = sdk.validateHostHeader(new URL(x.url).host, McpProtocol.hostnames(sdk, this.options.allowedHosts));
      if (!host.ok) return refusal(403, -32600, `Host not allowed: ${host.message}`);
    }
    // The SDK's 2025 (legacy) leg still answers batches; the revisions since 2025-06-18 have none.
    const version = x.headers['mcp-protocol-version'];
    if (x.method === 'POST' && version && version >= NO_BATCH_BEFORE && /^\s*\[/.test(x.body)) {
      return refusal(400, -32600, `JSON-RPC batches are not part of MCP revision ${version}; send one message per request`);
    }
    const badPromptArguments = x.method === 'POST' ? promptArgumentsError(x.body) : null;
    if (badPromptArguments) return badPromptArguments;
    const request = new Request(x.url, { method: x.method, headers: x.headers, body: x.method === 'POST' ? x.body : undefined });
    const authInfo: AuthInfo = { token: 'resolved-by-gateway', clientId: ctx.key_id, scopes: [ctx.scope], extra: { agp: ctx } };
    const response = await handler.fetch(request, { authInfo });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: response.status, headers, body: await response.text() };
  }

  /** Stop the SDK handler (aborts in-flight modern exchanges). */
  async close(): Promise<void> {
    if (this.ready) await (await this.ready).handler.close();
  }

  /** A fresh low-level server for one exchange, answering from the registry (and the fixtures, when on). */
  private server(c: McpRequestContext): Promise<Server> {
    return this.start().then(({ sdk, fixtures }) => this.build(sdk, fixtures, c));
  }

  private build(sdk: Sdk, fixtures: ConformanceFixtures | null, c: McpRequestContext): Server {
    const { ProtocolError, ProtocolErrorCode } = sdk;
    const catalog = this.registry.catalog();
    const listHint = { ttlMs: MCP_LIST_TTL_MS, cacheScope: 'private' as const };
    const server = new sdk.Server(MCP_SERVER_INFO, {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false, ...(fixtures ? { subscribe: true } : {}) }, prompts: { listChanged: false }, ...(fixtures?.capabilities ?? {}) },
      instructions: INSTRUCTIONS,
      cacheHints: { 'tools/list': listHint, 'resources/list': listHint, 'resources/templates/list': listHint, 'prompts/list': listHint, 'server/discover': listHint },
      // Only the fixtures mint a multi-round-trip `requestState` (the platform's entries never return `input_required`),
      // so only they verify one.
      ...(fixtures ? { requestState: fixtures.requestState } : {}),
    });
    server.onerror = (err) => this.logger.debug({ err }, 'mcp server error');
    const ctxOf = () => callerOf(sdk, c.authInfo);

    const tools: Tool[] = [
      ...catalog.tools.map((t): Tool => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.input_schema as Tool['inputSchema'],
        annotations: { title: t.title, readOnlyHint: !t.changes_state, destructiveHint: t.changes_state, idempotentHint: !t.changes_state, openWorldHint: false },
      })),
      ...(fixtures?.tools ?? []),
    ];
    server.setRequestHandler('tools/list', async (req) => {
      const { slice, nextCursor } = page(sdk, tools, req.params?.cursor);
      return { tools: slice, ...(nextCursor ? { nextCursor } : {}) };
    });
    server.setRequestHandler('tools/call', async (req, extra) => {
      const name = req.params.name;
      const fixture = fixtures?.callTool(name);
      if (fixture) return fixture(req, extra);
      if (!catalog.tools.some((t) => t.name === name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const outcome = await this.registry.callTool(ctxOf(), name, (req.params.arguments ?? {}) as Record<string, unknown>);
      if (outcome.success) {
        const data = (outcome.data ?? {}) as Record<string, unknown>;
        return { content: [{ type: 'text' as const, text: JSON.stringify(data) }], structuredContent: data };
      }
      const e = outcome.error!;
      const details = e.details ? `\n${JSON.stringify(e.details)}` : '';
      return { isError: true, content: [{ type: 'text' as const, text: `${e.code}: ${e.message}${details}` }], structuredContent: { error: e } };
    });

    const resources = [...catalog.resources.map((r) => ({ uri: r.uri, name: r.name, description: r.description, mimeType: r.mime_type })), ...(fixtures?.resources ?? [])];
    server.setRequestHandler('resources/list', async (req) => {
      const { slice, nextCursor } = page(sdk, resources, req.params?.cursor);
      return { resources: slice, ...(nextCursor ? { nextCursor } : {}) };
    });
    const templates = [
      ...catalog.resource_templates.map((t) => ({ uriTemplate: t.uri_template, name: t.name, description: t.description, mimeType: t.mime_type })),
      ...(fixtures?.resourceTemplates ?? []),
    ];
    server.setRequestHandler('resources/templates/list', async (req) => {
      const { slice, nextCursor } = page(sdk, templates, req.params?.cursor);
      return { resourceTemplates: slice, ...(nextCursor ? { nextCursor } : {}) };
    });
    server.setRequestHandler('resources/read', async (req) => {
      const uri = req.params.uri;
      const fixture = fixtures?.readResource(uri);
      if (fixture) return fixture;
      try {
        const r = await this.registry.readResource(ctxOf(), uri);
        return { contents: [{ uri: r.uri, mimeType: r.mime_type, text: JSON.stringify(r.data) }] };
      } catch (err) {
        return protocolErrorOf(sdk, err, uri);
      }
    });
    if (fixtures) fixtures.registerExtra(server);

    const prompts = [...catalog.prompts, ...(fixtures?.prompts ?? [])];
    server.setRequestHandler('prompts/list', async (req) => {
      const { slice, nextCursor } = page(sdk, prompts, req.params?.cursor);
      return { prompts: slice, ...(nextCursor ? { nextCursor } : {}) };
    });
    server.setRequestHandler('prompts/get', async (req, extra) => {
      const fixture = fixtures?.getPrompt(req.params.name);
      if (fixture) return fixture(req, extra);
      try {
        const r = await this.registry.getPrompt(ctxOf(), req.params.name, (req.params.arguments ?? {}) as Record<string, unknown>);
        return { description: r.description, messages: r.messages };
      } catch (err) {
        return protocolErrorOf(sdk, err);
      }
    });
    return server;
  }
}
