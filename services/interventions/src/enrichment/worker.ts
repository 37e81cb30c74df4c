import { InterventionEvents, interventionStream, type EnrichmentCoverage, type InterventionEnrichedData, type InterventionEnrichmentFailedData } from '@agp/contracts';
import { EVENT_SCHEMA_VERSION, type InlineProjection, type StoredEvent, type Subscription } from '@agp/eventstore';
import { ConflictError, DEFAULT_LLM_TIMEOUT_MS, NotFoundError, WrongExpectedVersionError, counter, gauge, isTransientInfraError, newId, type RequestContext } from '@agp/runtime';
import { DEFAULT_ENRICHMENT_CONCURRENCY, DEFAULT_ENRICHMENT_MAX_ATTEMPTS } from '../env.js';
import { llmSettings } from '@agp/runtime/llm';
import type { InterventionsDeps } from '../service.js';
import { fold, type InterventionState } from '../intervention/intervention.js';
import { decideEnrichment, parseAnswer, type EnrichmentAnswer } from './answer.js';
import { claimJobs, enqueueJobs, enqueueRerun, finishJob, jobState, migrateJobs, queueLag, releaseJob, type EnrichmentJob } from './jobs.js';
import { buildPrompt, PROMPT_VERSION } from './prompt.js';
import { enrichmentCoverage } from './coverage.js';
import { ProviderError, complete, type ProviderSettings } from './provider.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Durable name of the enrichment subscription (its checkpoint row). */
export const ENRICHMENT_SUBSCRIPTION = 'interventions-enrichment';
/** How often idle workers look for due jobs (other replicas' jobs, leases that ran out), in ms. */
const IDLE_POLL_MS = 250;
/** How often the queue-lag gauges are refreshed at most, in ms. */
const LAG_REFRESH_MS = 1000;
/** Delay before a job is tried again after a store error (not a provider error), in ms. */
const STORE_RETRY_MS = 2000;

const enrichedTotal = counter('agp_enrichment_enriched_total', 'Interventions enriched (InterventionEnriched appended).');
const failedTotal = counter('agp_enrichment_failed_total', 'Interventions whose enrichment gave up after AGP_ENRICHMENT_MAX_ATTEMPTS (InterventionEnrichmentFailed appended).');
const invalidTotal = counter('agp_enrichment_invalid_answers_total', 'Model answers refused: not JSON or not the asked schema (each counts as an attempt).');
const skippedTotal = counter('agp_enrichment_skipped_total', 'Jobs finished without a provider call: already enriched or failed (a redelivered or replayed event), or deleted.');
const queuePending = gauge('agp_enrichment_queue_pending', 'Enrichment jobs queued or running (all replicas).');
const queueOldest = gauge('agp_enrichment_queue_oldest_seconds', 'Age of the oldest queued enrichment job, in seconds (0 when the queue is empty).');

/**
 * The enrichment worker: a catch-up subscriber on InterventionRecorded that asks a language model for
 * plain-English `reason`, `agent_intent`, `risk_level` and `suggested_rewrite` and appends
 * InterventionEnriched with the originals. Source: spec §Intervention record (Enrichment); architecture §3.
 *
 * - The subscription handler runs in the checkpoint transaction and only queues a job row (jobs.ts), so
 *   neither ingest nor the read model ever waits for the provider.
 * - A pool of at most AGP_ENRICHMENT_CONCURRENCY runs claims due jobs. A run reads the stream first and
 *   calls nothing when it already holds InterventionEnriched / InterventionEnrichmentFailed (unless the job
 *   is an on-demand re-run) or was deleted; it appends with the expected stream version.
 * - Attempts: one attempt is one HTTP request to the provider. The openai SDK retries timeouts, 429 and 5xx
 *   (backoff with jitter, Retry-After honoured) within the budget; an answer that is not valid JSON of the
 *   asked schema uses an attempt and the model is asked again. After AGP_ENRICHMENT_MAX_ATTEMPTS, or at once
 *   on a non-retryable 4xx, InterventionEnrichmentFailed is appended and the worker moves on.
 * - Without AGP_LLM_API_KEY it logs once that enrichment is off and starts nothing.
 */
export class EnrichmentWorker {
  private subscription?: Subscription;
  private pump?: Promise<void>;
  private stopped = false;
  private readonly running = new Map<string, { promise: Promise<void>; abort: AbortController }>();
  private wakeUp: () => void = () => {};
  private woken = false;
  private lagRefreshedAt = 0;
  private readonly settings?: ProviderSettings;
  private readonly concurrency: number;
  private readonly maxAttempts: number;

  /** @param inline the read models an enrichment's append applies in its transaction (the service's). */
  constructor(
    private readonly deps: InterventionsDeps,
    private readonly inline: () => readonly InlineProjection[] = () => [],
  ) {
    const env = deps.env ?? {};
    this.concurrency = env.AGP_ENRICHMENT_CONCURRENCY ?? DEFAULT_ENRICHMENT_CONCURRENCY;
    this.maxAttempts = env.AGP_ENRICHMENT_MAX_ATTEMPTS ?? DEFAULT_ENRICHMENT_MAX_ATTEMPTS;
    this.settings = llmSettings(env) ?? undefined;
  }

  /** Whether an LLM key is configured. */
  get enabled(): boolean {
    return this.settings !== undefined;
  }

  /** The audit actor of this worker's events: `enrichment:<model>`. */
  private get actor(): string {
    return `enrichment:${this.settings!.model}`;
  }

  /**
   * Create the queue table; with a key, start the subscription (its first start begins at the head of the
   * log) and the worker pool. Without a key, log once that enrichment is off.
   */
  async start(): Promise<void> {
    const { store, db, logger } = this.deps;
    await migrateJobs(db);
    if (!this.settings) {
      logger.info('enrichment is off: AGP_LLM_API_KEY is not set');
      return;
    }
    logger.info({ model: this.settings.model, base_url: this.settings.baseURL ?? 'openai default', concurrency: this.concurrency, max_attempts: this.maxAttempts }, 'enrichment is on');
    await store.startCheckpointAtHead(ENRICHMENT_SUBSCRIPTION);
    this.stopped = false;
    this.subscription = store.subscribe({
      name: ENRICHMENT_SUBSCRIPTION,
      eventTypes: [InterventionEvents.Recorded],
      batchSize: 1000,
      handler: async (events, tx) => {
        await enqueueJobs(tx, events.map((e) => ({ intervention_id: String(e.data.id), organization_id: e.metadata.organization_id })));
        // The transaction commits right after; wake the pool a moment later to claim the new jobs.
        setTimeout(() => this.wake(), 5);
      },
      onError: (err) => logger.error({ err }, 'enrichment subscription batch failed; retrying'),
      onRecovered: (outageMs) => logger.info({ outage_ms: outageMs }, 'enrichment subscription resumed from its checkpoint'),
    });
    this.pump = this.runPump();
  }

  /** Stop claiming, abort provider calls in flight and hand their jobs back (due at once for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    for (const r of this.running.values()) r.abort.abort();
    await this.subscription?.stop();
    await this.pump;
    for (const r of this.running.values()) r.abort.abort(); // any launched while the pump finished its last turn
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp();
  }

  private idle(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Claim due jobs while slots are free and run them; sleep when idle. */
  private async runPump(): Promise<void> {
    const { db, logger } = this.deps;
    // A lease covers a whole run: every attempt may take the timeout plus the longest SDK backoff (8 s), plus margin.
    const leaseMs = this.maxAttempts * ((this.settings?.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS) + 8_000) + 60_000;
    let storeDownSince = 0;
    while (!this.stopped) {
      try {
        await this.refreshLag();
        const free = this.concurrency - this.running.size;
        if (free > 0) {
          this.woken = false;
          const jobs = await claimJobs(db, free, leaseMs);
          if (this.stopped) {
            // stop() came while claiming: hand the jobs straight back (due at once for the next start).
            await Promise.all(jobs.map((job) => releaseJob(db, job.intervention_id, 0).catch(() => {})));
            break;
          }
          for (const job of jobs) this.launch(job);
          if (jobs.length === free) continue;
        }
        if (storeDownSince) {
          logger.info({ outage_ms: Date.now() - storeDownSince }, 'enrichment: claiming jobs works again');
          storeDownSince = 0;
        }
      } catch (err) {
        if (this.stopped) break;
        // The database being down is logged once per outage, not every retry.
        if (!storeDownSince || !isTransientInfraError(err)) logger.error({ err }, 'enrichment: claiming jobs failed; retrying');
        if (!storeDownSince && isTransientInfraError(err)) storeDownSince = Date.now();
        await sleep(STORE_RETRY_MS);
      }
      await this.idle(IDLE_POLL_MS);
    }
  }

  private launch(job: EnrichmentJob): void {
    const abort = new AbortController();
    const promise = this.runJob(job, abort.signal)
      .catch(async (err) => {
        if (!(err instanceof ProviderError && err.aborted)) this.deps.logger.error({ err, intervention_id: job.intervention_id }, 'enrichment run failed; job released for a retry');
        await releaseJob(this.deps.db, job.intervention_id, this.stopped ? 0 : STORE_RETRY_MS).catch(() => {});
      })
      .finally(() => {
        this.running.delete(job.intervention_id);
        this.wake();
      });
    this.running.set(job.intervention_id, { promise, abort });
  }

  private async refreshLag(): Promise<void> {
    if (Date.now() - this.lagRefreshedAt < LAG_REFRESH_MS) return;
    this.lagRefreshedAt = Date.now();
    const lag = await queueLag(this.deps.db);
    queuePending.set(lag.pending);
    queueOldest.set(lag.oldestSeconds);
  }

  /** The intervention's stream as its organisation sees it, folded. */
  private async load(id: string, organizationId: string): Promise<{ events: StoredEvent[]; state: InterventionState | null }> {
    const events = (await this.deps.store.readStream(interventionStream(id))).filter((e) => e.metadata.organization_id === organizationId);
    return { events, state: fold(events) };
  }

  /** One enrichment run: check the stream, ask the model within the attempt budget, append the outcome. */
  private async runJob(job: EnrichmentJob, signal: AbortSignal): Promise<void> {
    const { logger, db } = this.deps;
    const { events, state } = await this.load(job.intervention_id, job.organization_id);
    if (!state || state.deleted || (!job.force && state.enrichment_status)) {
      skippedTotal.inc();
      await finishJob(db, job);
      return;
    }
    const recorded = events[0];
    // The model sees the record as it is now, with the four fields as recorded (a re-run rewrites the originals, not an earlier rewrite).
    const original = fold([recorded])!.record;
    const { reason, agent_intent, risk_level, remediation_payload } = original;
    const messages = buildPrompt({ ...state.record, reason, agent_intent, risk_level, remediation_payload });
    let attempts = 0;
    let lastError = '';
    while (attempts < this.maxAttempts) {
      let content: string | null;
      try {
        const answer = await complete(this.settings!, messages, this.maxAttempts - attempts, signal);
        attempts += answer.requests;
        content = answer.content;
      } catch (err) {
        if (!(err instanceof ProviderError) || err.aborted) throw err;
        attempts += err.requests;
        lastError = err.message;
        logger.warn({ intervention_id: job.intervention_id, attempts, error: err.message }, 'enrichment: provider call failed');
        if (!err.retryable) break;
        continue;
      }
      const parsed = parseAnswer(content);
      if (parsed.ok) {
        await this.appendEnriched(job, recorded, parsed.answer);
        await finishJob(db, job);
        return;
      }
      invalidTotal.inc();
      lastError = parsed.error;
      logger.warn({ intervention_id: job.intervention_id, attempts, error: parsed.error }, 'enrichment: invalid answer from the model');
    }
    await this.appendFailed(job, recorded, attempts, lastError);
    await finishJob(db, job);
  }

  /**
   * Append InterventionEnriched with the expected version. On a concurrent change (e.g. an approval), re-read
   * and decide again against the new state; stop if the stream was meanwhile deleted or (for a replay) enriched.
   */
  private async appendEnriched(job: EnrichmentJob, recorded: StoredEvent, answer: EnrichmentAnswer): Promise<void> {
    for (let round = 0; ; round++) {
      const { state } = await this.load(job.intervention_id, job.organization_id);
      if (!state || state.deleted || (!job.force && state.enrichment_status)) return;
      const data: InterventionEnrichedData = { id: job.intervention_id, model: this.settings!.model, prompt_version: PROMPT_VERSION, ...decideEnrichment(state.record, answer) };
      if (await this.tryAppend(job, recorded, state.version, InterventionEvents.Enriched, data, round)) {
        enrichedTotal.inc();
        return;
      }
    }
  }

  private async appendFailed(job: EnrichmentJob, recorded: StoredEvent, attempts: number, error: string): Promise<void> {
    for (let round = 0; ; round++) {
      const { state } = await this.load(job.intervention_id, job.organization_id);
      if (!state || state.deleted || (!job.force && state.enrichment_status)) return;
      const data: InterventionEnrichmentFailedData = { id: job.intervention_id, model: this.settings!.model, prompt_version: PROMPT_VERSION, attempts, error };
      if (await this.tryAppend(job, recorded, state.version, InterventionEvents.EnrichmentFailed, data, round)) {
        failedTotal.inc();
        this.deps.logger.warn({ intervention_id: job.intervention_id, attempts, error }, 'enrichment failed; record keeps its original values');
        return;
      }
    }
  }

  /** Append one event at `version`; false on a version conflict (the caller re-reads), which is retried at most 5 times. */
  private async tryAppend(job: EnrichmentJob, recorded: StoredEvent, version: number, type: string, data: object, round: number): Promise<boolean> {
    try {
      await this.deps.store.append([
        {
          stream_id: interventionStream(job.intervention_id),
          expected_version: version,
          events: [
            {
              event_id: newId(),
              type,
              data: data as Record<string, unknown>,
              metadata: {
                organization_id: job.organization_id,
                actor: this.actor,
                ...(recorded.metadata.correlation_id ? { correlation_id: recorded.metadata.correlation_id } : {}),
                causation_id: recorded.event_id,
                schema_version: EVENT_SCHEMA_VERSION,
              },
            },
          ],
        },
      ], { inline: this.inline() });
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedVersionError && round < 5) return false;
      throw err;
    }
  }

  /**
   * `enrichment_status` of a record for its detail: `pending` while a job is queued or running (or, with a
   * key, before the subscription has reached its InterventionRecorded); else the latest enrichment event's
   * outcome (`enriched` / `failed`); else `skipped` (recorded while enrichment was off).
   */
  async status(id: string, state: InterventionState, events: StoredEvent[]): Promise<'pending' | 'enriched' | 'failed' | 'skipped'> {
    const { queued, checkpoint } = await jobState(this.deps.db, id, ENRICHMENT_SUBSCRIPTION);
    if (queued) return 'pending';
    if (state.enrichment_status) return state.enrichment_status;
    const recordedAt = events[0]?.global_position ?? 0n;
    return this.enabled && checkpoint < recordedAt ? 'pending' : 'skipped';
  }

  /**
   * `interventions.enrichment-coverage`: the organisation's live records counted by the status {@link status} gives
   * each (`{total, enriched, pending, failed, skipped}`), from the read model and the queue, never the streams.
   */
  async coverage(organizationId: string): Promise<EnrichmentCoverage> {
    return enrichmentCoverage(this.deps.db, this.deps.store, organizationId, { enabled: this.enabled, checkpointName: ENRICHMENT_SUBSCRIPTION });
  }

  /**
   * POST /api/v1/interventions/{id}/enrich: queue an on-demand re-run (it runs even when the record is
   * already enriched or failed) of intervention `id`. Answers `{id, enrichment_status: 'pending'}` (202 at the gateway).
   * @throws NotFoundError (404) for an unknown, deleted or other organisation's id;
   *   ConflictError (409) when enrichment is off (no AGP_LLM_API_KEY).
   */
  async enrich(ctx: RequestContext, id: string): Promise<{ id: string; enrichment_status: 'pending' }> {
    const { state } = await this.load(id, ctx.organization_id);
    if (!state || state.deleted) throw new NotFoundError(`intervention ${id} not found`);
    if (!this.settings) throw new ConflictError('enrichment is off: set AGP_LLM_API_KEY (and AGP_LLM_BASE_URL, AGP_LLM_MODEL) to enable it');
    await enqueueRerun(this.deps.db, id, ctx.organization_id);
    this.wake();
    return { id, enrichment_status: 'pending' };
  }
}
