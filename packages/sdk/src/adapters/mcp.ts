/**
 * `@agp/sdk/mcp`: every `tools/call` of an official `@modelcontextprotocol/sdk` `Client` governed by `run.act`, so the
 * platform's policies, kill switches and approvals decide each call before it is sent to the server, and each executed
 * call is recorded as a ledger entry.
 *
 * `governMcpClient(run, client)` wraps the client's `request`, through which `callTool`, a raw
 * `request({ method: 'tools/call' }, …)` and the experimental task stream all send `tools/call`; other requests pass
 * untouched.
 * - allow / warn: the call is sent; its `CallToolResult` is returned unchanged and recorded as the ledger entry's
 *   outputs (status `error` when the server answered `isError: true`).
 * - downgrade: the call is sent with the decision's `modified_inputs` as its `arguments`.
 * - escalate: the call waits for a human before it is sent (`approvalTimeoutMs`); approved → sent.
 * - block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked, a rejected, expired or timed-out
 *   approval: nothing is sent; the call resolves to a `CallToolResult` with `isError: true` whose text content names the
 *   reason (MCP's tool error, the result a model reads as a failed call), and `_meta['agp/governance']` holds the
 *   decision. A task-augmented call (`options.task`) cannot carry a result, so it rejects with an `McpError`
 *   (InvalidRequest, `data.governance` the decision), which the task stream yields as its `error` message.
 * - idempotent_replay: nothing is sent; the first call's result is returned.
 * Arguments the action's registered JSON Schema rejects resolve to an `isError` result naming the fields, as an MCP
 * server answers arguments its input schema rejects. Needs `@modelcontextprotocol/sdk` (v1) beside `@agp/sdk`.
 * Source: docs/sdk.md §MCP client.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ActOptions } from '../governor.js';
import { governedToolCall, refusalText, type GovernedRun, type RefusalFn } from './common.js';

export type { GovernedRun, RefusalFn } from './common.js';
export { refusalText } from './common.js';

/** Options of {@link governMcpClient}. */
export interface GovernMcpClientOptions {
  /** The action name a tool call is governed as, e.g. `github.${tool}`. @default the tool's name */
  actionName?: (tool: string, args: Record<string, unknown>) => string;
  /**
   * Per-call options of `run.act` (`estimatedCostUsd` in USD, `intent`, `idempotencyKey`, `approvalTimeoutMs` in ms),
   * as an object or computed per call. `onBlocked` is the adapter's: a stopped call becomes an `isError` result.
   */
  actOptions?: Omit<ActOptions, 'onBlocked'> | ((tool: string, args: Record<string, unknown>) => Omit<ActOptions, 'onBlocked'>);
  /** The text of a stopped call's result. @default `Tool call <name> was not executed: <reason>` */
  refusal?: RefusalFn;
}

/** The `_meta` key of a refusal's decision. */
export const GOVERNANCE_META_KEY = 'agp/governance';

/** What a governed client keeps: the run, the options and the client's own `request`. */
interface Governed {
  run: GovernedRun | (() => GovernedRun);
  options: GovernMcpClientOptions;
  send: Client['request'];
}

const GOVERNED = Symbol.for('@agp/sdk/mcp.governed');

/**
 * Govern every `tools/call` the MCP `client` sends with `run.act` (see the module's description). The client is
 * changed in place (its `request` is wrapped) and returned, so `callTool` and every other caller are covered. Calling
 * it again on a governed client replaces the run and the options (e.g. for the next run of a long-lived client).
 * @param run the run the calls belong to, or a function giving it per call.
 * @returns `client`.
 * @throws from a call: the `TypeError` of `run.act` for an unregistered action name; what the server or the transport
 *   throws, as without the adapter (the ledger entry then has status `error`).
 */
export function governMcpClient<C extends Client>(run: GovernedRun | (() => GovernedRun), client: C, options: GovernMcpClientOptions = {}): C {
  const held = client as C & { [GOVERNED]?: Governed };
  const existing = held[GOVERNED];
  if (existing) {
    existing.run = run;
    existing.options = options;
    return client;
  }
  const state: Governed = { run, options, send: client.request.bind(client) as Client['request'] };
  Object.defineProperty(held, GOVERNED, { value: state });
  const governed = (request: Parameters<Client['request']>[0], resultSchema: Parameters<Client['request']>[1], reqOptions?: Parameters<Client['request']>[2]) =>
    request.method === 'tools/call' ? governedCall(state, request as CallToolRequest, resultSchema, reqOptions) : state.send(request, resultSchema, reqOptions);
  held.request = governed as Client['request'];
  return client;
}

/** One `tools/call`, decided by `run.act`. */
async function governedCall(
  state: Governed,
  request: CallToolRequest,
  resultSchema: Parameters<Client['request']>[1],
  reqOptions: Parameters<Client['request']>[2],
): Promise<unknown> {
  const params = request.params;
  const tool = params.name;
  const args = (params.arguments ?? {}) as Record<string, unknown>;
  const { actionName, actOptions, refusal } = state.options;
  const name = actionName ? actionName(tool, args) : tool;
  const perCall = typeof actOptions === 'function' ? actOptions(tool, args) : actOptions;
  const target = typeof state.run === 'function' ? state.run() : state.run;
  const outcome = await governedToolCall(target, name, args, async (effective) => (await state.send({ ...request, params: { ...params, arguments: effective } }, resultSchema, reqOptions)) as unknown, {
    actOptions: perCall,
    failure: (r) => (isToolError(r) ? r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n') || 'the tool returned isError' : null),
  });
  switch (outcome.kind) {
    case 'ran':
    case 'replayed':
      return outcome.value;
    case 'invalid':
      return toolError(outcome.error.message);
    case 'blocked': {
      const text = (refusal ?? refusalText)(tool, outcome.decision);
      if (reqOptions?.task) throw new McpError(ErrorCode.InvalidRequest, text, { governance: outcome.decision });
      return { ...toolError(text), _meta: { [GOVERNANCE_META_KEY]: outcome.decision } };
    }
  }
}

/** A `CallToolResult` with `isError: true` and `text` as its content. */
function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Whether a tool call answered with its own error (`isError: true`). */
function isToolError(v: unknown): v is CallToolResult {
  return typeof v === 'object' && v !== null && (v as CallToolResult).isError === true && Array.isArray((v as CallToolResult).content);
}
