/**
 * `Run`: one run of the agent. `act` governs each action (check the arguments, decide locally, then execute, stop,
 * wait for a human, run with downgraded arguments or replay a cached result, and report what happened); `end` records
 * how the run finished. The run keeps its own spend (USD) and recent calls, which feed budgets, rate limits and the
 * loop guardrail; a session's spend is shared by the runs of one governor that name it. Fleet-wide limits (session,
 * run and period budgets; agent- and organisation-scoped rate limits) are decided against the governor's leases
 * (./leases.ts): an action waits for a grant only when they do not hold what it needs.
 * A run gets from its governor only the capabilities it needs ({@link RunDeps}): the decision step, the result cache,
 * reporting, escalation, the action schemas and a few settings.
 * Source: docs/sdk.md §Governing actions; spec §Intervention types, §Intervention outcomes.
 */
import { performance } from 'node:perf_hooks';
import { STOPPING_DECISIONS } from '@agp/contracts';
import type { RecentCall } from '@agp/policy-engine';
import { copyArgs, isPlainObject, jsonSafe } from './args.js';
import { failClosed, type Decider } from './decider.js';
import { ActionBlockedError, ApprovalRejectedError, type BlockedResult, type GovernanceDecision } from './errors.js';
import type { ApprovalOutcome, Escalations } from './escalation.js';
import { argumentsHash } from './hash.js';
import type { LeaseNeed, Leases } from './leases.js';
import type { ModerationProvider } from './moderation.js';
import { scoreArguments, type Moderated } from './moderation-scores.js';
import { idPart, nonce, type ReportedCall, type Reports } from './reports.js';
import type { ResultCache } from './result-cache.js';
import type { ActionSchemas } from './schema.js';
import { startActSpan, type ActSpan } from './tracing.js';

/** This package's version, named in messages about answers of the platform it does not understand. */
export const SDK_VERSION = '0.1.0';

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
  /**
   * Called once when the call escalates and its approval is recorded, before the wait: the approval's id (for
   * `POST /api/v1/approvals/{id}/approve` or `/reject`) and the decision. Whoever decides it, the call goes on as for
   * any approval. Not called when the approval could not be recorded. An exception it throws is ignored.
   */
  onEscalated?: (escalation: { approvalId: string; decision: GovernanceDecision }) => void;
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

/** @internal What a {@link Run} needs of its governor. */
export interface RunDeps {
  agentId: string;
  schemas: ActionSchemas;
  decider: Decider;
  results: ResultCache;
  reports: Reports;
  escalations: Escalations;
  /** USD spent by the runs of each session id. */
  sessions: Map<string, number>;
  /** The governor's leases of fleet-wide limits. */
  leases: Leases;
  /** How long an action waits for a lease it needs, ms ({@link GovernorOptions.quotaWaitMs}). */
  quotaWaitMs: number;
  moderation: ModerationProvider | undefined;
  onBlocked: 'throw' | 'return';
  approvalTimeoutMs: number;
  /** Pass a decision to `onDecision` (absent when none was given). */
  notifyDecision: ((event: DecisionEvent) => void) | undefined;
  /** Whether the governor is closed (no more reports can be kept). */
  isClosed(): boolean;
}

/**
 * One run of the agent. `act` governs each action; `end` records how the run finished. Spend (USD) and the recent
 * calls of the run feed budgets and rate limits; a session's spend is shared by the runs of this governor that name it.
 * Fleet-wide limits count every process through the governor's leases (docs/sdk.md §Fleet-wide limits).
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
    private readonly deps: RunDeps,
    /** The run's id. */
    readonly runId: string,
    /** The session this run belongs to, or null. */
    readonly sessionId: string | null,
  ) {
    this.idPrefix = `${idPart(runId)}.${nonce()}`;
  }

  /** @internal The session's spend (USD), or the run's when it has no session. */
  get sessionSpendUsd(): number {
    return this.sessionId ? (this.deps.sessions.get(this.sessionId) ?? 0) : this.spendUsd;
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
   * Never waits on the network unless it escalates, a moderation guardrail applies (the provider scores the
   * arguments' strings first; see {@link GovernorOptions.moderation}), or the governor's leases of a fleet-wide limit
   * do not hold what the action needs (it waits for a grant up to `quotaWaitMs`; docs/sdk.md §Fleet-wide limits). `fn` may report the actual cost with `ctx.reportCost(usd)`.
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
    const span = startActSpan(this.deps.agentId, name);
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
    const deps = this.deps;
    if (this.ended) throw new Error(`run ${this.runId} has ended`);
    if (deps.isClosed()) throw new Error('the governor is closed');
    if (typeof name !== 'string' || !name || name.length > 256) throw new TypeError('act: the action name must be a string of 1–256 characters');
    if (!isPlainObject(args)) throw new TypeError(`act ${name}: arguments must be a plain object`);
    if (typeof fn !== 'function') throw new TypeError(`act ${name}: fn must be a function`);
    const est = options.estimatedCostUsd;
    if (est !== undefined && (typeof est !== 'number' || !Number.isFinite(est) || est < 0)) throw new TypeError(`act ${name}: estimatedCostUsd must be a finite number ≥ 0 (USD), got ${JSON.stringify(est)}`);
    if (options.onBlocked !== undefined && options.onBlocked !== 'throw' && options.onBlocked !== 'return') throw new TypeError(`act ${name}: onBlocked must be 'throw' or 'return'`);
    if (options.idempotencyKey !== undefined && (typeof options.idempotencyKey !== 'string' || !options.idempotencyKey)) throw new TypeError(`act ${name}: idempotencyKey must be a non-empty string`);
    deps.schemas.check(name, args);
    const inputs = copyArgs(name, args);
    const estimated = est ?? deps.schemas.definition(name)?.typical_cost_usd ?? 0;
    const seq = ++this.seq;
    // Admission (the reporter's bound): while the spool is full the action waits for acknowledgements (backpressure),
    // and is refused only when the platform stalls or the governor closes.
    if (deps.reports.mustWait()) {
      const refused = await deps.reports.admission();
      if (refused !== null) {
        const d = failClosed(refused, estimated, 'high');
        span?.decided(d, false);
        return this.blocked(name, d, options);
      }
    }
    // The arguments' hash, when a guardrail needs it (computing it costs a few µs).
    const hash = deps.decider.needsArgsHash() ? argumentsHash(inputs) : undefined;
    // The one network wait before a decision: the moderation provider, only while a moderation guardrail applies.
    const moderation = deps.decider.moderates() ? await scoreArguments(deps.moderation, inputs) : undefined;
    const needs = deps.leases.needsOf(name, estimated, this.runId, this.sessionId);
    const c = new Call(this.runId, `${this.idPrefix}.${seq}`, name, inputs, fn as Call['fn'], options, estimated, hash, moderation, span, needs);
    // Fleet-wide limits: decided locally while the leases hold the action's needs; else it waits for a grant first.
    if (needs.length > 0 && !deps.leases.covered(needs)) return this.leased(c, false) as Promise<R | BlockedResult>;
    return this.dispatch(c, this.decide(c), false) as Promise<R | BlockedResult>;
  }

  /**
   * Wait (up to `quotaWaitMs`) until the leases hold what call `c` needs, or the platform refuses or cannot be reached,
   * then decide and dispatch. The last check and the decision run with no await between them, and the decision's
   * consumption follows synchronously (in {@link Run.execute}): two concurrent calls never both spend the last unit.
   */
  private async leased(c: Call, approved: boolean): Promise<unknown> {
    const { leases, quotaWaitMs } = this.deps;
    const deadline = Date.now() + quotaWaitMs;
    while (!leases.covered(c.needs) && (await leases.ensure(c.needs, deadline - Date.now())));
    return this.dispatch(c, this.decide(c), approved);
  }

  /**
   * Record a call its caller stopped itself, before any policy was asked (the MCP proxy's tool pinning holds a tool
   * whose description or input schema changed): a `hard_block` intervention with outcome `blocked` and `reason`, and
   * a ledger entry with status `blocked`, reported like `act`'s (deterministic ids, through the spool). `fn` is never
   * run and no policy decides; the call does not count for rate limits, budgets or loops.
   * @param rule the decision's `rule` (what stopped it, e.g. `tool_pin`).
   * @returns `{blocked: true, decision}`: the decision (`block`, risk `high`) the caller reports to the agent.
   * @throws TypeError for a bad name or arguments; Error when the run has ended or the governor is closed.
   */
  refuse(name: string, args: Record<string, unknown>, reason: string, rule: string): BlockedResult {
    const deps = this.deps;
    if (this.ended) throw new Error(`run ${this.runId} has ended`);
    if (deps.isClosed()) throw new Error('the governor is closed');
    if (typeof name !== 'string' || !name || name.length > 256) throw new TypeError('refuse: the action name must be a string of 1–256 characters');
    if (!isPlainObject(args)) throw new TypeError(`refuse ${name}: arguments must be a plain object`);
    const inputs = copyArgs(name, args);
    const c = new Call(this.runId, `${this.idPrefix}.${++this.seq}`, name, inputs, () => undefined, {}, 0, undefined, undefined, null, []);
    const d: GovernanceDecision = { ...failClosed(reason, 0, 'high'), rule };
    if (deps.notifyDecision) deps.notifyDecision({ action_name: name, run_id: this.runId, decision: d, approved: false });
    deps.reports.intervention(c, d, null);
    deps.reports.ledger(c, inputs, 'blocked', {});
    return { blocked: true, decision: d };
  }

  /** Record the end of the run (`run.end`): `completed` or `failed`, with an optional error text. */
  async end(options: { status: 'completed' | 'failed'; error?: string } = { status: 'completed' }): Promise<void> {
    if (options.status !== 'completed' && options.status !== 'failed') throw new TypeError(`run.end: status must be 'completed' or 'failed', got ${JSON.stringify(options.status)}`);
    if (this.ended) return;
    if (this.deps.isClosed()) throw new Error('the governor is closed');
    this.ended = true;
    this.deps.reports.runEnded(this.runId, options.status, options.error);
    this.deps.leases.endRun(this.runId);
  }

  /** The decision for call `c` against the run's state now. */
  private decide(c: Call): GovernanceDecision {
    const { leases, decider } = this.deps;
    const key = c.idempotencyKey;
    const repeats = key === undefined ? undefined : this.deps.results.get(c.name, key)?.at;
    const leased = c.needs.length > 0;
    const quota = leased ? leases.view(c.needs) : undefined;
    const quotaUnavailable = leased ? leases.unavailable(c.needs) : null;
    return decider.decide({ name: c.name, args: c.inputs, estimatedUsd: c.estimated, explicitKey: c.options.idempotencyKey, key, repeats, moderation: c.moderation, quota, quotaUnavailable }, this);
  }

  /** Act on a decision. `approved`: a human approved this call (an escalate then runs). */
  private async dispatch(c: Call, d: GovernanceDecision, approved: boolean): Promise<unknown> {
    const { reports, notifyDecision } = this.deps;
    if (notifyDecision) notifyDecision({ action_name: c.name, run_id: this.runId, decision: d, approved });
    if (c.span !== null) c.span.decided(d, approved);
    switch (d.decision) {
      case 'allow':
        return this.execute(c, c.inputs);
      case 'warn':
        reports.intervention(c, d, null);
        return this.execute(c, d.modified_inputs ?? c.inputs);
      case 'downgrade': {
        const modified = d.modified_inputs ?? c.inputs;
        reports.intervention(c, d, modified);
        return this.execute(c, modified);
      }
      case 'idempotent_replay': {
        const cached = this.deps.results.get(c.name, c.cacheKey());
        if (!cached) return this.execute(c, c.inputs);
        reports.intervention(c, d, null);
        return cached.result;
      }
      case 'escalate':
        if (approved) return this.execute(c, c.inputs);
        return this.escalate(c, d);
      default: {
        if ((STOPPING_DECISIONS as ReadonlySet<string>).has(d.decision)) {
          reports.intervention(c, d, null);
          reports.ledger(c, c.inputs, 'blocked', {});
          return this.blocked(c.name, d, c.options);
        }
        // A decision this SDK does not know: by its outcome when that is clear, else fail closed.
        if (d.outcome === 'warned' || d.outcome === 'modified') {
          reports.intervention(c, d, d.modified_inputs ?? null);
          return this.execute(c, d.modified_inputs ?? c.inputs);
        }
        const closed = { ...d, ...failClosed(`unknown decision "${d.decision}" (this SDK ${SDK_VERSION} fails closed): ${d.reason}`, c.estimated, d.risk_level) };
        reports.intervention(c, closed, null);
        reports.ledger(c, c.inputs, 'blocked', {});
        return this.blocked(c.name, closed, c.options);
      }
    }
  }

  /** Throw {@link ActionBlockedError}, or return `{blocked: true, decision}` under `onBlocked: 'return'`. */
  private blocked(name: string, d: GovernanceDecision, options: ActOptions): BlockedResult {
    if ((options.onBlocked ?? this.deps.onBlocked) === 'return') return { blocked: true, decision: d };
    throw new ActionBlockedError(name, d);
  }

  /**
   * Run `fn` with `args`, recording the ledger entry; the call counts for rate limits and spend from its start, and
   * its needs are consumed from the leases before the first await.
   */
  private async execute(c: Call, args: Record<string, unknown>): Promise<unknown> {
    const { reports } = this.deps;
    const ctx = new Context(this.runId, this.sessionId);
    const at = Date.now();
    this.calls.push(c.hash ? { action_name: c.name, at, arguments_hash: c.hash } : { action_name: c.name, at });
    this.pruneCalls(at);
    this.addSpend(c.estimated);
    if (c.needs.length > 0) this.deps.leases.consume(c.needs);
    const t0 = performance.now();
    let out: unknown;
    try {
      out = await (c.span === null ? c.fn(args, ctx) : c.span.run(() => c.fn(args, ctx)));
    } catch (err) {
      this.settle(c, ctx.actual);
      reports.ledger(c, args, 'error', { duration_ms: performance.now() - t0, actual: ctx.actual, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
      throw err;
    }
    this.settle(c, ctx.actual);
    const review = this.deps.decider.reviewResult(c.name, out, c.estimated);
    if (review !== null) {
      // The PII guardrail on the result: recorded as its own intervention (an id of its own, so that a warning or
      // downgrade of the arguments keeps its record); the ledger keeps what the agent may see.
      const rc: ReportedCall = { runId: c.runId, name: c.name, inputs: c.inputs, estimated: c.estimated, intent: c.intent, traceparent: c.traceparent, ledgerId: c.ledgerId, interventionId: `${c.interventionId}r` };
      reports.intervention(rc, review.decision, null);
      if (review.decision.decision === 'pii_blocked') {
        reports.ledger(c, args, 'success', { duration_ms: performance.now() - t0, actual: ctx.actual });
        return this.blocked(c.name, review.decision, c.options);
      }
      out = review.result;
    }
    const ref = reports.ledger(c, args, 'success', { duration_ms: performance.now() - t0, actual: ctx.actual, outputs: jsonSafe(out) });
    const ttl = this.deps.decider.idempotencyTtlMs(c.name);
    if (ttl !== null) this.deps.results.set(c.name, c.cacheKey(), out, ref, ttl);
    return out;
  }

  /**
   * Drop calls older than the longest window any applicable policy counts (rate limits, loop guardrail), and at least
   * the last minute (so a rate limit added in the console counts the calls just before it), in chunks (not one shift
   * per call). Calls are appended in time order. At most 20 000 are kept whatever the windows.
   */
  private pruneCalls(now: number): void {
    const calls = this.calls;
    const cutoff = now - Math.max(60_000, this.deps.decider.longestWindowMs());
    let i = 0;
    while (i < calls.length && calls[i].at <= cutoff) i++;
    if (calls.length - i > 20_000) i = calls.length - 10_000;
    if (i > 256 || (i > 0 && i * 2 > calls.length)) calls.splice(0, i);
  }

  private addSpend(usd: number): void {
    if (!usd) return;
    this.spendUsd += usd;
    if (this.sessionId) this.deps.sessions.set(this.sessionId, (this.deps.sessions.get(this.sessionId) ?? 0) + usd);
  }

  /** Replace the estimate counted at the start with the actual cost, when the function reported one (in the run, its session and the budget leases). */
  private settle(c: Call, actual: number | undefined): void {
    if (actual === undefined) return;
    this.addSpend(actual - c.estimated);
    if (c.needs.length > 0) this.deps.leases.settle(c.needs, actual - c.estimated);
  }

  /**
   * Escalate: record the escalated intervention synchronously (its id names the approval), then wait for a human.
   * Approved → the call is decided again (kill switches and policies still apply; the approval covers only the
   * approval rule), and runs. Anything else → {@link ApprovalRejectedError} (or `{blocked, decision}`).
   */
  private async escalate(c: Call, d: GovernanceDecision): Promise<unknown> {
    const { escalations, reports } = this.deps;
    const deadline = Date.now() + (c.options.approvalTimeoutMs ?? this.deps.approvalTimeoutMs);
    const hash = c.argumentsHash();
    const body = { ...reports.interventionBody(c, d, null), description: `${c.name} awaits approval; arguments sha256 ${hash}` };
    const approvalId = await escalations.open(body, deadline);
    if (approvalId !== null && c.options.onEscalated) {
      try {
        c.options.onEscalated({ approvalId, decision: d });
      } catch {
        // the caller's hook: its failure does not change the call
      }
    }
    const outcome: ApprovalOutcome = approvalId === null ? { approved: false, status: 'timeout' } : await escalations.await(approvalId, hash, deadline);
    if (outcome.approved) {
      // Decided again now: the needs too (a window may have turned while the human decided), leased first.
      c.needs = this.deps.leases.needsOf(c.name, c.estimated, this.runId, this.sessionId);
      if (c.needs.length > 0 && !this.deps.leases.covered(c.needs)) return this.leased(c, true);
      return this.dispatch(c, this.decide(c), true);
    }
    reports.ledger(c, c.inputs, 'blocked', {});
    const a = outcome.record;
    const reason = `approval ${approvalId ?? '(not recorded)'} ${outcome.status}${a?.approver_email ? ` by ${a.approver_email}` : ''}${a?.notes ? `: ${a.notes}` : ''}`;
    const decision: GovernanceDecision = { ...d, reason, cost_prevented_usd: c.estimated };
    if ((c.options.onBlocked ?? this.deps.onBlocked) === 'return') return { blocked: true, decision };
    throw new ApprovalRejectedError(c.name, outcome.status, approvalId, decision, { email: a?.approver_email ?? null, notes: a?.notes ?? null });
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

/** One call of `act`, as decided; what its reports need ({@link ReportedCall}) and its keys, each built once. */
class Call implements ReportedCall {
  readonly ledgerId: string;
  readonly interventionId: string;
  readonly intent: string | undefined;
  /** Its idempotency key for the decision: the caller's, else the arguments' hash when a guardrail needs it. */
  readonly idempotencyKey: string | undefined;
  private hashed: string | undefined;

  constructor(
    readonly runId: string,
    /** The run's id prefix and the call's sequence number: its reports' ids derive from it. */
    id: string,
    readonly name: string,
    readonly inputs: Record<string, unknown>,
    readonly fn: (args: Record<string, unknown>, ctx: ActContext) => unknown,
    readonly options: ActOptions,
    readonly estimated: number,
    /** The arguments' hash, when a guardrail needs it. */
    readonly hash: string | undefined,
    /** The moderation provider's scores of the arguments (or why there are none), when a moderation guardrail applies. */
    readonly moderation: Moderated | undefined,
    /** The call's `agp.act` span, when the agent traces. */
    readonly span: ActSpan | null,
    /** What it needs of each fleet-wide limit (computed again when it is decided again after an approval). */
    public needs: readonly LeaseNeed[],
  ) {
    this.ledgerId = `${id}.a`;
    this.interventionId = `${id}.i`;
    this.intent = options.intent;
    this.idempotencyKey = options.idempotencyKey ?? hash;
    this.hashed = hash;
  }

  /** The `traceparent` of its `agp.act` span, when the agent traces and the span is sampled. */
  get traceparent(): string | undefined {
    return this.span === null ? undefined : this.span.traceparent;
  }

  /** The arguments' hash (computed once, when first asked if no guardrail needed it). */
  argumentsHash(): string {
    return (this.hashed ??= argumentsHash(this.inputs));
  }

  /** The key its result is cached under: its idempotency key, else the arguments' hash. */
  cacheKey(): string {
    return this.idempotencyKey ?? this.argumentsHash();
  }
}
