/**
 * `@agp/sdk/langchain`: a LangChain.js v1 agent middleware (`createMiddleware({ name, wrapToolCall })`) that routes
 * every tool call of a `createAgent` loop through `run.act`, so the platform's policies, kill switches and approvals
 * decide each call before the tool runs, and each executed call is recorded as a ledger entry.
 *
 * - allow / warn: the tool runs (`handler(request)`); its result reaches the model unchanged.
 * - downgrade: the tool runs with the decision's `modified_inputs` (the tool call's `args` replaced).
 * - escalate: the call waits for a human (`run.act` waits up to `approvalTimeoutMs`); approved → the tool runs.
 * - block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked, a rejected, expired or timed-out
 *   approval: the tool does not run; the model receives a `ToolMessage` with `status: 'error'` whose content names
 *   the reason (the same refusal LangChain's human-in-the-loop middleware gives for a rejected call). The decision is
 *   the message's `artifact` (`{ governance: GovernanceDecision }`), which is not sent to the model.
 * - idempotent_replay: the tool does not run; the model receives the first call's result.
 * Arguments the action's registered JSON Schema rejects reach the model as LangChain's own tool-input error
 * (`ToolInvocationError`), so the model can correct them.
 * Needs the `langchain` package (v1) installed beside `@agp/sdk`. Source: docs/sdk.md §LangChain.
 */
import { createMiddleware, ToolInvocationError, ToolMessage, type AgentMiddleware, type ToolCallRequest } from 'langchain';
import type { ActOptions } from '../governor.js';
import { governedToolCall, refusalText, type GovernedRun, type RefusalFn } from './common.js';

export type { GovernedRun, RefusalFn } from './common.js';
export { refusalText } from './common.js';

/** The tool call LangChain asks to run (`request.toolCall`): the tool's name, its arguments and the call id. */
export interface LangChainToolCall {
  name: string;
  args: Record<string, unknown>;
  id?: string;
}

/** Options of {@link governanceMiddleware}. */
export interface GovernanceMiddlewareOptions {
  /** The middleware's name in the agent (LangChain requires distinct names). @default 'AgpGovernance' */
  name?: string;
  /** The action name a tool call is governed as. @default the tool's name */
  actionName?: (toolCall: LangChainToolCall) => string;
  /**
   * Per-call options of `run.act` (`estimatedCostUsd` in USD, `intent`, `idempotencyKey`, `approvalTimeoutMs` in ms),
   * as an object or computed per tool call. `onBlocked` is the adapter's: a stopped call becomes a refusal.
   */
  actOptions?: Omit<ActOptions, 'onBlocked'> | ((toolCall: LangChainToolCall) => Omit<ActOptions, 'onBlocked'>);
  /** The refusal text the model receives for a stopped call. @default `Tool call <name> was not executed: <reason>` */
  refusal?: RefusalFn;
}

/**
 * A LangChain v1 agent middleware that governs every tool call with `run.act`. Pass it to
 * `createAgent({ model, tools, middleware: [governanceMiddleware(run)] })`.
 * @param run the run the calls belong to, or a function giving it per call (e.g. one run per thread from
 *   `request.runtime`).
 * @returns the middleware (its `wrapToolCall` hook). A stopped call resolves to a `ToolMessage` with `status: 'error'`
 *   (see the module's description); the tool's own errors propagate as without the middleware (its ledger entry has
 *   status `error`).
 * @throws from the hook: a `ToolInvocationError` (LangChain's tool-input error, handled by the agent) when the
 *   arguments fail the action's registered schema; the `TypeError` of `run.act` for an unregistered action name.
 */
export function governanceMiddleware(run: GovernedRun | ((request: ToolCallRequest) => GovernedRun), options: GovernanceMiddlewareOptions = {}): AgentMiddleware {
  return createMiddleware({
    name: options.name ?? 'AgpGovernance',
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall as LangChainToolCall;
      const args = call.args ?? {};
      const actionName = options.actionName ? options.actionName(call) : call.name;
      const perCall = typeof options.actOptions === 'function' ? options.actOptions(call) : options.actOptions;
      const target = typeof run === 'function' ? run(request as ToolCallRequest) : run;
      const outcome = await governedToolCall(target, actionName, args, async (effective) => handler({ ...request, toolCall: { ...request.toolCall, args: effective } }), {
        actOptions: perCall,
        failure: (m) => (ToolMessage.isInstance(m) && m.status === 'error' ? contentText(m.content) : null),
        recorded: (m) => (ToolMessage.isInstance(m) ? m.content : m),
      });
      switch (outcome.kind) {
        case 'ran':
          return outcome.value;
        case 'invalid':
          throw new ToolInvocationError(outcome.error, request.toolCall);
        case 'blocked':
          return new ToolMessage({
            content: (options.refusal ?? refusalText)(call.name, outcome.decision),
            name: call.name,
            tool_call_id: call.id ?? '',
            status: 'error',
            artifact: { governance: outcome.decision },
          });
        case 'replayed': {
          // The first call's recorded result: its content, or the Command it returned.
          const v = outcome.value;
          if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Awaited<ReturnType<typeof handler>>;
          return new ToolMessage({ content: v as ToolMessage['content'], name: call.name, tool_call_id: call.id ?? '' });
        }
      }
    },
  }) as unknown as AgentMiddleware;
}

/** A message content (text or content blocks) as text. */
function contentText(content: ToolMessage['content']): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}
