/**
 * `Governor` and `Run`: the platform's policies, kill switches and approvals enforced where the agent acts.
 *
 * `Governor.connect` loads the agent's governance snapshot (policies and kill switches, see ./snapshot.ts), keeps it
 * live through the push channel (one Server-Sent Events stream, see ./channel.ts; polling while it is down), and opens the report spool (./spool.ts) whose reports the reporter (./reporter.ts) delivers.
 * `run.act(name, args, fn, options)` checks the arguments against the registered action's JSON Schema, decides locally
 * with the same `decide()` the platform's decision API runs (no network on the way), then executes, stops, waits for a
 * human, runs with downgraded arguments or replays a cached result, and reports what happened.
 * Source: docs/sdk.md; spec §Intervention types, §Intervention outcomes, §Guardrail context payload.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { AgpClient, AgpHttpError, AgpNetworkError } from './http.js';
import { approvalId as approvalIdOf, POLICY_DECISIONS, type ApprovalRecord, type KillSwitchOverview, type ModerationScores } from '@agp/contracts';
import { decide, fieldPathOf, PreparedPolicies, RULE_RISK, walkStrings, type DecisionContext, type PolicyAction, type RecentCall } from '@agp/policy-engine';
import { ActionBlockedError, ApprovalRejectedError, type ApprovalEnd, type BlockedResult, type GovernanceDecision } from './errors.js';
import { argumentsHash } from './hash.js';
import { Reporter } from './reporter.js';
import type { ChannelState, ReporterStats } from './status.js';
import { ActionSchemas, type ActionDefinition } from './schema.js';
import { GovernanceChannel, type ApprovalDecided } from './channel.js';
import { SnapshotSource } from './snapshot.js';
import { FileSpool, MemorySpool, type SpoolEvent } from './spool.js';
import type { ModerationProvider } from './moderation.js';
import { loadTracing, startActSpan, type ActSpan } from './tracing.js';

/** This package's version, named in messages about answers of the platform it does not understand. */
export const SDK_VERSION = '0.1.0';

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
  /** What `act` does while no policy snapshot was ever loaded: `closed` blocks (default), `open` allows. */
  failMode?: 'closed' | 'open';
  /** Directory of the durable report spool. Absent: memory only (reports not yet delivered are lost if the process dies). */
  spoolDir?: string;
  /** Bound of pending reports, bytes. Past it new actions are refused (fail closed). @default 64 MiB */
  maxSpoolBytes?: number;
  /** A snapshot older than this (ms since the platform last confirmed it) counts as none: `act` fails closed. @default Infinity */
  maxStaleness?: number;
  /** `throw` (default): a stopped action throws; `return`: `act` resolves `{blocked: true, decision}` instead. */
  onBlocked?: 'throw' | 'return';
  /** How long an escalated action waits for a human. @default 600000 (10 minutes) */
  approvalTimeoutMs?: number;
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

/** Per-call options of {@link Run.act}. */
export interface ActOptions {
  /** Estimated cost, USD ≥ 0. @default the action's registered `typical_cost_usd`, else 0 */
  estimatedCostUsd?: number;
  /** What the agent meant to do (recorded as `agent_intent`). */
  intent?: string;
  /** Key of the idempotency guardrail. @default the hash of the canonical arguments */
  idempotencyKey?: string;
  /** Overrides the governor's `onBlocked` for this call. */
  onBlocked?: 'throw' | 'return';
  /** Overrides the governor's `approvalTimeoutMs` for this call. */
  approvalTimeoutMs?: number;
}

/** What the executed function gets besides its arguments. */
export interface ActContext {
  runId: string;
  sessionId: string | null;
  /** Report the action's actual cost in USD (e.g. what the provider billed); recorded as `actual_cost_usd`. */
  reportCost(usd: number): void;
}

/** What {@link GovernorOptions.onDecision} gets for each decision. */
export interface DecisionEvent {
  /** The action's name. */
  action_name: string;
  run_id: string;
  /** The decision (`decision`, `intervention_type`, `outcome`, `policy_id`, `reason`, …; `modified_inputs` for a downgrade). */
  decision: GovernanceDecision;
  /** True for the decision taken again after a human approved the escalated call. */
  approved: boolean;
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
  /** Actions refused because the spool was full (not recorded: there was no room). */
  refusedSpoolFull: number;
}

/** A report id part of at most 160 characters (long ids are hashed). */
const idPart = (s: string) => (s.length <= 160 ? s : createHash('sha256').update(s).digest('hex').slice(0, 32));
const nonce = () => randomBytes(6).toString('base64url');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
let isoAt = -1;
let isoText = '';
/**
 * `new Date(ms).toISOString()`, for the current ms by default; remembered for the last ms asked, so the several
 * reports of one action (and of the actions of one millisecond) format the clock once (it costs ~0.2 µs each time).
 */
function isoTime(ms: number = Date.now()): string {
  if (ms !== isoAt) {
    isoAt = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}
const STOPPING = new Set(['block', 'budget_exceeded', 'rate_limited', 'loop_detected', 'pii_blocked', 'content_blocked']);
const GUARDRAIL_TYPES = new Set(['pii_blocked', 'content_blocked', 'loop_detected', 'idempotent_replay']);
const NO_KILL_SWITCHES: KillSwitchOverview = {
  organization: { scope: 'organization', agent_id: null, engaged: false, reason: null, changed_at: null, changed_by: null, actor_name: null, version: 0 },
  agents: [],
};

/** A result kept for the idempotency guardrail. */
interface CachedResult {
  result: unknown;
  at: number;
  ref: string;
  expiresAt: number;
}

/**
 * The connection of one agent to the platform. Create with {@link Governor.connect}; start runs with
 * {@link Governor.startRun}; `close()` delivers every report.
 */
export class Governor {
  /** @internal */ readonly reporter: Reporter;
  /** @internal */ readonly snapshot: SnapshotSource;
  /** @internal */ readonly channel: GovernanceChannel;
  /** @internal */ readonly client: AgpClient;
  /** @internal */ readonly schemas: ActionSchemas;
  /** @internal */ readonly sessions = new Map<string, number>();
  /** @internal */ readonly idempotency = new Map<string, CachedResult>();
  /** @internal */ refusedSpoolFull = 0;
  private closed = false;
  private readonly onError: (message: string) => void;

  private constructor(
    /** @internal */ readonly opts: Required<Pick<GovernorOptions, 'failMode' | 'maxStaleness' | 'onBlocked' | 'approvalTimeoutMs' | 'approvalPollMs'>> & GovernorOptions,
    schemas: ActionSchemas,
  ) {
    this.schemas = schemas;
    this.client = new AgpClient({ url: opts.url, key: opts.key, fetch: opts.fetch, timeoutMs: 10_000, retry: { retries: 2, baseDelayMs: 200, maxDelayMs: 5000 } });
    const maxBytes = opts.maxSpoolBytes ?? 64 * 1024 * 1024;
    const spool = opts.spoolDir ? new FileSpool(opts.spoolDir, maxBytes) : new MemorySpool(maxBytes);
    this.onError = opts.onReportError ?? ((m: string) => console.warn(`[@agp/sdk] ${m}`));
    this.reporter = new Reporter(this.client, spool, { flushIntervalMs: opts.flushIntervalMs ?? 100, fsyncIntervalMs: opts.fsyncIntervalMs ?? 100, onError: this.onError });
    const base = opts.url.replace(/\/+$/, '');
    const fetchFn = opts.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => globalThis.fetch(input, init));
    this.snapshot = new SnapshotSource(fetchFn, base, opts.key, opts.agentId, SDK_VERSION);
    this.channel = new GovernanceChannel(this.snapshot, {
      fetch: fetchFn,
      base,
      key: opts.key,
      agentId: opts.agentId,
      pollIntervalMs: opts.pollIntervalMs ?? 1000,
      livenessMs: opts.channelLivenessMs ?? 45_000,
      onApproval: (a) => this.approvalDecided(a),
    });
  }

  /**
   * Connect an agent: open the spool (re-sending what an earlier process left unacknowledged), register the agent when
   * `actions` are given, load the governance snapshot, and open the push channel (polling every `pollIntervalMs`
   * until it is live and whenever it is down).
   * An unreachable platform does not fail `connect`: `act` then follows `failMode` until a snapshot loads.
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
    for (const k of ['maxStaleness', 'approvalTimeoutMs', 'pollIntervalMs', 'maxSpoolBytes', 'flushIntervalMs', 'fsyncIntervalMs', 'approvalPollMs', 'channelLivenessMs'] as const) {
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
    if (options.actions) {
      const body = { agent_id: options.agentId, ...options.agent, actions: options.actions };
      gov.report('agent.register', `agent.${idPart(options.agentId)}.${nonce()}`, body);
    }
    await gov.snapshot.refresh();
    const status = gov.snapshot.lastStatus;
    if (status === 401 || status === 403) {
      await gov.shutdown();
      throw new Error(`Governor.connect: the platform refused the key (${gov.snapshot.lastError})`);
    }
    gov.channel.start();
    return gov;
  }

  /** @internal Whether `close()` was called (no more reports can be kept). */
  get isClosed(): boolean {
    return this.closed;
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
    const run = new Run(this, runId, options.sessionId ?? null);
    this.report('run.start', `run.${idPart(runId)}.start`, {
      run_id: runId,
      agent_id: this.agentId,
      ...(options.sessionId ? { session_id: options.sessionId } : {}),
      ...(options.name ? { name: options.name } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
      started_at: new Date().toISOString(),
    });
    return run;
  }

  /** Snapshot age, fail-mode state and reporting counters. */
  status(): GovernorStatus {
    const age = this.snapshot.ageMs();
    const spool = this.reporter.spool;
    return {
      snapshotLoaded: age !== null,
      stalenessMs: age,
      failingClosed: this.gateReason() !== null,
      failMode: this.opts.failMode,
      lastError: this.snapshot.lastError,
      channel: { state: this.channel.state, lastError: this.channel.lastError, ...this.channel.counts },
      policies: this.snapshot.current?.policies.length ?? 0,
      reports: this.reporter.stats(),
      spool: { durable: spool.durable, dir: this.opts.spoolDir ?? null, pendingBytes: spool.pendingBytes(), full: spool.full() },
      refusedSpoolFull: this.refusedSpoolFull,
    };
  }

  /**
   * Stop refreshing and deliver every pending report (waiting up to `timeoutMs`, default 30 s), then close the spool.
   * Resolves with the counts. Reports still pending after the timeout stay in a durable spool (the next connect with
   * the same `spoolDir` sends them); in memory-only mode they would be lost, so close rejects saying how many.
   * @throws Error in memory-only mode when reports could not be delivered in time.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<{ delivered: number; pending: number }> {
    if (this.closed) return { delivered: this.reporter.stats().delivered, pending: this.reporter.stats().pending };
    this.channel.stop();
    const pending = await this.reporter.drain(options.timeoutMs ?? 30_000);
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
    for (const wake of this.approvalWaiters.values()) wake();
    this.approvalWaiters.clear();
    this.reporter.stop();
    this.reporter.spool.close();
  }

  /** @internal Escalations waiting for their approval, by approval id: wakes the wait. */
  private readonly approvalWaiters = new Map<string, () => void>();
  /** @internal Approval decisions heard on the channel (the last 1000), so one heard before its wait began counts. */
  private readonly decided = new Map<string, ApprovalDecided>();

  /** An `approval.decided` event: remember it and wake its escalation. */
  private approvalDecided(a: ApprovalDecided): void {
    this.decided.set(a.approval_id, a);
    if (this.decided.size > 1000) this.decided.delete(this.decided.keys().next().value as string);
    this.approvalWaiters.get(a.approval_id)?.();
  }

  /**
   * @internal Wait up to `ms` for approval `id` to be decided: resolves with the decision heard on the push channel,
   * or null when the time passed (the caller then reads the approval: the fallback).
   */
  waitApproval(id: string, ms: number): Promise<ApprovalDecided | null> {
    const known = this.decided.get(id);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.approvalWaiters.delete(id);
        resolve(this.decided.get(id) ?? null);
      };
      const t = setTimeout(done, ms);
      this.approvalWaiters.set(id, done);
    });
  }

  /** @internal Pass a decision to `onDecision`; what it throws goes to `onReportError`. */
  notifyDecision(event: DecisionEvent): void {
    try {
      this.opts.onDecision?.(event);
    } catch (err) {
      this.onError(`onDecision threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * @internal Spool one report and send it in the background.
   * @param traceparent the `traceparent` of the `agp.act` span that produced it, when the agent traces (its
   *   `agp.report` span links to it; ./tracing.ts).
   */
  report(type: string, id: string, body: Record<string, unknown>, timestamp: string = isoTime(), traceparent?: string): void {
    const ev: SpoolEvent = { id, type, timestamp, body };
    if (traceparent !== undefined) ev.traceparent = traceparent;
    this.reporter.enqueue(ev);
  }

  /** @internal Why `act` must fail closed now, or null. */
  gateReason(): string | null {
    const s = this.snapshot;
    if (s.incompatible) return s.incompatible;
    const age = s.ageMs();
    if (age === null) return this.opts.failMode === 'closed' ? `no policy snapshot has been loaded from ${this.opts.url} yet and failMode is closed${s.lastError ? ` (${s.lastError})` : ''}` : null;
    if (age > this.opts.maxStaleness) return `the policy snapshot is ${age} ms old, past maxStaleness ${this.opts.maxStaleness} ms${s.lastError ? ` (${s.lastError})` : ''}`;
    return null;
  }

  /**
   * @internal The decision for one action of `run`: the fail-closed gate, else the engine.
   * @param hash the arguments' hash when a guardrail needs it ({@link Governor.needsArgsHash}), else undefined.
   * @param moderation the arguments' moderation scores ({@link Governor.moderate}) when a moderation guardrail applies;
   *   when they could not be had, the guardrail fails closed (see {@link moderationUnavailable}).
   */
  decideFor(run: Run, name: string, args: Record<string, unknown>, estimated: number, options: ActOptions, hash: string | undefined, moderation?: Moderated): GovernanceDecision {
    const def = this.schemas.definition(name);
    const closedReason = this.gateReason();
    if (closedReason) return failClosed(closedReason, estimated, def?.risk_level ?? 'high');
    const snap = this.snapshot.current;
    const key = options.idempotencyKey ?? hash;
    const action: PolicyAction = { agent_id: this.agentId, action_name: name, arguments: args, estimated_cost_usd: estimated, risk_level: def?.risk_level ?? null };
    if (options.idempotencyKey !== undefined) action.idempotency_key = options.idempotencyKey;
    if (moderation && 'scores' in moderation) action.moderation_scores = moderation.scores;
    const seen = key === undefined ? undefined : this.idempotency.get(`${name}\u0000${key}`);
    const now = Date.now();
    const context: DecisionContext = {
      now,
      run_spend_usd: run.spendUsd,
      session_spend_usd: run.sessionId ? (this.sessions.get(run.sessionId) ?? 0) : run.spendUsd,
      // The run's calls with their arguments hashes (rate limits and the loop guardrail count them), and the
      // idempotency key this call repeats while its result is still cached (the idempotency guardrail replays it).
      recent_calls: run.calls,
      idempotency_records: key !== undefined && seen && seen.expiresAt > now ? [{ action_name: name, idempotency_key: key, at: seen.at }] : [],
    };
    const d = decide(this.facts().prepared, snap?.killSwitches ?? NO_KILL_SWITCHES, action, context);
    // An allow is acted on, never shown to the caller: no copy (the hot path).
    if (d.decision === 'allow' && !(moderation && 'error' in moderation)) return d as unknown as GovernanceDecision;
    const out = { ...d, ...(d.guardrail_context ? { context: d.guardrail_context as Record<string, unknown> } : {}) } as GovernanceDecision;
    if (moderation && 'error' in moderation) return moderationUnavailable(out, this.facts().moderation ?? [], name, moderation.error, estimated, def?.risk_level ?? null);
    return out;
  }

  /** @internal Whether any applicable policy has a moderation guardrail (`act` then asks the provider first). */
  moderates(): boolean {
    return this.facts().moderation !== null;
  }

  /**
   * @internal Score the arguments' strings with the moderation provider: every non-blank string (nested objects and
   * arrays included), each distinct text asked once, at most {@link MAX_MODERATED_FIELDS} fields. Never rejects: a
   * missing provider, a provider error, an answer of the wrong length or too many strings give `{error}`.
   */
  async moderate(args: Record<string, unknown>): Promise<Moderated> {
    const provider = this.opts.moderation;
    if (!provider) return { error: 'no moderation provider was given to Governor.connect (option moderation)' };
    const fields: Array<{ field_path: string; text: number }> = [];
    const texts: string[] = [];
    const index = new Map<string, number>();
    let tooMany = false;
    const truncated = walkStrings(args, (text, place) => {
      if (text.trim() === '') return true;
      if (fields.length >= MAX_MODERATED_FIELDS) {
        tooMany = true;
        return false;
      }
      let i = index.get(text);
      if (i === undefined) index.set(text, (i = texts.push(text) - 1));
      fields.push({ field_path: fieldPathOf(place), text: i });
      return true;
    });
    if (truncated || tooMany) return { error: `the arguments hold more strings than the moderation guardrail checks (at most ${MAX_MODERATED_FIELDS} fields, 1 MiB of text)` };
    if (texts.length === 0) return { scores: [] };
    let results: Array<Record<string, number>>;
    try {
      results = await provider.moderate(texts);
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
    if (!Array.isArray(results) || results.length !== texts.length) return { error: `the moderation provider answered ${Array.isArray(results) ? results.length : 'no'} result(s) for ${texts.length} text(s)` };
    const scores: ModerationScores = [];
    for (const f of fields) {
      const r = results[f.text];
      if (r === null || typeof r !== 'object') return { error: `the moderation provider answered ${JSON.stringify(r)} for a text, not a record of scores` };
      const clean: Record<string, number> = {};
      for (const [k, v] of Object.entries(r)) if (typeof v === 'number' && v >= 0 && v <= 1 && k.length <= 128) clean[k] = v;
      scores.push({ field_path: f.field_path, scores: clean });
    }
    return { scores };
  }

  /** @internal How long results of `name` are kept for the idempotency guardrail (ms), or null when no policy asks. */
  idempotencyTtlMs(name: string): number | null {
    const f = this.facts();
    if (!f.idempotency) return null;
    let ttl: number | null = null;
    for (const g of f.idempotency) if (g.actions.includes(name) || g.actions.includes('*')) ttl = Math.max(ttl ?? 0, g.ttlMs);
    return ttl;
  }

  /** @internal The longest window (ms) of any rate limit or loop guardrail of the snapshot's policies; 0 for none. */
  longestWindowMs(): number {
    return this.facts().longestWindowMs;
  }

  /** @internal Whether any applicable policy has a loop or idempotency guardrail (the argument hash is then computed). */
  needsArgsHash(): boolean {
    return this.facts().needsArgsHash;
  }

  /** What the snapshot's policies ask of the SDK's state, computed once per snapshot. */
  private facts(): SnapshotFacts {
    const policies = this.snapshot.current?.policies ?? NO_POLICIES;
    if (this.factsOf === policies && this.cachedFacts) return this.cachedFacts;
    const f: SnapshotFacts = { longestWindowMs: 0, needsArgsHash: false, idempotency: null, moderation: null, prepared: new PreparedPolicies(policies) };
    for (const p of policies) {
      for (const k in p.rate_limits) f.longestWindowMs = Math.max(f.longestWindowMs, p.rate_limits[k].window_seconds * 1000);
      const g = (p as { guardrails?: { loop?: { window_seconds?: number } | null; idempotency?: { actions?: string[]; ttl_seconds?: number } | null; moderation?: { mode?: string } | null } | null }).guardrails;
      if (g?.moderation) (f.moderation ??= []).push({ policy_id: p.id, policy_name: p.name, mode: g.moderation.mode === 'warn' ? 'warn' : 'block' });
      if (g?.loop) {
        f.needsArgsHash = true;
        if (g.loop.window_seconds) f.longestWindowMs = Math.max(f.longestWindowMs, g.loop.window_seconds * 1000);
      }
      if (g?.idempotency && Array.isArray(g.idempotency.actions)) {
        f.needsArgsHash = true;
        (f.idempotency ??= []).push({ actions: g.idempotency.actions, ttlMs: (g.idempotency.ttl_seconds ?? 3600) * 1000 });
      }
    }
    this.factsOf = policies;
    this.cachedFacts = f;
    return f;
  }
  private factsOf: unknown = null;
  private cachedFacts: SnapshotFacts | null = null;
}

/** See {@link Governor.facts}. */
interface SnapshotFacts {
  longestWindowMs: number;
  needsArgsHash: boolean;
  idempotency: Array<{ actions: string[]; ttlMs: number }> | null;
  /** The applicable policies with a moderation guardrail, in the snapshot's order; null for none. */
  moderation: ModerationGuardrailOf[] | null;
  /** The snapshot's policies prepared for `decide` (an action none of them can stop is answered without evaluating each). */
  prepared: PreparedPolicies;
}
const NO_POLICIES: never[] = [];

/** A policy's moderation guardrail, as the fail-closed rule needs it. */
interface ModerationGuardrailOf {
  policy_id: string;
  policy_name: string;
  mode: 'block' | 'warn';
}

/** Most string fields of one action's arguments the moderation guardrail scores (the engine's `ModerationScoresSchema` bound). */
const MAX_MODERATED_FIELDS = 1000;

/** The moderation provider's scores of an action's arguments, or why there are none. */
type Moderated = { scores: ModerationScores } | { error: string };

const rankOf = (decision: string) => {
  const i = (POLICY_DECISIONS as readonly string[]).indexOf(decision);
  return i < 0 ? 0 : i;
};

/**
 * The decision when the moderation guardrail could not score the arguments (no provider, provider error or timeout,
 * an answer of the wrong shape). A guardrail that cannot look acts as if it had found something, without a context:
 * - a `block`-mode moderation guardrail applies → the action is blocked (`block` / `hard_block`, rule
 *   `moderation_guardrail`, the guardrail's policy, a reason naming the failure), unless `d` is already at least as
 *   restrictive (a kill switch, a deny list, the PII guardrail: the engine's precedence);
 * - only `warn`-mode ones → `d` when something else decided, else a warning naming the failure.
 */
function moderationUnavailable(d: GovernanceDecision, guardrails: ModerationGuardrailOf[], name: string, error: string, estimated: number, risk: GovernanceDecision['risk_level'] | null): GovernanceDecision {
  const blocking = guardrails.find((g) => g.mode === 'block');
  const g = blocking ?? guardrails[0];
  if (!g) return d;
  const why = `${name} arguments could not be moderated (${error})`;
  const base = { rule: 'moderation_guardrail', policy_id: g.policy_id, policy_name: g.policy_name, risk_level: risk ?? RULE_RISK.moderation_guardrail, estimated_cost_usd: estimated };
  if (blocking) {
    if (rankOf(d.decision) <= rankOf('content_blocked')) return d;
    return { ...base, decision: 'block', intervention_type: 'hard_block', outcome: 'blocked', reason: `${why}; the moderation guardrail of policy "${g.policy_name}" fails closed`, cost_prevented_usd: estimated };
  }
  if (d.decision !== 'allow') return d;
  return { ...base, decision: 'warn', intervention_type: 'warning', outcome: 'warned', reason: `${why}; warned by the moderation guardrail of policy "${g.policy_name}"`, cost_prevented_usd: 0 };
}

/** A decision the SDK takes itself when it cannot trust its snapshot: block, no policy. */
function failClosed(reason: string, estimated: number, risk: GovernanceDecision['risk_level']): GovernanceDecision {
  return { decision: 'block', intervention_type: 'hard_block', outcome: 'blocked', rule: null, policy_id: null, policy_name: null, reason, risk_level: risk, estimated_cost_usd: estimated, cost_prevented_usd: estimated };
}

/** Whether `v` is a plain object (not an array, class instance or null). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** What {@link copyPlain} answers for data it leaves to `structuredClone`. */
const NOT_PLAIN = Symbol('not plain');
/** Nesting {@link copyPlain} copies itself; deeper arguments (or a cycle) go to the `structuredClone` path. */
const PLAIN_DEPTH = 64;

/**
 * A copy of JSON-like data made of plain objects, arrays without holes and primitives other than bigint, function and
 * symbol, at most {@link PLAIN_DEPTH} levels deep: every container copied, strings shared (they are immutable).
 * Anything else (a class instance, a Date, a hole, a `__proto__` key, deeper nesting or a cycle) gives
 * {@link NOT_PLAIN}. Several times cheaper than `JSON.stringify` + `structuredClone`, and the copy holds fewer objects.
 */
function copyPlain(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol' ? NOT_PLAIN : v;
  if (depth > PLAIN_DEPTH) return NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return NOT_PLAIN;
      const c = copyPlain(v[i], depth + 1);
      if (c === NOT_PLAIN) return NOT_PLAIN;
      out[i] = c;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k in v) {
    if (k === '__proto__') return NOT_PLAIN;
    const c = copyPlain((v as Record<string, unknown>)[k], depth + 1);
    if (c === NOT_PLAIN) return NOT_PLAIN;
    out[k] = c;
  }
  return out;
}

/**
 * A copy of the arguments taken when `act` is called, so what was decided (and approved) is what runs and is recorded:
 * a shallow copy when every value is a primitive (the common case, ~10× cheaper), else a copy of its plain objects and
 * arrays ({@link copyPlain}), else (class instances, deep nesting, cycles…) `structuredClone` after a `JSON.stringify`
 * check.
 * @throws TypeError when the arguments are not JSON data (a function, symbol or bigint; a cycle).
 */
function copyArgs<A extends Record<string, unknown>>(name: string, args: A): A {
  let flat = true;
  for (const k in args) {
    const v = args[k];
    if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') throw new TypeError(`act ${name}: arguments must be JSON data; ${k} is a ${typeof v}`);
    if (v !== null && typeof v === 'object') {
      flat = false;
      break;
    }
  }
  if (flat) return { ...args };
  const plain = copyPlain(args, 0);
  if (plain !== NOT_PLAIN) return plain as A;
  try {
    JSON.stringify(args);
    return structuredClone(args);
  } catch (err) {
    throw new TypeError(`act ${name}: arguments must be JSON data (${(err as Error).message})`);
  }
}

/** A JSON-safe copy of a function's result for the ledger (`{unserializable: …}` when it has none). */
function jsonSafe(v: unknown): unknown {
  if (v === undefined) return null;
  // JSON's own values need no copy; a string of at most 40 Ki characters stays under the 256 KiB bound below even
  // when every character is escaped (6 bytes each).
  if (v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length <= 40 * 1024)) return v;
  try {
    const text = JSON.stringify(v);
    if (text === undefined) return { unserializable: String(v) };
    if (text.length > 256 * 1024) return { truncated: true, bytes: text.length, preview: text.slice(0, 4096) };
    return JSON.parse(text);
  } catch (err) {
    return { unserializable: (err as Error).message };
  }
}

/**
 * One run of the agent. `act` governs each action; `end` records how the run finished. Spend (USD) and the recent
 * calls of the run feed budgets and rate limits; a session's spend is shared by the runs of this governor that name it.
 */
export class Run {
  /** @internal USD spent (actual cost where reported, else the estimate) by actions of this run that executed. */
  spendUsd = 0;
  /** @internal Executed calls (for rate limits and loop detection), oldest first. */
  readonly calls: Array<RecentCall & { arguments_hash?: string }> = [];
  private seq = 0;
  private ended = false;
  private readonly idPrefix: string;

  /** @internal */
  constructor(
    private readonly gov: Governor,
    /** The run's id. */
    readonly runId: string,
    /** The session this run belongs to, or null. */
    readonly sessionId: string | null,
  ) {
    this.idPrefix = `${idPart(runId)}.${nonce()}`;
  }

  /**
   * Govern one action: check `args` against the action's registered schema, decide locally, then:
   * - allow / warn: run `fn(args, ctx)` and record the ledger entry (a warn also records a `warning` intervention);
   * - block, budget_exceeded, rate_limited, loop_detected, pii_blocked, content_blocked: do not run; record the
   *   intervention; throw {@link ActionBlockedError} (or resolve `{blocked: true, decision}` with `onBlocked: 'return'`);
   * - escalate: record the intervention (which opens an approval) and wait for a human up to `approvalTimeoutMs`;
   *   approved → check kill switches and policies again, then run; rejected, expired or timed out →
   *   {@link ApprovalRejectedError};
   * - downgrade: run with the decision's `modified_inputs` and record the intervention;
   * - idempotent_replay: resolve the first call's result without running, and record the intervention.
   * Never waits on the network unless it escalates, or a moderation guardrail applies (the provider scores the
   * arguments' strings first; see {@link GovernorOptions.moderation}). `fn` may report the actual cost with `ctx.reportCost(usd)`.
   * When the agent traces with OpenTelemetry (a tracer provider registered), each call is an `agp.act` span under the
   * caller's active span, with the decision's attributes and never the arguments; `fn` runs inside it
   * (docs/operations.md, The agent SDK's `agp.act` span).
   * @throws TypeError when `name` is not registered, `args` fails its JSON Schema (naming the field), or an argument
   *   or option is malformed — before any decision.
   * @throws whatever `fn` throws (the ledger entry is recorded with status `error`).
   */
  act<A extends Record<string, unknown>, R>(name: string, args: A, fn: (args: A, ctx: ActContext) => R | Promise<R>, options: ActOptions & { onBlocked: 'return' }): Promise<R | BlockedResult>;
  act<A extends Record<string, unknown>, R>(name: string, args: A, fn: (args: A, ctx: ActContext) => R | Promise<R>, options?: ActOptions): Promise<R>;
  act<A extends Record<string, unknown>, R>(name: string, args: A, fn: (args: A, ctx: ActContext) => R | Promise<R>, options: ActOptions = {}): Promise<R | BlockedResult> {
    // The `agp.act` span, when the agent traces (./tracing.ts); without one, no wrapper and nothing more is done.
    const span = startActSpan(this.gov.agentId, name);
    return span === null ? this.govern(name, args, fn, options, null) : this.traced(span, name, args, fn, options);
  }

  /** {@link Run.act} inside its `agp.act` span: ended when the act settles, failed when it throws but for a stop. */
  private async traced<A extends Record<string, unknown>, R>(span: ActSpan, name: string, args: A, fn: (args: A, ctx: ActContext) => R | Promise<R>, options: ActOptions): Promise<R | BlockedResult> {
    try {
      return await this.govern(name, args, fn, options, span);
    } catch (err) {
      // A stopped action is a decision (on the span), not a failure.
      if (!(err instanceof ActionBlockedError || err instanceof ApprovalRejectedError)) span.failed(err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** The body of {@link Run.act}: check the arguments and options (rejecting with a TypeError), decide, then {@link Run.dispatch}. */
  private async govern<A extends Record<string, unknown>, R>(name: string, args: A, fn: (args: A, ctx: ActContext) => R | Promise<R>, options: ActOptions, span: ActSpan | null): Promise<R | BlockedResult> {
    if (this.ended) throw new Error(`run ${this.runId} has ended`);
    if (this.gov.isClosed) throw new Error('the governor is closed');
    if (typeof name !== 'string' || !name || name.length > 256) throw new TypeError('act: the action name must be a string of 1–256 characters');
    if (!isPlainObject(args)) throw new TypeError(`act ${name}: arguments must be a plain object`);
    if (typeof fn !== 'function') throw new TypeError(`act ${name}: fn must be a function`);
    const est = options.estimatedCostUsd;
    if (est !== undefined && (typeof est !== 'number' || !Number.isFinite(est) || est < 0)) throw new TypeError(`act ${name}: estimatedCostUsd must be a finite number ≥ 0 (USD), got ${JSON.stringify(est)}`);
    if (options.onBlocked !== undefined && options.onBlocked !== 'throw' && options.onBlocked !== 'return') throw new TypeError(`act ${name}: onBlocked must be 'throw' or 'return'`);
    if (options.idempotencyKey !== undefined && (typeof options.idempotencyKey !== 'string' || !options.idempotencyKey)) throw new TypeError(`act ${name}: idempotencyKey must be a non-empty string`);
    this.gov.schemas.check(name, args);
    const inputs = copyArgs(name, args);
    const estimated = est ?? this.gov.schemas.definition(name)?.typical_cost_usd ?? 0;
    const seq = ++this.seq;
    if (this.gov.reporter.full()) {
      this.gov.refusedSpoolFull++;
      const d = failClosed(`the report spool is full (${this.gov.reporter.spool.pendingBytes()} bytes not yet acknowledged by the platform: ${this.gov.reporter.stats().last_error ?? 'no error yet'}); new actions are refused until reports are delivered`, estimated, 'high');
      span?.decided(d, false);
      return this.blocked(name, d, options);
    }
    const hash = this.argsHash(inputs);
    // The one network wait before a decision: the moderation provider, only while a moderation guardrail applies.
    const moderation = this.gov.moderates() ? await this.gov.moderate(inputs) : undefined;
    const d = this.gov.decideFor(this, name, inputs, estimated, options, hash, moderation);
    return this.dispatch(new Call(name, inputs, fn as (args: Record<string, unknown>, ctx: ActContext) => unknown, options, seq, estimated, hash, moderation, span), d, false) as Promise<R | BlockedResult>;
  }

  /** Record the end of the run (`run.end`): `completed` or `failed`, with an optional error text. */
  async end(options: { status: 'completed' | 'failed'; error?: string } = { status: 'completed' }): Promise<void> {
    if (options.status !== 'completed' && options.status !== 'failed') throw new TypeError(`run.end: status must be 'completed' or 'failed', got ${JSON.stringify(options.status)}`);
    if (this.ended) return;
    if (this.gov.isClosed) throw new Error('the governor is closed');
    this.ended = true;
    this.gov.report('run.end', `run.${idPart(this.runId)}.end`, {
      run_id: this.runId,
      agent_id: this.gov.agentId,
      status: options.status,
      ended_at: new Date().toISOString(),
      ...(options.error ? { error: options.error.slice(0, 10_000) } : {}),
    });
  }

  /** @internal The argument hash, when a guardrail needs it (computing it costs a few µs). */
  argsHash(args: Record<string, unknown>): string | undefined {
    return this.gov.needsArgsHash() ? argumentsHash(args) : undefined;
  }

  /** Act on a decision. `approved`: a human approved this call (an escalate then runs). */
  private async dispatch(c: Call, d: GovernanceDecision, approved: boolean): Promise<unknown> {
    if (this.gov.opts.onDecision) this.gov.notifyDecision({ action_name: c.name, run_id: this.runId, decision: d, approved });
    if (c.span !== null) c.span.decided(d, approved);
    switch (d.decision) {
      case 'allow':
        return this.execute(c, c.inputs);
      case 'warn':
        this.intervention(c, d, null);
        return this.execute(c, d.modified_inputs ?? c.inputs);
      case 'downgrade': {
        const modified = d.modified_inputs ?? c.inputs;
        this.intervention(c, d, modified);
        return this.execute(c, modified);
      }
      case 'idempotent_replay': {
        const key = c.options.idempotencyKey ?? c.hash ?? argumentsHash(c.inputs);
        const cached = this.gov.idempotency.get(`${c.name}\u0000${key}`);
        if (!cached || cached.expiresAt <= Date.now()) return this.execute(c, c.inputs);
        this.intervention(c, d, null);
        return cached.result;
      }
      case 'escalate':
        if (approved) return this.execute(c, c.inputs);
        return this.escalate(c, d);
      case 'block':
      case 'budget_exceeded':
      case 'rate_limited':
      case 'loop_detected':
      case 'pii_blocked':
      case 'content_blocked':
        this.intervention(c, d, null);
        this.ledger(c, c.inputs, 'blocked', {});
        return this.blocked(c.name, d, c.options);
      default: {
        // A decision this SDK does not know: by its outcome when that is clear, else fail closed.
        if (d.outcome === 'warned' || d.outcome === 'modified') {
          this.intervention(c, d, d.modified_inputs ?? null);
          return this.execute(c, d.modified_inputs ?? c.inputs);
        }
        const closed = { ...d, ...failClosed(`unknown decision "${d.decision}" (this SDK ${SDK_VERSION} fails closed): ${d.reason}`, c.estimated, d.risk_level) };
        this.intervention(c, closed, null);
        this.ledger(c, c.inputs, 'blocked', {});
        return this.blocked(c.name, closed, c.options);
      }
    }
  }

  /** Throw {@link ActionBlockedError}, or return `{blocked: true, decision}` under `onBlocked: 'return'`. */
  private blocked(name: string, d: GovernanceDecision, options: ActOptions): BlockedResult {
    if ((options.onBlocked ?? this.gov.opts.onBlocked) === 'return') return { blocked: true, decision: d };
    throw new ActionBlockedError(name, d);
  }

  /** Run `fn` with `args`, recording the ledger entry; the call counts for rate limits and spend from its start. */
  private async execute(c: Call, args: Record<string, unknown>): Promise<unknown> {
    const ctx = new Context(this.runId, this.sessionId);
    const at = Date.now();
    this.calls.push(c.hash ? { action_name: c.name, at, arguments_hash: c.hash } : { action_name: c.name, at });
    this.pruneCalls(at);
    this.addSpend(c.estimated);
    const t0 = performance.now();
    let out: unknown;
    try {
      out = await (c.span === null ? c.fn(args, ctx) : c.span.run(() => c.fn(args, ctx)));
    } catch (err) {
      this.settle(c, ctx.actual);
      this.ledger(c, args, 'error', { duration_ms: performance.now() - t0, actual: ctx.actual, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
      throw err;
    }
    this.settle(c, ctx.actual);
    const ref = this.ledger(c, args, 'success', { duration_ms: performance.now() - t0, actual: ctx.actual, outputs: jsonSafe(out) });
    const ttl = this.gov.idempotencyTtlMs(c.name);
    if (ttl !== null) {
      const key = c.options.idempotencyKey ?? c.hash ?? argumentsHash(c.inputs);
      const now = Date.now();
      this.gov.idempotency.set(`${c.name}\u0000${key}`, { result: out, at: now, ref, expiresAt: now + ttl });
      if (this.gov.idempotency.size > 10_000) this.gov.idempotency.delete(this.gov.idempotency.keys().next().value as string);
    }
    return out;
  }

  /**
   * Drop calls older than the longest window any applicable policy counts (rate limits, loop guardrail), and at least
   * the last minute (so a rate limit added in the console counts the calls just before it), in chunks (not one shift
   * per call). Calls are appended in time order. At most 20 000 are kept whatever the windows.
   */
  private pruneCalls(now: number): void {
    const calls = this.calls;
    const cutoff = now - Math.max(60_000, this.gov.longestWindowMs());
    let i = 0;
    while (i < calls.length && calls[i].at <= cutoff) i++;
    if (calls.length - i > 20_000) i = calls.length - 10_000;
    if (i > 256 || (i > 0 && i * 2 > calls.length)) calls.splice(0, i);
  }

  private addSpend(usd: number): void {
    if (!usd) return;
    this.spendUsd += usd;
    if (this.sessionId) this.gov.sessions.set(this.sessionId, (this.gov.sessions.get(this.sessionId) ?? 0) + usd);
  }

  /** Replace the estimate counted at the start with the actual cost, when the function reported one. */
  private settle(c: Call, actual: number | undefined): void {
    if (actual !== undefined) this.addSpend(actual - c.estimated);
  }

  /** Record the ledger entry (`action.record`); returns its report id. */
  private ledger(c: Call, args: Record<string, unknown>, status: 'success' | 'error' | 'blocked', r: { duration_ms?: number; actual?: number; outputs?: unknown; error?: string }): string {
    const id = `${this.idPrefix}.${c.seq}.a`;
    const timestamp = isoTime();
    const body: Record<string, unknown> = { run_id: this.runId, agent_id: this.gov.agentId, action_name: c.name, status, inputs: args };
    if (r.outputs !== undefined) body.outputs = r.outputs;
    body.cost_usd = c.estimated;
    if (r.actual !== undefined) body.actual_cost_usd = r.actual;
    if (r.duration_ms !== undefined) body.duration_ms = Math.round(r.duration_ms * 1000) / 1000;
    if (r.error) body.error = r.error.slice(0, 10_000);
    body.timestamp = timestamp;
    this.gov.report('action.record', id, body, timestamp, c.span === null ? undefined : c.span.traceparent);
    return id;
  }

  /** The intervention record of decision `d` for call `c`, with every spec field the SDK knows. */
  private interventionBody(c: Call, d: GovernanceDecision, modified: Record<string, unknown> | null): Record<string, unknown> {
    // Built field by field (not with conditional spreads, each of which allocates an object and copies it).
    const body: Record<string, unknown> = { type: d.intervention_type ?? 'hard_block', outcome: d.outcome ?? 'blocked', action_name: c.name, agent_id: this.gov.agentId, run_id: this.runId };
    if (d.policy_id) body.policy_id = d.policy_id;
    if (d.policy_name) body.policy_name = d.policy_name.slice(0, 256);
    body.risk_level = d.risk_level;
    body.estimated_cost_usd = c.estimated;
    body.cost_prevented_usd = d.cost_prevented_usd ?? (STOPPING.has(d.decision) ? c.estimated : 0);
    body.reason = d.reason.slice(0, 10_000);
    if (c.options.intent) body.agent_intent = c.options.intent.slice(0, 10_000);
    body.original_inputs = c.inputs;
    body.modified_inputs = modified;
    if (d.context && GUARDRAIL_TYPES.has(d.intervention_type ?? '')) body.context = d.context;
    body.timestamp = isoTime();
    return body;
  }

  /** Report the intervention of decision `d` for call `c` (background). */
  private intervention(c: Call, d: GovernanceDecision, modified: Record<string, unknown> | null): void {
    this.gov.report('intervention.create', `${this.idPrefix}.${c.seq}.i`, this.interventionBody(c, d, modified), undefined, c.span === null ? undefined : c.span.traceparent);
  }

  /**
   * Escalate: record the escalated intervention synchronously (its id names the approval), then wait for a human.
   * Approved → the snapshot is refreshed and the call decided again (kill switches and policies still apply; the
   * approval covers only the approval rule), and the call runs. Anything else → {@link ApprovalRejectedError}.
   */
  private async escalate(c: Call, d: GovernanceDecision): Promise<unknown> {
    const timeoutMs = c.options.approvalTimeoutMs ?? this.gov.opts.approvalTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const hash = argumentsHash(c.inputs);
    const body = { ...this.interventionBody(c, d, null), description: `${c.name} awaits approval; arguments sha256 ${hash}` };
    let approvalId: string | null = null;
    while (approvalId === null && Date.now() < deadline) {
      try {
        const rec = await this.gov.client.createIntervention(body as Parameters<AgpClient['createIntervention']>[0]);
        approvalId = approvalIdOf(rec.id);
      } catch (err) {
        const transient = err instanceof AgpNetworkError || (err instanceof AgpHttpError && (err.status === 429 || err.status >= 500));
        if (!transient) throw err;
        await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
      }
    }
    const end = (status: ApprovalEnd, a?: ApprovalRecord): never | BlockedResult => {
      this.ledger(c, c.inputs, 'blocked', {});
      const reason = `approval ${approvalId ?? '(not recorded)'} ${status}${a?.approver_email ? ` by ${a.approver_email}` : ''}${a?.notes ? `: ${a.notes}` : ''}`;
      const decision: GovernanceDecision = { ...d, reason, cost_prevented_usd: c.estimated };
      if ((c.options.onBlocked ?? this.gov.opts.onBlocked) === 'return') return { blocked: true, decision };
      throw new ApprovalRejectedError(c.name, status, approvalId, decision, { email: a?.approver_email ?? null, notes: a?.notes ?? null });
    };
    if (approvalId === null) return end('timeout');
    const started = Date.now();
    let heard: ApprovalDecided | null = null;
    let heardAt = 0;
    while (Date.now() < deadline) {
      let a: ApprovalRecord | null = null;
      try {
        a = await this.gov.client.getApproval(approvalId);
      } catch (err) {
        // 404 until the escalation is projected; network errors while the platform is away: keep waiting.
        if (!(err instanceof AgpNetworkError || (err instanceof AgpHttpError && (err.status === 404 || err.status === 429 || err.status >= 500)))) throw err;
      }
      if (a && a.status === 'approved') {
        if (!a.original_inputs || argumentsHash(a.original_inputs) !== hash) return end('mismatch', a);
        // The push channel keeps the snapshot current while it is live; else refresh it (a 304 when unchanged).
        if (this.gov.snapshot.ageMs() !== 0) await Promise.race([this.gov.snapshot.refresh(), sleep(2000)]);
        const again = this.gov.decideFor(this, c.name, c.inputs, c.estimated, c.options, c.hash, c.moderation);
        return this.dispatch(c, again, true);
      }
      if (a && (a.status === 'rejected' || a.status === 'expired')) return end(a.status, a);
      // The channel said it is decided but the approval does not show it yet (read model catching up): ask again soon.
      const left = Math.max(0, deadline - Date.now());
      const waited = Date.now() - started;
      const interval = waited < 60_000 ? this.gov.opts.approvalPollMs : Math.max(this.gov.opts.approvalPollMs, 5000);
      if (heard) {
        await sleep(Math.min(Date.now() - heardAt < 5000 ? 50 : interval, left));
        continue;
      }
      heard = await this.gov.waitApproval(approvalId, Math.min(interval, left));
      if (heard) heardAt = Date.now();
    }
    return end('timeout');
  }
}

/** The {@link ActContext} of one execution: what `fn` may report back. */
class Context implements ActContext {
  /** The actual cost `fn` reported (USD), if it did. */
  actual: number | undefined = undefined;
  constructor(
    readonly runId: string,
    readonly sessionId: string | null,
  ) {}

  /** Bound (an arrow), so `fn` may destructure it: `async (args, { reportCost }) => …`. */
  readonly reportCost = (usd: number): void => {
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) throw new TypeError(`reportCost: the cost must be a finite number ≥ 0 (USD), got ${JSON.stringify(usd)}`);
    this.actual = usd;
  };
}

/** One call of `act`, as decided. */
class Call {
  constructor(
    readonly name: string,
    readonly inputs: Record<string, unknown>,
    readonly fn: (args: Record<string, unknown>, ctx: ActContext) => unknown,
    readonly options: ActOptions,
    readonly seq: number,
    readonly estimated: number,
    /** The arguments' hash, when a guardrail needs it. */
    readonly hash: string | undefined,
    /** The moderation provider's scores of the arguments (or why there are none), when a moderation guardrail applies. */
    readonly moderation: Moderated | undefined,
    /** The call's `agp.act` span, when the agent traces. */
    readonly span: ActSpan | null,
  ) {}
}
