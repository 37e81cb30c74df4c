/**
 * The mcp service (`services/mcp-gateway`): the tool gateway's registry and the Model Context Protocol endpoint's
 * protocol handling. It owns no tables and keeps no per-request state: every entry asks the owning service over the
 * bus, so any replica answers any request. Source: architecture §1 (services/mcp-gateway); docs/mcp.md.
 */
import type { BusCallerDeps, ServiceDeps } from '@agp/bus';
import { McpProtocol } from './protocol.js';
import { PLATFORM_PROMPTS } from './prompts.js';
import { ToolRegistry, type RegistryEntries } from './registry.js';
import { PLATFORM_RESOURCES, PLATFORM_RESOURCE_TEMPLATES } from './resources.js';
import { PLATFORM_TOOLS } from './tools.js';

/** The platform's registry entries: its tools, resources, templates and prompts. */
export const PLATFORM_ENTRIES: RegistryEntries = { tools: PLATFORM_TOOLS, resources: PLATFORM_RESOURCES, templates: PLATFORM_RESOURCE_TEMPLATES, prompts: PLATFORM_PROMPTS };

/** Dependencies of the mcp service; the same in both run modes. */
export interface McpDeps extends ServiceDeps, BusCallerDeps {
  /**
   * Serve the MCP conformance suite's fixture tools, resources and prompts (`test_simple_text`, `test://static-text`,
   * …) beside the platform's (AGP_MCP_CONFORMANCE_FIXTURES=1). Test-only; never on in a normal start. @default false
   */
  conformanceFixtures?: boolean;
  /** Browser origins allowed to call the MCP endpoint besides localhost-class ones (AGP_MCP_ALLOWED_ORIGINS). */
  allowedOrigins?: readonly string[];
  /** Host names the MCP endpoint answers to (AGP_MCP_ALLOWED_HOSTS); unset = Host is not checked. */
  allowedHosts?: readonly string[];
}

/** The mcp service: {@link ToolRegistry} plus {@link McpProtocol} over it. */
export class McpService {
  readonly registry: ToolRegistry;
  readonly protocol: McpProtocol;

  constructor(deps: McpDeps) {
    this.registry = new ToolRegistry(PLATFORM_ENTRIES, deps.bus, deps.now);
    this.protocol = new McpProtocol(this.registry, deps.logger, { allowedOrigins: deps.allowedOrigins, allowedHosts: deps.allowedHosts, fixtures: deps.conformanceFixtures });
    if (deps.conformanceFixtures) deps.logger.warn('MCP conformance fixtures are ON (AGP_MCP_CONFORMANCE_FIXTURES=1): the MCP endpoint lists test tools beside the platform’s');
  }

  /** Nothing to start: the service holds no subscriptions. */
  async start(): Promise<void> {}

  /** Stop the protocol handler (aborts in-flight MCP exchanges). */
  async stop(): Promise<void> {
    await this.protocol.close();
  }
}
