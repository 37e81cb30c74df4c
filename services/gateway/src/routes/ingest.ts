/**
 * `POST /api/v1/ingest/`, a batch of up to 1000 events answered 207 per event, and the one submission path of a batch
 * of ingest events ({@link submitIngestBatch}), which OTLP trace ingest shares (../otlp/route.ts).
 * Source: spec §Ingest; docs/ingest.md; architecture §4.
 */
import { INGEST_DUPLICATE, INGEST_RAW_MAX_BYTES, IngestBatchSchema, MAX_JSON_DEPTH, clientEventId, type IngestResponse } from '@agp/contracts';
import { call, RemoteProblemError, type Sender } from '@agp/bus';
import { ServiceUnavailableError, describeJsonInputErrors, jsonInputErrors, jsonNestingDepth, parseJsonBody, type RequestContext } from '@agp/runtime';
import { MAX_EVENT_BYTES, chunkBatch } from '../chunks.js';
import type { RouteAnswer, RouteCall } from '../router.js';

/** What the ingest route answers when the ingest service could not be asked at all: a 503 for the whole request. */
const INGEST_UNAVAILABLE = 'the ingest service is unavailable; nothing was accepted';

/** The `ingest.raw` body of a request that had none (the ingest service answers it as it answers `null`: 422). */
const EMPTY_BODY = new Uint8Array(0);

/**
 * `POST /api/v1/ingest`: authenticated and size-checked at the edge (401/403, 413 over 5 MiB, 415), the body arrives
 * here as its bytes (`bodyAs: 'bytes'` of its row). A body of at most INGEST_RAW_MAX_BYTES (448 KiB; the common case,
 * 100 events of ~800 B) is forwarded unparsed and undecoded as one `ingest.raw` message (the bytes are its NATS
 * payload): the ingest service parses it once and answers per event (400 malformed JSON and 422 for the envelope come
 * back from it unchanged). A larger body cannot travel as one bus message: it is parsed here and split
 * ({@link ingestChunked}). docs/decisions.md (The gateway forwards the ingest body's bytes).
 * @throws ServiceUnavailableError (503) when the ingest service cannot be asked or accepted nothing.
 */
export async function ingest({ req, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const bytes = Buffer.isBuffer(req.body) ? req.body : undefined;
  if (bytes && bytes.length > INGEST_RAW_MAX_BYTES) return { body: await ingestChunked(deps.bus, ctx, bytes) };
  try {
    return { body: await call(deps.bus, 'ingest.raw', ctx, bytes ?? EMPTY_BODY) };
  } catch (err) {
    if (err instanceof RemoteProblemError && err.status < 500) throw err;
    throw new ServiceUnavailableError(INGEST_UNAVAILABLE, { cause: err });
  }
}

/**
 * A body over INGEST_RAW_MAX_BYTES: parse it (400 when malformed), validate the envelope (422 when it is not
 * `{batch: [...]}` of at most 1000), refuse the events nested deeper than MAX_JSON_DEPTH (64) on their own (422),
 * and send the rest in chunks with {@link submitIngestBatch} (an id accepted in an earlier chunk of the batch is a
 * duplicate: the one within-request dedupe that spans chunks; an event over 900 KiB is 413). 503 only when no event
 * at all could be accepted.
 */
async function ingestChunked(bus: Sender, ctx: RequestContext, bytes: Buffer): Promise<IngestResponse> {
  const { batch } = parseJsonBody(IngestBatchSchema, bytes.toString('utf8'));
  // Events nested deeper than MAX_JSON_DEPTH are refused on their own (422), like oversized ones; the body's depth,
  // read from its bytes, says whether any event can be (the envelope adds two levels).
  const tooDeep = new Map<number, { id: string | null; message: string }>();
  if (jsonNestingDepth(bytes) > MAX_JSON_DEPTH + 2) {
    batch.forEach((event, index) => {
      const errors = jsonInputErrors(event, `batch[${index}]`, { text: false });
      if (errors.length) tooDeep.set(index, { id: clientEventId(event), message: describeJsonInputErrors(errors) });
    });
  }
  return submitIngestBatch(bus, ctx, batch, { bodyBytes: bytes.length, tooDeep });
}

/**
 * Send a batch of raw ingest events the normal way: split it into chunks that fit a bus message, send them to the
 * ingest service (`ingest.batch`) in parallel and merge their per-event answers in batch order, each success
 * `{id, status: 201, result: "created"}` or `{id, status: 200, result: "duplicate"}` (an id accepted in an earlier
 * chunk is a duplicate). An event over 900 KiB is answered 413 on its own; the events of `opts.tooDeep` (by index) are
 * answered 422 with their message, neither sent. A chunk the ingest service cannot answer makes its events 503.
 * The one submission path of `POST /api/v1/ingest` and of OTLP trace ingest (docs/ingest.md).
 * @param opts.bodyBytes size of the request body the batch came from, when known (a small one is sent as one chunk).
 * @throws RemoteProblemError a 4xx the ingest service answers for a whole chunk.
 * @throws ServiceUnavailableError when no event at all could be accepted because the ingest service is unavailable.
 */
export async function submitIngestBatch(
  bus: Sender,
  ctx: RequestContext,
  batch: unknown[],
  opts: { bodyBytes?: number; tooDeep?: ReadonlyMap<number, { id: string | null; message: string }> } = {},
): Promise<IngestResponse> {
  const tooDeep = opts.tooDeep ?? new Map<number, { id: string | null; message: string }>();
  const { chunks, oversized } = chunkBatch(batch, undefined, undefined, opts.bodyBytes, new Set(tooDeep.keys()));
  const answers = await Promise.all(
    chunks.map(async (chunk) => {
      try {
        return { chunk, reply: await call(bus, 'ingest.batch', ctx, chunk) };
      } catch (err) {
        if (err instanceof RemoteProblemError && err.status < 500) throw err;
        return { chunk, reply: null };
      }
    }),
  );
  const out: IngestResponse = { successes: [], errors: [] };
  // An id accepted in an earlier chunk makes a later "created" of the same id a duplicate (docs/ingest.md, Ingest answers);
  // the ingest service already answers repeats within one chunk.
  const accepted = new Set<string>();
  for (const { chunk, reply } of answers) {
    if (reply) {
      for (const s of reply.successes) out.successes.push(s.result === 'created' && accepted.has(s.id) ? { id: s.id, ...INGEST_DUPLICATE } : s);
      for (const s of reply.successes) accepted.add(s.id);
      out.errors.push(...reply.errors);
    } else {
      for (const e of chunk.events) {
        out.errors.push({ id: clientEventId(e), status: 503, message: 'the ingest service is unavailable; retry this event' });
      }
    }
  }
  for (const [, d] of tooDeep) out.errors.push({ id: d.id, status: 422, message: d.message });
  for (const o of oversized) out.errors.push({ id: o.id, status: 413, message: `batch[${o.index}]: event is ${o.bytes} bytes; at most ${MAX_EVENT_BYTES} bytes per event` });
  if (out.successes.length === 0 && out.errors.length > 0 && out.errors.every((e) => e.status === 503)) {
    throw new ServiceUnavailableError(INGEST_UNAVAILABLE);
  }
  return out;
}
