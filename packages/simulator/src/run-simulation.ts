import { randomInt } from 'node:crypto';
import {
  actionCostUsd,
  INGEST_EVENT_TYPES,
  INGEST_MAX_EVENTS,
  INTERVENTION_OUTCOMES,
  INTERVENTION_TYPES,
  type IngestError,
  type IngestEventType,
  type IngestSuccess,
  type InterventionOutcome,
  type InterventionType,
} from '@agp/contracts';
import { POLICIES, type PolicySpec } from './catalogue.js';
import { simulateFleetEvents, type FleetEvent } from './fleet.js';
import { AgpClient, AgpHttpError, type RetryOptions } from '@agp/sdk/http';
import { simulateEvents } from './simulate.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A fresh simulation seed: a random integer in [1, 2^31 − 1]. `agp simulate` uses one unless `--seed` is given, so a
 * second run sends new event ids instead of only duplicates of the first (docs/ingest.md, Ingest answers).
 */
export function randomSeed(): number {
  return randomInt(1, 2 ** 31 - 1);
}

/** Options of {@link runSimulation}. */
export interface SimulationOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Write key (`agp_...`). */
  key: string;
  /** Number of simulated agents. */
  agents: number;
  /** Target rate in events per second. */
  rate: number;
  /** How long to send, in seconds; `round(rate × durationS)` events in all. */
  durationS: number;
  /** Most events per ingest request (1–1000); a request never holds more than one second's worth. @default 100 */
  batchSize?: number;
  /**
   * PRNG seed; event ids are `sim-<seed>-…`, so the same seed re-sends the same ids (answered `duplicate`).
   * @default a fresh random seed ({@link randomSeed}); the report names it.
   */
  seed?: number;
  /** When > 0, event timestamps spread over the last D days (a working-hours shape) instead of the sending window. @default 0 */
  backfillDays?: number;
  /** Most ingest requests in flight; beyond it the sender waits and the achieved rate drops below the target. @default 8 */
  maxInFlight?: number;
  /** fetch implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Retry policy of each ingest request. */
  retry?: RetryOptions;
  /**
   * Send the whole fleet — agent registrations, runs, ledger entries and interventions ({@link simulateFleetEvents}) —
   * rather than interventions only ({@link simulateEvents}). @default true
   */
  fleet?: boolean;
  /**
   * Called at most once per `progressIntervalMs` while the run lasts, when something changed since the last call
   * (docs/ingest.md, Simulated data). Not called after the last answer: the report says the rest.
   */
  onProgress?: (progress: SimulationProgress) => void;
  /** Interval of {@link onProgress}, in ms. @default 1000 */
  progressIntervalMs?: number;
}

/** A snapshot of a running simulation, for progress lines. Counts are events; `rate` is events sent per second so far. */
export interface SimulationProgress {
  /** Events planned in all. */
  planned: number;
  /** Events sent so far (answered or in flight). */
  sent: number;
  /** Answered `created` (201): stored for the first time. */
  created: number;
  /** Answered `duplicate` (200): already stored, or already in the ingest log. */
  duplicate: number;
  /** Rejected, per event or with their whole request. */
  rejected: number;
  /** Since the first request was scheduled, in ms. */
  elapsed_ms: number;
  /** `sent` per second of `elapsed_ms`, one decimal. */
  rate: number;
}

/** How the simulation's policies were provided: created through `POST /api/v1/policies`, or reused by name. */
export interface SimulationPolicies {
  /** Local catalogue key (`pol-budget-guard`) → the platform's policy id (a UUIDv7). */
  ids: Record<string, string>;
  /** Policies created by this run. */
  created: number;
  /** Policies reused because one with the same name existed. */
  reused: number;
}

/** A group of rejections with the same status and message. */
export interface RejectionGroup {
  status: number;
  message: string;
  count: number;
}

/** What a simulation sent and how the platform answered. Money in USD, times in ms. */
export interface SimulationReport {
  url: string;
  seed: number;
  /** Events the plan holds: `round(rate × durationS)`. */
  planned: number;
  /** Events sent (equals `planned` unless the run was aborted). */
  sent: number;
  /** Events the platform accepted: `created + duplicate` (every success of the 207 answers). */
  accepted: number;
  /** Events answered `created` (201): new, stored for the first time. */
  created: number;
  /** Events answered `duplicate` (200): their id was already stored, or the identical message was already in the log. */
  duplicate: number;
  /** Events the platform rejected, per event or with their whole request. */
  rejected: number;
  /** The most frequent rejections, at most 5. */
  rejections: RejectionGroup[];
  /** Sent events by ingest event type; every type is listed. */
  by_event_type: Record<IngestEventType, number>;
  /** Sent interventions by type; all ten types are listed. */
  by_type: Record<InterventionType, number>;
  /** Sent events by outcome; all six outcomes are listed. */
  by_outcome: Record<InterventionOutcome, number>;
  /** Distinct agents, runs and policies in the sent events. */
  agents: number;
  runs: number;
  policies: number;
  /** Of the simulation's policies (all six), how many this run created and how many it reused by name. */
  policies_created: number;
  policies_reused: number;
  /** Sum of `estimated_cost_usd` and of `cost_prevented_usd` over the sent interventions. */
  estimated_cost_usd: number;
  cost_prevented_usd: number;
  /** Sum of `cost_usd` (estimated) and of `actual_cost_usd` (where reported) over the sent ledger entries, in USD. */
  ledger_cost_usd: number;
  ledger_actual_cost_usd: number;
  /**
   * What the sent ledger entries cost, USD: per entry the actual cost where reported, else the estimate
   * (`actionCostUsd`; the platform's `total_cost_usd` once they are stored).
   */
  ledger_total_cost_usd: number;
  /** Earliest and latest event timestamps (ISO 8601), null when nothing was sent. */
  first_timestamp: string | null;
  last_timestamp: string | null;
  /** Ingest requests made (retries not counted). */
  requests: number;
  /** Wall time from the first request's schedule to the last answer. */
  elapsed_ms: number;
  /** Events sent per second of `elapsed_ms`. */
  achieved_rate: number;
}

/**
 * The run stopped early: the key was refused (401/403) or the gateway stayed unreachable. `cause` is the
 * {@link AgpHttpError} or {@link AgpNetworkError}; `report` covers what was sent before.
 */
export class SimulationAbortedError extends Error {
  override readonly name = 'SimulationAbortedError';
  constructor(
    readonly report: SimulationReport,
    options: { cause: unknown },
  ) {
    super(`simulation aborted: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`, options);
  }
}

/**
 * Provide the simulation's policies through the public API before anything cites them (docs/ingest.md, Simulated data): for each
 * catalogue policy, reuse the oldest policy with exactly its name (`GET /api/v1/policies?name=…`) or create it
 * (`POST /api/v1/policies`, server-assigned id). Two simulations started at the same instant may both create one.
 * @throws AgpHttpError when a request is refused (e.g. 403 for a read key); AgpNetworkError when the gateway is unreachable.
 */
export async function ensureSimulationPolicies(client: AgpClient, policies: readonly PolicySpec[] = POLICIES): Promise<SimulationPolicies> {
  const out: SimulationPolicies = { ids: {}, created: 0, reused: 0 };
  for (const spec of policies) {
    const page = await client.listPolicies({ name: spec.name, limit: 1000 });
    // Newest first: the last one is the oldest, i.e. the one the first simulation created.
    const existing = page.policies.at(-1);
    if (existing) {
      out.ids[spec.id] = existing.id;
      out.reused++;
    } else {
      out.ids[spec.id] = (await client.createPolicy({ name: spec.name, ...spec.settings })).id;
      out.created++;
    }
  }
  return out;
}

/**
 * Stream a simulated fleet to `POST /api/v1/ingest/` at `rate` events/s for `durationS` seconds: agent registrations,
 * runs, ledger entries and interventions ({@link simulateFleetEvents}), or interventions only with `fleet: false`
 * ({@link simulateEvents}) (timestamps: the sending window, or the last `backfillDays`
 * days) and sent in batches of at most `batchSize` and one second's worth, each when its last event is due,
 * with up to `maxInFlight` requests at once. First the six policies the interventions cite are created (or reused
 * by name, {@link ensureSimulationPolicies}) and every intervention cites the platform's policy id.
 * The report counts `created` and `duplicate` answers apart: with the seed of an earlier run, every event is a
 * duplicate. A request that fails with any other status counts its events as rejected and the run goes on.
 * @throws RangeError for an empty plan (`rate × durationS` < 0.5), a batch size outside 1–1000, or fewer than 1 agent.
 * @throws SimulationAbortedError on 401/403, when the policies cannot be provided, or when the gateway stays
 *   unreachable after retries.
 */
export async function runSimulation(opts: SimulationOptions): Promise<SimulationReport> {
  const batchSize = opts.batchSize ?? 100;
  const seed = opts.seed ?? randomSeed();
  const backfillDays = opts.backfillDays ?? 0;
  const maxInFlight = opts.maxInFlight ?? 8;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > INGEST_MAX_EVENTS) throw new RangeError(`batch size must be 1–${INGEST_MAX_EVENTS}, got ${batchSize}`);
  const planned = Math.round(opts.rate * opts.durationS);
  if (!(planned >= 1)) throw new RangeError(`rate × duration must be at least one event, got ${opts.rate} × ${opts.durationS}`);
  if (!Number.isInteger(opts.agents) || opts.agents < 1) throw new RangeError(`agents must be a positive integer, got ${opts.agents}`);

  const client = new AgpClient({ url: opts.url, key: opts.key, fetch: opts.fetch, retry: opts.retry });
  const tally = new Tally();
  let policies: SimulationPolicies;
  try {
    policies = await ensureSimulationPolicies(client);
  } catch (err) {
    throw new SimulationAbortedError(tally.report({ url: opts.url, seed, planned, elapsedMs: 0 }), { cause: err });
  }
  tally.policies(policies);

  const started = Date.now();
  const plan =
    backfillDays > 0
      ? { seed, agents: opts.agents, count: planned, fromMs: started - backfillDays * 86_400_000, toMs: started, shape: 'daily' as const }
      : { seed, agents: opts.agents, count: planned, fromMs: started, toMs: started + opts.durationS * 1000 };
  const events: Iterator<FleetEvent> = (opts.fleet ?? true) ? simulateFleetEvents(plan) : simulateEvents(plan);
  const perRequest = Math.min(batchSize, Math.max(1, Math.floor(opts.rate)));
  const inFlight = new Set<Promise<void>>();
  let fatal: unknown;
  const progress = opts.onProgress ? startProgress(opts.onProgress, opts.progressIntervalMs ?? 1000, () => tally.progress(planned, Date.now() - started)) : undefined;

  try {
    for (let sent = 0; sent < planned && fatal === undefined; ) {
      const size = Math.min(perRequest, planned - sent);
      const due = started + ((sent + size) / opts.rate) * 1000;
      if (due > Date.now()) await sleep(due - Date.now());
      while (inFlight.size >= maxInFlight && fatal === undefined) await Promise.race(inFlight);
      if (fatal !== undefined) break;
      const batch = take(events, size);
      for (const event of batch) if (event.type === 'intervention.create') event.body.policy_id = policies.ids[event.body.policy_id] ?? event.body.policy_id;
      sent += batch.length;
      tally.sent(batch);
      const request: Promise<void> = client
        .ingest(batch)
        .then(
          (res) => tally.answered(res.successes, res.errors),
          (err: unknown) => {
            if (err instanceof AgpHttpError && err.status !== 401 && err.status !== 403) {
              tally.answered([], batch.map((e) => ({ id: e.id, status: err.status, message: err.problem.detail || err.problem.title })));
            } else fatal ??= err;
          },
        )
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await Promise.all(inFlight);
  } finally {
    progress?.stop();
  }
  const report = tally.report({ url: opts.url, seed, planned, elapsedMs: Date.now() - started });
  if (fatal !== undefined) throw new SimulationAbortedError(report, { cause: fatal });
  return report;
}

/** Call `emit` with `snapshot()` every `intervalMs` when it changed since the last call; `stop()` ends it. */
function startProgress(emit: (p: SimulationProgress) => void, intervalMs: number, snapshot: () => SimulationProgress): { stop(): void } {
  let last = '';
  const timer = setInterval(() => {
    const p = snapshot();
    const key = `${p.sent}/${p.created}/${p.duplicate}/${p.rejected}`;
    if (key === last) return;
    last = key;
    emit(p);
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Counts what was sent and how it was answered. */
class Tally {
  private readonly byEventType = Object.fromEntries(INGEST_EVENT_TYPES.map((t) => [t, 0])) as Record<IngestEventType, number>;
  private readonly byType = Object.fromEntries(INTERVENTION_TYPES.map((t) => [t, 0])) as Record<InterventionType, number>;
  private readonly byOutcome = Object.fromEntries(INTERVENTION_OUTCOMES.map((o) => [o, 0])) as Record<InterventionOutcome, number>;
  private readonly agents = new Set<string>();
  private readonly runs = new Set<string>();
  private readonly policyIds = new Set<string>();
  private readonly rejections = new Map<string, RejectionGroup>();
  private count = 0;
  private requests = 0;
  private created = 0;
  private duplicate = 0;
  private rejected = 0;
  private policiesCreated = 0;
  private policiesReused = 0;
  private estimated = 0;
  private prevented = 0;
  private ledgerCost = 0;
  private ledgerActual = 0;
  private ledgerTotal = 0;
  private first: string | null = null;
  private last: string | null = null;

  sent(batch: FleetEvent[]): void {
    this.requests++;
    for (const event of batch) {
      this.count++;
      this.byEventType[event.type]++;
      const { timestamp } = event;
      if (this.first === null || timestamp < this.first) this.first = timestamp;
      if (this.last === null || timestamp > this.last) this.last = timestamp;
      if (event.type === 'agent.register') {
        this.agents.add(event.body.agent_id);
        continue;
      }
      if (event.type !== 'intervention.create') {
        this.agents.add(event.body.agent_id);
        this.runs.add(event.body.run_id);
        if (event.type === 'action.record') {
          this.ledgerCost += event.body.cost_usd;
          this.ledgerActual += event.body.actual_cost_usd ?? 0;
          this.ledgerTotal += actionCostUsd(event.body);
        }
        continue;
      }
      const { body } = event;
      this.byType[body.type]++;
      this.byOutcome[body.outcome]++;
      this.agents.add(body.agent_id);
      this.runs.add(body.run_id);
      this.policyIds.add(body.policy_id);
      this.estimated += body.estimated_cost_usd;
      this.prevented += body.cost_prevented_usd ?? 0;
    }
  }

  /** Count one 207 answer: each success as created or duplicate, each error as a rejection grouped by status and message. */
  answered(successes: IngestSuccess[], errors: Array<Pick<IngestError, 'status' | 'message'>>): void {
    for (const s of successes) {
      if (s.result === 'duplicate') this.duplicate++;
      else this.created++;
    }
    this.rejected += errors.length;
    for (const e of errors) {
      const k = `${e.status} ${e.message}`;
      const g = this.rejections.get(k) ?? { status: e.status, message: e.message, count: 0 };
      g.count++;
      this.rejections.set(k, g);
    }
  }

  /** Record how the simulation's policies were provided. */
  policies(p: SimulationPolicies): void {
    this.policiesCreated = p.created;
    this.policiesReused = p.reused;
  }

  /** The counts so far, `elapsedMs` after the start. */
  progress(planned: number, elapsedMs: number): SimulationProgress {
    const rate = elapsedMs > 0 ? Math.round((this.count / (elapsedMs / 1000)) * 10) / 10 : 0;
    return { planned, sent: this.count, created: this.created, duplicate: this.duplicate, rejected: this.rejected, elapsed_ms: elapsedMs, rate };
  }

  report(r: { url: string; seed: number; planned: number; elapsedMs: number }): SimulationReport {
    return {
      url: r.url,
      seed: r.seed,
      planned: r.planned,
      sent: this.count,
      accepted: this.created + this.duplicate,
      created: this.created,
      duplicate: this.duplicate,
      rejected: this.rejected,
      rejections: [...this.rejections.values()].sort((a, b) => b.count - a.count).slice(0, 5),
      by_event_type: this.byEventType,
      by_type: this.byType,
      by_outcome: this.byOutcome,
      agents: this.agents.size,
      runs: this.runs.size,
      policies: this.policyIds.size,
      policies_created: this.policiesCreated,
      policies_reused: this.policiesReused,
      estimated_cost_usd: Math.round(this.estimated * 100) / 100,
      cost_prevented_usd: Math.round(this.prevented * 100) / 100,
      ledger_cost_usd: Math.round(this.ledgerCost * 1e4) / 1e4,
      ledger_actual_cost_usd: Math.round(this.ledgerActual * 1e4) / 1e4,
      ledger_total_cost_usd: Math.round(this.ledgerTotal * 1e4) / 1e4,
      first_timestamp: this.first,
      last_timestamp: this.last,
      requests: this.requests,
      elapsed_ms: r.elapsedMs,
      achieved_rate: r.elapsedMs > 0 ? Math.round((this.count / (r.elapsedMs / 1000)) * 10) / 10 : this.count,
    };
  }
}

function take<T>(it: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) break;
    out.push(r.value);
    if (out.length === n) break;
  }
  return out;
}

