/**
 * How every event-sourced service starts and stops (interventions, policies, stats): migrate the event store and the
 * service's read models, subscribe its projections, start its durable ingest consumer, then any further parts
 * (approvals, enrichment); stop in the reverse order, once. Source: architecture §1, §3.
 */
import type { ProjectionRetried, RetryProjectionDeadLetter } from '@agp/contracts';
import { retryProjectionDeadLetter, type EventStore, type SubscriptionOptions, type Subscription, type Sql } from '@agp/eventstore';
import { ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError, ValidationError, databaseUnavailable, orderedShutdown, type Logger, type RequestContext } from '@agp/runtime';
import { consumeIngest } from './ingest-consumer.js';
import { tracedProjection } from './tracing.js';
import type { IngestDelivery, IngestLogConsumer } from './types.js';

/** A part with its own lifecycle, started after the projections and the ingest consumer and stopped before them. */
export interface ServicePart {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** What {@link startEventSourcedService} starts. */
export interface EventSourcedServiceSpec<T> {
  /** Service name, for logs. */
  name: string;
  store: EventStore;
  /** The service's read-model database: its tables, the projections' checkpoints, the ingest dead letters. */
  db: Sql;
  /** `info`, when there, logs a projection's return after a database outage. */
  logger: Pick<Logger, 'error' | 'warn'> & Partial<Pick<Logger, 'info'>>;
  /** Create the service's read-model tables (after the event store's own). */
  migrate(sql: Sql): Promise<void>;
  /** Catch-up subscriptions that build the read models; a failed batch is logged and retried. */
  projections: Array<Omit<SubscriptionOptions, 'onError' | 'onRecovered'>>;
  /** The service's durable ingest consumer, when it consumes ingested events. */
  ingest?: { log: IngestLogConsumer; prefix: string; target: string; durable: string; handle(batch: IngestDelivery<T>[]): Promise<void> };
  /** Started last, in order; stopped first, in reverse order. */
  parts?: ServicePart[];
}

/** A started event-sourced service: its subscriptions by name, the retry of its projection dead letters, and `stop()` (idempotent, ordered). */
export interface RunningEventSourcedService {
  subscriptions: Map<string, Subscription>;
  /**
   * `<service>.retry-projection-dead-letter`: apply the caller's organisation's dead letter of one of this service's
   * projections again, through that projection's handler (`retryProjectionDeadLetter` in `@agp/eventstore`: its own
   * transaction, the checkpoint locked and left where it is). Applied: the letter is removed and the event named.
   * @throws ForbiddenError (403) for a key that is not an admin key (dead letters are an admin's, as over HTTP).
   * @throws NotFoundError (404) when this service runs no such projection, or the organisation has no such letter.
   * @throws ConflictError (409) when the projection's checkpoint is before the event (its replay applies it), or the
   * log no longer holds the event; nothing changed.
   * @throws ValidationError (422, field `event`) with the new reason when the projection refused or failed to apply it
   * again; the letter is kept with `last_seen`, `attempts` and its reason updated.
   * @throws ServiceUnavailableError (503) when the database or the log is unavailable; nothing changed.
   */
  retryProjectionDeadLetter(ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried>;
  stop(): Promise<void>;
}

/**
 * What a service's `<service>.retry-projection-dead-letter` handler calls: the retry of `running` (the service as
 * {@link startEventSourcedService} started it; undefined before it did).
 * @throws ServiceUnavailableError (503) before the service started; otherwise as {@link RunningEventSourcedService.retryProjectionDeadLetter}.
 */
export function retryProjectionDeadLetterIn(running: RunningEventSourcedService | undefined, ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
  if (!running) return Promise.reject(new ServiceUnavailableError('the service has not started its projections yet; retry'));
  return running.retryProjectionDeadLetter(ctx, body);
}

/** {@link RunningEventSourcedService.retryProjectionDeadLetter} over `spec`'s projections. */
async function retryDeadLetterOf(spec: Pick<EventSourcedServiceSpec<unknown>, 'name' | 'store' | 'db' | 'projections'>, ctx: RequestContext, body: RetryProjectionDeadLetter): Promise<ProjectionRetried> {
  if (ctx.scope !== 'admin') throw new ForbiddenError('retrying a dead letter needs an admin key');
  const projection = spec.projections.find((p) => p.name === body.projection);
  const what = `dead letter of projection ${body.projection} at position ${body.global_position}`;
  if (!projection) throw new NotFoundError(`the ${spec.name} service runs no projection ${body.projection}`);
  const position = BigInt(body.global_position);
  const outcome = await retryProjectionDeadLetter(spec.store, spec.db, projection, ctx.organization_id, position).catch(databaseUnavailable(`the ${what}`));
  switch (outcome.result) {
    case 'applied':
      return { name: projection.name, event_id: outcome.event.event_id, global_position: String(outcome.event.global_position) };
    case 'not_found':
      throw new NotFoundError(`no ${what} in this organisation`);
    case 'event_missing':
      throw new ConflictError(`the log no longer holds the event of the ${what}; it is kept`);
    case 'behind':
      throw new ConflictError(`projection ${projection.name} has not passed position ${position} (its checkpoint is at ${outcome.checkpoint ?? 'none'}): it applies the event itself; the dead letter is kept`);
    case 'failed':
      throw new ValidationError(`projection ${projection.name} could not apply the event of the ${what} again (attempt ${outcome.attempts}): ${outcome.reason}; the dead letter is kept`, [
        { path: 'event', message: outcome.reason },
      ]);
  }
}

/**
 * Start an event-sourced service. Stop order: the ingest consumer (no new appends), the parts in reverse, then the
 * projections (in-flight batches finish first).
 * @throws what a migration, the consumer or a part throws at start; whatever had started is stopped first.
 */
export async function startEventSourcedService<T>(spec: EventSourcedServiceSpec<T>): Promise<RunningEventSourcedService> {
  const { store, logger } = spec;
  const subscriptions = new Map<string, Subscription>();
  let consumer: { stop(): Promise<void> } | undefined;
  const started: ServicePart[] = [];
  const stop = orderedShutdown(
    [
      { name: `${spec.name} ingest consumer`, run: () => consumer?.stop() },
      { name: `${spec.name} parts`, run: async () => { for (const p of [...started].reverse()) await p.stop(); } },
      { name: `${spec.name} projections`, run: () => Promise.all([...subscriptions.values()].map((s) => s.stop())) },
    ],
    logger,
  );
  try {
    await store.migrate();
    await spec.migrate(spec.db);
    for (const p of spec.projections) {
      subscriptions.set(
        p.name,
        store.subscribe({
          // A span per applied batch, linked to the traceparent of each event that carries one.
          ...tracedProjection(p),
          // A database outage is logged once (the subscription reports its first failure) and its end once.
          onError: (err) => logger.error({ err, projection: p.name }, `${p.name} batch failed; retrying`),
          onRecovered: (outageMs) => logger.info?.({ projection: p.name, outage_ms: outageMs }, `${p.name} resumed from its checkpoint`),
        }),
      );
    }
    if (spec.ingest) {
      const i = spec.ingest;
      consumer = await consumeIngest<T>(i.log, { prefix: i.prefix, target: i.target, durable: i.durable, sql: spec.db, logger, handle: (batch) => i.handle(batch) });
    }
    for (const part of spec.parts ?? []) {
      await part.start();
      started.push(part);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { subscriptions, retryProjectionDeadLetter: (ctx, body) => retryDeadLetterOf(spec, ctx, body), stop: async () => void (await stop()) };
}
