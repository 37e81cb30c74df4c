/**
 * How every event-sourced service starts and stops (interventions, policies, stats): migrate the event store and the
 * service's read models, subscribe its projections, start its durable ingest consumer, then any further parts
 * (approvals, enrichment); stop in the reverse order, once. Source: architecture §1, §3.
 */
import type { EventStore, SubscriptionOptions, Subscription, Sql } from '@agp/eventstore';
import { orderedShutdown, type Logger } from '@agp/runtime';
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

/** A started event-sourced service: its subscriptions by name, and `stop()` (idempotent, ordered). */
export interface RunningEventSourcedService {
  subscriptions: Map<string, Subscription>;
  stop(): Promise<void>;
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
  return { subscriptions, stop: async () => void (await stop()) };
}
