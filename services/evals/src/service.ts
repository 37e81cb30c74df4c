import {
  compareEvalRuns,
  type EvalBenchmarks,
  type EvalBenchmarksQuery,
  type EvalComparison,
  type EvalRunDetail,
  type GeneratedScenarios,
  type GenerateScenarios,
  type ListEvalRunsQuery,
  type SubmitEvalRun,
  type WireReply,
  type ProjectionRetried,
  type RetryProjectionDeadLetter,
} from '@agp/contracts';
import { retryProjectionDeadLetterIn, startEventSourcedService, type BusCallerDeps, type EventSourcedDeps, type RunningEventSourcedService } from '@agp/bus';
import { requestMetadata, waitForProjections } from '@agp/eventstore';
import { ConflictError, NotFoundError, counter, newId, type RequestContext } from '@agp/runtime';
import type { EvalsSettings } from './env.js';
import { decideSubmit, evalRunEventId, evalRunStream, foldEvalRun } from './evalrun/evalRun.js';
import { generateScenarios } from './generation/index.js';
import { EVALS_READ_MODEL, EVALS_READ_MODEL_EVENT_TYPES, applyEvalRunEvents } from './projections/evalRuns.js';
import { migrateEvalsReadModel } from './projections/schema.js';
import { ciBaseline, evalBenchmarks, fitComparison, getEvalRun, latestEvalRun, listEvalRuns, type EvalRunFilters } from './queries.js';

/** Dependencies of the evals service; the same in both run modes. */
export interface EvalsDeps extends EventSourcedDeps, BusCallerDeps {
  /** Settings read from the environment (the LLM settings of the semantic scenario pass); absent ones take their defaults. */
  env?: Partial<EvalsSettings>;
}

const submissions = counter('agp_evals_submissions_total', 'Eval run submissions, by result (created, duplicate) and CI status (pass, fail, none)', ['result', 'ci_status']);

/**
 * The evals service: event-sourced eval runs (`evalrun-<deterministicId(org, id)>`, one `EvalRunSubmitted` each), the
 * `agp_eval_runs` read model and its queries (history, latest, detail, comparison, benchmarks), and scenario
 * generation. Its methods take input already parsed by the wire table's request schemas (`evals.*`).
 * Source: spec §Evals; architecture §1, §4 (Eval run).
 */
export class EvalsService {
  private running?: RunningEventSourcedService;
  private readonly now: () => Date;

  constructor(private readonly deps: EvalsDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Create the event store's and the read model's tables and start the read-model projection.
   * @throws what a migration throws (whatever started is stopped).
   */
  async start(): Promise<void> {
    this.running = await startEventSourcedService({
      name: 'evals',
      store: this.deps.store,
      db: this.deps.db,
      logger: this.deps.logger,
      migrate: migrateEvalsReadModel,
      // A run's event carries up to EVAL_MAX_REPLY_BYTES of scenarios: small batches keep a catch-up's memory flat.
      projections: [{ name: EVALS_READ_MODEL, eventTypes: EVALS_READ_MODEL_EVENT_TYPES, batchSize: 50, handler: applyEvalRunEvents }],
    });
  }

  /** Stop the projection (an in-flight batch finishes first). Idempotent. */
  async stop(): Promise<void> {
    await this.running?.stop();
  }

  /**
   * `evals.retry-projection-dead-letter`: apply the organisation's dead letter of one of this service's projections
   * again through that projection (`retryProjectionDeadLetterIn` in @agp/bus: 404, 409, 422 or 503 as it says).
   */
  retryProjectionDeadLetter(ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
    return retryProjectionDeadLetterIn(this.running, ctx, body);
  }

  /**
   * POST /api/v1/evals/ (`evals.submit`): store a run and its scorecard. The run id is `body.id` (the submission id,
   * an idempotency key) or a new UUIDv7. A new run's summary is computed against the CI baseline, the latest run of
   * the same suite and agent on its default branch (from the read model); EvalRunSubmitted is appended to a new
   * stream, and the answer comes once the read model holds the run (read-your-writes). A submission id already
   * stored answers that run as it was stored, with `created: false` (its body is not compared).
   * @param input the body as `SubmitEvalRunSchema` parsed it.
   * @throws PayloadTooLargeError (413) when the stored scorecard would not fit one answer; nothing is stored.
   */
  async submit(ctx: RequestContext, input: SubmitEvalRun): Promise<WireReply<'evals.submit'>> {
    const org = ctx.organization_id;
    const id = input.id ?? newId();
    const stream = evalRunStream(org, id);
    const stored = await this.storedRun(stream);
    if (stored) return this.duplicate(stored);
    const baseline = await ciBaseline(this.deps.db, org, input.suite, input.agent_id, input.default_branch, id);
    const decided = decideSubmit(input, { id, organization_id: org, now: this.now().toISOString(), baseline });
    let appended;
    try {
      [appended] = await this.deps.store.append([
        { stream_id: stream, expected_version: 'no_stream', events: [{ event_id: evalRunEventId(org, id), type: decided.type, data: decided.data as unknown as Record<string, unknown>, metadata: requestMetadata(ctx) }] },
      ]);
    } catch (err) {
      // The same submission id, sent concurrently, won the append: answer its run.
      if (!(err instanceof ConflictError)) throw err;
      const winner = await this.storedRun(stream);
      if (!winner) throw err;
      return this.duplicate(winner);
    }
    if (appended.appended.length === 0) return this.duplicate((await this.storedRun(stream))!);
    await this.caughtUp(appended.appended[0].global_position);
    submissions.inc({ result: 'created', ci_status: decided.data.summary.ci_status ?? 'none' });
    return { created: true, eval_run: decided.data };
  }

  /** GET /api/v1/evals/ (`evals.list`): `{eval_runs, total, skip, limit}`, newest first, for a parsed query. */
  async list(ctx: RequestContext, query: ListEvalRunsQuery) {
    return listEvalRuns(this.deps.db, ctx.organization_id, query);
  }

  /**
   * GET /api/v1/evals/latest (`evals.latest`): the newest run matching the filters, with its scenarios.
   * @throws NotFoundError (404) when the organisation has no such run.
   */
  async latest(ctx: RequestContext, filters: EvalRunFilters): Promise<EvalRunDetail> {
    const run = await latestEvalRun(this.deps.db, ctx.organization_id, filters);
    if (!run) throw new NotFoundError(`no eval run${describeFilters(filters)}`);
    return run;
  }

  /** GET /api/v1/evals/{id} (`evals.get`): one run with its scenarios. @throws NotFoundError (404), also for another organisation's. */
  async get(ctx: RequestContext, id: string): Promise<EvalRunDetail> {
    const run = await getEvalRun(this.deps.db, ctx.organization_id, id);
    if (!run) throw new NotFoundError(`eval run ${id} not found`);
    return run;
  }

  /**
   * GET /api/v1/evals/compare/{baseline_id}/{current_id} (`evals.compare`): `compareEvalRuns` of the two runs, fitted
   * to one answer (see `fitComparison`). @throws NotFoundError (404) when either run is unknown or another organisation's.
   */
  async compare(ctx: RequestContext, baselineId: string, currentId: string): Promise<EvalComparison> {
    const [baseline, current] = await Promise.all([getEvalRun(this.deps.db, ctx.organization_id, baselineId), getEvalRun(this.deps.db, ctx.organization_id, currentId)]);
    if (!baseline) throw new NotFoundError(`eval run ${baselineId} (the baseline) not found`);
    if (!current) throw new NotFoundError(`eval run ${currentId} (the current run) not found`);
    return fitComparison(compareEvalRuns(baseline, current));
  }

  /** GET /api/v1/evals/benchmarks (`evals.benchmarks`): per suite and agent, the trend, the best and the latest run. */
  async benchmarks(ctx: RequestContext, query: EvalBenchmarksQuery): Promise<EvalBenchmarks> {
    return evalBenchmarks(this.deps.db, ctx.organization_id, query);
  }

  /** POST /api/v1/evals/generate-scenarios (`evals.generate-scenarios`): see `generateScenarios` (./generation). */
  async generateScenarios(ctx: RequestContext, body: GenerateScenarios): Promise<GeneratedScenarios> {
    return generateScenarios({ bus: this.deps.bus, logger: this.deps.logger, env: this.deps.env ?? {} }, ctx, body);
  }

  /** The run a stream holds (read from the event store: exact, whatever the read model's lag), or null. */
  private async storedRun(stream: string) {
    const events = await this.deps.store.readStream(stream);
    return events.length ? { run: foldEvalRun(events)!, position: events[0].global_position } : null;
  }

  /** The answer to a submission id already stored: its run, once the read model holds it too. */
  private async duplicate(stored: { run: EvalRunDetail; position: bigint }): Promise<WireReply<'evals.submit'>> {
    await this.caughtUp(stored.position);
    submissions.inc({ result: 'duplicate', ci_status: stored.run.summary.ci_status ?? 'none' });
    return { created: false, eval_run: stored.run };
  }

  /** Wait until the read model has applied `position`; on timeout, log and answer anyway. */
  private caughtUp(position: bigint): Promise<void> {
    return waitForProjections([this.running?.subscriptions.get(EVALS_READ_MODEL)], position, { timeoutMs: this.deps.readYourWritesMs, logger: this.deps.logger });
  }
}

/** ` of suite "x", agent "y" and branch "z"` for a not-found message, or '' without filters. */
function describeFilters(f: EvalRunFilters): string {
  const parts = [f.suite !== undefined ? `suite "${f.suite}"` : null, f.agent_id !== undefined ? `agent "${f.agent_id}"` : null, f.branch !== undefined ? `branch "${f.branch}"` : null].filter(Boolean);
  return parts.length ? ` of ${parts.join(', ')}` : '';
}
