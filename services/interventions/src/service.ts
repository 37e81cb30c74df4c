import {
  Durables,
  DEFAULT_PURPOSE,
  InterventionEvents,
  interventionStream,
  type AgentInterventionCounts,
  type AgentInterventionCountsQuery,
  type CreateIntervention,
  type EnrichmentCoverage,
  type IngestEnvelope,
  type InterventionDetail,
  type InterventionRecord,
  type InterventionStats,
  type InterventionStatsQuery,
  type ListInterventionsQuery,
  type ProjectionRetried,
  type RetryProjectionDeadLetter,
} from '@agp/contracts';
import { retryProjectionDeadLetterIn, startEventSourcedService, type Sender, tracedProjection, type EventSourcedDeps, type IngestConsumerDeps, type IngestDelivery, type RunningEventSourcedService } from '@agp/bus';
import { ProjectionAnswerCache, ingestMetadata, ingestedEventId, requestMetadata, retryOnConflict, waitForProjections, type AppendRequest, type InlineProjection, type Subscription } from '@agp/eventstore';
import { DEFAULT_ANSWER_CACHE_ENTRIES, NotFoundError, newId, type RawJson, type RequestContext } from '@agp/runtime';
import type { InterventionsSettings } from './env.js';
import { decideDelete, decideRecord } from './intervention/decide.js';
import { auditTrail, fold, recordFromRecorded } from './intervention/intervention.js';
import { READ_MODEL_EVENT_TYPES, READ_MODEL_PROJECTION, applyInterventionEvents } from './projections/interventionReadModel.js';
import { migrateReadModels } from './projections/schema.js';
import { InterventionListReader, getIntervention, interventionStats } from './queries.js';
import { Approvals } from './approvals/approvals.js';
import { APPROVALS_PROJECTION } from './approvals/readModel.js';
import { parseIngestedIntervention } from './approvals/ingest.js';
import { EnrichmentWorker } from './enrichment/worker.js';
import { agentInterventionCounts } from './agentCounts.js';

/** The list/stats read model: one definition for its inline apply and its catch-up subscription. */
const readModelProjection: InlineProjection = { name: READ_MODEL_PROJECTION, eventTypes: READ_MODEL_EVENT_TYPES, handler: applyInterventionEvents };

/** Dependencies of the interventions service; the same in both run modes. */
export interface InterventionsDeps extends EventSourcedDeps, IngestConsumerDeps {
  /**
   * Settings read from the environment (AGP_LLM_* for enrichment, AGP_ENRICHMENT_*, AGP_APPROVAL_*, the answer cache).
   * Absent settings take the defaults of `interventionsSettings` (./env.ts).
   */
  env?: Partial<InterventionsSettings>;
  /**
   * Bus client, to ask the policies service for an agent's registration (`agents.get`) when an approval under
   * separation of duties is decided (its owner and last changer may not decide it). Absent: such a decision is a 503.
   */
  bus?: Sender;
}


/**
 * The interventions service: the intervention streams, the ingest consumer that records them, and the
 * list/stats read models. Source: spec §Interventions, architecture §1, §3.
 */
export class InterventionsService {
  private running?: RunningEventSourcedService;
  private readonly now: () => Date;
  /** List pages and stats answers, each tagged with the projection position it was read at. */
  private readonly answers: ProjectionAnswerCache;

  /** List pages, cached against the committed checkpoint (the same reader the gateway runs in-process). */
  private readonly listReader: InterventionListReader;

  /** The approval inbox (architecture §4, Approvals). */
  readonly approvals: Approvals;
  /** The LLM enrichment worker (spec §Intervention record, Enrichment). */
  readonly enrichment: EnrichmentWorker;

  /**
   * The read models every append of this service applies in its own transaction (the list/stats and the approval
   * inbox): the same definitions its catch-up subscriptions run, so a rebuild from the log gives the same rows. With
   * an adapter that cannot inline (KurrentDB) the subscriptions apply them. Source: docs/decisions.md (Inline projections).
   */
  private readonly inline: readonly InlineProjection[];

  constructor(private readonly deps: InterventionsDeps) {
    this.now = deps.now ?? (() => new Date());
    const cacheEntries = deps.env?.AGP_ANSWER_CACHE_ENTRIES ?? DEFAULT_ANSWER_CACHE_ENTRIES;
    this.answers = new ProjectionAnswerCache(cacheEntries);
    this.listReader = new InterventionListReader(deps.db, cacheEntries);
    this.approvals = new Approvals(deps, () => [this.running?.subscriptions.get(APPROVALS_PROJECTION), this.subscription], () => this.inline);
    this.enrichment = new EnrichmentWorker(deps, () => this.inline);
    this.inline = [readModelProjection, this.approvals.projection].map((p) => tracedProjection(p));
  }

  /** The list/stats read-model projection, once started. */
  private get subscription(): Subscription | undefined {
    return this.running?.subscriptions.get(READ_MODEL_PROJECTION);
  }

  /**
   * Create the read-model tables (interventions and approvals), start their projections, the durable ingest
   * consumer, then the approval expiry sweeper and the enrichment worker.
   * @throws what a migration or a part throws at start (whatever had started is stopped first).
   */
  async start(): Promise<void> {
    const { store, db, logger } = this.deps;
    this.running = await startEventSourcedService<IngestEnvelope>({
      name: 'interventions',
      store,
      db,
      logger,
      migrate: async (sql) => {
        await migrateReadModels(sql, store);
        await this.approvals.migrate(sql);
      },
      projections: [
        // Catch-up applies what the appends did not (a rebuild, events appended elsewhere, KurrentDB). Large batches:
        // one transaction and one stats flush per few thousand events.
        ...this.inline.map((p) => ({ ...p, eventTypes: p.eventTypes && [...p.eventTypes], batchSize: 5000 })),
      ],
      ingest: { log: this.deps.ingestLog, prefix: this.deps.subjectPrefix, target: 'interventions', durable: Durables.interventionsIngest, handle: (batch) => this.recordIngested(batch) },
      // Stopped in reverse: the enrichment worker, then the sweeper (after the ingest consumer, before the projections).
      parts: [this.approvals, this.enrichment],
    });
  }

  /** Stop the ingest consumer, the enrichment worker, the approval sweeper, then the projections. Idempotent. */
  async stop(): Promise<void> {
    await this.running?.stop();
  }

  /**
   * `interventions.retry-projection-dead-letter`: apply the organisation's dead letter of one of this service's projections
   * again through that projection (`retryProjectionDeadLetterIn` in @agp/bus: 404, 409, 422 or 503 as it says).
   */
  retryProjectionDeadLetter(ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
    return retryProjectionDeadLetterIn(this.running, ctx, body);
  }

  /**
   * Intervention counts of one agent, for the stats service's agent stats (`interventions.agent-counts`):
   * `{total, by_type, by_outcome, cost_prevented_usd}` of the records of `window.purpose` (default production), all
   * time or of the records timestamped in `window`.
   */
  async agentCounts(ctx: RequestContext, agentId: string, window: AgentInterventionCountsQuery = { purpose: [DEFAULT_PURPOSE] }): Promise<AgentInterventionCounts> {
    return agentInterventionCounts(this.deps.db, ctx.organization_id, agentId, window);
  }

  /**
   * The organisation's live interventions by enrichment status (`interventions.enrichment-coverage`):
   * `{total, enriched, pending, failed, skipped}`, each record counted as GET /api/v1/interventions/{id} reports it.
   */
  async enrichmentCoverage(ctx: RequestContext): Promise<EnrichmentCoverage> {
    return this.enrichment.coverage(ctx.organization_id);
  }

  /**
   * Record every intervention of a batch of ingest messages: many `intervention-<id>` streams per
   * transaction, idempotent by event id (derived from the organisation and the client's event id), then ack.
   * @throws the store's error when an append fails: the consumer's `settleIsolated` naks the batch for a redelivery,
   * or on a data error settles each message alone and dead-letters the one that can never be stored.
   */
  async recordIngested(batch: IngestDelivery<IngestEnvelope>[]): Promise<void> {
    const requests: AppendRequest[] = [];
    for (const msg of batch) {
      const env = msg.payload;
      // One metadata object for the envelope's events (they share it; nothing writes to it).
      const metadata = ingestMetadata(env);
      for (const ev of env.events) {
        // intervention.create as it is; approval.request as an escalated approval_required record (architecture §4, Approvals).
        const parsed = parseIngestedIntervention(ev, this.approvals.ttlSeconds);
        if (!parsed.success) {
          // The ingest service validated it; a mismatch means a contract drift, never a reason to stall the log.
          this.deps.logger.error({ event_id: ev.id, organization_id: env.organization_id, issues: parsed.issues }, 'dropping invalid ingested intervention');
          continue;
        }
        const meta = { now: env.received_at, id: ev.assigned_id, organization_id: env.organization_id, approval_ttl_seconds: parsed.approval_ttl_seconds };
        const data = decideRecord(parsed.data, meta, 'ingest', ev.id);
        if (!parsed.data.timestamp) data.timestamp = new Date(ev.timestamp).toISOString();
        requests.push({
          stream_id: interventionStream(ev.assigned_id),
          expected_version: 'any',
          events: [
            {
              event_id: ingestedEventId(env.organization_id, ev.id),
              type: InterventionEvents.Recorded,
              data: data as unknown as Record<string, unknown>,
              metadata,
            },
          ],
        });
      }
    }
    const chunk = this.deps.ingestAppendChunk ?? 2000;
    for (let i = 0; i < requests.length; i += chunk) await this.deps.store.append(requests.slice(i, i + chunk), { inline: this.inline });
    await Promise.all(batch.map((m) => m.ack()));
  }

  /** Wait until the read model has applied `position` (read-your-writes for the synchronous path). */
  private caughtUp(position: bigint | undefined): Promise<void> {
    return waitForProjections([this.subscription], position, { timeoutMs: this.deps.readYourWritesMs, logger: this.deps.logger });
  }

  /**
   * POST /api/v1/interventions: append InterventionRecorded to a new stream and return the stored record (201).
   * `input` is the body as `interventions.create` parsed it.
   */
  async create(ctx: RequestContext, input: CreateIntervention): Promise<InterventionRecord> {
    const id = newId();
    const data = decideRecord(input, { now: this.now().toISOString(), id, organization_id: ctx.organization_id, approval_ttl_seconds: this.approvals.ttlSeconds }, 'api');
    const [result] = await this.deps.store.append([
      {
        stream_id: interventionStream(id),
        expected_version: 'no_stream',
        events: [{ event_id: newId(), type: InterventionEvents.Recorded, data: data as unknown as Record<string, unknown>, metadata: requestMetadata(ctx) }],
      },
    ], { inline: this.inline });
    await this.caughtUp(result.appended.at(-1)?.global_position);
    return recordFromRecorded(data, ctx.organization_id);
  }

  /**
   * GET /api/v1/interventions: the page `{interventions, total, skip, limit}` as JSON text (see RawJson).
   * `q` is the query as `interventions.list` parsed it (defaults applied).
   */
  async list(ctx: RequestContext, q: ListInterventionsQuery): Promise<RawJson> {
    return this.listReader.list(ctx.organization_id, q);
  }

  /**
   * GET /api/v1/interventions/stats, cached like the list (the key includes the UTC day, as the default series
   * window moves with it). `q` is the query as `interventions.stats` parsed it.
   */
  async stats(ctx: RequestContext, q: InterventionStatsQuery): Promise<InterventionStats> {
    const now = this.now();
    const key = `stats\u0000${ctx.organization_id}\u0000${JSON.stringify(q)}\u0000${now.toISOString().slice(0, 10)}`;
    return (await this.answers.get(key, this.subscription?.position(), () => interventionStats(this.deps.db, ctx.organization_id, q, now))) as InterventionStats;
  }

  /**
   * GET /api/v1/interventions/{id}: the record plus its audit trail (the stream's events) and its `enrichment_status`.
   * @throws NotFoundError (404) for an unknown, deleted or other organisation's id.
   */
  async get(ctx: RequestContext, id: string): Promise<InterventionDetail> {
    const events = (await this.deps.store.readStream(interventionStream(id))).filter((e) => e.metadata.organization_id === ctx.organization_id);
    // The record must reflect every event its trail shows (e.g. an enrichment appended out of band): wait for the read model.
    await this.caughtUp(events.at(-1)?.global_position);
    const record = await getIntervention(this.deps.db, ctx.organization_id, id);
    if (!record) throw new NotFoundError(`intervention ${id} not found`);
    const state = fold(events);
    const enrichment_status = state ? await this.enrichment.status(id, state, events) : 'skipped';
    return { ...record, audit_trail: auditTrail(events), enrichment_status };
  }

  /**
   * DELETE /api/v1/interventions/{id}: append InterventionDeleted; the record leaves the read models and its
   * stream stays for audit. A concurrent change (an enrichment, an approval) makes it read and decide again
   * ({@link retryOnConflict}); a concurrent deletion then answers 404.
   * @throws NotFoundError (404); ConflictError (409) only after 10 concurrent changes in a row.
   */
  async delete(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
    const result = await retryOnConflict('the intervention', async () => {
      const state = fold(await this.deps.store.readStream(interventionStream(id)));
      const decision = decideDelete(state, ctx.organization_id);
      const [appended] = await this.deps.store.append([
        { stream_id: interventionStream(id), expected_version: state!.version, events: [{ event_id: newId(), type: decision.type, data: { ...decision.data }, metadata: requestMetadata(ctx) }] },
      ], { inline: this.inline });
      return appended;
    });
    await this.caughtUp(result.appended.at(-1)?.global_position);
    return { id, deleted: true };
  }
}
