/**
 * What the framework adapters of `@agp/sdk` share: the part of a run they use, and how they tell a stopped call from
 * a result. Source: docs/sdk.md §Framework adapters.
 */
import type { Run } from '../governor.js';
import type { BlockedResult, GovernanceDecision } from '../errors.js';

/** The part of a {@link Run} the adapters use: `act`. */
export type GovernedRun = Pick<Run, 'act'>;

/** Whether `act` resolved to a stopped call (`{blocked: true, decision}` under `onBlocked: 'return'`). */
export function isBlockedResult(v: unknown): v is BlockedResult {
  return typeof v === 'object' && v !== null && (v as BlockedResult).blocked === true && typeof (v as BlockedResult).decision === 'object' && (v as BlockedResult).decision !== null;
}

/** The refusal text a model receives for a stopped call: `Tool call <name> was not executed: <reason>`. */
export function refusalText(decision: GovernanceDecision, toolName: string): string {
  return `Tool call ${toolName} was not executed: ${decision.reason}`;
}

/**
 * Whether `err` is `run.act`'s TypeError for arguments the action's registered JSON Schema rejects (it names the bad
 * fields in `.fields`), not the one for an action name the registered actions do not list (`fields: ['action_name']`).
 * The adapters hand it to the model as the framework's own invalid-arguments error, so the model can correct them.
 */
export function isArgumentsRejected(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false;
  const fields = (err as TypeError & { fields?: unknown }).fields;
  return Array.isArray(fields) && fields.length > 0 && !(fields.length === 1 && fields[0] === 'action_name');
}
