/**
 * `@agp/sdk/ai`: the Vercel AI SDK (`ai` v7) adapter. `governTools(run, tools)` returns the same tool set with every
 * executable tool's `execute` going through `run.act(toolName, input, execute)`, so `generateText`, `streamText` and
 * `ToolLoopAgent` are governed without changing the agent loop.
 *
 * Why tool outputs and not the approval hooks: v7 decides approvals at the `generateText`/`streamText` level
 * (`toolApproval`; the tool-level `needsApproval` is deprecated) and answers `user-approval` by ending the call with a
 * `tool-approval-request` the application must round-trip. The platform's approvals are decided in its console
 * instead, and `run.act` already waits for them; deciding, executing and recording must also stay one step (the
 * approval covers exactly the arguments that run). So the wrapped `execute` calls `run.act` with `onBlocked: 'return'`,
 * and the tool's `toModelOutput` turns a stopped call into `{type: 'execution-denied', reason}`: the very tool result
 * the framework sends when a human denies a tool approval, i.e. the framework's own refusal, as the model sees it.
 * Source: docs/sdk.md §Vercel AI SDK; spec §Intervention types.
 */
import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import type { BlockedResult } from '../errors.js';
import type { ActOptions, Run } from '../governor.js';
import { isBlockedResult, refusalText, type RefusalFn } from '../refusal.js';

export { refusalText, type RefusalFn };

/** What a tool's `toModelOutput` returns (the `ToolResultOutput` of `@ai-sdk/provider-utils`). */
type ModelOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;

/** Options of {@link governTools}. */
export interface GovernToolsOptions {
  /**
   * Per-call options of `run.act` (estimated cost in USD, intent, idempotency key, approval timeout in ms), fixed or
   * computed from the tool name, its input and the framework's execution options (`toolCallId`, `messages`, …).
   * `onBlocked` is always `'return'` (a stopped call becomes the model's refusal, never an exception).
   */
  actOptions?: Omit<ActOptions, 'onBlocked'> | ((toolName: string, input: Record<string, unknown>, options: ToolExecutionOptions<unknown>) => Omit<ActOptions, 'onBlocked'>);
  /** The refusal text the model gets for a stopped call. @default {@link refusalText} */
  refusal?: RefusalFn;
}

/**
 * Whether a tool result is the output of a call the platform stopped: `{blocked: true, decision}` (the
 * `BlockedResult` of `run.act`). Appears in `result.toolResults` / `steps[].content` as the tool's `output`.
 */
export const isBlockedOutput: (output: unknown) => output is BlockedResult = isBlockedResult;

/** The framework's default model output of a tool result without `toModelOutput` (text for a string, else JSON). */
function defaultModelOutput(output: unknown): ModelOutput {
  if (typeof output === 'string') return { type: 'text', value: output };
  return { type: 'json', value: output === undefined ? null : JSON.parse(JSON.stringify(output) ?? 'null') };
}

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> => typeof v === 'object' && v !== null && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

/**
 * Govern the tools of an AI SDK v7 agent: returns a tool set of the same shape where each tool with an `execute`
 * runs it through `run.act(toolName, input, execute)`.
 * - allow / warn: `execute(input, options)` runs; the ledger entry records input and output.
 * - downgrade: `execute` runs with the decision's modified input.
 * - escalate: the call waits in `run.act` until a human decides in the console (up to `approvalTimeoutMs`); approved
 *   runs, rejected / expired / timed out is a refusal.
 * - block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked (and a rejected approval):
 *   `execute` does not run; the tool's output is `{blocked: true, decision}` (see {@link isBlockedOutput}) and the
 *   model gets `{type: 'execution-denied', reason: refusal(toolName, decision)}`, as after a denied tool approval.
 * - idempotent_replay: the first call's output, not executed again.
 * A tool's own `toModelOutput` still shapes its other results. A streaming `execute` (async iterable) is consumed
 * inside the governed call: its last value is the result, preliminary values are not forwarded. Tools without
 * `execute` (executed by the application or the provider) are returned unchanged. The input must be a JSON object
 * (a `TypeError` from `run.act` otherwise, which the model gets as the tool's error).
 * @param run the run the calls belong to (`gov.startRun()`).
 */
export function governTools<T extends ToolSet>(run: Run, tools: T, options: GovernToolsOptions = {}): T {
  const refusal = options.refusal ?? refusalText;
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    const original = t as Tool;
    if (typeof original.execute !== 'function') {
      out[name] = t;
      continue;
    }
    const execute = original.execute as (input: unknown, options: ToolExecutionOptions<unknown>) => unknown;
    const toModelOutput = original.toModelOutput;
    out[name] = {
      ...original,
      execute: async (input: Record<string, unknown>, execOptions: ToolExecutionOptions<unknown>) => {
        const extra = typeof options.actOptions === 'function' ? options.actOptions(name, input, execOptions) : options.actOptions;
        return run.act(
          name,
          input,
          async (args) => {
            const result = execute(args, execOptions);
            if (!isAsyncIterable(result)) return result;
            let last: unknown;
            for await (const value of result) last = value;
            return last;
          },
          { ...extra, onBlocked: 'return' },
        );
      },
      toModelOutput: async (o: { toolCallId: string; input: unknown; output: unknown }): Promise<ModelOutput> => {
        if (isBlockedOutput(o.output)) return { type: 'execution-denied', reason: refusal(name, o.output.decision) };
        return toModelOutput ? toModelOutput(o as Parameters<NonNullable<Tool['toModelOutput']>>[0]) : defaultModelOutput(o.output);
      },
    };
  }
  return out as T;
}
