import type { ClientProxy } from '@nestjs/microservices';
import {
  ActionRecordSchema,
  AgentIdRequestSchema,
  Durables,
  EstimationAccuracyQuerySchema,
  GetRunQuerySchema,
  GetRunRequestSchema,
  LedgerExportPageRequestSchema,
  LedgerExportQuerySchema,
  ListRunsQuerySchema,
  Patterns,
  RunEndSchema,
  RunEvents,
  RunStartSchema,
  StatsDailyQuerySchema,
  StatsSummaryQuerySchema,
  type ActionRecordedData,
  type AgentInterventionCounts,
  type AgentStats,
  type EstimationAccuracy,
  type IngestEnvelope,
  type LedgerExportPage,
  type RunDetail,
  type RunEndedData,
  type RunStartedData,
  type StatsDaily,
  type StatsSummary,
} from '@agp/contracts';
import { callRpc, consumeIngest, type IngestDelivery, type IngestLogConsumer } from '@agp/bus';
import { ProjectionAnswerCache, ingestMetadata, type AppendRequest, type EventStore, type NewEvent, type Subscription } from '@agp/eventstore';
import { NotFoundError, deterministicId, parseOrThrow, type BaseEnv, type Logger, type RequestContext } from '@agp/runtime';
import { STATS_EVENT_TYPES, STATS_PROJECTION, applyStatsEvents } from './projections/statsReadModel.js';
import { migrateStatsReadModels } from './projections/schema.js';
import { agentTotals, estimationAccuracy, getRun, ledgerExportPage, listRuns, runActions, statsDaily, statsSummary } from './queries.js';

/** Dependencies of the stats service; the same in both run modes. */
export interface StatsDeps {
  store: EventStore;
  /** Where accepted run.start / run.end / action.record batches come from (JetStream, or the embedded SQL log). */
  ingestLog: IngestLogConsumer;
  /** Subject prefix (AGP_SUBJECT_PREFIX), for the ingest consumer's filter. */
  subjectPrefix: string;
  /** Bus client, to ask other services (e.g. interventions.agent-counts) over NATS or in-process. */
  bus: Pick<ClientProxy, 'send'>;
  logger: Logger;
  /** Clock; injectable for tests. */
  now?: () => Date;
  /** Settings read from the environment (AGP_ANSWER_CACHE_ENTRIES); absent ones take their defaults. */
  env?: Partial<BaseEnv>;
  /** Max events appended per transaction by the ingest consumer. @default 5000 */
  ingestAppendChunk?: number;
}


/** Stream id of a run: `run-<deterministicId(org, run_id)>` (client run ids are opaque and scoped by organisation). */
export const runStream = (org: string, runId: string) => `run-${deterministicId(org, runId)}`;

const toIso = (s: string) => new Date(s).toISOString();

/** Drop undefined fields so event data stays compact JSON. */
function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * The event that one ingested run.start / run.end / action.record becomes, or null when the body does not parse
 * (the ingest service validated it; a mismatch is a contract drift, logged by the caller). Pure.
 */
export function runEventOf(ev: IngestEnvelope['events'][number]): { type: string; data: RunStartedData | RunEndedData | ActionRecordedData } | null {
  switch (ev.type) {
    case 'run.start': {
      const b = RunStartSchema.safeParse(ev.body);
      if (!b.success) return null;
      return { type: RunEvents.Started, data: compact({ ...b.data, started_at: toIso(b.data.started_at ?? ev.timestamp), ingest_event_id: ev.id }) };
    }
    case 'run.end': {
      const b = RunEndSchema.safeParse(ev.body);
      if (!b.success) return null;
      return { type: RunEvents.Ended, data: compact({ ...b.data, ended_at: toIso(b.data.ended_at ?? ev.timestamp), ingest_event_id: ev.id }) };
    }
    case 'action.record': {
      const b = ActionRecordSchema.safeParse(ev.body);
      if (!b.success) return null;
      return { type: RunEvents.ActionRecorded, data: compact({ ...b.data, id: ev.assigned_id, timestamp: toIso(b.data.timestamp ?? ev.timestamp), ingest_event_id: ev.id }) };
    }
    default:
      return null;
  }
}

/**
 * The stats service: the run streams (fed by ingest), the stats read-model projection (runs, ledger, incremental
 * aggregates), the stats endpoints, runs, agent stats and the paged ledger export.
 * Source: issue #3 points 1, 4, 5; platform-api.md (Stats); ARCHITECTURE.md §1, §4 (Runs, Estimation accuracy).
 */
export class StatsService {
  private subscription?: Subscription;
  private consumer?: { stop(): Promise<void> };
  private readonly now: () => Date;
  /** Stats answers by organisation, endpoint, query and UTC day, with the projection position they were read at. */
  private readonly answers: ProjectionAnswerCache;

  constructor(private readonly deps: StatsDeps) {
    this.now = deps.now ?? (() => new Date());
    this.answers = new ProjectionAnswerCache(deps.env?.AGP_ANSWER_CACHE_ENTRIES ?? 256);
  }

  /** Create tables, start the projection and the durable ingest consumer. */
  async start(): Promise<void> {
    const { store, logger } = this.deps;
    await store.migrate();
    await migrateStatsReadModels(store.sql);
    this.subscription = store.subscribe({
      name: STATS_PROJECTION,
      eventTypes: STATS_EVENT_TYPES,
      batchSize: 5000,
      handler: applyStatsEvents,
      onError: (err) => logger.error({ err }, 'stats projection batch failed; retrying'),
    });
    this.consumer = await consumeIngest<IngestEnvelope>(this.deps.ingestLog, {
      prefix: this.deps.subjectPrefix,
      target: 'stats',
      durable: Durables.statsIngest,
      sql: store.sql,
      logger,
      handle: (batch) => this.recordIngested(batch),
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
    await this.subscription?.stop();
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
        req.events.push({ event_id: deterministicId(env.organization_id, 'ingest', ev.id), type: e.type, data: e.data as unknown as Record<string, unknown>, metadata });
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
    return (await this.answers.get(key, this.subscription?.position(), read)) as T;
  }

  /** GET /api/v1/stats/?days=N. @throws ValidationError (422) for days ≤ 0, > 3650, non-integer or unknown params. */
  async summary(ctx: RequestContext, query: unknown): Promise<StatsSummary> {
    const q = parseOrThrow(StatsSummaryQuerySchema, query ?? {}, 'query');
    return this.cached(ctx, 'summary', q, () => statsSummary(this.deps.store.sql, ctx.organization_id, q.days, this.now()));
  }

  /** GET /api/v1/stats/daily. @throws ValidationError (422) for any parameter. */
  async daily(ctx: RequestContext, query: unknown): Promise<StatsDaily> {
    parseOrThrow(StatsDailyQuerySchema, query ?? {}, 'query');
    return this.cached(ctx, 'daily', {}, () => statsDaily(this.deps.store.sql, ctx.organization_id, this.now()));
  }

  /** GET /api/v1/stats/estimation-accuracy. @throws ValidationError (422) for any parameter. */
  async estimationAccuracy(ctx: RequestContext, query: unknown): Promise<EstimationAccuracy> {
    parseOrThrow(EstimationAccuracyQuerySchema, query ?? {}, 'query');
    return this.cached(ctx, 'accuracy', {}, () => estimationAccuracy(this.deps.store.sql, ctx.organization_id));
  }

  /** GET /api/v1/runs. @throws ValidationError (422). */
  async listRuns(ctx: RequestContext, query: unknown) {
    const q = parseOrThrow(ListRunsQuerySchema, query ?? {}, 'query');
    return listRuns(this.deps.store.sql, ctx.organization_id, q);
  }

  /**
   * GET /api/v1/runs/{id}: the run with a page of its actions, oldest first.
   * @throws NotFoundError (404) for an unknown or another organisation's run; ValidationError (422).
   */
  async getRun(ctx: RequestContext, body: unknown): Promise<RunDetail> {
    const { id, query } = parseOrThrow(GetRunRequestSchema, body, 'path');
    const q = parseOrThrow(GetRunQuerySchema, query ?? {}, 'query');
    const run = await getRun(this.deps.store.sql, ctx.organization_id, id);
    if (!run) throw new NotFoundError(`run ${id} not found`);
    const actions = await runActions(this.deps.store.sql, ctx.organization_id, id, q.actions_skip, q.actions_limit);
    return { ...run, actions, actions_total: run.action_count, actions_skip: q.actions_skip, actions_limit: q.actions_limit };
  }

  /**
   * GET /api/v1/agents/{id}/stats: totals from the agent aggregates plus the agent's intervention counts, asked of
   * the interventions service. @throws NotFoundError (404) when the agent has no runs, actions or interventions.
   */
  async agentStats(ctx: RequestContext, body: unknown): Promise<AgentStats> {
    const { agent_id } = parseOrThrow(AgentIdRequestSchema, body, 'path');
    const [totals, interventions] = await Promise.all([
      agentTotals(this.deps.store.sql, ctx.organization_id, agent_id),
      callRpc<AgentInterventionCounts>(this.deps.bus, Patterns.interventionsAgentCounts, { ctx, body: { agent_id } }),
    ]);
    if (!totals && interventions.total === 0) throw new NotFoundError(`agent ${agent_id} not found`);
    const t = totals ?? {
      agent_id,
      total_runs: 0,
      runs_by_status: { running: 0, completed: 0, failed: 0 },
      total_actions: 0,
      total_cost_usd: 0,
      total_actual_cost_usd: 0,
      avg_cost_per_run_usd: 0,
      avg_duration_ms: 0,
      top_actions: [],
    };
    return { ...t, interventions };
  }

  /**
   * One page of the ledger export (`ledger.export-page`). The first page (no cursor) is also the validation of the
   * query: the gateway asks for it before writing a byte. @throws ValidationError (422) for a bad format, date or range.
   */
  async exportPage(ctx: RequestContext, body: unknown): Promise<LedgerExportPage> {
    const { query, cursor } = parseOrThrow(LedgerExportPageRequestSchema, body, 'body');
    const q = parseOrThrow(LedgerExportQuerySchema, query ?? {}, 'query');
    return ledgerExportPage(this.deps.store.sql, ctx.organization_id, q, cursor ?? null);
  }
}
