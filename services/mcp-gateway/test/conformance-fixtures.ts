/**
 * The MCP conformance suite's fixtures (test-only): the tools, resources and prompts its server scenarios call
 * (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …), served by the MCP endpoint beside the platform's
 * registry when AGP_MCP_CONFORMANCE_FIXTURES=1. Never on in a normal start; the REST facade never lists them.
 * `npm run conformance:mcp` (scripts/conformance-mcp.mjs) runs the suite against them; the scenarios each fixture
 * serves are named in `@modelcontextprotocol/conformance` (`conformance list --server`).
 *
 * Covered: the 2026-07-28 scenarios (content types, errors, progress, resources, templates, prompts, completion, the
 * `server-stateless` diagnostics, and the multi-round-trip `input_required` flows with an HMAC-protected
 * `requestState`), the 2025-11-25 ones (logging, subscribe) and the pending `json-schema-2020-12`. The 2025 push-style
 * sampling and elicitation tools answer `isError` at once: they need a server→client request on a session, which a
 * stateless endpoint has none of (test/mcp-conformance/*.yml lists the failures this leaves, with the reasons).
 * Source: docs/mcp.md (The official conformance suite).
 */
import type {
  CallToolRequest,
  CallToolResult,
  ElicitRequestFormParams,
  GetPromptRequest,
  GetPromptResult,
  InputRequest,
  InputRequiredResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  Server,
  ServerContext,
  ServerOptions,
  Tool,
} from '@modelcontextprotocol/server';
import { setTimeout as sleep } from 'node:timers/promises';

/** The SDK module: loaded by the protocol layer on the first MCP request and handed to {@link conformanceFixtures}. */
type Sdk = typeof import('@modelcontextprotocol/server');
/** Set by {@link conformanceFixtures}; the helpers below run only after it. */
let sdk: Sdk;

/** A fixture tool's `tools/call` handler, as `setRequestHandler('tools/call', …)` receives it. */
export type FixtureToolHandler = (req: CallToolRequest, ctx: ServerContext) => Promise<CallToolResult | InputRequiredResult> | CallToolResult | InputRequiredResult;
/** A fixture prompt's `prompts/get` handler. */
export type FixturePromptHandler = (req: GetPromptRequest, ctx: ServerContext) => Promise<GetPromptResult | InputRequiredResult> | GetPromptResult | InputRequiredResult;

/** What the protocol layer asks of the fixtures. */
export interface ConformanceFixtures {
  /** Capabilities to declare beside tools, resources and prompts (e.g. logging, completions). */
  capabilities: Record<string, unknown>;
  tools: Tool[];
  /** The handler of fixture tool `name`, or undefined when it is not a fixture. */
  callTool(name: string): FixtureToolHandler | undefined;
  resources: Resource[];
  resourceTemplates: ResourceTemplateType[];
  /** The `resources/read` result of fixture `uri`, or undefined when it is not a fixture. */
  readResource(uri: string): ReadResourceResult | undefined;
  prompts: Prompt[];
  /** The handler of fixture prompt `name`, or undefined. */
  getPrompt(name: string): FixturePromptHandler | undefined;
  /** Register the other methods the scenarios call (subscribe, unsubscribe, completion/complete). */
  registerExtra(server: Server): void;
  /**
   * The server's multi-round-trip `requestState` hook (`ServerOptions.requestState`): verifies and decodes the HMAC-
   * signed state the `input_required` fixtures mint, so a tampered or expired state is -32602.
   */
  requestState: NonNullable<ServerOptions['requestState']>;
}

/** A 1×1 PNG and a tiny WAV, base64. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

/**
 * HMAC key of the fixtures' `requestState`. A constant, so that every replica of the mcp service verifies the state
 * another minted (the flows are stateless); the fixtures are test-only, so it guards nothing real.
 */
const REQUEST_STATE_KEY = 'agp-mcp-conformance-fixtures-request-state-key';

const NO_ARGS: Tool['inputSchema'] = { type: 'object', properties: {} };
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const failed = (t: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: t }] });
const userText = (t: string) => ({ role: 'user' as const, content: { type: 'text' as const, text: t } });
/** A form-mode elicitation whose `properties` (strings, booleans) are all required. */
const elicit = (message: string, properties: Record<string, { type: 'string' } | { type: 'boolean' }>): InputRequest =>
  sdk.inputRequired.elicit({ message, requestedSchema: { type: 'object', properties, required: Object.keys(properties) } });
/** The accepted content of elicitation `key` in the retried request's input responses, if any. */
const accepted = (ctx: ServerContext, key: string): Record<string, unknown> | undefined => {
  const v = sdk.inputResponse(ctx.mcpReq.inputResponses, key);
  return v.kind === 'elicit' && v.action === 'accept' ? v.content : undefined;
};
/** The client capabilities a 2026-07-28 request declares in its `_meta` envelope. */
const clientCaps = (ctx: ServerContext): Record<string, unknown> =>
  ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[sdk.CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;

/** A 2025-era push-style server→client request; a stateless exchange has no session to carry it. */
async function pushRequest(ctx: ServerContext, what: string, send: () => Promise<string>): Promise<CallToolResult> {
  if (ctx.sessionId === undefined) return failed(`${what} needs a server→client request on a session; this stateless endpoint has none`);
  try {
    return text(await send());
  } catch (err) {
    return failed(`${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A fixture tool of the table in {@link conformanceFixtures}. */
interface FixtureTool {
  description: string;
  inputSchema?: Tool['inputSchema'];
  run: FixtureToolHandler;
}

/**
 * A 2025-era push-style elicitation tool: asks the client `elicitation/create` with `message` (undefined: the tool's
 * required `message` argument) and a form of `properties`, and answers `<prefix>: action=…, content=…`.
 */
function elicitationTool(
  description: string,
  prefix: string,
  message: string | undefined,
  properties: ElicitRequestFormParams['requestedSchema']['properties'],
  required?: string[],
): FixtureTool {
  return {
    description,
    ...(message === undefined ? { inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } } : {}),
    run: (req, ctx) =>
      pushRequest(ctx, 'elicitation', async () => {
        const r = await ctx.mcpReq.elicitInput({
          message: message ?? String(req.params.arguments?.message ?? ''),
          requestedSchema: { type: 'object', properties, ...(required ? { required } : {}) },
        });
        return `${prefix}: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
      }),
  };
}

/** The JSON Schema 2020-12 features the `json-schema-2020-12` scenario looks for, which tools/list must keep verbatim. */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as Tool['inputSchema'];

/** The fixtures. */
export function conformanceFixtures(module: Sdk): ConformanceFixtures {
  sdk = module;
  const codec = sdk.createRequestStateCodec({ key: REQUEST_STATE_KEY, ttlSeconds: 600 });
  const mint = (payload: Record<string, unknown>) => codec.mint(payload);

  const tools: Record<string, FixtureTool> = {
    test_simple_text: { description: 'Returns a simple text response', run: () => text('This is a simple text response for testing.') },
    test_image_content: { description: 'Returns an image', run: () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }) },
    test_audio_content: { description: 'Returns audio', run: () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }) },
    test_embedded_resource: {
      description: 'Returns an embedded resource',
      run: () => ({ content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] }),
    },
    test_multiple_content_types: {
      description: 'Returns text, an image and an embedded resource',
      run: () => ({
        content: [
          { type: 'text', text: 'Multiple content types test:' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
        ],
      }),
    },
    test_error_handling: { description: 'Always fails (isError)', run: () => failed('This tool intentionally returns an error for testing') },
    test_tool_with_progress: {
      description: 'Reports progress 0, 50 and 100 of 100 to the request’s progress token',
      run: async (req, ctx) => {
        const progressToken = req.params._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
          if (progress < 100) await sleep(50);
        }
        return text('Progress tool completed');
      },
    },
    test_tool_with_logging: {
      description: 'Logs three info messages while it runs (2025 revisions)',
      run: async (_req, ctx) => {
        for (const message of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
          await ctx.mcpReq.log('info', message);
          if (!message.endsWith('completed')) await sleep(50);
        }
        return text('Logging tool completed');
      },
    },
    test_sampling: {
      description: 'Asks the client to sample an LLM (2025 revisions; needs a session)',
      inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
      run: (req, ctx) =>
        pushRequest(ctx, 'sampling', async () => {
          const r = await ctx.mcpReq.requestSampling({ messages: [userText(String(req.params.arguments?.prompt ?? ''))], maxTokens: 100 });
          return `LLM response: ${JSON.stringify(r.content)}`;
        }),
    },
    test_elicitation: elicitationTool(
      'Asks the user for a username and an email (2025 revisions; needs a session)',
      'User response',
      undefined,
      { username: { type: 'string', description: 'User’s response' }, email: { type: 'string', description: 'User’s email address' } },
      ['username', 'email'],
    ),
    test_elicitation_sep1034_defaults: elicitationTool(
      'Elicits fields with default values (SEP-1034; 2025 revisions; needs a session)',
      'Elicitation completed',
      'Please review and update the form fields with defaults',
      {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    ),
    test_elicitation_sep1330_enums: elicitationTool(
      'Elicits the five enum schema variants (SEP-1330; 2025 revisions; needs a session)',
      'Elicitation completed',
      'Please select options from the enum fields',
      {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: {
          type: 'array',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    ),
    json_schema_2020_12_tool: { description: 'Tool with JSON Schema 2020-12 features', inputSchema: JSON_SCHEMA_2020_12, run: () => text('ok') },

    // 2026-07-28 diagnostics of the server-stateless scenario.
    test_missing_capability: {
      description: 'Needs the sampling client capability: -32021 (HTTP 400) without it',
      run: (_req, ctx) => {
        if (!clientCaps(ctx).sampling) throw new sdk.MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } });
        return text('Success');
      },
    },
    test_streaming_elicitation: { description: 'Answers on the response stream without server→client requests', run: () => text('Streaming complete') },
    test_logging_tool: { description: 'Logs nothing unless the request sets a log level', run: () => text('Logging evaluated') },

    // 2026-07-28 multi-round-trip requests (SEP-2322): `input_required` in round 1, the result once the input is back.
    test_input_required_result_elicitation: {
      description: 'Asks for the user’s name, then greets them',
      run: (_req, ctx) => {
        const name = accepted(ctx, 'user_name')?.name;
        if (name !== undefined) return text(`Hello, ${String(name)}!`);
        return sdk.inputRequired({ inputRequests: { user_name: elicit('What is your name?', { name: { type: 'string' } }) } });
      },
    },
    test_input_required_result_sampling: {
      description: 'Asks the client to sample an LLM, then returns its answer',
      run: (_req, ctx) => {
        const v = sdk.inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
        if (v.kind === 'sampling') return text(`LLM said: ${JSON.stringify(v.result.content)}`);
        return sdk.inputRequired({
          inputRequests: { capital_question: sdk.inputRequired.createMessage({ messages: [userText('What is the capital of France?')], maxTokens: 100 }) },
        });
      },
    },
    test_input_required_result_list_roots: {
      description: 'Asks the client for its roots, then lists them',
      run: (_req, ctx) => {
        const v = sdk.inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
        if (v.kind === 'roots') return text(`Roots: ${v.roots.map((r) => r.uri).join(', ')}`);
        return sdk.inputRequired({ inputRequests: { client_roots: sdk.inputRequired.listRoots() } });
      },
    },
    test_input_required_result_request_state: {
      description: 'Asks for a confirmation with a signed requestState, then checks both came back',
      run: async (_req, ctx) => {
        const state = ctx.mcpReq.requestState<{ kind?: string }>();
        if (state?.kind === 'request-state' && sdk.inputResponse(ctx.mcpReq.inputResponses, 'confirm').kind === 'elicit') return text('state-ok: request state validated');
        return sdk.inputRequired({ inputRequests: { confirm: elicit('Please confirm', { ok: { type: 'boolean' } }) }, requestState: await mint({ kind: 'request-state' }) });
      },
    },
    test_input_required_result_multiple_inputs: {
      description: 'Asks for an elicitation, a sampling and the roots at once',
      run: async (_req, ctx) => {
        const keys = ['user_name', 'greeting', 'client_roots'];
        if (ctx.mcpReq.requestState() !== undefined && keys.every((k) => sdk.inputResponse(ctx.mcpReq.inputResponses, k).kind !== 'missing')) return text('multiple-inputs-ok');
        return sdk.inputRequired({
          inputRequests: {
            user_name: elicit('What is your name?', { name: { type: 'string' } }),
            greeting: sdk.inputRequired.createMessage({ messages: [userText('Generate a greeting')], maxTokens: 50 }),
            client_roots: sdk.inputRequired.listRoots(),
          },
          requestState: await mint({ kind: 'multiple-inputs' }),
        });
      },
    },
    test_input_required_result_multi_round: {
      description: 'Asks for a name, then a colour, carrying the name in the requestState',
      run: async (_req, ctx) => {
        const state = ctx.mcpReq.requestState<{ round?: number; name?: unknown }>();
        const step2 = accepted(ctx, 'step2');
        if (state?.round === 2 && step2) return text(`multi-round complete: ${String(state.name)} likes ${String(step2.color)}`);
        const step1 = accepted(ctx, 'step1');
        if (state?.round === 1 && step1) {
          return sdk.inputRequired({
            inputRequests: { step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }) },
            requestState: await mint({ round: 2, name: step1.name }),
          });
        }
        return sdk.inputRequired({ inputRequests: { step1: elicit('Step 1: What is your name?', { name: { type: 'string' } }) }, requestState: await mint({ round: 1 }) });
      },
    },
    test_input_required_result_tampered_state: {
      description: 'Mints a signed requestState; a tampered one is refused with -32602',
      run: async (_req, ctx) => {
        if (ctx.mcpReq.requestState() !== undefined) return text('state verified');
        return sdk.inputRequired({ inputRequests: { confirm: elicit('Confirm?', { ok: { type: 'boolean' } }) }, requestState: await mint({ kind: 'tamper-test' }) });
      },
    },
    test_input_required_result_capabilities: {
      description: 'Asks only for the inputs the client declared capabilities for',
      run: async (_req, ctx) => {
        const responses = ctx.mcpReq.inputResponses ?? {};
        if (Object.keys(responses).length > 0) return text(`capabilities-ok: received ${Object.keys(responses).join(',')}`);
        const caps = clientCaps(ctx);
        const inputRequests: Record<string, InputRequest> = {};
        if (caps.elicitation) inputRequests.elicit_input = elicit('Elicitation input', { value: { type: 'string' } });
        if (caps.sampling) inputRequests.sample_input = sdk.inputRequired.createMessage({ messages: [userText('Sample request')], maxTokens: 50 });
        if (Object.keys(inputRequests).length === 0) return text('No supported capabilities declared');
        return sdk.inputRequired({ inputRequests, requestState: await mint({ kind: 'capabilities' }) });
      },
    },
  };

  const resources: Record<string, Resource & ({ text: string } | { blob: string })> = {
    'test://static-text': { uri: 'test://static-text', name: 'static-text', description: 'Static text resource', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    'test://static-binary': { uri: 'test://static-binary', name: 'static-binary', description: 'Static binary resource', mimeType: 'image/png', blob: PNG },
    'test://watched-resource': { uri: 'test://watched-resource', name: 'watched-resource', description: 'Subscribable resource', mimeType: 'text/plain', text: 'Watched resource content' },
  };
  const template = new sdk.UriTemplate('test://template/{id}/data');

  const prompts: Record<string, Prompt & { render: FixturePromptHandler }> = {
    test_simple_prompt: { name: 'test_simple_prompt', description: 'A simple prompt without arguments', arguments: [], render: () => ({ messages: [userText('This is a simple prompt for testing.')] }) },
    test_prompt_with_arguments: {
      name: 'test_prompt_with_arguments',
      description: 'A prompt with two required arguments',
      arguments: [
        { name: 'arg1', description: 'First test argument', required: true },
        { name: 'arg2', description: 'Second test argument', required: true },
      ],
      render: (req) => ({ messages: [userText(`Prompt with arguments: arg1='${req.params.arguments?.arg1}', arg2='${req.params.arguments?.arg2}'`)] }),
    },
    test_prompt_with_embedded_resource: {
      name: 'test_prompt_with_embedded_resource',
      description: 'A prompt that embeds a resource',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
      render: (req) => ({
        messages: [
          { role: 'user', content: { type: 'resource', resource: { uri: String(req.params.arguments?.resourceUri ?? ''), mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
          userText('Please process the embedded resource above.'),
        ],
      }),
    },
    test_prompt_with_image: {
      name: 'test_prompt_with_image',
      description: 'A prompt with an image',
      arguments: [],
      render: () => ({ messages: [{ role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } }, userText('Please analyze the image above.')] }),
    },
    test_input_required_result_prompt: {
      name: 'test_input_required_result_prompt',
      description: 'A prompt that asks the user for context first (input_required)',
      arguments: [],
      render: (_req, ctx) => {
        const context = accepted(ctx, 'user_context')?.context;
        if (context !== undefined) return { messages: [userText(`Context: ${String(context)}`)] };
        return sdk.inputRequired({ inputRequests: { user_context: elicit('What context should the prompt use?', { context: { type: 'string' } }) } });
      },
    },
  };

  return {
    capabilities: { logging: {}, completions: {} },
    tools: Object.entries(tools).map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema ?? NO_ARGS })),
    callTool: (name) => (Object.hasOwn(tools, name) ? tools[name].run : undefined),
    resources: Object.values(resources).map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType })),
    resourceTemplates: [{ uriTemplate: template.toString(), name: 'template', description: 'A resource template with an id', mimeType: 'application/json' }],
    readResource: (uri) => {
      if (Object.hasOwn(resources, uri)) {
        const r = resources[uri];
        return { contents: [{ uri, mimeType: r.mimeType, ...('blob' in r ? { blob: r.blob } : { text: r.text }) }] };
      }
      const id = template.match(uri)?.id;
      if (typeof id !== 'string') return undefined;
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
    },
    prompts: Object.values(prompts).map(({ name, description, arguments: args }) => ({ name, description, arguments: args })),
    getPrompt: (name) => (Object.hasOwn(prompts, name) ? prompts[name].render : undefined),
    registerExtra: (server) => {
      // 2025 revisions only (2026-07-28 replaced them with subscriptions/listen): acknowledged, nothing to watch.
      server.setRequestHandler('resources/subscribe', () => ({}));
      server.setRequestHandler('resources/unsubscribe', () => ({}));
      server.setRequestHandler('completion/complete', () => ({ completion: { values: [], total: 0, hasMore: false } }));
    },
    requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
  };
}

