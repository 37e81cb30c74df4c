import { createHash } from 'node:crypto';
import {
  REPLAY_BUNDLE_PART_BYTES,
  REPLAY_BUNDLE_VERSION,
  bundleHashInput,
  type LedgerEntry,
  type ReplayBundle,
  type ReplayBundlePart,
  type EvaluateRun,
  type EvaluateRuns,
  type InterventionRecord,
  type Policy,
  type ReplayAnalysis,
  type ReplayBundleHead,
  type ReplayHistoryPage,
  type ReplayRunHistoryPage,
  type ReplayHistoryQuery,
  type ReplaySubmissionDetail,
  type Run,
  type RunEvaluation,
  type RunsEvaluation,
  type SubmitReplay,
  type WireReply,
  type ProjectionRetried,
  type RetryProjectionDeadLetter,
} from '@agp/contracts';
import { call, retryProjectionDeadLetterIn, startEventSourcedService, type BusCallerDeps, type EventSourcedDeps, type RunningEventSourcedService } from '@agp/bus';
import { requestMetadata, waitForProjections } from '@agp/eventstore';
import { ConflictError, NotFoundError, PayloadTooLargeError, counter, isRawJson, newId, type RequestContext } from '@agp/runtime';
import { RecentBundles, splitActions } from './bundle/parts.js';
import { policyVersionAt } from './bundle/policyVersion.js';
import { allPolicies, evaluateRun, evaluateRuns } from './counterfactual.js';
import { REPLAY_READ_MODEL, REPLAY_READ_MODEL_EVENT_TYPES, applyReplayEvents } from './projections/submissions.js';
import { migrateReplayReadModel } from './projections/schema.js';
import { replayAnalysis, replayHistory, replayRunHistory } from './queries.js';
import { decideSubmit, foldSubmission, replayEventId, replayStream } from './submission/submission.js';

/** Dependencies of the replay service; the same in both run modes. */
export type ReplayDeps = EventSourcedDeps & BusCallerDeps;

/** Page size of the reads from other services (the maximum of `interventions.list`, `policies.list` and of `runs.get`'s actions). */
const PAGE = 1000;
/** Policies whose history and version are read at once while a bundle is assembled. */
const POLICY_CONCURRENCY = 8;
/**
 * Most bytes of JSON the `replay.bundle` answer (the bundle without its actions, with its hash) may carry: a bus
 * message holds at most 1 MiB, envelope included. A run whose interventions and policies are larger is refused with 413.
 */
export const REPLAY_MAX_HEAD_BYTES = 1000 * 1024;

const submissions = counter('agp_replay_submissions_total', 'Replay submissions, by result (created, duplicate) and status', ['result', 'status']);

/**
 * The replay service: event-sourced replay submissions (`replay-<deterministicId(org, id)>`, one `ReplaySubmitted`
 * each), the `agp_replay_submissions` read model and its queries (history with aggregates, analysis), and run
 * bundles, assembled and hashed here and handed out in parts that fit a bus message. Its methods take
 * input already parsed by the wire table's request schemas (`replay.*`).
 * Source: spec §Replay history; architecture §1, §4 (Replay submission).
 */
export class ReplayService {
  private running?: RunningEventSourcedService;
  private readonly now: () => Date;
  /** Bundles assembled lately, held while a caller fetches their parts. */
  private readonly bundles = new RecentBundles();

  constructor(private readonly deps: ReplayDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Create the event store's and the read model's tables and start the read-model projection.
   * @throws what a migration throws (whatever started is stopped).
   */
  async start(): Promise<void> {
    this.running = await startEventSourcedService({
      name: 'replay',
      store: this.deps.store,
      db: this.deps.db,
      logger: this.deps.logger,
      migrate: migrateReplayReadModel,
      // An event carries up to 900 KiB of divergence details: small batches keep a catch-up's memory flat.
      projections: [{ name: REPLAY_READ_MODEL, eventTypes: REPLAY_READ_MODEL_EVENT_TYPES, batchSize: 50, handler: applyReplayEvents }],
    });
  }

  /** Stop the projection (an in-flight batch finishes first). Idempotent. */
  async stop(): Promise<void> {
    await this.running?.stop();
  }

  /**
   * `replay.retry-projection-dead-letter`: apply the organisation's dead letter of one of this service's projections
   * again through that projection (`retryProjectionDeadLetterIn` in @agp/bus: 404, 409, 422 or 503 as it says).
   */
  retryProjectionDeadLetter(ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
    return retryProjectionDeadLetterIn(this.running, ctx, body);
  }

  /**
   * POST /api/v1/replay/{run_id}/results (`replay.submit`): store a replay's summary. The submission id is `body.id`
   * (an idempotency key) or a new UUIDv7. A submission id already stored answers that submission as it was stored,
   * with `created: false` (its body and run are not compared). Otherwise the run must exist in the organisation
   * (asked of the stats service); ReplaySubmitted is appended to a new stream and the answer comes once the read
   * model holds it (read-your-writes).
   * @throws NotFoundError (404) when the run is unknown or another organisation's; nothing is stored.
   */
  async submit(ctx: RequestContext, runId: string, input: SubmitReplay): Promise<WireReply<'replay.submit'>> {
    const org = ctx.organization_id;
    const id = input.id ?? newId();
    const stream = replayStream(org, id);
    const stored = await this.stored(stream);
    if (stored) return this.duplicate(stored);
    await this.runOf(ctx, runId);
    const decided = decideSubmit(input, { id, run_id: runId, now: this.now().toISOString() });
    let appended;
    try {
      [appended] = await this.deps.store.append([
        { stream_id: stream, expected_version: 'no_stream', events: [{ event_id: replayEventId(org, id), type: decided.type, data: decided.data as unknown as Record<string, unknown>, metadata: requestMetadata(ctx) }] },
      ]);
    } catch (err) {
      // The same submission id, sent concurrently, won the append: answer its submission.
      if (!(err instanceof ConflictError)) throw err;
      const winner = await this.stored(stream);
      if (!winner) throw err;
      return this.duplicate(winner);
    }
    if (appended.appended.length === 0) return this.duplicate((await this.stored(stream))!);
    await this.caughtUp(appended.appended[0].global_position);
    submissions.inc({ result: 'created', status: decided.data.status });
    return { created: true, submission: decided.data };
  }

  /** GET /api/v1/replay/history/ (`replay.history`): the organisation's page, newest first, with its aggregates. */
  history(ctx: RequestContext, query: ReplayHistoryQuery): Promise<ReplayHistoryPage> {
    return replayHistory(this.deps.db, ctx.organization_id, query);
  }

  /**
   * GET /api/v1/replay/history/{run_id} (`replay.run-history`): that run's page with its aggregates, each submission
   * with its divergence details; an empty page (never a 404) for a run never replayed, so a run id is not checked
   * against the stats service.
   */
  runHistory(ctx: RequestContext, runId: string, query: ReplayHistoryQuery): Promise<ReplayRunHistoryPage> {
    return replayRunHistory(this.deps.db, ctx.organization_id, query, runId);
  }

  /**
   * GET /api/v1/replay/{run_id}/analysis (`replay.analysis`): see `replayAnalysis`.
   * @throws NotFoundError (404) when the run is unknown or another organisation's.
   */
  async analysis(ctx: RequestContext, runId: string): Promise<ReplayAnalysis> {
    await this.runOf(ctx, runId);
    return replayAnalysis(this.deps.db, ctx.organization_id, runId);
  }

  /**
   * `replay.bundle` (GET /api/v1/replay/{run_id}/bundle): assemble the run bundle (`ReplayBundleSchema`) and hash it
   * (`bundleHashInput`), and answer it without its actions, with its `sha256` and the number of parts its actions
   * are split into (`replay.bundle-part` hands them out; the bundle is held a while for that). The bundle holds the
   * run, every action of the run oldest first (all pages of `runs.get`), every live intervention with its run id
   * (oldest first: timestamp, then id), and the policy versions in force when it started (for each policy, the
   * highest version whose history time is ≤ the run's `started_at`, see `policyVersionAt`; a policy created later
   * is left out; a run without `started_at` gets each policy's current version). Policies come in id order.
   * @throws NotFoundError (404) when the run is unknown or another organisation's.
   * @throws PayloadTooLargeError (413) when the answer would be over {@link REPLAY_MAX_HEAD_BYTES}.
   */
  async bundle(ctx: RequestContext, runId: string): Promise<ReplayBundleHead> {
    const run = await this.runOf(ctx, runId);
    const [actions, interventions, policies] = await Promise.all([this.actionsOf(ctx, runId), this.interventionsOf(ctx, runId), this.policiesAt(ctx, run.started_at)]);
    const doc: Omit<ReplayBundle, 'sha256'> = { bundle_version: REPLAY_BUNDLE_VERSION, generated_at: this.now().toISOString(), run, actions, interventions, policies };
    const sha256 = createHash('sha256').update(bundleHashInput(doc)).digest('hex');
    const parts = splitActions(actions, REPLAY_BUNDLE_PART_BYTES);
    const { actions: _a, ...rest } = doc;
    const head: ReplayBundleHead = { ...rest, sha256, actions_total: actions.length, parts: parts.length };
    const bytes = Buffer.byteLength(JSON.stringify(head));
    if (bytes > REPLAY_MAX_HEAD_BYTES) {
      throw new PayloadTooLargeError(`the bundle's run, interventions and policies are ${bytes} bytes; at most ${REPLAY_MAX_HEAD_BYTES} bytes fit one answer`);
    }
    this.bundles.put(ctx.organization_id, runId, { sha256, parts });
    return head;
  }

  /**
   * `replay.bundle-part`: part `part` (from 0) of the actions of the bundle `replay.bundle` answered with `sha256`.
   * A bundle no longer held here (expired, or assembled by another replica) is assembled again first.
   * @throws ConflictError (409) when the bundle assembled again has another hash: the run changed, start over.
   * @throws NotFoundError (404) for an unknown run, or a part past the bundle's last.
   */
  async bundlePart(ctx: RequestContext, runId: string, sha256: string, part: number): Promise<ReplayBundlePart> {
    let held = this.bundles.get(ctx.organization_id, runId, sha256);
    if (!held) {
      const again = await this.bundle(ctx, runId);
      if (again.sha256 !== sha256) throw new ConflictError(`run ${runId} changed since its bundle ${sha256} was assembled; ask for the bundle again`);
      held = this.bundles.get(ctx.organization_id, runId, sha256)!;
    }
    if (part >= held.parts.length) throw new NotFoundError(`bundle ${sha256} of run ${runId} has ${held.parts.length} parts; there is no part ${part}`);
    return { actions: held.parts[part] };
  }

  /**
   * POST /api/v1/replay/{run_id}/evaluate (`replay.evaluate-run`): counterfactual evaluation of one run, see
   * `evaluateRun` (counterfactual.ts). Stores nothing.
   * @throws ForbiddenError (403) for a candidate or patch with a read key; NotFoundError (404) for an unknown run or
   *   patched policy.
   */
  evaluateRun(ctx: RequestContext, runId: string, body: EvaluateRun): Promise<RunEvaluation> {
    return evaluateRun(this.deps.bus, ctx, runId, body, this.now());
  }

  /** POST /api/v1/replay/evaluate (`replay.evaluate-runs`): see `evaluateRuns` (counterfactual.ts). Stores nothing. @throws as {@link evaluateRun}. */
  evaluateRuns(ctx: RequestContext, body: EvaluateRuns): Promise<RunsEvaluation> {
    return evaluateRuns(this.deps.bus, ctx, body, this.now());
  }

  /** The run (without its actions) from the stats service. @throws NotFoundError (404) as `runs.get` does. */
  private async runOf(ctx: RequestContext, runId: string): Promise<Run> {
    const { actions: _a, actions_total: _t, actions_skip: _s, actions_limit: _l, ...run } = await call(this.deps.bus, 'runs.get', ctx, { path: { id: runId }, query: { actions_limit: 1 } });
    return run;
  }

  /** Every action of the run, oldest first: all pages of `runs.get`. @throws NotFoundError (404) as `runs.get` does. */
  private async actionsOf(ctx: RequestContext, runId: string): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    for (let skip = 0; ; skip += PAGE) {
      const page = await call(this.deps.bus, 'runs.get', ctx, { path: { id: runId }, query: { actions_skip: skip, actions_limit: PAGE } }, 30_000);
      out.push(...page.actions);
      if (page.actions.length < PAGE || out.length >= page.actions_total) return out;
    }
  }

  /** Every live intervention recorded with `runId`, oldest first (all pages of `interventions.list`). */
  private async interventionsOf(ctx: RequestContext, runId: string): Promise<InterventionRecord[]> {
    const out: InterventionRecord[] = [];
    for (let skip = 0; ; skip += PAGE) {
      const reply = await call(this.deps.bus, 'interventions.list', ctx, { query: { run_id: runId, limit: PAGE, skip } });
      const page = (isRawJson(reply) ? JSON.parse(reply.$json) : reply) as { interventions: InterventionRecord[]; total: number };
      out.push(...page.interventions);
      if (page.interventions.length < PAGE || out.length >= page.total) break;
    }
    return out.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Each policy of the organisation as it stood at `startedAt` (see {@link bundle}), in id order. */
  private async policiesAt(ctx: RequestContext, startedAt: string | null): Promise<Policy[]> {
    const current = await allPolicies(this.deps.bus, ctx);
    current.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (startedAt === null) return current;
    const out: Array<Policy | null> = [];
    for (let i = 0; i < current.length; i += POLICY_CONCURRENCY) {
      out.push(...(await Promise.all(current.slice(i, i + POLICY_CONCURRENCY).map((p) => this.policyAt(ctx, p, startedAt)))));
    }
    return out.filter((p): p is Policy => p !== null);
  }

  /** `policy` as it stood at `instant`, or null when it was created later. */
  private async policyAt(ctx: RequestContext, policy: Policy, instant: string): Promise<Policy | null> {
    const { history } = await call(this.deps.bus, 'policies.history', ctx, { path: { id: policy.id }, query: {} });
    const version = policyVersionAt(history, instant);
    if (version === null) return null;
    if (version === policy.version) return policy;
    return call(this.deps.bus, 'policies.get', ctx, { path: { id: policy.id }, query: { version: String(version) } });
  }

  /** The submission a stream holds (read from the event store: exact, whatever the read model's lag), or null. */
  private async stored(stream: string) {
    const events = await this.deps.store.readStream(stream);
    return events.length ? { submission: foldSubmission(events)!, position: events[0].global_position } : null;
  }

  /** The answer to a submission id already stored: its submission, once the read model holds it too. */
  private async duplicate(stored: { submission: ReplaySubmissionDetail; position: bigint }): Promise<WireReply<'replay.submit'>> {
    await this.caughtUp(stored.position);
    submissions.inc({ result: 'duplicate', status: stored.submission.status });
    return { created: false, submission: stored.submission };
  }

  /** Wait until the read model has applied `position`; on timeout, log and answer anyway. */
  private caughtUp(position: bigint): Promise<void> {
    return waitForProjections([this.running?.subscriptions.get(REPLAY_READ_MODEL)], position, { timeoutMs: this.deps.readYourWritesMs, logger: this.deps.logger });
  }
}
