/**
 * `@agp/mcp-proxy`: the governed MCP proxy (docs/mcp-proxy.md). `createGovernedProxy` builds the MCP server that
 * stands for one upstream; `connectUpstream` reaches the upstream; `runLocalProxy` is the local form behind
 * `agp mcp proxy` (stdio to the agent, governed with `@agp/sdk`).
 */
export { APPROVAL_INPUT, ClientApprovalRounds, createGovernedProxy, PROXY_INFO, type ClientApproval, type GovernedProxyOptions, type ProxyRun } from './proxy.js';
export { heldReason, listAllTools, listedHashes, seenTool, TOOL_LIST_TTL_MS, TOOL_PIN_RULE, ToolPins, type RecordTools, type ToolPinGuard, type ToolPinsOptions } from './pins.js';
export { connectUpstream, UPSTREAM_CAPABILITIES, type UpstreamTarget } from './upstream.js';
export { upstreamSettings, UPSTREAM_DEFAULTS, COST_META_KEY, GOVERNANCE_META_KEY, type UpstreamSettings } from './settings.js';
export { runLocalProxy, type LocalProxyOptions } from './local.js';
export { guardStdin, STDIO_MAX_MESSAGE_BYTES, type StdioGuardOptions } from './stdio-guard.js';
