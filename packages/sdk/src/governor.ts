/**
 * `Governor`: the connection of one agent to the platform, and the rooms it connects.
 *
 * `Governor.connect` registers the agent (./registration.ts), loads its governance snapshot (policies and kill
 * switches, ./snapshot.ts), keeps it live through the push channel (one Server-Sent Events stream, ./channel.ts;
 * polling while it is down), and opens the report spool (./spool.ts) whose reports the reporter (./reporter.ts)
 * delivers. `startRun` hands each {@link Run} (./run.ts) only what it needs: the decision step (./decider.ts), the
 * result cache of the idempotency guardrail (./result-cache.ts), reporting (./reports.ts), escalation
 * (./escalation.ts), the action schemas (./schema.ts) and a few settings; arguments are copied by ./args.ts.
 * Source: docs/sdk.md; docs/architecture.md (The agent SDK).
 */
import { randomUUID } from 'node:crypto';
import { deniedByName } from '@agp/policy-engine';
import { AgpClient } from './http.js';
import { GovernanceChannel } from './channel.js';
import { Decider } from './decider.js';
import { Escalations } from './escalation.js';
import { Leases } from './leases.js';
import type { ModerationProvider } from './moderation.js';
import { registerAgent, RegistrationRetry } from './registration.js';
import { Reporter } from './reporter.js';
import { idPart, nonce, Reports } from './reports.js';
import { ResultCache } from './result-cache.js';
import { Run, SDK_VERSION, type DecisionEvent, type RunDeps } from './run.js';
import { ActionSchemas, type ActionDefinition } from './schema.js';
import { SnapshotSource } from './snapshot.js';
import { FileSpool, MemorySpool } from './spool.js';
import type { ChannelState, LeaseStatus, ReporterStats } from './status.js';
import { loadTracing } from './tracing.js';

/** The policies while no snapshot was loaded (one array, so the leases see no change). */
const NO_POLICIES: never[] = [];

export { Run, SDK_VERSION, type ActContext, type ActOptions, type DecisionEvent } from './run.js';

/** Options of {@link Governor.connect}. Durations in ms, money in USD. */
export interface GovernorOptions {
  /** Base URL of the AGP gateway, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** API key (`agp_…`). A write key: the SDK reports interventions and ledger entries. */
  key: string;
  /** The agent's id (1–256 characters). */
  agentId: string;
  /**
   * The agent's action definitions, as `POST /api/v1/agents` takes them (`{name, description, parameters: <JSON
   * Schema>, risk_level, typical_cost_usd}`). When given, `connect` registers (or updates) the agent, and `act` refuses
   * unknown action names and arguments their schema rejects (TypeError naming the field).
   */
  actions?: ActionDefinition[];
  /** Registry details sent with `actions`. */
  agent?: { name?: string; description?: string; framework?: string; owner?: string; metadata?: Record<string, unknown> };
  /**
   * What `act` does while no policy snapshot was ever loaded: `closed` blocks (default), `open` allows. Also what an
   * action does that needs a lease of a fleet-wide limit its leases do not hold while the platform cannot be reached:
   * `closed` blocks it, `open` decides it counting in this process alone (docs/sdk.md §Fleet-wide limits).
   */
  failMode?: 'closed' | 'open';
  /** Directory of the durable report spool. Absent: memory only (reports not yet delivered are lost if the process dies). */
  spoolDir?: string;
  /**
   * Bound of pending reports, bytes (as the spool counts them: 256 + the id's length per report in memory, the JSON
   * line in a file; docs/sdk.md §The spool's bound). At the bound a new `act` waits until acknowledgements bring the
   * pending bytes below 3/4 of it (backpressure: the agent slows to the platform's pace); it is refused (fail closed)
   * only after `spoolStallMs` with no acknowledgement, or when the governor closes. @default 64 MiB
   */
  maxSpoolBytes?: number;
  /**
   * How long an `act` waiting for room in the full spool may see no acknowledgement from the platform before it is
   * refused (fail closed; later actions are then refused at once until the next acknowledgement). @default 30000 (ms)
   */
  spoolStallMs?: number;
  /** A snapshot older than this (ms since the platform last confirmed it) counts as none: `act` fails closed. @default Infinity */
  maxStaleness?: number;
  /** `throw` (default): a stopped action throws; `return`: `act` resolves `{blocked: true, decision}` instead. */
  onBlocked?: 'throw' | 'return';
  /** How long an escalated action waits for a human. @default 600000 (10 minutes) */
  approvalTimeoutMs?: number;
  /**
   * How long an action waits for a lease of a fleet-wide limit (session, run or period budget; agent- or
   * organisation-scoped rate limit) when the governor's leases do not hold what it needs. Past it the action is
   * decided against what they hold (`budget_exceeded` / `rate_limited`); a platform that cannot be reached applies
   * `failMode` (docs/sdk.md §Fleet-wide limits). @default 2000 (ms)
   */
  quotaWaitMs?: number;
  /**
   * Scores for the moderation guardrail (e.g. {@link openAIModeration}). Asked by `act` only while a policy that
   * applies to the agent has a moderation guardrail; without a provider, or when it fails, such a guardrail fails
   * closed in `block` mode and warns in `warn` mode (docs/sdk.md §Moderation provider).
   */
  moderation?: ModerationProvider;
  /** How often the snapshot is polled while the push channel is down (an unchanged snapshot costs a 304). @default 1000 */
  pollIntervalMs?: number;
  /** How long a report may wait before it is sent (reports are batched). @default 100 */
  flushIntervalMs?: number;
  /** How often the spool is fsynced when written. @default 100 */
  fsyncIntervalMs?: number;
  /**
   * How often a waiting escalation asks for its approval: the fallback, since the push channel's `approval.decided`
   * wakes it at once (after the first minute it asks at most every 5 s). @default 1000
   */
  approvalPollMs?: number;
  /** A connected push channel that sends nothing (not even its 15 s heartbeat) for this long is reconnected. @default 45000 */
  channelLivenessMs?: number;
  /** Called when reports cannot be delivered for good or are not accepted. @default console.warn */
  onReportError?: (message: string) => void;
  /**
   * Called once for each decision `act` acts on, before it acts (synchronously; keep it cheap): the action, its run and
   * the decision (allow included). An escalated call is reported twice when a human approves it: `escalate`, then the
   * decision taken again after the approval (`approved: true`). For logs, metrics or traces of the agent's own; an
   * exception it throws is passed to `onReportError` and ignored.
   */
  onDecision?: (event: DecisionEvent) => void;
  /** fetch implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** What {@link Governor.status} reports. */
export interface GovernorStatus {
  /** Whether a policy snapshot was ever loaded. */
  snapshotLoaded: boolean;
  /** ms since the platform last confirmed the snapshot; null when none. */
  stalenessMs: number | null;
  /** Whether `act` currently fails closed because of the snapshot (none under failMode closed, stale, or not understood). */
  failingClosed: boolean;
  failMode: 'closed' | 'open';
  /** Why the last refresh failed, null when it worked. */
  lastError: string | null;
  /**
   * The push channel: `connected` (changes are pushed; the snapshot counts as fresh), `reconnecting` (it dropped;
   * the snapshot is polled meanwhile), `polling` (three connections in a row failed: polled, reconnect retried up to
   * every 30 s), `connecting` (before the first), `closed`; why it last failed; streams opened and dropped.
   */
  channel: { state: ChannelState; lastError: string | null; connects: number; drops: number };
  /** Applicable enabled policies in the snapshot. */
  policies: number;
  /** Reporting counters. */
  reports: ReporterStats;
  /** The spool: durable (a file) or memory, its pending bytes and whether it is full. */
  spool: { durable: boolean; dir: string | null; pendingBytes: number; full: boolean };
  /** Actions refused while the spool was full: nothing acknowledged for `spoolStallMs`, or the governor closing (not recorded: there was no room). */
  refusedSpoolFull: number;
  /** The leases of fleet-wide limits held now: policy, limit, scope key, held, spent (USD or calls), expiry. */
  leases: LeaseStatus[];
}

/**
 * A decision on an approval ({@link Governor.decideApproval}): who decided (`approver_email`, an e-mail address, at
 * most 320 characters) and, optionally, why (`notes`, at most 10,000 characters). Source: spec §Approvals.
 */
export interface ApprovalVerdict {
  approver_email: string;
  notes?: string;
}

/**
 * The connection of one agent to the platform. Create with {@link Governor.connect}; start runs with
 * {@link Governor.startRun}; `close()` delivers every report.
 */
export class Governor {
  private readonly reporter: Reporter;
  private readonly reports: Reports;
  private readonly snapshot: SnapshotSource;
  private readonly channel: GovernanceChannel;
  private readonly client: AgpClient;
  private readonly decider: Decider;
  private readonly escalations: Escalations;
  private readonly leases: Leases;
  /** What every run of this governor gets ({@link RunDeps}). */
  private readonly runDeps: RunDeps;
  private registrationRetry: RegistrationRetry | null = null;
  private closed = false;
  private readonly onError: (message: string) => void;

  private constructor(
    private readonly opts: Required<Pick<GovernorOptions, 'failMode' | 'maxStaleness' | 'onBlocked' | 'approvalTimeoutMs' | 'approvalPollMs'>> & GovernorOptions,
    schemas: ActionSchemas,
  ) {
    this.client = new AgpClient({ url: opts.url, key: opts.key, fetch: opts.fetch, timeoutMs: 10_000, retry: { retries: 2, baseDelayMs: 200, maxDelayMs: 5000 } });
    const maxBytes = opts.maxSpoolBytes ?? 64 * 1024 * 1024;
    const spool = opts.spoolDir ? new FileSpool(opts.spoolDir, maxBytes) : new MemorySpool(maxBytes);
    this.onError = opts.onReportError ?? ((m: string) => console.warn(`[@agp/sdk] ${m}`));
    this.reporter = new Reporter(this.client, spool, {
      flushIntervalMs: opts.flushIntervalMs ?? 100,
      fsyncIntervalMs: opts.fsyncIntervalMs ?? 100,
      onError: this.onError,
      lowWaterBytes: Math.floor(maxBytes * 0.75),
      stallMs: opts.spoolStallMs ?? 30_000,
    });
    this.reports = new Reports(this.reporter, opts.agentId);
    const base = opts.url.replace(/\/+$/, '');
    const fetchFn = opts.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => globalThis.fetch(input, init));
    this.snapshot = new SnapshotSource(fetchFn, base, opts.key, opts.agentId, SDK_VERSION);
    this.decider = new Decider(this.snapshot, schemas, opts.agentId, { url: opts.url, failMode: opts.failMode, maxStaleness: opts.maxStaleness });
    this.escalations = new Escalations(this.client, this.snapshot, opts.approvalPollMs);
    this.leases = new Leases({
      request: (body) => this.client.leaseQuotas(body),
      policies: () => this.snapshot.current?.policies ?? NO_POLICIES,
      agentId: opts.agentId,
      holder: `sdk:${randomUUID()}`,
      onError: this.onError,
    });
    this.channel = new GovernanceChannel(this.snapshot, {
      fetch: fetchFn,
      base,
      key: opts.key,
      agentId: opts.agentId,
      pollIntervalMs: opts.pollIntervalMs ?? 1000,
      livenessMs: opts.channelLivenessMs ?? 45_000,
      onApproval: (a) => this.escalations.approvalDecided(a),
    });
    const onDecision = opts.onDecision;
    this.runDeps = {
      agentId: opts.agentId,
      schemas,
      decider: this.decider,
      results: new ResultCache(),
      reports: this.reports,
      escalations: this.escalations,
      sessions: new Map(),
      leases: this.leases,
      quotaWaitMs: opts.quotaWaitMs ?? 2000,
      moderation: opts.moderation,
      onBlocked: opts.onBlocked,
      approvalTimeoutMs: opts.approvalTimeoutMs,
      notifyDecision: onDecision ? (event) => this.notifyDecision(onDecision, event) : undefined,
      isClosed: () => this.closed,
    };
  }

  /**
   * Connect an agent: open the spool (re-sending what an earlier process left unacknowledged), register the agent
   * (with its `actions` when given; without, an agent the registry already knows is left as it is) and load the
   * governance snapshot, both before it returns, then open the push channel (polling every `pollIntervalMs` until it
   * is live and whenever it is down).
   * An unreachable platform does not fail `connect`: `act` then follows `failMode` until a snapshot loads, and the
   * registration is delivered when the platform is back.
   * @throws TypeError for a bad option or action definition (naming it).
   * @throws Error when the key is refused (401/403), or another live process holds `spoolDir`.
   */
  static async connect(options: GovernorOptions): Promise<Governor> {
    for (const k of ['url', 'key', 'agentId'] as const) {
      if (typeof options?.[k] !== 'string' || !options[k]) throw new TypeError(`Governor.connect: ${k} must be a non-empty string`);
    }
    if (options.agentId.length > 256) throw new TypeError('Governor.connect: agentId must be at most 256 characters');
    if (options.failMode !== undefined && options.failMode !== 'closed' && options.failMode !== 'open') throw new TypeError(`Governor.connect: failMode must be 'closed' or 'open', got ${JSON.stringify(options.failMode)}`);
    if (options.onBlocked !== undefined && options.onBlocked !== 'throw' && options.onBlocked !== 'return') throw new TypeError(`Governor.connect: onBlocked must be 'throw' or 'return', got ${JSON.stringify(options.onBlocked)}`);
    for (const k of ['maxStaleness', 'approvalTimeoutMs', 'quotaWaitMs', 'pollIntervalMs', 'maxSpoolBytes', 'spoolStallMs', 'flushIntervalMs', 'fsyncIntervalMs', 'approvalPollMs', 'channelLivenessMs'] as const) {
      const v = options[k];
      if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v) || v < 0)) throw new TypeError(`Governor.connect: ${k} must be a number ≥ 0 (ms${k === 'maxSpoolBytes' ? ', bytes' : ''}), got ${JSON.stringify(v)}`);
    }
    const schemas = new ActionSchemas(options.actions ?? []);
    // OpenTelemetry's API, when the agent has it installed (an optional peer dependency): `act` spans (./tracing.ts).
    await loadTracing(SDK_VERSION);
    const gov = new Governor(
      { failMode: 'closed', maxStaleness: Infinity, onBlocked: 'throw', approvalTimeoutMs: 600_000, approvalPollMs: 1000, ...options },
      schemas,
    );
    const body = { agent_id: options.agentId, ...options.agent, ...(options.actions ? { actions: options.actions } : {}) };
    const withActions = options.actions !== undefined;
    const attempt = () => registerAgent(gov.client, body, withActions);
    const [registration] = await Promise.all([attempt(), gov.snapshot.refresh()]);
    const status = gov.snapshot.lastStatus;
    if (status === 401 || status === 403 || registration.kind === 'refused') {
      await gov.shutdown();
      throw new Error(`Governor.connect: the platform refused the key (${status === 401 || status === 403 ? gov.snapshot.lastError : (registration as { message: string }).message})`);
    }
    if (registration.kind === 'rejected') gov.onError(`the agent could not be registered: ${registration.message}`);
    if (registration.kind === 'unavailable') {
      // With actions, the registration is a report like any other (spooled, delivered when the platform is back).
      if (withActions) gov.reports.send('agent.register', `agent.${idPart(options.agentId)}.${nonce()}`, body);
      else (gov.registrationRetry = new RegistrationRetry(attempt, gov.onError)).start();
    }
    gov.channel.start();
    return gov;
  }

  /** The agent this governor acts for. */
  get agentId(): string {
    return this.opts.agentId;
  }

  /**
   * Start a run (records `run.start`). Synchronous: the report is spooled and sent in the background.
   * @param options.runId default a random UUID; @param options.sessionId runs of one session share its budget.
   */
  startRun(options: { runId?: string; sessionId?: string; name?: string; metadata?: Record<string, unknown> } = {}): Run {
    if (this.closed) throw new Error('the governor is closed');
    const runId = options.runId ?? randomUUID();
    if (typeof runId !== 'string' || !runId || runId.length > 256) throw new TypeError('startRun: runId must be a string of 1–256 characters');
    if (options.sessionId !== undefined && (typeof options.sessionId !== 'string' || !options.sessionId || options.sessionId.length > 256)) throw new TypeError('startRun: sessionId must be a string of 1–256 characters');
    if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length > 256)) throw new TypeError('startRun: name must be a string of at most 256 characters');
    const run = new Run(this.runDeps, runId, options.sessionId ?? null);
    this.reports.runStarted(runId, options);
    return run;
  }

  /**
   * Decide a pending approval (`POST /api/v1/approvals/{id}/approve` or `/reject`) with this governor's key (write
   * scope): e.g. one the agent's user answered in its own interface, with the id `ActOptions.onEscalated` gave. The
   * waiting call then goes on as for any approval. Resolves once the platform has recorded the decision.
   * @throws AgpHttpError 404 (unknown id), 409 (no longer pending), 422 (a bad e-mail or notes), 403 (a read key).
   * @throws AgpNetworkError when the platform is unreachable.
   */
  async decideApproval(approvalId: string, verdict: 'approve' | 'reject', body: ApprovalVerdict): Promise<void> {
    await this.client.decideApproval(approvalId, verdict, body);
  }

  /**
   * Whether a policy of this agent's snapshot stops `action` by its name alone, whatever its arguments: listed in the
   * policy's `denied_actions`, or missing from its `allowed_actions` list. What the MCP proxy's `hide_denied_tools`
   * leaves out of `tools/list`. False while no snapshot is loaded (then `act` decides by the fail mode).
   */
  deniedByName(action: string): boolean {
    return deniedByName(this.snapshot.current?.policies ?? NO_POLICIES, action);
  }

  /** Snapshot age, fail-mode state and reporting counters. */
  status(): GovernorStatus {
    const age = this.snapshot.ageMs();
    const spool = this.reporter.spool;
    return {
      snapshotLoaded: age !== null,
      stalenessMs: age,
      failingClosed: this.decider.gateReason() !== null,
      failMode: this.opts.failMode,
      lastError: this.snapshot.lastError,
      channel: { state: this.channel.state, lastError: this.channel.lastError, ...this.channel.counts },
      policies: this.snapshot.current?.policies.length ?? 0,
      reports: this.reporter.stats(),
      spool: { durable: spool.durable, dir: this.opts.spoolDir ?? null, pendingBytes: spool.pendingBytes(), full: spool.full() },
      refusedSpoolFull: this.reports.refusedSpoolFull,
      leases: this.leases.status(),
    };
  }

  /**
   * Stop refreshing, release every lease of a fleet-wide limit (reporting what each spent; best effort within the
   * same time) and deliver every pending report (waiting up to `timeoutMs`, default 30 s), then close the spool.
   * Resolves with the counts. Reports still pending after the timeout stay in a durable spool (the next connect with
   * the same `spoolDir` sends them); in memory-only mode they would be lost, so close rejects saying how many.
   * @throws Error in memory-only mode when reports could not be delivered in time.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<{ delivered: number; pending: number }> {
    if (this.closed) return { delivered: this.reporter.stats().delivered, pending: this.reporter.stats().pending };
    this.channel.stop();
    this.reporter.refuseWaiting('the governor is closing');
    const timeoutMs = options.timeoutMs ?? 30_000;
    const [pending] = await Promise.all([this.reporter.drain(timeoutMs), this.leases.close(timeoutMs)]);
    await this.shutdown();
    const delivered = this.reporter.stats().delivered;
    if (pending > 0 && !this.reporter.spool.durable) {
      throw new Error(`Governor.close: ${pending} report(s) were not delivered (${this.reporter.stats().last_error}) and are lost: no spoolDir was given`);
    }
    if (pending > 0) this.onError(`${pending} report(s) stay in the spool ${this.opts.spoolDir} until the next connect`);
    return { delivered, pending };
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.channel.stop();
    this.registrationRetry?.stop();
    this.escalations.close();
    this.leases.stop();
    this.reporter.stop();
    this.reporter.spool.close();
  }

  /** Pass a decision to `onDecision`; what it throws goes to `onReportError`. */
  private notifyDecision(onDecision: (event: DecisionEvent) => void, event: DecisionEvent): void {
    try {
      onDecision(event);
    } catch (err) {
      this.onError(`onDecision threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
