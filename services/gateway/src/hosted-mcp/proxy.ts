/**
 * The hosted MCP proxy: `/api/v1/mcp/proxy/{server}` answered in the gateway process itself (it holds the caller's
 * bearer key and streams SSE while an approval waits). Each exchange is served by the official SDK's
 * `createMcpHandler` (revision 2026-07-28 stateless, and the 2025 revisions through its stateless legacy mode) with a
 * fresh `createGovernedProxy` server of `@agp/mcp-proxy`, the same proxy `agp mcp proxy` runs locally, over:
 * - the registration, opened over the wire row `mcp-servers.open` in the caller's organisation (unknown: 404), cached
 *   {@link REGISTRATION_TTL_MS} so a PATCH or DELETE takes effect within it;
 * - an upstream client per organisation and server (Streamable HTTP, the registration's headers and nothing of the
 *   caller's), pooled; reopened when the registration's url, headers or timeout changed (the old one closed once its
 *   calls had `timeout_ms` to finish); its URL checked against the outbound address rules again at each connection,
 *   and its connections made only to the addresses that check accepted (no DNS rebinding after the check);
 * - a `Governor` of `@agp/sdk` per organisation, key and agent, pointed at this gateway's own loopback address with the
 *   caller's key, and a run per `AGP-Run-Id` (else one per agent, key and server while the governor is held).
 * A 2025 client that opts in (`AGP-MCP-Session: stateful` on its `initialize`) gets a session instead (the SDK's
 * sessionful `WebStandardStreamableHTTPServerTransport`, `Mcp-Session-Id`): one proxy server, its own upstream client
 * (declaring to the upstream the sampling and elicitation the agent's client declared) and one run, for as long as the
 * session lasts, so the upstream's notifications, sampling and elicitation requests have one agent to go to, and a
 * registration's `approval: client` asks that client (form elicitation), as the local proxy does.
 * Pools are bounded (least recently used closed first) and close idle entries; all close at gateway shutdown.
 * Source: docs/mcp-proxy.md (The hosted proxy); docs/architecture.md.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Response } from 'express';
import type { Agent } from 'undici';
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { WebStandardStreamableHTTPServerTransport, createMcpHandler, isInitializeRequest, type InitializeRequest, type McpHttpHandler, type Server } from '@modelcontextprotocol/server';
import { MCP_MAX_BODY_BYTES, McpServerNameSchema, OpaqueIdSchema, type McpServerOpened, type RequestContext } from '@agp/contracts';
import { AGENT_ID_HEADER, agentIdOf } from '@agp/auth';
import { call, type Sender } from '@agp/bus';
import { Governor, type Run } from '@agp/sdk';
import { ClientApprovalRounds, PROXY_INFO, ToolPins, connectUpstream, createGovernedProxy, listAllTools, type GovernedProxyOptions, type ToolPinGuard } from '@agp/mcp-proxy';
import { ForbiddenError, ValidationError, checkOutboundUrl, type Logger, type OutboundAllowList } from '@agp/runtime';
import type { AuthedRequest } from '../edge.js';
import { presentedKey } from '../edge.js';
import { FORWARDED_HEADERS, jsonRpcError, readMcpBody } from '../routes/mcp.js';
import { pinnedFetch } from '@agp/runtime/pinned-fetch';
import { IdlePool } from './pool.js';

/** The request header naming the run a stateless client's calls are recorded in (`AGP-Run-Id`). */
export const RUN_ID_HEADER = 'AGP-Run-Id';
/** The request header with which a 2025 client's `initialize` asks for a session (`stateful`) or not (`stateless`, the default). */
export const SESSION_MODE_HEADER = 'AGP-MCP-Session';
/** The values of {@link SESSION_MODE_HEADER}. */
export const SESSION_MODES = ['stateful', 'stateless'] as const;
/** How long an opened registration is reused before it is opened again, ms: a PATCH or DELETE takes effect within it. */
export const REGISTRATION_TTL_MS = 5_000;

/** The bounds of the hosted proxy's pools. */
export interface HostedMcpLimits {
  /** Most upstream clients held (one per organisation and server). @default 200 */
  maxUpstreams: number;
  /** Most sessions held (2025 clients that asked for one); opening one more closes the least recently used. @default 200 */
  maxSessions: number;
  /** Most governors held (one per organisation, key and agent). @default 200 */
  maxGovernors: number;
  /** Most runs one governor holds open (the oldest is ended first). @default 256 */
  maxRunsPerGovernor: number;
  /** An upstream client, governor or session unused this long is closed (its runs ended), ms. @default 300000 */
  idleMs: number;
  /** How often a call waiting for an approval sends `notifications/progress`, ms. @default 5000 */
  progressIntervalMs: number;
}

/** Defaults of {@link HostedMcpLimits}. */
export const HOSTED_MCP_LIMITS: HostedMcpLimits = { maxUpstreams: 200, maxSessions: 200, maxGovernors: 200, maxRunsPerGovernor: 256, idleMs: 300_000, progressIntervalMs: 5_000 };

/** What {@link HostedMcpProxy} is built with. */
export interface HostedMcpOptions {
  /** The bus the registration is opened over (`mcp-servers.open`). */
  bus: Sender;
  /** This gateway's own base URL (loopback), once it listens; the governors speak to it with the caller's key. */
  selfUrl: () => string | null;
  /** The outbound address rules (AGP_OUTBOUND_ALLOWED_HOSTS) an upstream URL is checked against at each connection. */
  outbound: OutboundAllowList;
  logger: Logger;
  limits?: Partial<HostedMcpLimits>;
}

/** An upstream client with the fingerprint of the registration it was opened from (url, headers, timeout), and its connection pool (pinned to the checked addresses). */
interface HeldUpstream {
  client: Client;
  fingerprint: string;
  agent: Agent | null;
  /** Tool pinning: what the upstream lists and the pins. */
  pinning: ToolPins;
}


/**
 * A session of a 2025 client (`Mcp-Session-Id`): its transport and proxy server, its own upstream client, its run (made
 * at the first `tools/call`), and whose it is (only the organisation, key and server that opened it may use it).
 */
interface HostedSession {
  organization: string;
  keyId: string;
  server: string;
  /** The governor pool's key of the session's agent (kept from closing while the session is used). */
  governorKey: string;
  transport: WebStandardStreamableHTTPServerTransport;
  proxy: Server;
  upstream: HeldUpstream;
  run: Run | null;
}

/** A governor with the runs it holds open, by run id. */
interface HeldGovernor {
  governor: Governor;
  runs: Map<string, Run>;
}

/** What one exchange's proxy is built from, handed to the SDK's server factory through `authInfo.extra`. */
type ExchangeProxy = Omit<GovernedProxyOptions, 'progressIntervalMs' | 'onError' | 'relayUpstream'>;

/**
 * An upstream that could not be reached: the proxy is built over it so the exchange is still answered; `tools/list`
 * fails with the reason (a JSON-RPC error) and `tools/call`, decided first, is a tool error naming the server.
 */
class UnreachableUpstream extends Client {
  constructor(private readonly failure: Error) {
    super({ name: PROXY_INFO.name, version: PROXY_INFO.version });
  }
  override async listTools(): Promise<never> {
    throw this.failure;
  }
  override async callTool(): Promise<never> {
    throw this.failure;
  }
}

/** An upstream the hosted proxy could not reach at its last attempt (what `/readyz` names). */
export interface FailingUpstream {
  organization_id: string;
  /** The registration's name. */
  server: string;
  /** When the failures began (ISO 8601): the first failed attempt since the last success. */
  since: string;
  /** The last attempt's error, at most 200 characters (no URL or header of the registration). */
  reason: string;
}

/** Most failing upstreams remembered (the oldest forgotten first). */
const MAX_FAILING = 100;

/** The fingerprint of what an upstream connection is made of: url, headers, timeout (sha-256, hex). */
function fingerprintOf(o: McpServerOpened): string {
  return createHash('sha256').update(JSON.stringify([o.settings.url, Object.entries(o.headers).sort(([a], [b]) => (a < b ? -1 : 1)), o.settings.timeout_ms])).digest('hex');
}

/** How long closing an upstream client waits for the upstream to end its session (DELETE), ms. */
const UPSTREAM_TERMINATE_MS = 2_000;

/** Close an upstream client: a session the upstream gave it is ended first (DELETE, at most {@link UPSTREAM_TERMINATE_MS}), then the connection and its pool. */
async function closeUpstream(u: HeldUpstream): Promise<void> {
  const transport = u.client.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([transport.terminateSession().catch(() => {}), new Promise<void>((ok) => (timer = setTimeout(ok, UPSTREAM_TERMINATE_MS)))]);
    clearTimeout(timer);
  }
  await u.client.close().catch(() => {});
  await u.agent?.close().catch(() => {});
}

/** The governor pool's key of `agent` for the caller `ctx`: one governor per organisation, key and agent. */
const governorKeyOf = (ctx: RequestContext, agent: string) => [ctx.organization_id, ctx.key_id, agent].join('\u0000');

/** The `initialize` request `body` holds (a 2025 client opening), else null. */
function initializeOf(body: Buffer): InitializeRequest | null {
  try {
    const message: unknown = JSON.parse(body.toString('utf8'));
    return isInitializeRequest(message) ? (message as InitializeRequest) : null;
  } catch {
    return null;
  }
}

/** The hosted MCP proxy (see the module's description): one per gateway, answering every exchange of its route. */
export class HostedMcpProxy {
  private readonly limits: HostedMcpLimits;
  private readonly registrations = new Map<string, { at: number; value: Promise<McpServerOpened> }>();
  /** When each opened registration was asked for (its pins are as of then). */
  private readonly openedAt = new WeakMap<McpServerOpened, number>();
  private readonly upstreams: IdlePool<HeldUpstream>;
  private readonly governors: IdlePool<HeldGovernor>;
  /** The sessions, by `Mcp-Session-Id`. */
  private readonly sessions: IdlePool<HostedSession>;
  private readonly handler: McpHttpHandler;
  /** Upstreams whose last connection attempt failed, by organisation and server (cleared by the next success). */
  private readonly failing = new Map<string, FailingUpstream>();
  /** `approval: client` calls of 2026-07-28 exchanges waiting for the client's retry (shared by the stateless exchanges). */
  private readonly rounds = new ClientApprovalRounds();

  constructor(private readonly o: HostedMcpOptions) {
    this.limits = { ...HOSTED_MCP_LIMITS, ...o.limits };
    this.upstreams = new IdlePool<HeldUpstream>({
      max: this.limits.maxUpstreams,
      idleMs: this.limits.idleMs,
      close: closeUpstream,
    });
    this.governors = new IdlePool<HeldGovernor>({
      max: this.limits.maxGovernors,
      idleMs: this.limits.idleMs,
      close: async (g) => {
        await Promise.all([...g.runs.values()].map((r) => r.end({ status: 'completed' }).catch(() => {})));
        await g.governor.close({ timeoutMs: 10_000 });
      },
    });
    this.sessions = new IdlePool<HostedSession>({
      max: this.limits.maxSessions,
      idleMs: this.limits.idleMs,
      close: async (s) => {
        await s.run?.end({ status: 'completed' }).catch(() => {});
        await s.proxy.close().catch(() => {});
        await closeUpstream(s.upstream);
      },
    });
    const onError = this.onError;
    this.handler = createMcpHandler(
      (c) => {
        const exchange = c.authInfo?.extra?.hostedMcp as ExchangeProxy | undefined;
        if (!exchange) throw new Error('the hosted MCP proxy was called without its exchange');
        return createGovernedProxy({ ...exchange, progressIntervalMs: this.limits.progressIntervalMs, onError, relayUpstream: false });
      },
      { legacy: 'stateless', responseMode: 'auto', maxRequestBodySize: MCP_MAX_BODY_BYTES, onerror: (err) => this.o.logger.debug({ err }, 'hosted mcp proxy: request refused or failed') },
    );
  }

  /** Where a proxy's own failures go (a notification that could not be relayed, an approval not asked). */
  private readonly onError = (message: string) => this.o.logger.warn({ component: 'hosted-mcp-proxy' }, message);

  /**
   * Serve one exchange of `/api/v1/mcp/proxy/{server}` as the caller `ctx`: check the agent and run headers, read the
   * body, open the registration, then answer through the SDK's handler (JSON, or SSE while a call waits).
   * @throws ValidationError (422) for a server name that cannot be registered; ForbiddenError (403) for an agent-bound key whose `AGP-Agent-Id` names another agent; ValidationError
   *   (422) for a bad `AGP-Agent-Id`, `AGP-Run-Id` or `AGP-MCP-Session`; NotFoundError (404) for a server the organisation has not
   *   registered (after the body is read; thrown through the returned promise).
   */
  async serve(req: AuthedRequest, res: Response, ctx: RequestContext, server: string): Promise<void> {
    const method = req.method.toUpperCase();
    if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') {
      res.set('allow', 'GET, POST, DELETE');
      return jsonRpcError(res, 405, -32000, 'Method not allowed.');
    }
    if (!McpServerNameSchema.safeParse(server).success) {
      throw new ValidationError('1 invalid field: path.server', [{ path: 'path.server', message: 'lower-case letters, digits, - and _, starting with a letter or digit, at most 64 characters' }]);
    }
    const boundOrNamed = agentIdOf(ctx, req.get(AGENT_ID_HEADER), null);
    const runHeader = req.get(RUN_ID_HEADER)?.trim() || undefined;
    if (runHeader !== undefined && !OpaqueIdSchema.safeParse(runHeader).success) {
      throw new ValidationError(`1 invalid field: header.${RUN_ID_HEADER}`, [{ path: `header.${RUN_ID_HEADER}`, message: 'expected 1-256 characters' }]);
    }
    const sessionMode = req.get(SESSION_MODE_HEADER)?.trim().toLowerCase() || undefined;
    if (sessionMode !== undefined && !(SESSION_MODES as readonly string[]).includes(sessionMode)) {
      throw new ValidationError(`1 invalid field: header.${SESSION_MODE_HEADER}`, [{ path: `header.${SESSION_MODE_HEADER}`, message: `expected one of: ${SESSION_MODES.join(', ')}` }]);
    }
    const key = presentedKey(req);
    // A console session (cookie) has no credential the proxy's governor could call the platform with.
    if (!key) throw new ForbiddenError('the hosted MCP proxy needs an API key or an OAuth access token (Authorization: Bearer …); a console session cannot call it');
    const body = await new Promise<Buffer | null>((resolve) => {
      res.once('close', () => resolve(null));
      readMcpBody(req, res, resolve);
    });
    if (body === null || res.headersSent) return;
    const sessionId = req.get('mcp-session-id');
    if (sessionId !== undefined) return this.serveSession(req, res, ctx, server, method, body, sessionId);
    const opened = await this.registration(ctx, server);
    const initialize = sessionMode === 'stateful' && method === 'POST' ? initializeOf(body) : null;
    if (initialize && (await this.openSession(req, res, ctx, key, opened, { initialize, agent: boundOrNamed, runId: runHeader, body }))) return;
    const { client: upstream, held: heldUpstream } = await this.upstream(ctx.organization_id, opened);
    const governorOf = (agent: string) => this.governors.get(governorKeyOf(ctx, agent), () => this.connectGovernor(key, agent));
    // With the agent known before the call (a bound key, the header), its governor is ready for hide_denied_tools.
    const ready = boundOrNamed && opened.settings.hide_denied_tools ? await governorOf(boundOrNamed) : null;
    // The governor of the agent this exchange's run belongs to (known once `run` is called).
    let runGovernor: Promise<HeldGovernor> | null = null;
    const exchange: ExchangeProxy = {
      upstream,
      settings: opened.settings,
      run: async (client) => {
        const agent = boundOrNamed ?? client.name ?? 'mcp-client';
        const held = await (runGovernor = governorOf(agent));
        const runId = runHeader ?? `default\u0000${server}`;
        let run = held.runs.get(runId);
        if (!run) {
          run = held.governor.startRun({ runId: runHeader ?? randomUUID(), name: `mcp:${server}`, metadata: { mcp_server: server, hosted: true } });
          held.runs.set(runId, run);
          if (held.runs.size > this.limits.maxRunsPerGovernor) {
            const [oldestId, oldest] = held.runs.entries().next().value as [string, Run];
            held.runs.delete(oldestId);
            void oldest.end({ status: 'completed' }).catch(() => {});
          }
        }
        return run;
      },
      ...(ready ? { deniedByName: (action: string) => ready.governor.deniedByName(action) } : {}),
      ...(heldUpstream ? { pins: this.pinGuard(ctx, opened, heldUpstream) } : {}),
      // approval: client on 2026-07-28 (input required, answered in the client's retry); a 2025 stateless exchange
      // cannot ask (no server-to-client requests) and leaves it to the platform.
      clientApproval: {
        decide: async (approvalId, verdict, body) => (await (runGovernor ?? governorOf(boundOrNamed ?? 'mcp-client'))).governor.decideApproval(approvalId, verdict, body),
        rounds: this.rounds,
      },
    };
    await this.answer(req, res, method, body, (request) =>
      this.handler.fetch(request, { authInfo: { token: 'hosted-mcp-proxy', clientId: 'hosted-mcp-proxy', scopes: [], extra: { hostedMcp: exchange } } }),
    );
  }

  /**
   * Open a session for a 2025 client's `initialize` (it asked with `AGP-MCP-Session: stateful`) and answer it (the
   * answer carries the `Mcp-Session-Id`): its own upstream client, declaring the sampling and elicitation the client
   * declared; the agent is the bound key's or `AGP-Agent-Id`, else the client's `clientInfo.name`; its run is
   * `AGP-Run-Id`, else a new one, ended when the session closes.
   * @returns false when the upstream cannot be reached (the exchange is then served statelessly, without a session).
   */
  private async openSession(
    req: AuthedRequest,
    res: Response,
    ctx: RequestContext,
    key: string,
    opened: McpServerOpened,
    o: { initialize: InitializeRequest; agent: string | null; runId: string | undefined; body: Buffer },
  ): Promise<boolean> {
    const server = opened.settings.name;
    const declared = o.initialize.params.capabilities ?? {};
    const capabilities: ClientCapabilities = { ...(declared.sampling ? { sampling: declared.sampling } : {}), ...(declared.elicitation ? { elicitation: declared.elicitation } : {}) };
    const failingKey = `${ctx.organization_id}\u0000${server}`;
    let upstream: HeldUpstream;
    try {
      upstream = await this.openUpstream(opened, capabilities);
      this.failing.delete(failingKey);
    } catch (err) {
      this.noteFailure(failingKey, ctx.organization_id, server, err);
      return false;
    }
    let session: Omit<HostedSession, 'transport' | 'proxy'> & Partial<HostedSession>;
    let transport: WebStandardStreamableHTTPServerTransport;
    let proxy: Server;
    const id = randomUUID();
    try {
      const agent = o.agent ?? o.initialize.params.clientInfo?.name ?? 'mcp-client';
      const governorKey = governorKeyOf(ctx, agent);
      const governorOf = () => this.governors.get(governorKey, () => this.connectGovernor(key, agent));
      const ready = opened.settings.hide_denied_tools ? await governorOf().catch(() => null) : null;
      session = { organization: ctx.organization_id, keyId: ctx.key_id, server, governorKey, upstream, run: null } as Omit<HostedSession, 'transport' | 'proxy'> & Partial<HostedSession>;
      proxy = createGovernedProxy({
        upstream: upstream.client,
        settings: opened.settings,
        run: async () => (session.run ??= (await governorOf()).governor.startRun({ runId: o.runId ?? randomUUID(), name: `mcp:${server}`, metadata: { mcp_server: server, hosted: true, mcp_session: true } })),
        ...(ready ? { deniedByName: (action: string) => ready.governor.deniedByName(action) } : {}),
        pins: this.pinGuard(ctx, opened, upstream),
        progressIntervalMs: this.limits.progressIntervalMs,
        onError: this.onError,
        clientApproval: { decide: async (approvalId, verdict, body) => (await governorOf()).governor.decideApproval(approvalId, verdict, body) },
      });
      transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, onsessionclosed: () => void this.sessions.drop(id), maxRequestBodySize: MCP_MAX_BODY_BYTES });
      await proxy.connect(transport);
    } catch (err) {
      // Nothing of the session is held yet: its upstream client is closed, and the failure answered as any other.
      await closeUpstream(upstream);
      throw err;
    }
    const held: HostedSession = Object.assign(session, { transport, proxy });
    // An upstream that closes ends the session: the client's next request is answered 404 and it opens a new one.
    upstream.client.onclose = () => void this.sessions.drop(id);
    await this.sessions.get(id, async () => held);
    await this.answer(req, res, 'POST', o.body, async (request) => {
      const answer = await transport.handleRequest(request);
      if (transport.sessionId === undefined) void this.sessions.drop(id);
      return answer;
    });
    return true;
  }

  /**
   * Serve one exchange of an open session (POST: a message, or the client's answer to a relayed request; GET: the
   * session's stream of the upstream's notifications and requests; DELETE: close it). The registration is read again
   * (a DELETE of it ends the session; an accepted tool takes effect). A session this gateway does not hold, or another
   * key's, organisation's or server's, is answered 404 (`-32001`), upon which a client opens a new one.
   */
  private async serveSession(req: AuthedRequest, res: Response, ctx: RequestContext, server: string, method: string, body: Buffer, id: string): Promise<void> {
    const session = await this.sessions.peek(id)?.catch(() => undefined);
    if (!session || session.organization !== ctx.organization_id || session.keyId !== ctx.key_id || session.server !== server) return jsonRpcError(res, 404, -32001, 'Session not found');
    const opened = await this.registration(ctx, server).catch((err: unknown) => {
      if ((err as { status?: number }).status === 404) void this.sessions.drop(id);
      throw err;
    });
    session.upstream.pinning.offer(opened.pins, this.openedAt.get(opened) ?? 0);
    // The session's governor stays open while the session is used.
    void this.governors.peek(session.governorKey)?.catch(() => {});
    await this.answer(req, res, method, body, (request) => session.transport.handleRequest(request));
  }

  /** Run the exchange through `serveWith` (the SDK's handler or a session's transport) and write its answer (streamed: SSE goes out as it is produced). */
  private async answer(req: AuthedRequest, res: Response, method: string, body: Buffer, serveWith: (request: Request) => Promise<globalThis.Response>): Promise<void> {
    const headers = new Headers();
    for (const [name, v] of Object.entries(req.headers)) {
      if (typeof v === 'string' && (FORWARDED_HEADERS.has(name) || name.startsWith('mcp-'))) headers.set(name, v);
    }
    const aborted = new AbortController();
    // Abort only an exchange whose caller went away: aborting after every finished answer cost an AbortError (and the
    // SDK's error around it) per call.
    res.once('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    const request = new Request(`http://${req.get('host') ?? 'localhost'}${req.originalUrl}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: new Uint8Array(body) } : {}),
      signal: aborted.signal,
    });
    const answer = await serveWith(request);
    if (res.headersSent) return;
    res.status(answer.status);
    answer.headers.forEach((value, name) => {
      if (name !== 'transfer-encoding' && name !== 'connection' && name !== 'content-length') res.set(name, value);
    });
    if (!answer.body) {
      res.end();
      return;
    }
    res.flushHeaders();
    const stream = Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>);
    stream.on('error', () => res.destroy());
    // A caller gone away cancels the stream (a session's GET stream is then closed by its transport).
    res.once('close', () => stream.destroy());
    stream.pipe(res);
  }

  /** The registration of `server` in the caller's organisation, opened (cached {@link REGISTRATION_TTL_MS}). @throws NotFoundError (404) when none. */
  private registration(ctx: RequestContext, server: string): Promise<McpServerOpened> {
    const cacheKey = `${ctx.organization_id}\u0000${server}`;
    const now = Date.now();
    const held = this.registrations.get(cacheKey);
    if (held && now - held.at < REGISTRATION_TTL_MS) return held.value;
    if (this.registrations.size > 1000) for (const [k, v] of this.registrations) if (now - v.at >= REGISTRATION_TTL_MS) this.registrations.delete(k);
    const value = call(this.o.bus, 'mcp-servers.open', ctx, { body: { name: server } }).then((o) => (this.openedAt.set(o, now), o));
    const entry = { at: now, value };
    this.registrations.set(cacheKey, entry);
    value.catch(() => {
      if (this.registrations.get(cacheKey) === entry) this.registrations.delete(cacheKey);
    });
    return value;
  }

  /**
   * The pooled upstream client of the organisation's server, opened from `opened` (reopened when its url, headers or
   * timeout changed; the old client is closed once its calls had `timeout_ms`). An upstream that cannot be reached, or
   * whose URL the outbound rules refuse, is an {@link UnreachableUpstream} (not pooled: the next exchange tries again).
   */
  private async upstream(org: string, opened: McpServerOpened): Promise<{ client: Client; held: HeldUpstream | null }> {
    const key = `${org}\u0000${opened.settings.name}`;
    const fingerprint = fingerprintOf(opened);
    const open = async (): Promise<HeldUpstream> => {
      // Shared by every agent: it declares no sampling or elicitation (an upstream asking anyway is answered -32601).
      const held = await this.openUpstream(opened, {});
      held.client.onclose = () => void this.upstreams.retire(key, held);
      return held;
    };
    try {
      let held = await this.upstreams.get(key, open);
      if (held.fingerprint !== fingerprint) {
        await this.upstreams.retire(key, held, opened.settings.timeout_ms);
        held = await this.upstreams.get(key, open);
      }
      this.failing.delete(key);
      return { client: held.client, held };
    } catch (err) {
      return { client: new UnreachableUpstream(this.noteFailure(key, org, opened.settings.name, err)), held: null };
    }
  }

  /** Remember that the upstream `key` (organisation and server) could not be reached (what `/readyz` names). @returns the failure as an Error. */
  private noteFailure(key: string, org: string, server: string, err: unknown): Error {
    const failure = err instanceof Error ? err : new Error(String(err));
    const since = this.failing.get(key)?.since ?? new Date().toISOString();
    this.failing.delete(key);
    this.failing.set(key, { organization_id: org, server, since, reason: failure.message.slice(0, 200) });
    if (this.failing.size > MAX_FAILING) this.failing.delete(this.failing.keys().next().value as string);
    return failure;
  }

  /**
   * Connect an upstream client from the registration `opened`: its URL checked against the outbound rules, its
   * connections made only to the addresses that check accepted, with its tool pinning.
   * @param capabilities declared to the upstream: a session's, what its agent's client declared; the pooled client's, none.
   * @throws Error naming the server when the outbound rules refuse the URL, or the upstream cannot be reached.
   */
  private async openUpstream(opened: McpServerOpened, capabilities: ClientCapabilities): Promise<HeldUpstream> {
    const verdict = await checkOutboundUrl(opened.settings.url, this.o.outbound);
    if (!verdict.ok) throw new Error(`upstream MCP server ${opened.settings.name} is not called: ${verdict.reason}`);
    // Connect to the addresses just checked (none for a host name the allow list names: resolved as usual).
    const pin = verdict.addresses.length ? pinnedFetch(verdict.addresses) : null;
    let client: Client;
    try {
      client = await connectUpstream(opened.settings.name, { url: opened.settings.url, headers: opened.headers, ...(pin ? { fetch: pin.fetch } : {}) }, opened.settings.timeout_ms, capabilities);
    } catch (err) {
      await pin?.agent.close().catch(() => {});
      throw err;
    }
    const pinning = new ToolPins({
      server: opened.settings.name,
      listAll: () => listAllTools(client, opened.settings.timeout_ms),
      onError: (message) => this.o.logger.warn({ component: 'hosted-mcp-proxy', server: opened.settings.name }, message),
    });
    // A changed tool list is read again at the next call (the TTL bounds it when the upstream does not say so).
    client.setNotificationHandler('notifications/tools/list_changed', () => pinning.stale());
    return { client, fingerprint: fingerprintOf(opened), agent: pin?.agent ?? null, pinning };
  }

  /**
   * The registered upstreams this gateway could not reach at its last attempt to (a connection is attempted when an
   * agent's exchange needs one), oldest failure first; `/readyz` names them. Cleared by the next successful connection,
   * or by a registration the pool reaches again.
   */
  failingUpstreams(): FailingUpstream[] {
    return [...this.failing.values()].sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
  }

  /**
   * The tool pinning of one exchange (docs/mcp-proxy.md, Tool pinning) over the upstream's shared {@link ToolPins}:
   * the registration's pins are offered (as of when it was opened: an accept takes effect within
   * {@link REGISTRATION_TTL_MS}); a list that differs from the pins is recorded in the caller's organisation
   * (`mcp-servers.tools-seen`: the first list after registration is pinned as it is).
   */
  private pinGuard(ctx: RequestContext, opened: McpServerOpened, held: HeldUpstream): ToolPinGuard {
    held.pinning.offer(opened.pins, this.openedAt.get(opened) ?? 0);
    const name = opened.settings.name;
    return held.pinning.guard(async (tools) => (await call(this.o.bus, 'mcp-servers.tools-seen', ctx, { path: { name }, body: { tools } })).pins);
  }

  /** A governor for `agent` speaking to this gateway with the caller's key. @throws Error when the gateway is not listening, or the platform refuses. */
  private async connectGovernor(key: string, agent: string): Promise<HeldGovernor> {
    const url = this.o.selfUrl();
    if (!url) throw new Error('the gateway is not listening yet');
    const governor = await Governor.connect({
      url,
      key,
      agentId: agent,
      agent: { framework: 'mcp', metadata: { hosted_mcp_proxy: true } },
      onBlocked: 'return',
      onReportError: (m) => this.o.logger.warn({ component: 'hosted-mcp-proxy', agent_id: agent }, m),
    });
    return { governor, runs: new Map() };
  }

  /** Close everything: the sessions first (ending their runs), then the governors (ending theirs and delivering their reports through this gateway), the upstreams and the handler. */
  async close(): Promise<void> {
    await this.sessions.close();
    await this.governors.close();
    await this.upstreams.close();
    await this.handler.close();
  }
}
