/**
 * What the framework adapters (`@agp/sdk/<framework>`) give the model when the platform stops a tool call, and how
 * they recognise a stopped call. Source: docs/sdk.md §Framework adapters.
 */
import type { BlockedResult, GovernanceDecision } from './errors.js';

/**
 * The default refusal the model reads for a stopped call, the same for every adapter:
 * `Tool call <name> was not executed: <reason>`, where the platform's reason names the policy, guardrail or approval.
 */
export function refusalText(toolName: string, decision: GovernanceDecision): string {
  return `Tool call ${toolName} was not executed: ${decision.reason}`;
}

/**
 * The `refusal` option of every framework adapter: the text the model reads for a stopped call, from the tool's name
 * and the platform's decision (the default is {@link refusalText}).
 */
export type RefusalFn = (toolName: string, decision: GovernanceDecision) => string;

/** Whether `value` is what `run.act` resolves for a stopped call under `onBlocked: 'return'`: `{blocked: true, decision}`. */
export function isBlockedResult(value: unknown): value is BlockedResult {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as { blocked?: unknown; decision?: { decision?: unknown; reason?: unknown } };
  return o.blocked === true && typeof o.decision === 'object' && o.decision !== null && typeof o.decision.decision === 'string' && typeof o.decision.reason === 'string';
}
