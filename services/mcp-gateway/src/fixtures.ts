/**
 * The MCP conformance suite's fixtures (test-only): the tools, resources and prompts its server scenarios call
 * (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …), served by the MCP endpoint beside the platform's
 * registry when AGP_MCP_CONFORMANCE_FIXTURES=1. Never on in a normal start; the REST facade never lists them.
 * Source: issue #12 (Tests and proof: the official conformance suite).
 */
import type { Prompt, ReadResourceResult, Resource, ResourceTemplateType, Server, Tool } from '@modelcontextprotocol/server';

/** A request handler of the low-level server, as `setRequestHandler` receives it. */
type Handler = (req: any, extra: any) => Promise<any> | any;

/** What the protocol layer asks of the fixtures. */
export interface ConformanceFixtures {
  /** Capabilities to declare beside tools, resources and prompts (e.g. logging, completions). */
  capabilities: Record<string, unknown>;
  tools: Tool[];
  /** The handler of fixture tool `name`, or undefined when it is not a fixture. */
  callTool(name: string): Handler | undefined;
  resources: Resource[];
  resourceTemplates: ResourceTemplateType[];
  /** The `resources/read` result of fixture `uri`, or undefined when it is not a fixture. */
  readResource(uri: string): ReadResourceResult | undefined;
  prompts: Prompt[];
  /** The handler of fixture prompt `name`, or undefined. */
  getPrompt(name: string): Handler | undefined;
  /** Register the other methods the scenarios call (subscribe, logging/setLevel, completion/complete). */
  registerExtra(server: Server): void;
}

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

/** The fixtures. */
export function conformanceFixtures(): ConformanceFixtures {
  const tools: Record<string, { description: string; run: Handler }> = {
    test_simple_text: { description: 'Returns a simple text response', run: () => text('This is a simple text response for testing.') },
  };
  return {
    capabilities: {},
    tools: Object.entries(tools).map(([name, t]) => ({ name, description: t.description, inputSchema: { type: 'object' as const, properties: {} } })),
    callTool: (name) => tools[name]?.run,
    resources: [],
    resourceTemplates: [],
    readResource: () => undefined,
    prompts: [],
    getPrompt: () => undefined,
    registerExtra: () => {},
  };
}
