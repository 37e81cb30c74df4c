/**
 * `@agp/sdk/openai-agents`: the OpenAI Agents SDK for JS (`@openai/agents`) adapter. `governTool(run, tool)` and
 * `governAgent(run, agent)` put every function tool call under `run.act`, in the framework's two places for it:
 * - a tool input guardrail (`agp_governance`, after the tool's own) decides. A stopped call is
 *   `ToolGuardrailFunctionOutputFactory.rejectContent(refusal)`: the framework does not run the tool and gives the
 *   model the refusal as the call's output, and `result.toolInputGuardrailResults` holds the decision. An escalated
 *   call waits there for the human;
 * - the tool's `invoke` runs the allowed call (with the downgraded arguments on downgrade) inside the same `run.act`,
 *   so the ledger entry records what ran, its output and duration.
 * The guardrail's `run.act` hands the call over to `invoke` by the call id. A call that reaches `invoke` without the
 * guardrail (a runner that skips tool guardrails, a direct `invoke`) is governed in `invoke` alone, the refusal then
 * being the call's output. `needsApproval` stays the application's own: the platform's approvals are decided in its
 * console, and `run.act` waits for them, so a run is never interrupted for them.
 * Source: docs/sdk.md §OpenAI Agents SDK; spec §Intervention types.
 */
import { defineToolInputGuardrail, ToolGuardrailFunctionOutputFactory, type Agent, type FunctionTool, type ToolInputGuardrailDefinition, type ToolInputParameters } from '@openai/agents';
import type { ActOptions, Run } from '../governor.js';
import { isBlockedResult, refusalText, type RefusalFn } from '../refusal.js';

export { refusalText, type RefusalFn };

/** Options of {@link governTool} and {@link governAgent}. */
export interface GovernToolOptions {
  /**
   * Per-call options of `run.act` (estimated cost in USD, intent, idempotency key, approval timeout in ms), fixed or
   * computed from the tool name and its parsed arguments. `onBlocked` is always `'return'`.
   */
  actOptions?: Omit<ActOptions, 'onBlocked'> | ((toolName: string, args: Record<string, unknown>) => Omit<ActOptions, 'onBlocked'>);
  /** The refusal text the model gets as the output of a stopped call. @default {@link refusalText} */
  refusal?: RefusalFn;
  /**
   * How long an allowed call may wait between the guardrail and the framework running it, in ms. Past it (the run was
   * cancelled in between) the call is recorded as an error and never runs. @default 60000
   */
  handoverTimeoutMs?: number;
}

/** The name of the tool input guardrail the adapter adds (in `result.toolInputGuardrailResults`). */
export const GUARDRAIL_NAME = 'agp_governance';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A call the guardrail decided, waiting for `invoke` (by call id). */
type Handover =
  | { kind: 'execute'; args: Record<string, unknown>; changed: boolean; settle: (r: { ok: true; value: unknown } | { ok: false; error: unknown }) => void; act: Promise<unknown>; timer: ReturnType<typeof setTimeout> | undefined }
  | { kind: 'replay'; value: unknown }
  | { kind: 'error'; error: unknown };

/**
 * Govern one function tool of the Agents SDK: returns a copy whose input guardrails end with {@link GUARDRAIL_NAME}
 * and whose `invoke` runs inside `run.act(tool.name, args, …)`.
 * - allow / warn: the tool runs; the ledger entry records arguments, output and duration.
 * - downgrade: the tool runs with the decision's modified arguments.
 * - escalate: the guardrail waits until a human decides in the console (up to `approvalTimeoutMs`); approved runs,
 *   rejected / expired / timed out is a refusal.
 * - block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked, a rejected approval: the
 *   guardrail answers `rejectContent(refusal(name, decision), {decision})`; the tool does not run and the model
 *   gets the refusal as the call's output.
 * - idempotent_replay: the first call's output, not run again.
 * Arguments that are not a JSON object pass the guardrail untouched; the tool's own parsing refuses them and nothing
 * runs. Other tool kinds (hosted, computer, shell) are not function tools: use {@link governAgent}, which leaves them.
 * @param run the run the calls belong to (`gov.startRun()`).
 */
export function governTool<TContext, TParameters extends ToolInputParameters, TResult>(
  run: Run,
  tool: FunctionTool<TContext, TParameters, TResult>,
  options: GovernToolOptions = {},
): FunctionTool<TContext, TParameters, TResult> {
  const name = tool.name;
  const refusal = options.refusal ?? refusalText;
  const handoverMs = options.handoverTimeoutMs ?? 60_000;
  const actOptions = (args: Record<string, unknown>): ActOptions => ({
    ...(typeof options.actOptions === 'function' ? options.actOptions(name, args) : options.actOptions),
    onBlocked: 'return',
  });
  const original = tool.invoke.bind(tool);
  const handovers = new Map<string, Handover>();

  const guardrail: ToolInputGuardrailDefinition<TContext> = defineToolInputGuardrail<TContext>({
    name: GUARDRAIL_NAME,
    run: async ({ toolCall }) => {
      let args: unknown;
      try {
        args = JSON.parse(toolCall.arguments);
      } catch {
        return ToolGuardrailFunctionOutputFactory.allow();
      }
      if (!isPlainObject(args)) return ToolGuardrailFunctionOutputFactory.allow();
      let started!: (args: Record<string, unknown>) => void;
      const allowed = new Promise<Record<string, unknown>>((resolve) => (started = resolve));
      let settle!: (r: { ok: true; value: unknown } | { ok: false; error: unknown }) => void;
      const ran = new Promise<unknown>((resolve, reject) => (settle = (r) => (r.ok ? resolve(r.value) : reject(r.error))));
      const sent = JSON.stringify(args);
      const act = run.act(
        name,
        args,
        (a) => {
          started(a);
          return ran;
        },
        actOptions(args),
      );
      const first = await Promise.race([
        allowed.then((a) => ({ kind: 'execute' as const, args: a })),
        act.then(
          (value) => ({ kind: 'done' as const, value }),
          (error: unknown) => ({ kind: 'error' as const, error }),
        ),
      ]);
      if (first.kind === 'execute') {
        act.catch(() => undefined);
        const h: Handover = { kind: 'execute', args: first.args, changed: JSON.stringify(first.args) !== sent, settle, act, timer: undefined };
        h.timer = setTimeout(() => {
          if (handovers.get(toolCall.callId) === h) handovers.delete(toolCall.callId);
          settle({ ok: false, error: new Error(`${name}: the agent run did not execute the allowed call within ${handoverMs} ms (cancelled?)`) });
        }, handoverMs);
        h.timer.unref?.();
        handovers.set(toolCall.callId, h);
        return ToolGuardrailFunctionOutputFactory.allow();
      }
      if (first.kind === 'error') {
        handovers.set(toolCall.callId, { kind: 'error', error: first.error });
        return ToolGuardrailFunctionOutputFactory.allow();
      }
      if (isBlockedResult(first.value)) return ToolGuardrailFunctionOutputFactory.rejectContent(refusal(name, first.value.decision), { decision: first.value.decision });
      handovers.set(toolCall.callId, { kind: 'replay', value: first.value });
      return ToolGuardrailFunctionOutputFactory.allow();
    },
  });

  const invoke: FunctionTool<TContext, TParameters, TResult>['invoke'] = async (runContext, input, details) => {
    const callId = details?.toolCall?.callId;
    const h = callId !== undefined ? handovers.get(callId) : undefined;
    if (callId !== undefined) handovers.delete(callId);
    if (!h) {
      // Not decided by the guardrail: govern here, the refusal being the call's output.
      let args: unknown;
      try {
        args = JSON.parse(input);
      } catch {
        return original(runContext, input, details);
      }
      if (!isPlainObject(args)) return original(runContext, input, details);
      const sent = JSON.stringify(args);
      const out = await run.act(name, args, (a) => original(runContext, JSON.stringify(a) === sent ? input : JSON.stringify(a), details), actOptions(args));
      return isBlockedResult(out) ? refusal(name, out.decision) : (out as string | TResult);
    }
    if (h.kind === 'replay') return h.value as string | TResult;
    if (h.kind === 'error') throw h.error;
    clearTimeout(h.timer);
    let value: string | TResult;
    try {
      value = await original(runContext, h.changed ? JSON.stringify(h.args) : input, details);
    } catch (error) {
      h.settle({ ok: false, error });
      await h.act.catch(() => undefined);
      throw error;
    }
    h.settle({ ok: true, value });
    await h.act;
    return value;
  };

  return { ...tool, invoke, inputGuardrails: [...(tool.inputGuardrails ?? []), guardrail] };
}

/**
 * Govern every function tool of an agent: a clone of `agent` (`agent.clone`) whose function tools are
 * {@link governTool}ed; other tools (hosted, computer, shell, MCP servers' tools) and handoffs are left as they are.
 * Run the clone: `await run(governAgent(gRun, agent), input)`.
 */
export function governAgent<A extends Agent<any, any>>(run: Run, agent: A, options: GovernToolOptions = {}): A {
  return agent.clone({ tools: agent.tools.map((t) => (t.type === 'function' ? governTool(run, t, options) : t)) }) as A;
}
