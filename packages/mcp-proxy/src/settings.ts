/**
 * How the proxy treats one upstream MCP server: the registration fields of a hosted server (everything but its
 * secret `headers`), which the local proxy takes from its command line. Source: docs/mcp-proxy.md (Settings).
 */
export interface UpstreamSettings {
  /** The server's name (`[a-z0-9][a-z0-9_-]*`, ≤ 64), shown in refusals and errors. */
  name: string;
  /** Prefixed to each tool's name to make the action a policy names, e.g. `github.` → `github.create_issue`. */
  action_prefix: string;
  /** Estimated cost of one call per tool name, USD ≥ 0; a tool not listed costs its call's `_meta['agp/cost_usd']`, else 0. */
  tool_costs_usd: Record<string, number>;
  /** Leave out of `tools/list` the tools a policy denies this agent by name. */
  hide_denied_tools: boolean;
  /** How long one upstream request may take, ms; past it the call ends as a tool error naming the server. */
  timeout_ms: number;
  /** Who answers an escalated call: the platform's approvers (`platform`), or the user in the client through elicitation (`client`). */
  approval: 'platform' | 'client';
}

/** The defaults of {@link UpstreamSettings} besides `name` (docs/mcp-proxy.md). */
export const UPSTREAM_DEFAULTS = { tool_costs_usd: {}, hide_denied_tools: false, timeout_ms: 30_000, approval: 'platform' } as const;

/** The `_meta` key of a call's estimated cost, USD (a client that knows what a call costs may say so). */
export const COST_META_KEY = 'agp/cost_usd';

/** The `_meta` key of a refused call's decision (the same key as `@agp/sdk/mcp`'s). */
export const GOVERNANCE_META_KEY = 'agp/governance';

/**
 * Complete settings from a name and overrides: `action_prefix` defaults to `<name>.`.
 * @throws TypeError naming the bad field (name, timeout_ms, a tool cost, approval).
 */
export function upstreamSettings(name: string, overrides: Partial<Omit<UpstreamSettings, 'name'>> = {}): UpstreamSettings {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)) throw new TypeError(`server name must match [a-z0-9][a-z0-9_-]{0,63}, got ${JSON.stringify(name)}`);
  const s: UpstreamSettings = { name, action_prefix: `${name}.`, ...UPSTREAM_DEFAULTS, ...overrides };
  if (!Number.isInteger(s.timeout_ms) || s.timeout_ms < 1 || s.timeout_ms > 600_000) throw new TypeError(`timeout_ms must be an integer from 1 to 600000 (ms), got ${s.timeout_ms}`);
  for (const [tool, usd] of Object.entries(s.tool_costs_usd)) {
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) throw new TypeError(`tool_costs_usd.${tool} must be a number ≥ 0 (USD), got ${JSON.stringify(usd)}`);
  }
  if (s.approval !== 'platform' && s.approval !== 'client') throw new TypeError(`approval must be 'platform' or 'client', got ${JSON.stringify(s.approval)}`);
  return s;
}
