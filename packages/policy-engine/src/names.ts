/**
 * What the policies decide of an action by its name alone, whatever its arguments, run or spend: the deny and allow
 * lists, and approval-required actions. The MCP proxy's `hide_denied_tools` and a tool's standing per agent
 * (`GET /api/v1/mcp/servers/{name}/tools?agent_id=`) both read it. Pure. Source: docs/mcp-proxy.md (Tool standing).
 */
import type { EnginePolicy } from './decide.js';

/** The policy fields a by-name check reads. */
export type NamedPolicy = Pick<EnginePolicy, 'id' | 'name' | 'enabled' | 'created_at' | 'denied_actions' | 'allowed_actions' | 'approval_required_actions'>;

/**
 * An action's standing by name: `denied` (a policy lists it in `denied_actions`, or has an `allowed_actions` list
 * without it: every call is blocked), `escalates` (none denies it and a policy lists it in
 * `approval_required_actions`: every call waits for a human, unless a guardrail blocks it first), else `allowed` (by
 * name: budgets, rate limits, guardrails and kill switches may still stop a call). `policy` is the policy deciding it
 * (the oldest by `created_at`, then `id`, of those that do), null when allowed.
 */
export interface NameStanding {
  decision: 'allowed' | 'denied' | 'escalates';
  policy: { id: string; name: string } | null;
}

const older = (a: NamedPolicy, b: NamedPolicy) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Whether policy `p` (enabled) blocks `action` by its name: listed as denied, or missing from its allow list. */
const deniesByName = (p: NamedPolicy, action: string) => p.enabled && (p.denied_actions.includes(action) || (p.allowed_actions !== null && !p.allowed_actions.includes(action)));

/**
 * Whether a policy of `policies` (those applying to the agent; disabled ones are skipped) stops `action` by its name
 * alone: what the MCP proxy's `hide_denied_tools` leaves out of `tools/list`.
 */
export function deniedByName(policies: readonly NamedPolicy[], action: string): boolean {
  return policies.some((p) => deniesByName(p, action));
}

/**
 * The standing of `action` by name under `policies` (those applying to the agent; disabled ones are skipped), as
 * {@link NameStanding} describes; the same precedence as `decide` (a block beats an escalation).
 */
export function standingByName(policies: readonly NamedPolicy[], action: string): NameStanding {
  const ordered = [...policies].filter((p) => p.enabled).sort(older);
  const denying = ordered.find((p) => deniesByName(p, action));
  if (denying) return { decision: 'denied', policy: { id: denying.id, name: denying.name } };
  const escalating = ordered.find((p) => p.approval_required_actions.includes(action));
  if (escalating) return { decision: 'escalates', policy: { id: escalating.id, name: escalating.name } };
  return { decision: 'allowed', policy: null };
}
