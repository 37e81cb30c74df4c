/**
 * The mcp service's settings: what its process (distributed mode) validates at start, and the part the embedded
 * platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { serviceProcessEnv } from '@agp/bus';

/** A comma-separated list, trimmed, empty items dropped; unset is the empty list. */
const commaList = z
  .string()
  .default('')
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

/** The mcp service's own settings (both modes). */
export const mcpSettings = {
  /**
   * Test-only: the mcp service also serves the MCP conformance suite's fixture tools, resources and prompts
   * (`test_simple_text`, `test://static-text`, …) beside the platform's. `1` or `true` turns it on. @default off
   */
  AGP_MCP_CONFORMANCE_FIXTURES: z.enum(['0', '1', 'true', 'false']).default('0').transform((v) => v === '1' || v === 'true'),
  /**
   * Origins (comma-separated, e.g. `https://console.example.com`) allowed to call the MCP endpoint from a browser, on
   * top of the gateway's own host; a request with any other `Origin` is refused (DNS rebinding protection). @default none
   */
  AGP_MCP_ALLOWED_ORIGINS: commaList,
  /**
   * Host names (comma-separated, e.g. `agp.example.com`) the MCP endpoint answers to, besides localhost-class ones; a
   * request with another `Host` is refused (DNS rebinding protection). Unset: Host is not checked. @default unset
   */
  AGP_MCP_ALLOWED_HOSTS: commaList,
};

/** The mcp process of distributed mode (ops port 9465). */
export const mcpEnvSchema = z.object({ ...serviceProcessEnv(9465), ...mcpSettings });
