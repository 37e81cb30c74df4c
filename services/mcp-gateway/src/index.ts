/** `@agp/mcp-gateway`: the tool gateway's registry and the Model Context Protocol endpoint's protocol. Source: architecture §1; docs/mcp.md. */
export * from './registry.js';
export * from './service.js';
export * from './module.js';
export { EXPORT_LEDGER_INLINE_ROWS } from './tools.js';
export * from './env.js';
