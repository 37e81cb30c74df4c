import { createHash } from 'node:crypto';
import {
  INGEST_BODY_SCHEMAS,
  INGEST_TARGETS,
  IngestEventSchema,
  type IngestEnvelope,
  type IngestEvent,
  type IngestResponse,
} from '@agp/contracts';
import { ingestSubject, type IngestLogPublisher } from '@agp/bus';
import { ServiceUnavailableError, fieldErrors, newId, unstorableTextError, unstorableTextPaths, type Logger, type RequestContext } from '@agp/runtime';
import { z } from 'zod';

/** Body of the `ingest.batch` request: a chunk of a client batch and its offset in that batch. */
export const IngestChunkSchema = z.object({ events: z.array(z.unknown()), offset: z.number().int().min(0).default(0) });

/** Dependencies of the ingest service: the durable log it publishes to, the subject prefix, a logger, a clock. */
export interface IngestDeps {
  log: IngestLogPublisher;
  subjectPrefix: string;
  logger: Logger;
  now?: () => Date;
}

type Valid = { index: number; event: IngestEvent };

/**
 * The ingest service: validates each event of a chunk on its own, publishes the valid ones to the durable
 * ingest log — one message per target service, deduplicated by a message id derived from the organisation
 * and the events' ids — and answers per event once the log has acknowledged them.
 * Source: ARCHITECTURE.md §4 (Ingest); issue 2 §6.
 */
export class IngestService {
  constructor(private readonly deps: IngestDeps) {}

  /**
   * Accept one chunk. Invalid events are reported with status 422 and a message naming each bad field;
   * events whose publish failed are reported with 503.
   * @throws ServiceUnavailableError when the log is down and no event could be accepted.
   */
  async accept(ctx: RequestContext, body: unknown): Promise<IngestResponse> {
    const chunk = IngestChunkSchema.parse(body);
    const response: IngestResponse = { successes: [], errors: [] };
    const byTarget = new Map<string, Valid[]>();
    chunk.events.forEach((raw, i) => {
      const index = chunk.offset + i;
      const rawId = typeof (raw as { id?: unknown })?.id === 'string' ? ((raw as { id: string }).id) : null;
      const env = IngestEventSchema.safeParse(raw);
      if (!env.success) {
        response.errors.push({ id: rawId, status: 422, message: describe(fieldErrors(env.error, `batch[${index}]`)) });
        return;
      }
      const bodyCheck = INGEST_BODY_SCHEMAS[env.data.type].safeParse(env.data.body);
      if (!bodyCheck.success) {
        response.errors.push({ id: env.data.id, status: 422, message: describe(fieldErrors(bodyCheck.error, `batch[${index}].body`)) });
        return;
      }
      // PostgreSQL cannot store U+0000: such an event would fail every append downstream, so refuse it here.
      const nul = unstorableTextPaths(env.data, `batch[${index}]`);
      if (nul.length) {
        response.errors.push({ id: env.data.id, status: 422, message: describe(nul.map(unstorableTextError)) });
        return;
      }
      const target = INGEST_TARGETS[env.data.type];
      const list = byTarget.get(target) ?? [];
      list.push({ index, event: env.data });
      byTarget.set(target, list);
    });

    const receivedAt = (this.deps.now?.() ?? new Date()).toISOString();
    const results = await Promise.all(
      [...byTarget.entries()].map(async ([target, events]) => {
        const envelope: IngestEnvelope = {
          organization_id: ctx.organization_id,
          actor: `key:${ctx.key_id}`,
          correlation_id: ctx.correlation_id,
          received_at: receivedAt,
          events: events.map(({ event }) => ({ ...event, assigned_id: newId() })),
        };
        try {
          await this.deps.log.publish({
            subject: ingestSubject(this.deps.subjectPrefix, ctx.organization_id, target),
            msg_id: messageId(ctx.organization_id, target, events),
            payload: envelope,
          });
          return { events, ok: true as const };
        } catch (err) {
          this.deps.logger.error({ err, target, events: events.length }, 'ingest publish failed');
          return { events, ok: false as const };
        }
      }),
    );
    let accepted = 0;
    for (const r of results) {
      for (const { event } of r.events) {
        if (r.ok) response.successes.push({ id: event.id, status: 201 });
        else response.errors.push({ id: event.id, status: 503, message: 'the ingest log is unavailable; retry this event' });
      }
      if (r.ok) accepted += r.events.length;
    }
    if (accepted === 0 && results.some((r) => !r.ok)) throw new ServiceUnavailableError('the ingest log is unavailable; nothing was accepted');
    return response;
  }
}

/** Dedupe id of one published message: the same organisation, target and event ids give the same id. */
function messageId(org: string, target: string, events: Valid[]): string {
  const h = createHash('sha256').update(org).update('\u0000').update(target);
  for (const { event } of events) h.update('\u0000').update(event.id);
  return h.digest('hex');
}

const describe = (errors: Array<{ path: string; message: string }>) => errors.map((e) => `${e.path}: ${e.message}`).join('; ');
