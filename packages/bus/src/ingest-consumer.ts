import { INGEST_BODY_SCHEMAS, INGEST_SCHEMA_VERSION, type IngestEventType } from '@agp/contracts';
import { isDataError, type Sql } from '@agp/eventstore';
import { keepIngestDeadLetter } from './ingest-dead-letters.js';
import type { Logger } from '@agp/runtime';
import { ingestFilter } from './subjects.js';
import { withConsumeSpan } from './tracing.js';
import type { IngestDelivery, IngestLogConsumer } from './types.js';

/**
 * Settle a batch of ingest messages with `handle`, which acks what it stored and throws when it could not. A failure
 * that is not about the data (PostgreSQL down, a conflict) naks the whole batch for a redelivery. A data error
 * (`isDataError` of @agp/eventstore) is isolated: every message is handled alone, and one that still fails on its data is kept in
 * `agp_ingest_dead_letters` (with the error) and acked, so one poison message never stalls the log or takes its
 * batch-mates down with it. Source: architecture §5 (nothing acknowledged is lost; bad input never stalls).
 */
export async function settleIsolated<T>(
  batch: IngestDelivery<T>[],
  handle: (batch: IngestDelivery<T>[]) => Promise<void>,
  opts: { consumer: string; sql: Sql; logger: Pick<Logger, 'error' | 'warn'> },
): Promise<void> {
  try {
    await handle(batch);
    return;
  } catch (err) {
    if (!isDataError(err)) {
      opts.logger.error({ err, consumer: opts.consumer, messages: batch.length }, 'ingest append failed; messages will be redelivered');
      await Promise.all(batch.map((m) => m.nak(1000)));
      return;
    }
    if (batch.length > 1) opts.logger.warn({ err, consumer: opts.consumer, messages: batch.length }, 'ingest batch failed on its data; settling its messages one by one');
  }
  for (const msg of batch) {
    try {
      await handle([msg]);
    } catch (err) {
      if (!isDataError(err)) {
        await msg.nak(1000);
        continue;
      }
      try {
        const org = (msg.payload as { organization_id?: unknown } | null)?.organization_id;
        await keepIngestDeadLetter(opts.sql, {
          consumer: opts.consumer,
          subject: msg.subject,
          msg_id: msg.msg_id,
          payload: msg.payload,
          organizationId: typeof org === 'string' ? org : null,
          error: String((err as Error).message ?? err),
        });
        opts.logger.error({ err, consumer: opts.consumer, subject: msg.subject, msg_id: msg.msg_id }, 'ingest message can never be stored; kept in agp_ingest_dead_letters');
        await msg.ack();
      } catch (deadLetterErr) {
        opts.logger.error({ err: deadLetterErr, consumer: opts.consumer, msg_id: msg.msg_id }, 'could not dead-letter an ingest message; it will be redelivered');
        await msg.nak(1000);
      }
    }
  }
}

/** How long a message of a newer schema version waits before it is offered again, in ms (an upgrade in progress). */
export const NEWER_SCHEMA_RETRY_MS = 30_000;

/**
 * The messages of `batch` this consumer can handle, by their `schema` version (`INGEST_SCHEMA_VERSION` in
 * @agp/contracts; docs/decisions.md, Consumers trust what the log carries):
 * - the current version: as they are. The ingest service validated every event with its type's schema and published
 *   that schema's output, and nothing else writes to the log, so the bodies are not parsed again;
 * - no version (published before versions existed, bodies as the client sent them): every event's body is validated
 *   here with `INGEST_BODY_SCHEMAS` and replaced by the schema's output; an event that fails is logged and left out,
 *   never a reason to stall the log;
 * - any other version (a newer ingest service during a rolling upgrade): nak'd with a delay of
 *   {@link NEWER_SCHEMA_RETRY_MS} and logged, for an upgraded consumer of the same durable to take; never guessed at.
 * A payload that is not an envelope (`events` not an array) passes as it is. Mutates unversioned payloads in place.
 */
export async function admitBySchema<T>(batch: IngestDelivery<T>[], opts: { consumer: string; logger: Pick<Logger, 'error' | 'warn'> }): Promise<IngestDelivery<T>[]> {
  const out: IngestDelivery<T>[] = [];
  for (const msg of batch) {
    if (msg.schema === INGEST_SCHEMA_VERSION) out.push(msg);
    else if (msg.schema === undefined) {
      validateLegacy(msg, opts);
      out.push(msg);
    } else {
      opts.logger.error(
        { consumer: opts.consumer, subject: msg.subject, msg_id: msg.msg_id, schema: msg.schema, understood: INGEST_SCHEMA_VERSION },
        `ingest message of schema version ${msg.schema} is not one this consumer understands (${INGEST_SCHEMA_VERSION}); left for an upgraded consumer, offered again in ${NEWER_SCHEMA_RETRY_MS / 1000} s`,
      );
      await msg.nak(NEWER_SCHEMA_RETRY_MS);
    }
  }
  return out;
}

/** Validate the bodies of an unversioned envelope in place (see {@link admitBySchema}). */
function validateLegacy(msg: IngestDelivery<unknown>, opts: { consumer: string; logger: Pick<Logger, 'error' | 'warn'> }): void {
  const env = msg.payload as { organization_id?: string; events?: Array<{ id?: string; type?: string; body?: unknown }> } | null;
  if (!env || !Array.isArray(env.events)) return;
  env.events = env.events.filter((ev) => {
    const schema = typeof ev?.type === 'string' && Object.hasOwn(INGEST_BODY_SCHEMAS, ev.type) ? INGEST_BODY_SCHEMAS[ev.type as IngestEventType] : undefined;
    const parsed = schema?.safeParse(ev.body);
    if (parsed?.success) {
      ev.body = parsed.data;
      return true;
    }
    // The ingest service validated it; a mismatch means a contract drift, never a reason to stall the log.
    opts.logger.error({ consumer: opts.consumer, event_id: ev?.id, type: ev?.type, organization_id: env.organization_id, issues: parsed?.error.issues }, 'dropping invalid ingested event');
    return false;
  });
}

/**
 * Start a service's durable ingest consumer: `durable` over `${prefix}.ingested.*.${target}`, 64 messages per
 * batch, admitted by their schema version ({@link admitBySchema}), each batch settled by {@link settleIsolated} around `handle` (which acks what it stored and throws
 * otherwise), inside a consumer span linked to each message's producer (`withConsumeSpan`). Source: architecture §1 (JetStream pull consumers spread ingest).
 */
export function consumeIngest<T>(
  log: IngestLogConsumer,
  opts: { prefix: string; target: string; durable: string; sql: Sql; logger: Pick<Logger, 'error' | 'warn'>; handle: (batch: IngestDelivery<T>[]) => Promise<void> },
): Promise<{ stop(): Promise<void> }> {
  return log.consume<T>({
    durable: opts.durable,
    subjectFilter: ingestFilter(opts.prefix, opts.target),
    batchSize: 64,
    // One CONSUMER span per batch, linked to the producer span of each message (the traceparent its envelope carries).
    handler: async (delivered) => {
      const batch = await admitBySchema(delivered, { consumer: opts.durable, logger: opts.logger });
      if (batch.length === 0) return;
      await withConsumeSpan(
        opts.durable,
        ingestFilter(opts.prefix, opts.target),
        batch.map((m) => (m.payload as { traceparent?: string } | null)?.traceparent),
        () => settleIsolated(batch, opts.handle, { consumer: opts.durable, sql: opts.sql, logger: opts.logger }),
      );
    },
  });
}
