import { createHash } from 'node:crypto';
import {
  INGEST_CREATED,
  INGEST_DUPLICATE,
  INGEST_EVENT_SCHEMAS,
  INGEST_SCHEMA_VERSION,
  INGEST_TARGETS,
  IngestBatchSchema,
  IngestEventSchema,
  clientEventId,
  type IngestChunk,
  type IngestError,
  type IngestEventType,
  type IngestRaw,
  type IngestResponse,
  type IngestSuccess,
  type ValidIngestEnvelope,
  type ValidIngestEvent,
} from '@agp/contracts';
import { ingestSubject, withPublishSpan, type IngestLogPublisher, type ServiceDeps } from '@agp/bus';
import {
  ServiceUnavailableError,
  counter,
  fieldErrors,
  jsonInputErrors,
  mayHoldUnstorableText,
  newId,
  parseJsonBody,
  type RequestContext,
} from '@agp/runtime';
import { boundAgentRefusal } from '@agp/auth';
import type { IngestedIds } from './ingested-ids.js';

/**
 * Dependencies of the ingest service: the durable log it publishes to, a read-only view of which event ids are
 * already stored (docs/ingest.md, Ingest answers), the subject prefix, a logger, a clock.
 */
export interface IngestDeps extends ServiceDeps {
  /** The durable ingest log accepted events are published to. */
  log: IngestLogPublisher;
  /** Which client event ids are already in the event store (see {@link IngestedIds}); asked once per chunk. */
  ingested: IngestedIds;
  /** Subject prefix (AGP_SUBJECT_PREFIX) of the ingest subjects. */
  subjectPrefix: string;
}

type Valid = { index: number; event: ValidIngestEvent };

/**
 * Whether an event's strings still need the unstorable-text check of `jsonInputErrors` (a NUL, an unpaired
 * surrogate): always, unless the raw text it came in proved that it cannot hold one. The nesting limit is always checked.
 */
type InputScan = { text: boolean };


/** What became of one event of a chunk, by its index in the client's batch. */
type Outcome = { index: number } & ({ success: IngestSuccess } | { error: IngestError });

const UNAVAILABLE = 'the ingest log is unavailable; retry this event';

const ingestAnswers = counter('agp_ingest_events_total', 'Ingested events by answer: created, duplicate, invalid, unavailable', ['result']);
const lookupFailures = counter('agp_ingest_stored_lookup_failures_total', 'Chunks answered without the stored-ids lookup because the event store could not be asked');

/**
 * The ingest service: validates each event of a chunk on its own, answers the events already stored (or repeated
 * within the chunk) `duplicate` without publishing them, publishes the others to the durable ingest log — one
 * message per target service, with the schema version of what it carries — and answers per event once the log has
 * acknowledged them: `created` (201), or `duplicate` (200) when the log reports the identical message as a duplicate.
 * Storage dedupes once, by the event store's event id (docs/decisions.md, Dedupe once).
 * Source: architecture §4 (Ingest), §6; docs/ingest.md (Ingest answers).
 */
export class IngestService {
  constructor(private readonly deps: IngestDeps) {}

  /**
   * Accept one chunk; the answer lists every event in batch order (`successes` and `errors` each sorted by index).
   * - Invalid events: status 422 and a message naming each bad field.
   * - With a key bound to an agent (`ctx.agent_id`), an event whose `body.agent_id` names another: status 403 naming
   *   the field and the bound agent, not published (docs/decisions.md, Agent-bound keys).
   * - An id already in the event store ({@link IngestDeps.ingested}): `{status: 200, result: "duplicate"}`, not published.
   * - An id that came earlier in the chunk: answered like that first occurrence (`duplicate`, or 503 when its publish
   *   failed), not published again.
   * - The others are published; `{status: 201, result: "created"}` once the log has them, or `duplicate` when the log
   *   already held the identical message (a retried request whose events are still in flight, within the log's dedupe
   *   window); 503 when their publish failed. The event store keeps each event once whatever the answer.
   * When the stored-ids lookup fails, it is logged and every event is treated as new (still stored once downstream).
   * `chunk` is the `ingest.batch` request as the wire table parsed it (raw events, each checked here on its own, once:
   * envelope and body with `INGEST_EVENT_SCHEMAS[type]`, then `jsonInputErrors` as far as `scan` says it is needed).
   * What is published is each event as that schema output it, under {@link INGEST_SCHEMA_VERSION}.
   * @throws ServiceUnavailableError when the log is down and no event could be accepted.
   */
  async accept(ctx: RequestContext, chunk: IngestChunk, scan: InputScan = { text: true }): Promise<IngestResponse> {
    const outcomes: Outcome[] = [];
    const valid: Valid[] = [];
    chunk.events.forEach((raw, i) => {
      const index = chunk.offset + i;
      const where = `batch[${index}]`;
      // One parse, envelope and body together, with the combined schema of the event's type; an event whose type is
      // not one of ours is checked by the envelope schema alone, which names `type` and the allowed values.
      const type = (raw as { type?: unknown } | null)?.type;
      const schema = typeof type === 'string' && Object.hasOwn(INGEST_EVENT_SCHEMAS, type) ? INGEST_EVENT_SCHEMAS[type as IngestEventType] : IngestEventSchema;
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        outcomes.push({ index, error: { id: clientEventId(raw), status: 422, message: describe(fieldErrors(parsed.error, where)) } });
        return;
      }
      const event = parsed.data as ValidIngestEvent;
      // PostgreSQL cannot store U+0000 or a lone surrogate, and no event may nest deeper than MAX_JSON_DEPTH: such an
      // event would fail every append downstream, so refuse it here, on its own (the nesting limit named first).
      const bad = jsonInputErrors(event, where, { text: scan.text });
      if (bad.length) {
        outcomes.push({ index, error: { id: event.id, status: 422, message: describe(bad) } });
        return;
      }
      // A key bound to an agent acts only as that agent: an event naming another is refused on its own.
      const refusal = boundAgentRefusal(ctx, event.body.agent_id, `${where}.body.agent_id`);
      if (refusal) {
        outcomes.push({ index, error: { id: event.id, status: 403, message: refusal } });
        return;
      }
      valid.push({ index, event });
    });
    // A run's events that contradict each other within this chunk are refused here, where the client sees why.
    const contradictions = runContradictions(valid);
    for (const [i, error] of contradictions) outcomes.push({ index: i, error });
    if (contradictions.size) valid.splice(0, valid.length, ...valid.filter((v) => !contradictions.has(v.index)));

    // The first valid occurrence of an id stands for the event; later ones follow its fate.
    const firsts = new Map<string, Valid>();
    const repeats: Valid[] = [];
    for (const v of valid) {
      if (firsts.has(v.event.id)) repeats.push(v);
      else firsts.set(v.event.id, v);
    }
    const stored = await this.storedIds(ctx.organization_id, [...firsts.keys()]);

    const byTarget = new Map<string, Valid[]>();
    for (const v of firsts.values()) {
      if (stored.has(v.event.id)) continue;
      const target = INGEST_TARGETS[v.event.type];
      const list = byTarget.get(target) ?? [];
      list.push(v);
      byTarget.set(target, list);
    }

    const receivedAt = (this.deps.now?.() ?? new Date()).toISOString();
    const results = await Promise.all(
      [...byTarget.entries()].map(async ([target, events]) => {
        const subject = ingestSubject(this.deps.subjectPrefix, ctx.organization_id, target);
        try {
          // A PRODUCER span per message: its traceparent travels in the envelope to the events' metadata.
          const { duplicate } = await withPublishSpan(subject, ctx.traceparent, { 'messaging.batch.message_count': events.length }, (traceparent) => {
            const envelope: ValidIngestEnvelope = {
              organization_id: ctx.organization_id,
              actor: ctx.user_id ? `user:${ctx.user_id}` : `key:${ctx.key_id}`,
              correlation_id: ctx.correlation_id,
              ...(traceparent ? { traceparent } : {}),
              received_at: receivedAt,
              events: events.map(({ event }) => ({ ...event, assigned_id: newId() })),
            };
            // The message id is derived from the organisation, the target and the event ids: a retried request whose
            // events are still in flight (in the log, not yet stored) is the identical message, which the log reports
            // as a duplicate within its window; beyond the window the stored-ids lookup above answers it.
            return this.deps.log.publish({ subject, msg_id: messageId(ctx.organization_id, target, events), schema: INGEST_SCHEMA_VERSION, payload: envelope });
          });
          return { events, ok: true as const, duplicate };
        } catch (err) {
          this.deps.logger.error({ err, target, events: events.length }, 'ingest publish failed');
          return { events, ok: false as const, duplicate: false };
        }
      }),
    );

    // Fate of each distinct id: duplicate (already stored, or the log already held the identical message), created,
    // or unavailable (its publish failed).
    const fate = new Map<string, 'created' | 'duplicate' | 'unavailable'>();
    for (const id of stored) fate.set(id, 'duplicate');
    for (const r of results) for (const { event } of r.events) fate.set(event.id, !r.ok ? 'unavailable' : r.duplicate ? 'duplicate' : 'created');
    for (const v of firsts.values()) outcomes.push(answer(v, fate.get(v.event.id)!));
    for (const v of repeats) outcomes.push(answer(v, fate.get(v.event.id) === 'unavailable' ? 'unavailable' : 'duplicate'));

    outcomes.sort((a, b) => a.index - b.index);
    const response: IngestResponse = { successes: [], errors: [] };
    const counts = { created: 0, duplicate: 0, invalid: 0, unavailable: 0 };
    for (const o of outcomes) {
      if ('success' in o) response.successes.push(o.success);
      else response.errors.push(o.error);
      counts['success' in o ? o.success.result : o.error.status === 503 ? 'unavailable' : 'invalid'] += 1;
    }
    for (const [result, n] of Object.entries(counts)) if (n) ingestAnswers.inc({ result }, n);
    if (response.successes.length === 0 && response.errors.some((e) => e.status === 503)) throw new ServiceUnavailableError('the ingest log is unavailable; nothing was accepted');
    return response;
  }

  /**
   * Accept a whole ingest request body sent as its bytes (`ingest.raw`, docs/decisions.md: The gateway forwards the
   * ingest body's bytes): decode it as UTF-8 and parse it once (no bytes: `null`), check the envelope (`{batch: [...]}` of at most 1000, else 422 naming
   * `body.batch`), then answer as {@link accept} does for one chunk holding the whole batch. No event can hold a NUL
   * or an unpaired surrogate when the text has no `\u0000` or `\uD…` escape (JSON carries them only escaped; bytes
   * that are not UTF-8 were decoded to U+FFFD), so then only the nesting limit is checked per event.
   * @throws BadRequestError (400) when the text is not JSON: `malformed JSON: <the parser's message>`.
   * @throws ValidationError (422) when the envelope is wrong.
   * @throws ServiceUnavailableError as {@link accept}.
   */
  async acceptRaw(ctx: RequestContext, raw: IngestRaw): Promise<IngestResponse> {
    // Bytes that are not UTF-8 decode to U+FFFD, as the gateway's JSON parser decodes them; no body reads as `null`.
    const json = raw.length ? Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8') : 'null';
    const { batch } = parseJsonBody(IngestBatchSchema, json);
    return this.accept(ctx, { offset: 0, events: batch }, { text: mayHoldUnstorableText(json) });
  }

  /** The ids of `clientIds` already stored; the empty set (logged and counted) when the event store cannot be asked. */
  private async storedIds(org: string, clientIds: string[]): Promise<Set<string>> {
    if (clientIds.length === 0) return new Set();
    try {
      return await this.deps.ingested.stored(org, clientIds);
    } catch (err) {
      lookupFailures.inc();
      this.deps.logger.warn({ err, events: clientIds.length }, 'cannot tell stored events from new ones; answering them as new');
      return new Set();
    }
  }
}

/**
 * The run.start / run.end / action.record events of one chunk that contradict another event of the same run in it, by
 * batch index, with the per-event error to answer. The first run.start of a run in the chunk (batch order) stands for it:
 * - a run.start, run.end or action.record naming another agent: 409 (a run belongs to one agent);
 * - a run.end whose `ended_at` (default: its `timestamp`) is before that run.start's `started_at` (default: its
 *   `timestamp`): 422 naming `body.ended_at`.
 * Across chunks and batches the order events arrive in is not known here; the stats projection applies the same
 * rules to the stored run and records what it refuses (docs/decisions.md, Run data quality). Pure.
 */
export function runContradictions(valid: ReadonlyArray<{ index: number; event: ValidIngestEvent }>): Map<number, IngestError> {
  const starts = new Map<string, { id: string; agent_id: string; started_at: string }>();
  for (const { event } of valid) {
    if (event.type !== 'run.start') continue;
    const b = event.body;
    if (!starts.has(b.run_id)) starts.set(b.run_id, { id: event.id, agent_id: b.agent_id, started_at: b.started_at ?? event.timestamp });
  }
  const out = new Map<number, IngestError>();
  for (const { index, event } of valid) {
    if (event.type !== 'run.start' && event.type !== 'run.end' && event.type !== 'action.record') continue;
    const b = event.body;
    const start = starts.get(b.run_id);
    if (!start || start.id === event.id) continue;
    if (b.agent_id !== start.agent_id) {
      out.set(index, { id: event.id, status: 409, message: `batch[${index}].body.agent_id: run ${b.run_id} belongs to agent ${start.agent_id} (run.start ${start.id} in this batch); a run belongs to one agent` });
      continue;
    }
    if (event.type !== 'run.end') continue;
    const ended = event.body.ended_at ?? event.timestamp;
    if (Date.parse(ended) < Date.parse(start.started_at)) {
      out.set(index, { id: event.id, status: 422, message: `batch[${index}].body.ended_at: ${ended} is before the run's started_at ${start.started_at} (run.start ${start.id} in this batch); a run cannot end before it starts` });
    }
  }
  return out;
}

/** The answer for one valid event given the fate of its id. */
function answer({ index, event }: Valid, fate: 'created' | 'duplicate' | 'unavailable'): Outcome {
  if (fate === 'unavailable') return { index, error: { id: event.id, status: 503, message: UNAVAILABLE } };
  return { index, success: { id: event.id, ...(fate === 'created' ? INGEST_CREATED : INGEST_DUPLICATE) } };
}

const describe = (errors: Array<{ path: string; message: string }>) => errors.map((e) => `${e.path}: ${e.message}`).join('; ');

/**
 * Dedupe id of one published message (JetStream `Nats-Msg-Id`, the SQL log's `msg_id`): the same organisation, target
 * and event ids give the same id, so a retried request is the identical message. SHA-256, hex.
 */
function messageId(org: string, target: string, events: Valid[]): string {
  // One `update` of the joined text: the same digest as one update per part, without two native calls per event.
  let text = `${org}\u0000${target}`;
  for (const { event } of events) text += `\u0000${event.id}`;
  return createHash('sha256').update(text).digest('hex');
}
