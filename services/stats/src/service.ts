import {
  Durables,
  RunEvents,
  DEFAULT_PURPOSE,
  PURPOSES,
  type ActionRecord,
  type ActionRecordedData,
  type AgentStats,
  type AgentStatsQuery,
  type EstimationAccuracy,
  type EstimationAccuracyQuery,
  type IngestEnvelope,
  type LedgerExportPage,
  type LedgerExportQuery,
  type ListRunsQuery,
  type RunDetail,
  type RunEnd,
  type RunEndedData,
  type RunStart,
  type RunStartedData,
  type StatsDaily,
  type StatsDailyQuery,
  type StatsSummary,
  type StatsSummaryQuery,
  type WireRequest,
  type ProjectionRetried,
  type RetryProjectionDeadLetter,
} from '@agp/contracts';
import { call, retryProjectionDeadLetterIn, startEventSourcedService, type BusCallerDeps, type EventSourcedDeps, type IngestConsumerDeps, type IngestDelivery, type RunningEventSourcedService } from '@agp/bus';
import { ProjectionAnswerCache, ingestMetadata, ingestedEventId, type AppendRequest } from '@agp/eventstore';
import { NotFoundError, deterministicId, iso, type RequestContext } from '@agp/runtime';
import type { StatsSettings } from './env.js';
import { STATS_EVENT_TYPES, STATS_PROJECTION, applyStatsEvents } from './projections/statsReadModel.js';
import { migrateStatsReadModels } from './projections/schema.js';
import { agentTotals, agentWindowTotals, emptyAgentTotals, estimationAccuracy, getRun, ledgerExportPage, listRuns, runActions, statsDaily, statsPeriod, statsSummary } from './queries.js';

/** Dependencies of the stats service; the same in both run modes. */
export interface StatsDeps extends EventSourcedDeps, IngestConsumerDeps, BusCallerDeps {
  /** Settings read from the environment (AGP_ANSWER_CACHE_ENTRIES); absent ones take their defaults. */
  env?: Partial<StatsSettings>;
}


/** Stream id of a run: `run-<deterministicId(org, run_id)>` (client run ids are opaque and scoped by organisation). */
export const runStream = (org: string, runId: string) => `run-${deterministicId(org, runId)}`;


/** Drop undefined fields so event data stays compact JSON. */
function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * The event that one ingested run.start / run.end / action.record becomes, or null for any other type. The body is
 * trusted: the ingest service validated it with its type's schema, and the consumer checked the message's schema
 * version (`admitBySchema` in @agp/bus; docs/decisions.md, Consumers trust what the log carries). Pure.
 */
export function runEventOf(ev: IngestEnvelope['events'][number]): { type: string; data: RunStartedData | RunEndedData | ActionRecordedData } | null {
  switch (ev.type) {
    case 'run.start': {
      const b = ev.body as RunStart;
      return { type: RunEvents.Started, data: compact({ ...b, started_at: iso(b.started_at ?? ev.timestamp), ingest_event_id: ev.id }) };
    }
    case 'run.end': {
      const b = ev.body as RunEnd;
      return { type: RunEvents.Ended, data: compact({ ...b, ended_at: iso(b.ended_at ?? ev.timestamp), ingest_event_id: ev.id }) };
    }
    case 'action.record': {
      const b = ev.body as ActionRecord;
      return { type: RunEvents.ActionRecorded, data: compact({ ...b, id: ev.assigned_id, timestamp: iso(b.timestamp ?? ev.timestamp), ingest_event_id: ev.id }) };
    }
    default:
      return null;
  }
}

/**
 * The stats service: the run streams (fed by ingest), the stats read-model projection (runs, ledger, incremental
 * aggregates), the stats endpoints, runs, agent stats and the paged ledger export.
 * Source: spec §Stats; architecture §1, §4 (Runs, Estimation accuracy).
 */
export class StatsService {
  private running?: RunningEventSourcedService;
  private readonly now: () => Date;
  /** Stats answers by organisation, endpoint, query and UTC day, with the projection position they were read at. */
  private readonly answers: ProjectionAnswerCache;

  constructor(private readonly deps: StatsDeps) {
    this.now = deps.now ?? (() => new Date());
    this.answers = new ProjectionAnswerCache(deps.env?.AGP_ANSWER_CACHE_ENTRIES);
  }

  /**
   * Create the event store and stats read-model tables, start the stats projection and the durable ingest consumer
   * (run.start / run.end / action.record, see {@link recordIngested}). Source: architecture §3.
   * @throws what a migration or the consumer throws; whatever had started is stopped first.
   */
  async start(): Promise<void> {
    this.running = await startEventSourcedService<IngestEnvelope>({
      name: 'stats',
      store: this.deps.store,
      db: this.deps.db,
      logger: this.deps.logger,
      migrate: migrateStatsReadModels,
      projections: [{ name: STATS_PROJECTION, eventTypes: STATS_EVENT_TYPES, batchSize: 5000, handler: applyStatsEvents }],
      ingest: { log: this.deps.ingestLog, prefix: this.deps.subjectPrefix, target: 'stats', durable: Durables.statsIngest, handle: (batch) => this.recordIngested(batch) },
    });
  }

  /** Stop the ingest consumer, then the projection (in-flight batches finish first). Idempotent. */
  async stop(): Promise<void> {
    await this.running?.stop();
  }

  /**
   * `stats.retry-projection-dead-letter`: apply the organisation's dead letter of one of this service's projections
   * again through that projection (`retryProjectionDeadLetterIn` in @agp/bus: 404, 409, 422 or 503 as it says).
   */
  retryProjectionDeadLetter(ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
    return retryProjectionDeadLetterIn(this.running, ctx, body);
  }

  /**
   * Append every run event of a batch of ingest messages to its `run-…` stream: many streams per transaction,
   * expected version `any` (runs are fed by independent events that may arrive in any order), idempotent by event
   * id (derived from the organisation and the client's event id), then ack.
   * @throws the store's error when an append fails: the consumer's `settleIsolated` naks the batch for a redelivery,
   * or on a data error settles each message alone and dead-letters the one that can never be stored.
   */
  async recordIngested(batch: IngestDelivery<IngestEnvelope>[]): Promise<void> {
    const byStream = new Map<string, AppendRequest>();
    let count = 0;
    for (const msg of batch) {
      const env = msg.payload;
      const metadata = ingestMetadata(env);
      for (const ev of env.events) {
        const e = runEventOf(ev);
        if (!e) {
          this.deps.logger.error({ event_id: ev.id, type: ev.type, organization_id: env.organization_id }, 'dropping invalid ingested run event');
          continue;
        }
        const stream = runStream(env.organization_id, e.data.run_id);
        const req = byStream.get(stream) ?? { stream_id: stream, expected_version: 'any' as const, events: [] };
        req.events.push({ event_id: ingestedEventId(env.organization_id, ev.id), type: e.type, data: e.data as unknown as Record<string, unknown>, metadata });
        byStream.set(stream, req);
        count += 1;
      }
    }
    const chunk = this.deps.ingestAppendChunk ?? 5000;
    let part: AppendRequest[] = [];
    let size = 0;
    for (const req of byStream.values()) {
      part.push(req);
      size += req.events.length;
      if (size >= chunk) {
        await this.deps.store.append(part);
        part = [];
        size = 0;
      }
    }
    if (part.length) await this.deps.store.append(part);
    await Promise.all(batch.map((m) => m.ack()));
  }

  /**
   * The answer of `read`, served from the cache while the local projection has not moved since it was read (so it
   * is never staler than a query at the same moment). The key includes the UTC day, as "today" moves the windows.
   */
  private async cached<T>(ctx: RequestContext, name: string, query: unknown, read: () => Promise<T>): Promise<T> {
    const key = `${ctx.organization_id}\u0000${name}\u0000${JSON.stringify(query)}\u0000${this.now().toISOString().slice(0, 10)}`;
    return (await this.answers.get(key, this.running?.subscriptions.get(STATS_PROJECTION)?.position(), read)) as T;
  }

  /**
   * GET /api/v1/stats/?days=N&purpose=: totals of the runs of `purpose` (default production), all time or the last
   * `days` UTC days (the query is validated by `stats.summary`).
   */
  async summary(ctx: RequestContext, query: StatsSummaryQuery): Promise<StatsSummary> {
    return this.cached(ctx, 'summary', query, () => statsSummary(this.deps.db, ctx.organization_id, query.days, this.now(), query.purpose));
  }

  /** GET /api/v1/stats/daily?purpose=: the last 30 UTC days, zero-filled. */
  async daily(ctx: RequestContext, query: StatsDailyQuery): Promise<StatsDaily> {
    return this.cached(ctx, 'daily', query, () => statsDaily(this.deps.db, ctx.organization_id, this.now(), query.purpose));
  }

  /** GET /api/v1/stats/estimation-accuracy?purpose=: skew mean, p50, p95, worst offenders, histograms. */
  async estimationAccuracy(ctx: RequestContext, query: EstimationAccuracyQuery): Promise<EstimationAccuracy> {
    return this.cached(ctx, 'accuracy', query, () => estimationAccuracy(this.deps.db, ctx.organization_id, query.purpose));
  }

  /** GET /api/v1/runs: one filtered page of runs `{runs, total, skip, limit}`, newest first. */
  async listRuns(ctx: RequestContext, query: ListRunsQuery) {
    return listRuns(this.deps.db, ctx.organization_id, query);
  }

  /**
   * GET /api/v1/runs/{id}: the run with a page of its actions, oldest first (`actions_skip`, `actions_limit`).
   * @throws NotFoundError (404) for an unknown or another organisation's run.
   */
  async getRun(ctx: RequestContext, id: string, query: WireRequest<'runs.get'>['query']): Promise<RunDetail> {
    const run = await getRun(this.deps.db, ctx.organization_id, id);
    if (!run) throw new NotFoundError(`run ${id} not found`);
    const actions = await runActions(this.deps.db, ctx.organization_id, id, query.actions_skip, query.actions_limit);
    return { ...run, actions, actions_total: run.action_count, actions_skip: query.actions_skip, actions_limit: query.actions_limit };
  }

  /**
   * GET /api/v1/agents/{id}/stats?days=N&purpose=: the agent's totals of the runs, actions and interventions of
   * `purpose` (default production) plus its intervention counts, asked of the interventions service
   * (`interventions.agent-counts`), and the period covered (see AgentStatsSchema). Without `days`, all time from the
   * agent aggregates; with it, the runs, actions and interventions of the last `days` UTC days including today (the
   * interventions service is given the same UTC days, so both sides agree at midnight).
   * @throws NotFoundError (404) when the agent has no runs, actions or interventions at all, of any purpose (all time;
   * an agent with none in the window or of the purposes asked answers zeros); the interventions service's problem
   * (RemoteProblemError, ServiceUnavailableError) when it cannot answer.
   */
  async agentStats(ctx: RequestContext, agentId: string, query: AgentStatsQuery = { purpose: [DEFAULT_PURPOSE] }): Promise<AgentStats> {
    const period = statsPeriod(query.days, this.now());
    const sql = this.deps.db;
    const path = { agent_id: agentId };
    const purpose = query.purpose;
    const window = period.start_date ? { start_date: period.start_date, end_date: period.end_date } : null;
    const [all, inWindow, interventions] = await Promise.all([
      agentTotals(sql, ctx.organization_id, agentId, purpose),
      window ? agentWindowTotals(sql, ctx.organization_id, agentId, window, purpose) : null,
      call(this.deps.bus, 'interventions.agent-counts', ctx, { path, query: { ...window, purpose } }),
    ]);
    // Nothing of the purposes (or in the window): the agent still exists if it has anything at all (asked only in
    // this rare case).
    if (!all && interventions.total === 0) {
      const every = [...PURPOSES];
      const exists =
        (purpose.length < every.length && (await agentTotals(sql, ctx.organization_id, agentId, every)) !== null) ||
        ((window || purpose.length < every.length) && (await call(this.deps.bus, 'interventions.agent-counts', ctx, { path, query: { purpose: every } })).total > 0);
      if (!exists) throw new NotFoundError(`agent ${agentId} not found`);
    }
    return { ...(inWindow ?? all ?? emptyAgentTotals(agentId)), interventions, period };
  }

  /**
   * One page of the ledger export (`ledger.export-page`): the rows after `cursor` (null = the first page), already
   * formatted. The first page is also the validation of the query (done by the row's schema): the gateway asks for
   * it before writing a byte.
   */
  async exportPage(ctx: RequestContext, query: LedgerExportQuery, cursor: LedgerExportPage['next_cursor'] | undefined): Promise<LedgerExportPage> {
    return ledgerExportPage(this.deps.db, ctx.organization_id, query, cursor ?? null);
  }
}
