/**
 * The governed MCP proxy: an MCP server to the agent and an MCP client to one upstream server, each side negotiating
 * its own protocol revision through the official SDK (`@modelcontextprotocol/server` and `/client`, 2.x: revision
 * 2026-07-28 and the 2025 revisions). Every `tools/call` is decided by `run.act` of `@agp/sdk` (the same `decide()` and
 * policies as any governed agent); everything else is forwarded.
 *
 * - allow / warn: forwarded; the upstream's result comes back unchanged and is recorded as a ledger entry (status
 *   `error` when the result is `isError: true`).
 * - downgrade: forwarded with the decision's modified arguments.
 * - escalate: the call waits for the approval; while it waits the agent gets `notifications/progress` (when its call
 *   carried a progress token) so its client does not time out; approved → forwarded; rejected or expired → refused.
 *   With `approval: 'client'` the user is asked in the client: pushed on a 2025 exchange, and on a 2026-07-28 one the
 *   call is answered `input_required` (the form) and the client's retry carries the answer ({@link ClientApprovalRounds}).
 * - block, rate_limited, budget_exceeded, pii_blocked, content_blocked, loop_detected, a kill switch: not forwarded;
 *   the agent gets MCP's tool error (`isError: true`, the refusal naming the policy, the decision in
 *   `_meta['agp/governance']`), which a model reads as a failed call, not a JSON-RPC error.
 * - idempotent_replay: not forwarded; the first call's result.
 * - an upstream that fails, answers garbage or takes longer than `timeout_ms`: a tool error naming the server.
 * - a tool held by tool pinning (its description or input schema changed since it was accepted, or it is new): not
 *   forwarded nor decided; a tool error naming the pending change, recorded as an intervention (see ./pins.ts).
 * Forwarded as they are: tools/list (less held tools and the tools a policy denies by name, with `hide_denied_tools`), resources
 * (list, templates, read, subscribe), prompts, completion, logging/setLevel; the upstream's list_changed, resource
 * updated and log notifications; the upstream's sampling and elicitation requests, when the agent's client supports
 * them. Source: docs/mcp-proxy.md.
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  Server,
  createRequestStateCodec,
  inputRequired,
  type CallToolResult,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type RequestStateCodec,
  type ServerCapabilities,
} from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, type Client } from '@modelcontextprotocol/client';
import { governedToolCall, refusalText, type GovernedRun } from '@agp/sdk/common';
import type { GovernanceDecision, Run } from '@agp/sdk';
import type { ApprovalDecision, ApprovalDecisionKind } from '@agp/contracts';
import { COST_META_KEY, GOVERNANCE_META_KEY, type UpstreamSettings } from './settings.js';
import { TOOL_PIN_RULE, type ToolPinGuard } from './pins.js';

/** The proxy's own name and version in `initialize` / `server/discover` (the upstream's name is in `instructions`). */
export const PROXY_INFO = { name: 'agp-mcp-proxy', version: '0.1.0' } as const;

/**
 * The protocol revisions the proxy speaks on each side: 2026-07-28 (selected through `server/discover`) and the SDK's
 * 2025 revisions (the `initialize` handshake). The SDK offers 2026-07-28 only when it is listed.
 */
export const PROXY_PROTOCOL_VERSIONS: string[] = ['2026-07-28', ...SUPPORTED_PROTOCOL_VERSIONS];

/** What {@link createGovernedProxy} is built with. */
export interface GovernedProxyOptions {
  /** The upstream server, connected. */
  upstream: Client;
  /** How the upstream is governed. */
  settings: UpstreamSettings;
  /**
   * The run this session's calls belong to, given on the first `tools/call` (an MCP session is a run). It may create
   * the governor then, e.g. to name the agent after the client (`clientInfo.name`, passed here).
   */
  run: (client: { name?: string }) => ProxyRun | Promise<ProxyRun>;
  /** Whether a policy denies this agent the action by name (for `hide_denied_tools`); absent: nothing is hidden. */
  deniedByName?: (action: string) => boolean;
  /** How often a waiting call (an approval) sends `notifications/progress`, ms. @default 5000 */
  progressIntervalMs?: number;
  /** Where the proxy's own failures go (a notification that could not be relayed); never stdout. */
  onError?: (message: string) => void;
  /**
   * With `approval: 'client'`: how an approval the agent's user answered in the client is decided on the platform
   * (`POST /api/v1/approvals/{id}/approve` or `/reject`), and the approver's e-mail (absent: the form asks for it).
   * On a 2026-07-28 exchange the call is answered `input_required` (the form) and the client's retry carries the answer
   * (see {@link ClientApprovalRounds}). Absent, or a client without form elicitation: approvals are decided on the platform.
   */
  clientApproval?: ClientApproval;
  /**
   * Relay the upstream's notifications (list changed, resource updated, log messages) and its sampling and elicitation
   * requests to this proxy's agent, by setting the upstream client's handlers (a request the agent's client declares no
   * capability for is answered -32601). The hosted proxy's stateless serving shares one upstream client among many
   * agents' requests and sets `false` (its upstream refuses those requests itself); its sessions hold their own
   * upstream client and relay. @default true
   */
  relayUpstream?: boolean;
  /**
   * Tool pinning: each whole tool list read from the upstream is reported to it, a tool it holds is left out of
   * `tools/list`, and a call of one is refused (a tool error naming the pending change, the decision in `_meta`) and
   * recorded as an intervention (`run.refuse`), before any policy decides. Absent: nothing is pinned.
   */
  pins?: ToolPinGuard;
}

/** What the proxy uses of a run: `act` for every call, `refuse` for a call tool pinning holds. */
export type ProxyRun = GovernedRun & Pick<Run, 'refuse'>;

/** How the proxy decides an approval answered in the client (see {@link GovernedProxyOptions.clientApproval}). */
export interface ClientApproval {
  /** Decide approval `approvalId` (`approve` or `reject`) as `body.approver_email`, with `body.notes`. */
  decide(approvalId: string, verdict: ApprovalDecisionKind, body: ApprovalDecision): Promise<unknown>;
  /** Who approves in the client (an e-mail address); absent: asked in the form. */
  approverEmail?: string;
  /**
   * The calls waiting for a 2026-07-28 client's retry, and the key signing their request state. Share one among the
   * proxies that may receive a retry (the hosted proxy's stateless exchanges). @default one per proxy
   */
  rounds?: ClientApprovalRounds;
}

/** The key of the approval form in an input-required result's `inputRequests` and the retry's `inputResponses`. */
export const APPROVAL_INPUT = 'agp_approval';

/** The request state of an approval asked on a 2026-07-28 exchange (signed; the client can read it). */
interface ApprovalRoundState {
  approval_id: string;
}

/** A call that escalated on a 2026-07-28 exchange and waits for the client's retry with the form's answer. */
interface PendingRound {
  /** The run that opened the approval: a retry must come through the same run (organisation, agent and run). */
  run: ProxyRun;
  tool: string;
  /** The call's arguments, JSON: a retry must carry the same. */
  args: string;
  /** The call's outcome (it waits for the approval, then for the claim before the upstream is called). */
  result: Promise<CallToolResult>;
  /** The retry takes the call over: the upstream is called with its abort signal. */
  claim(signal: AbortSignal): void;
}

/**
 * The calls of an `approval: client` proxy that escalated on a 2026-07-28 exchange and were answered `input_required`
 * (the approval form, and a request state naming the approval): held in this process until the client retries with the
 * answer or `ttlSeconds` pass (the call is then recorded as failed, its upstream never called). The request state is
 * signed (HMAC-SHA256, the SDK's `createRequestStateCodec`) with a key of this process, bound to `tools/call`, and
 * valid `ttlSeconds`; a retry reaching another process, or after a restart, is refused (-32602) and the call must be
 * made again.
 */
export class ClientApprovalRounds {
  /** Signs and checks the request state. */
  readonly codec: RequestStateCodec<ApprovalRoundState>;
  /** The waiting calls, by approval id. */
  readonly pending = new Map<string, PendingRound>();
  /** @param ttlSeconds how long a client may take to answer the form, s. @default 600 */
  constructor(readonly ttlSeconds = 600) {
    this.codec = createRequestStateCodec<ApprovalRoundState>({ key: randomBytes(32), ttlSeconds, bind: (ctx) => ctx.mcpReq.method });
  }
}

/** A form elicitation's answer, as the client returns it. */
type ApprovalAnswer = { action: 'accept' | 'decline' | 'cancel'; content?: unknown };

/**
 * The approval form of an escalated call (form elicitation): approve (boolean), notes, and the approver's e-mail unless
 * `approval.approverEmail` is set. The same on a 2025 exchange (pushed) and a 2026-07-28 one (input required).
 */
function approvalForm(server: string, tool: string, args: Record<string, unknown>, decision: GovernanceDecision, approval: ClientApproval): ElicitRequestFormParams {
  const shown = JSON.stringify(args);
  return {
    mode: 'form',
    message: `${server}: approve the call of ${tool}? ${decision.reason ?? ''}\nArguments: ${shown.length > FORM_ARGUMENTS_CHARS ? `${shown.slice(0, FORM_ARGUMENTS_CHARS)}…` : shown}`,
    requestedSchema: {
      type: 'object',
      properties: {
        approve: { type: 'boolean', title: 'Approve this call', description: `Run ${tool} with these arguments` },
        notes: { type: 'string', title: 'Notes', description: 'Recorded with the approval' },
        ...(approval.approverEmail ? {} : { approver_email: { type: 'string', format: 'email', title: 'Your e-mail', description: 'Recorded as who decided' } }),
      },
      required: approval.approverEmail ? ['approve'] : ['approve', 'approver_email'],
    },
  };
}

/**
 * Decide approval `approvalId` from the form's answer: accepted with `approve: true` approves, any other accept or a
 * decline rejects, with the notes given (else what happened) and the approver's e-mail. A cancel, or no e-mail, leaves
 * it to the platform (reported to `onError`).
 * @throws whatever `approval.decide` throws.
 */
async function decideAnswer(approval: ClientApproval, approvalId: string, answer: ApprovalAnswer, onError: (message: string) => void): Promise<void> {
  if (answer.action === 'cancel') return;
  const content = (answer.content ?? {}) as { approve?: unknown; notes?: unknown; approver_email?: unknown };
  const verdict: ApprovalDecisionKind = answer.action === 'accept' && content.approve === true ? 'approve' : 'reject';
  const email = approval.approverEmail ?? (typeof content.approver_email === 'string' ? content.approver_email : undefined);
  if (!email) return onError(`approval ${approvalId}: answered in the client without an e-mail; left to the platform`);
  const notes = typeof content.notes === 'string' && content.notes ? content.notes : answer.action === 'decline' ? 'declined in the MCP client' : `${verdict === 'approve' ? 'approved' : 'rejected'} in the MCP client`;
  await approval.decide(approvalId, verdict, { approver_email: email, notes });
}

/** Longest text of a call's arguments shown in an approval form, characters. */
const FORM_ARGUMENTS_CHARS = 2000;

/** A `CallToolResult` with `isError: true` and `text` as its content. */
const toolError = (text: string, meta?: Record<string, unknown>): CallToolResult => ({ content: [{ type: 'text', text }], isError: true, ...(meta ? { _meta: meta } : {}) });

/** The text of a refused call: the decision's reason, naming the policy when one decided. */
function refusal(tool: string, d: GovernanceDecision): string {
  const base = refusalText(tool, d);
  return d.policy_name && !base.includes(d.policy_name) ? `${base} (policy ${d.policy_name})` : base;
}

/** The error text of a failed upstream request, naming the server. */
const upstreamFailure = (server: string, err: unknown) => `upstream MCP server ${server} failed: ${err instanceof Error ? err.message : String(err)}`;

/**
 * Set a handler of the upstream's requests unless the upstream client did not declare their capability (the SDK
 * refuses to set one then, and answers such a request -32601 itself).
 * @throws whatever else setting the handler throws.
 */
function handleIfDeclared(set: () => void): void {
  try {
    set();
  } catch (err) {
    if (!(err instanceof SdkError && err.code === SdkErrorCode.CapabilityNotSupported)) throw err;
  }
}

/**
 * A low-level MCP `Server` standing for `upstream`, governing each `tools/call` (see the module's description). Connect
 * it to the agent's transport (stdio locally, Streamable HTTP in the platform). It advertises what the upstream
 * advertises (tools, resources, prompts, completions, logging).
 */
export function createGovernedProxy(o: GovernedProxyOptions): Server {
  const { upstream, settings } = o;
  const caps = upstream.getServerCapabilities() ?? {};
  const onError = o.onError ?? (() => {});
  const capabilities: ServerCapabilities = {
    tools: { listChanged: true },
    ...(caps.resources ? { resources: { listChanged: caps.resources.listChanged ?? false, subscribe: caps.resources.subscribe ?? false } } : {}),
    ...(caps.prompts ? { prompts: { listChanged: caps.prompts.listChanged ?? false } } : {}),
    ...(caps.completions ? { completions: {} } : {}),
    ...(caps.logging ? { logging: {} } : {}),
  };
  const upstreamInfo = upstream.getServerVersion();
  const rounds = o.clientApproval ? (o.clientApproval.rounds ?? new ClientApprovalRounds()) : null;
  const server = new Server(PROXY_INFO, {
    capabilities,
    supportedProtocolVersions: PROXY_PROTOCOL_VERSIONS,
    ...(rounds ? { requestState: { verify: rounds.codec.verify } } : {}),
    instructions: [`Tools of the MCP server ${settings.name}${upstreamInfo ? ` (${upstreamInfo.name} ${upstreamInfo.version})` : ''}, governed by AGP: a call a policy stops returns a tool error saying why.`, upstream.getInstructions?.()].filter(Boolean).join('\n\n'),
  });
  const timeout = { timeout: settings.timeout_ms };
  let run: Promise<ProxyRun> | null = null;
  // The client's name: from the 2026-07-28 request envelope, else from the 2025 `initialize`.
  const clientName = (envelope: unknown) => ((envelope as { clientInfo?: { name?: string } } | undefined)?.clientInfo?.name ?? server.getClientVersion()?.name);
  const runOf = (envelope: unknown) => (run ??= Promise.resolve(o.run({ name: clientName(envelope) })));

  server.setRequestHandler('tools/list', async (req) => {
    const page = await upstream.listTools(req.params, timeout);
    let tools = page.tools;
    if (o.pins) {
      // A whole list (one page) is recorded; a held tool is left out whichever page lists it.
      if (req.params?.cursor === undefined && page.nextCursor === undefined) await o.pins.listed(tools);
      const held = await Promise.all(tools.map((t) => o.pins!.held(t.name)));
      tools = tools.filter((_, i) => held[i] === null);
    }
    if (settings.hide_denied_tools && o.deniedByName) tools = tools.filter((t) => !o.deniedByName!(settings.action_prefix + t.name));
    return tools === page.tools ? page : { ...page, tools };
  });

  server.setRequestHandler('tools/call', async (req, ctx) => {
    const tool = req.params.name;
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    const metaCost = (req.params._meta as Record<string, unknown> | undefined)?.[COST_META_KEY];
    const estimatedCostUsd = settings.tool_costs_usd[tool] ?? (typeof metaCost === 'number' && Number.isFinite(metaCost) && metaCost >= 0 ? metaCost : undefined);
    const progressToken = ctx.mcpReq._meta?.progressToken;
    // Progress while the call waits (an approval); the upstream's own progress follows, offset so it keeps increasing.
    let sent = 0;
    const notifyProgress = (progress: number, total?: number, message?: string) =>
      ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: progressToken!, progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) } }).catch((err) => onError(`progress could not be sent: ${String(err)}`));
    const waiting = progressToken !== undefined ? setInterval(() => void notifyProgress(++sent, undefined, `waiting for a decision on ${tool}`), o.progressIntervalMs ?? 5000) : null;
    waiting?.unref();
    // approval: client on a 2025 exchange: the user answers in the client (form elicitation, pushed), and the answer
    // decides the approval on the platform; the call then goes on as for any approval. A dismissed form leaves it to the platform.
    const askInClient = (approvalId: string, decision: GovernanceDecision) => {
      const approval = o.clientApproval!;
      void ctx.mcpReq
        .elicitInput(approvalForm(settings.name, tool, args, decision, approval))
        .then((answer) => decideAnswer(approval, approvalId, answer as ApprovalAnswer, onError))
        .catch((err: unknown) => onError(`approval ${approvalId} could not be asked in the client (left to the platform): ${err instanceof Error ? err.message : String(err)}`));
    };
    const clientApproves = settings.approval === 'client' && o.clientApproval !== undefined;
    // approval: client on a 2026-07-28 exchange (no server-to-client requests): the call is answered input_required
    // with the same form; the client's retry carries the answer (see {@link ClientApprovalRounds}).
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
    const asksByRetry = clientApproves && envelope?.[PROTOCOL_VERSION_META_KEY] !== undefined && declared?.elicitation !== undefined && (declared.elicitation.form !== undefined || declared.elicitation.url === undefined);
    const state = asksByRetry ? ctx.mcpReq.requestState<ApprovalRoundState>() : undefined;
    try {
      const governed = await runOf(ctx.mcpReq.envelope);
      if (state !== undefined) {
        // The retry: the state is signed by this proxy's rounds (checked by the SDK before this handler), and it must
        // name a call of this run (same organisation, agent and run), of this tool, with these arguments.
        const pending = typeof state?.approval_id === 'string' ? rounds!.pending.get(state.approval_id) : undefined;
        if (!pending || pending.run !== governed || pending.tool !== tool || pending.args !== JSON.stringify(args)) {
          return toolError(`approval ${String(state?.approval_id)} is not awaited by this call of ${tool} (its call was answered, expired, or is another agent's); call the tool again`);
        }
        rounds!.pending.delete(state.approval_id);
        const answer = ctx.mcpReq.inputResponses?.[APPROVAL_INPUT] as { action?: unknown; content?: unknown } | undefined;
        if (answer && (answer.action === 'accept' || answer.action === 'decline' || answer.action === 'cancel')) {
          await decideAnswer(o.clientApproval!, state.approval_id, answer as ApprovalAnswer, onError).catch((err: unknown) => onError(`approval ${state.approval_id} could not be decided (left to the platform): ${err instanceof Error ? err.message : String(err)}`));
        }
        pending.claim(ctx.mcpReq.signal);
        return await pending.result;
      }
      const held = o.pins ? await o.pins.held(tool) : null;
      if (held !== null) {
        const refused = governed.refuse(settings.action_prefix + tool, args, held, TOOL_PIN_RULE);
        return toolError(held, { [GOVERNANCE_META_KEY]: refused.decision });
      }
      // On a 2026-07-28 exchange the upstream is called only once the client's retry has claimed the call.
      let asked = false;
      let escalated: (e: { approvalId: string; decision: GovernanceDecision }) => void = () => {};
      const escalation = asksByRetry ? new Promise<{ approvalId: string; decision: GovernanceDecision }>((resolve) => (escalated = (e) => ((asked = true), resolve(e)))) : null;
      let claim: { resolve: (signal: AbortSignal) => void; reject: (err: Error) => void } | null = null;
      const claimed = asksByRetry ? new Promise<AbortSignal>((resolve, reject) => (claim = { resolve, reject })) : null;
      claimed?.catch(() => {});
      const result = (async (): Promise<CallToolResult> => {
        const outcome = await governedToolCall<CallToolResult>(
          governed,
          settings.action_prefix + tool,
          args,
          async (effective) => {
            if (waiting) clearInterval(waiting);
            const offset = sent;
            const retried = asked && claimed !== null;
            const signal = retried ? await claimed! : ctx.mcpReq.signal;
            return (await upstream.callTool(
              { ...req.params, arguments: effective },
              {
                ...timeout,
                signal,
                ...(progressToken !== undefined && !retried ? { onprogress: (p: { progress: number; total?: number; message?: string }) => void notifyProgress(offset + p.progress, p.total !== undefined ? offset + p.total : undefined, p.message) } : {}),
              },
            )) as CallToolResult;
          },
          {
            actOptions: {
              ...(estimatedCostUsd !== undefined ? { estimatedCostUsd } : {}),
              ...(asksByRetry ? { onEscalated: escalated } : clientApproves && server.getClientCapabilities()?.elicitation ? { onEscalated: ({ approvalId, decision }: { approvalId: string; decision: GovernanceDecision }) => askInClient(approvalId, decision) } : {}),
            },
            failure: (r) => (r.isError ? r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n') || 'the tool returned isError' : null),
          },
        );
        switch (outcome.kind) {
          case 'ran':
            return outcome.value;
          case 'replayed':
            return outcome.value as CallToolResult;
          case 'invalid':
            return toolError(outcome.error.message);
          case 'blocked':
            return toolError(refusal(tool, outcome.decision), { [GOVERNANCE_META_KEY]: outcome.decision });
        }
      })().catch((err: unknown) => toolError(upstreamFailure(settings.name, err)));
      if (!escalation) return await result;
      const first = await Promise.race([result.then((done) => ({ done })), escalation.then((asked) => ({ asked }))]);
      if ('done' in first) return first.done;
      const { approvalId, decision } = first.asked;
      const expiry = setTimeout(() => {
        rounds!.pending.delete(approvalId);
        claim!.reject(new Error(`the MCP client did not answer approval ${approvalId} within ${rounds!.ttlSeconds} s`));
      }, rounds!.ttlSeconds * 1000);
      expiry.unref();
      rounds!.pending.set(approvalId, {
        run: governed,
        tool,
        args: JSON.stringify(args),
        result,
        claim: (signal) => (clearTimeout(expiry), claim!.resolve(signal)),
      });
      return inputRequired({
        inputRequests: { [APPROVAL_INPUT]: inputRequired.elicit(approvalForm(settings.name, tool, args, decision, o.clientApproval!)) },
        requestState: await rounds!.codec.mint({ approval_id: approvalId }, ctx),
      }) as unknown as CallToolResult;
    } catch (err) {
      return toolError(upstreamFailure(settings.name, err));
    } finally {
      if (waiting) clearInterval(waiting);
    }
  });

  if (caps.resources) {
    server.setRequestHandler('resources/list', (req) => upstream.listResources(req.params, timeout));
    server.setRequestHandler('resources/templates/list', (req) => upstream.listResourceTemplates(req.params, timeout));
    server.setRequestHandler('resources/read', (req) => upstream.readResource(req.params, timeout));
    if (caps.resources.subscribe) {
      server.setRequestHandler('resources/subscribe', (req) => upstream.subscribeResource(req.params, timeout));
      server.setRequestHandler('resources/unsubscribe', (req) => upstream.unsubscribeResource(req.params, timeout));
    }
  }
  if (caps.prompts) {
    server.setRequestHandler('prompts/list', (req) => upstream.listPrompts(req.params, timeout));
    server.setRequestHandler('prompts/get', (req) => upstream.getPrompt(req.params, timeout));
  }
  if (caps.completions) server.setRequestHandler('completion/complete', (req) => upstream.complete(req.params, timeout));
  if (caps.logging) server.setRequestHandler('logging/setLevel', async (req) => (await upstream.setLoggingLevel(req.params.level, timeout), {}));

  if (o.relayUpstream === false) return server;
  // The upstream's notifications, relayed to the agent.
  const relay = (what: string, send: () => Promise<void>) => send().catch((err) => onError(`${what} could not be relayed: ${String(err)}`));
  upstream.setNotificationHandler('notifications/tools/list_changed', () => {
    o.pins?.stale?.();
    return relay('tools/list_changed', () => server.sendToolListChanged());
  });
  upstream.setNotificationHandler('notifications/resources/list_changed', () => relay('resources/list_changed', () => server.sendResourceListChanged()));
  upstream.setNotificationHandler('notifications/prompts/list_changed', () => relay('prompts/list_changed', () => server.sendPromptListChanged()));
  upstream.setNotificationHandler('notifications/resources/updated', (n) => relay('resources/updated', () => server.sendResourceUpdated(n.params)));
  upstream.setNotificationHandler('notifications/message', (n) => relay('a log message', () => server.sendLoggingMessage(n.params)));
  // The upstream's requests of the user or the model, relayed when the agent's client supports them; else answered as
  // a client without the capability answers a request it has no handler for: -32601 (Method not found).
  const unsupported = (method: string, capability: string) => new ProtocolError(ProtocolErrorCode.MethodNotFound, `Method not found: ${method} (the agent's MCP client does not declare ${capability})`);
  // A capability the proxy did not declare to the upstream (a hosted session declares only its client's) has no handler.
  handleIfDeclared(() =>
    upstream.setRequestHandler('sampling/createMessage', (req) => {
      if (!server.getClientCapabilities()?.sampling) throw unsupported('sampling/createMessage', 'sampling');
      return server.createMessage(req.params);
    }),
  );
  handleIfDeclared(() =>
    upstream.setRequestHandler('elicitation/create', (req) => {
      if (!server.getClientCapabilities()?.elicitation) throw unsupported('elicitation/create', 'elicitation');
      return server.elicitInput(req.params);
    }),
  );
  return server;
}
