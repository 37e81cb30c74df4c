import 'reflect-metadata';
import { QueueGroups } from '@agp/contracts';
import { runServiceProcess } from '@agp/bus';
import { mcpEnvSchema } from './env.js';
import { McpModule } from './module.js';
import { McpService } from './service.js';

/** Distributed mode: the mcp service (tool gateway registry and MCP protocol) as its own process; ops port 9465. */
await runServiceProcess({
  name: 'mcp',
  queue: QueueGroups.mcp,
  env: mcpEnvSchema,
  build: ({ env, logger, bus }) => {
    const service = new McpService({ bus, logger, conformanceFixtures: env.AGP_MCP_CONFORMANCE_FIXTURES, allowedOrigins: env.AGP_MCP_ALLOWED_ORIGINS, allowedHosts: env.AGP_MCP_ALLOWED_HOSTS });
    return { service, module: McpModule.register(service, logger) };
  },
});
