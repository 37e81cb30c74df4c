/**
 * What the framework adapters (`@agp/sdk/<framework>`) give the model when the platform stops a tool call, and how
 * they recognise a stopped call. Source: docs/sdk.md §Framework adapters.
 */
import type { BlockedResult, GovernanceDecision } from './errors.js';

/**
 * The default refusal the model reads: which tool was refused, the decision (e.g. `block`, `budget_exceeded`,
 * `escalate` when a human rejected it) and the platform's reason.
 */
export function refusalText(toolName: string, decision: GovernanceDecision): string {
  return `The governance platform refused the tool call ${toolName} (${decision.decision}): ${decision.reason}. It was not executed.`;
}

/** Whether `value` is what `run.act` resolves for a stopped call under `onBlocked: 'return'`: `{blocked: true, decision}`. */
export function isBlockedResult(value: unknown): value is BlockedResult {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as { blocked?: unknown; decision?: { decision?: unknown; reason?: unknown } };
  return o.blocked === true && typeof o.decision === 'object' && o.decision !== null && typeof o.decision.decision === 'string' && typeof o.decision.reason === 'string';
}
