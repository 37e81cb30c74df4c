/**
 * What the framework adapters of `@agp/sdk` share: the part of a run they use, and how they tell a stopped call from
 * a result. Source: docs/sdk.md §Framework adapters.
 */
import type { ActOptions, Run } from '../run.js';
import type { GovernanceDecision } from '../errors.js';
import { isBlockedResult, refusalText, type RefusalFn } from '../refusal.js';
import { mcpToolPinHash as engineMcpToolPinHash } from '@agp/policy-engine';

export { isBlockedResult, refusalText, type RefusalFn };

/**
 * The hash an MCP tool is pinned by, for the MCP proxy's tool pinning: the policy engine's `mcpToolPinHash` (SHA-256
 * hex of the canonical JSON of `{name, description, inputSchema}`; an absent description counts as '').
 */
export function mcpToolPinHash(tool: { name: string; description?: string | undefined; inputSchema: unknown }): string {
  return engineMcpToolPinHash(tool);
}

/** The part of a {@link Run} the adapters use: `act`. */
export type GovernedRun = Pick<Run, 'act'>;


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

/** How one governed tool call ended (see {@link governedToolCall}). */
export type ToolCallOutcome<T> =
  /** The tool ran (with the decision's arguments); `value` is what it returned, its own error result included. */
  | { kind: 'ran'; value: T }
  /** A policy, kill switch, guardrail or approval stopped it; the tool did not run. */
  | { kind: 'blocked'; decision: GovernanceDecision }
  /** idempotent_replay: the tool did not run; `value` is what the first call recorded. */
  | { kind: 'replayed'; value: unknown }
  /** The action's registered schema rejected the arguments (`error.fields` names them); nothing was decided or run. */
  | { kind: 'invalid'; error: TypeError };

/** Carries a tool's own error result out of `run.act`, so its ledger entry is recorded with status `error`. */
class ToolReturnedError<T> extends Error {
  constructor(
    readonly value: T,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Run one tool call of a framework through `run.act` (`onBlocked: 'return'`) and say how it ended, so each adapter
 * only maps the outcome to its framework's result or refusal.
 * @param exec sends or runs the tool call with the arguments `act` decided (a downgrade's `modified_inputs`).
 * @param opts.failure the error text when the tool's result is its own error (recorded with status `error`), else null.
 * @param opts.recorded what of the result is recorded as the ledger entry's `outputs` (and replayed). @default the result
 * @throws the tool's own exception (recorded with status `error`), and `run.act`'s TypeError for an unregistered action.
 */
export async function governedToolCall<T>(
  run: GovernedRun,
  name: string,
  args: Record<string, unknown>,
  exec: (args: Record<string, unknown>) => Promise<T>,
  opts: { actOptions?: Omit<ActOptions, 'onBlocked'>; failure?: (value: T) => string | null; recorded?: (value: T) => unknown } = {},
): Promise<ToolCallOutcome<T>> {
  const ran: { value?: T; done: boolean } = { done: false };
  try {
    const out = await run.act(
      name,
      args,
      async (effective) => {
        ran.done = true;
        const value = await exec(effective);
        ran.value = value;
        const failed = opts.failure ? opts.failure(value) : null;
        if (failed !== null) throw new ToolReturnedError(value, failed);
        return opts.recorded ? opts.recorded(value) : value;
      },
      { ...opts.actOptions, onBlocked: 'return' },
    );
    // A result the PII guardrail withheld is blocked though the tool ran; one it masked is `out` (the value itself
    // when no `recorded` form stands in for it).
    if (isBlockedResult(out)) return { kind: 'blocked', decision: out.decision };
    if (ran.done) return { kind: 'ran', value: (opts.recorded ? ran.value : out) as T };
    return { kind: 'replayed', value: out };
  } catch (err) {
    if (ran.done && err instanceof ToolReturnedError) return { kind: 'ran', value: err.value as T };
    if (!ran.done && isArgumentsRejected(err)) return { kind: 'invalid', error: err as TypeError };
    throw err;
  }
}
