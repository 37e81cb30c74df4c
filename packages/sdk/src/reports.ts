/**
 * Reporting of one governor: the records `run.act`, `startRun`, `run.end` and `connect` report, built here and handed
 * to the reporter (./reporter.ts) in ONE place ({@link Reports.send}); the reporter spools each first and delivers
 * it through `POST /api/v1/ingest/` in the background. Whether a new action may be recorded at all is asked here
 * too ({@link Reports.mustWait}, {@link Reports.admission}: an action waits while the spool is at its bound).
 * - `action.record` (the ledger entry): status `success`, `error` or `blocked`; `cost_usd` is the estimate of an action
 *   that ran. A blocked entry carries no cost: an action that did not run spent nothing, and a run's cost counts
 *   what ran. What a stopped action would have cost is its intervention's `cost_prevented_usd`.
 * - `intervention.create`: every spec field the SDK knows; a guardrail's context only for guardrail types.
 * - `run.start`, `run.end`, `agent.register`.
 * Report ids are made of the run id, a per-run nonce and the call's sequence number, so a retry or a re-delivery
 * after a restart sends the same id (ingest stores it once).
 * Source: docs/sdk.md §Reporting; spec §Intervention record, §Guardrail context payload.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GUARDRAIL_FOR_TYPE, STOPPING_DECISIONS, type InterventionType } from '@agp/contracts';
import type { GovernanceDecision } from './errors.js';
import type { Reporter } from './reporter.js';
import type { SpoolEvent } from './spool.js';

/** A report id part of at most 160 characters (long ids are hashed). */
export const idPart = (s: string) => (s.length <= 160 ? s : createHash('sha256').update(s).digest('hex').slice(0, 32));
/** A short random part of report ids (48 bits, base64url). */
export const nonce = () => randomBytes(6).toString('base64url');

let isoAt = -1;
let isoText = '';
/**
 * `new Date(ms).toISOString()`, for the current ms by default; remembered for the last ms asked, so the several
 * reports of one action (and of the actions of one millisecond) format the clock once (it costs ~0.2 µs each time).
 */
export function isoTime(ms: number = Date.now()): string {
  if (ms !== isoAt) {
    isoAt = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** One governed call as its reports need it. `estimated` in USD; `traceparent` of its `agp.act` span when the agent traces. */
export interface ReportedCall {
  runId: string;
  name: string;
  inputs: Record<string, unknown>;
  estimated: number;
  intent: string | undefined;
  traceparent: string | undefined;
  /** The report id of its ledger entry, and of its intervention. */
  ledgerId: string;
  interventionId: string;
}

/** What one ledger entry adds: duration (ms), actual cost (USD), the function's result or error. */
export interface LedgerDetail {
  duration_ms?: number;
  actual?: number;
  outputs?: unknown;
  error?: string;
}

/** See the module docs. */
export class Reports {
  /** Actions refused because the spool stayed full (nothing acknowledged for the stall time) or the governor closed while they waited. */
  refusedSpoolFull = 0;

  constructor(
    private readonly reporter: Reporter,
    private readonly agentId: string,
  ) {}

  /**
   * Whether a new action must first wait for room in the spool ({@link admission}); false while there is room
   * (synchronous and allocation-free: the path of every action then).
   */
  mustWait(): boolean {
    return this.reporter.mustWait();
  }

  /**
   * Wait until a new action may be decided and recorded: null when it may (acknowledgements made room), else why not
   * (the platform acknowledged nothing for the stall time, or the governor is closing; the action is then refused,
   * fail closed, and counted in {@link refusedSpoolFull}).
   */
  async admission(): Promise<string | null> {
    const refused = await this.reporter.whenRoom();
    if (refused !== null) this.refusedSpoolFull++;
    return refused;
  }

  /**
   * Spool one report and send it in the background: the one place reports reach the reporter.
   * @param traceparent the `traceparent` of the `agp.act` span that produced it, when the agent traces (its
   *   `agp.report` span links to it; ./tracing.ts).
   */
  send(type: string, id: string, body: Record<string, unknown>, timestamp: string = isoTime(), traceparent?: string): void {
    const ev: SpoolEvent = { id, type, timestamp, body };
    if (traceparent !== undefined) ev.traceparent = traceparent;
    this.reporter.enqueue(ev);
  }

  /** `run.start` of run `runId`. */
  runStarted(runId: string, o: { sessionId?: string; name?: string; metadata?: Record<string, unknown> }): void {
    this.send('run.start', `run.${idPart(runId)}.start`, {
      run_id: runId,
      agent_id: this.agentId,
      ...(o.sessionId ? { session_id: o.sessionId } : {}),
      ...(o.name ? { name: o.name } : {}),
      ...(o.metadata ? { metadata: o.metadata } : {}),
      started_at: new Date().toISOString(),
    });
  }

  /** `run.end` of run `runId`, with an error text of at most 10,000 characters. */
  runEnded(runId: string, status: 'completed' | 'failed', error: string | undefined): void {
    this.send('run.end', `run.${idPart(runId)}.end`, {
      run_id: runId,
      agent_id: this.agentId,
      status,
      ended_at: new Date().toISOString(),
      ...(error ? { error: error.slice(0, 10_000) } : {}),
    });
  }

  /** The ledger entry (`action.record`) of call `c`, run with `args`; returns its report id. A blocked entry has no cost. */
  ledger(c: ReportedCall, args: Record<string, unknown>, status: 'success' | 'error' | 'blocked', r: LedgerDetail): string {
    const timestamp = isoTime();
    const body: Record<string, unknown> = { run_id: c.runId, agent_id: this.agentId, action_name: c.name, status, inputs: args };
    if (r.outputs !== undefined) body.outputs = r.outputs;
    if (status !== 'blocked') body.cost_usd = c.estimated;
    if (r.actual !== undefined) body.actual_cost_usd = r.actual;
    if (r.duration_ms !== undefined) body.duration_ms = Math.round(r.duration_ms * 1000) / 1000;
    if (r.error) body.error = r.error.slice(0, 10_000);
    body.timestamp = timestamp;
    this.send('action.record', c.ledgerId, body, timestamp, c.traceparent);
    return c.ledgerId;
  }

  /** The intervention record of decision `d` for call `c`, with every spec field the SDK knows. */
  interventionBody(c: ReportedCall, d: GovernanceDecision, modified: Record<string, unknown> | null): Record<string, unknown> {
    // Built field by field (not with conditional spreads, each of which allocates an object and copies it).
    const type = d.intervention_type ?? 'hard_block';
    const body: Record<string, unknown> = { type, outcome: d.outcome ?? 'blocked', action_name: c.name, agent_id: this.agentId, run_id: c.runId };
    if (d.policy_id) body.policy_id = d.policy_id;
    if (d.policy_name) body.policy_name = d.policy_name.slice(0, 256);
    body.risk_level = d.risk_level;
    body.estimated_cost_usd = c.estimated;
    body.cost_prevented_usd = d.cost_prevented_usd ?? ((STOPPING_DECISIONS as ReadonlySet<string>).has(d.decision) ? c.estimated : 0);
    body.reason = d.reason.slice(0, 10_000);
    if (c.intent) body.agent_intent = c.intent.slice(0, 10_000);
    body.original_inputs = c.inputs;
    body.modified_inputs = modified;
    if (d.context && GUARDRAIL_FOR_TYPE[type as InterventionType] !== undefined) body.context = d.context;
    if (d.approval && body.outcome === 'escalated') {
      body.approvals_required = d.approval.approvals_required;
      body.separation_of_duties = d.approval.separation_of_duties;
    }
    body.timestamp = isoTime();
    return body;
  }

  /** Report the intervention of decision `d` for call `c` (background). */
  intervention(c: ReportedCall, d: GovernanceDecision, modified: Record<string, unknown> | null): void {
    this.send('intervention.create', c.interventionId, this.interventionBody(c, d, modified), undefined, c.traceparent);
  }
}
