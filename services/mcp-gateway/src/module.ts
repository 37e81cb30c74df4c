import type { DynamicModule } from '@nestjs/common';
import { serveRpc, type WireHandlers } from '@agp/bus';
import type { Logger } from '@agp/runtime';
import type { McpService } from './service.js';

/**
 * The mcp service's part of the wire table (`Wire` in `@agp/contracts`): the registry's catalog, tool calls,
 * resource reads, prompts, and the MCP endpoint's exchanges. Source: docs/decisions.md (One typed wire registry); docs/mcp.md.
 */
export function mcpHandlers(service: McpService): WireHandlers<'mcp'> {
  return {
    'mcp.catalog': () => service.registry.catalog(),
    'mcp.call-tool': (ctx, { body }) => service.registry.callTool(ctx, body.tool_name, body.arguments),
    'mcp.read-resource': (ctx, { path }) => service.registry.readResource(ctx, path.uri),
    'mcp.get-prompt': (ctx, { path, body }) => service.registry.getPrompt(ctx, path.name, body.arguments),
    'mcp.http': (ctx, exchange) => service.protocol.handle(ctx, exchange),
  };
}

/** The Nest module of the mcp service (NATS or in-process), bound to an already-built service instance. */
export class McpModule {
  /** Serve {@link mcpHandlers} of `service`; `logger` logs the unexpected errors (answered as 500). */
  static register(service: McpService, logger: Logger): DynamicModule {
    return serveRpc('mcp', mcpHandlers(service), logger);
  }
}
