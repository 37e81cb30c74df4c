/**
 * `POST /api/v1/otlp/v1/traces`: the OTLP/HTTP trace receiver. An agent fleet points its OTLP exporter at AGP
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, the write key in `OTEL_EXPORTER_OTLP_HEADERS`) and its GenAI spans become runs
 * and ledger actions through the normal ingest path. An express handler mounted after authentication and before the
 * JSON body parser (it reads protobuf too).
 * Source: OTLP specification 1.x (OTLP/HTTP, partial success); docs/ingest.md (OTLP trace ingest).
 */
import express, { type Request, type Response } from 'express';
import type { ClientProxy } from '@nestjs/microservices';
import { INGEST_MAX_BYTES } from '@agp/contracts';
import { counter, problem, type Logger, type Problem } from '@agp/runtime';
import { ctxOf, parseFailure, sendProblem, type AuthedRequest } from '../edge.js';
import { submitIngestBatch } from '../routes/ingest.js';
import { OtlpDecodeError, decodeTraceRequest, encodeTraceResponse, otlpEncodingOf, type ExportOutcome, type OtlpEncoding } from './decode.js';
import { mapSpans, type SpanRejection } from './mapping.js';
import { loadPriceDatabase, type PriceTable } from './prices.js';

/** The path of the endpoint (the OTLP/HTTP default `/v1/traces` under `/api/v1/otlp`). */
export const OTLP_TRACES_PATH = '/api/v1/otlp/v1/traces';

/** Reasons listed in a partial success's `errorMessage`; the rest are counted. */
const MAX_REASONS = 20;

const otlpSpans = counter('agp_otlp_spans_total', 'Spans received by the OTLP trace endpoint, by result: mapped, rejected, ignored', ['result']);

/** What the endpoint needs: the bus to send ingest chunks on, the operator's price table (null: none), a logger, the error answer. */
export interface OtlpTracesOptions {
  bus: Pick<ClientProxy, 'send'>;
  prices: PriceTable | null;
  logger: Logger;
  /** Answers a thrown error (503, a 4xx of the ingest service) as problem details. */
  answerError: (res: Response, err: unknown) => void;
}

/** The `errorMessage` of a partial success: how many spans were refused and why, the first {@link MAX_REASONS} named. */
export function rejectionMessage(rejected: SpanRejection[], total: number): string {
  if (!rejected.length) return '';
  const listed = rejected.slice(0, MAX_REASONS).map((r) => `span ${r.span.spanId || '(no id)'} "${r.span.name}": ${r.reason}`);
  const more = rejected.length > MAX_REASONS ? `; and ${rejected.length - MAX_REASONS} more` : '';
  return `${rejected.length} of ${total} spans rejected: ${listed.join('; ')}${more}`;
}

/**
 * The handler. Answers:
 * - 415 problem details when the content type is neither `application/x-protobuf` nor `application/json`, or the
 *   content encoding is not gzip, deflate, br, zstd or identity;
 * - 413 when the body (after gunzip) is over 5 MiB; 400 when it is not a well-formed export request;
 * - 200 with an `ExportTraceServiceResponse` in the request's encoding: `partialSuccess.rejectedSpans` and an
 *   `errorMessage` naming each refused span's reason when some could not be mapped or stored, else empty;
 * - 503 (retryable for exporters) only when the ingest service accepted nothing because it is unavailable.
 * Each span is sent whole (its events all go in the one batch) or refused whole; the same span sent twice is stored once.
 */
export function otlpTracesEndpoint(opts: OtlpTracesOptions) {
  const raw = express.raw({ type: () => true, limit: INGEST_MAX_BYTES, inflate: true });

  /** Decode, map, submit and answer one export whose body has been read. @throws what decoding throws but a decode error (answered 400 here). */
  function answer(req: AuthedRequest, res: Response, encoding: OtlpEncoding): void {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let spans;
    try {
      spans = decodeTraceRequest(body, encoding);
    } catch (e) {
      if (e instanceof OtlpDecodeError) return sendProblem(res, problem(400, 'Bad Request', e.message));
      throw e;
    }
    const ctx = ctxOf(req);
    const { mapped, rejected, ignored } = mapSpans(ctx.organization_id, spans, opts.prices);
    submitIngestBatch(opts.bus, ctx, mapped.flatMap((m) => m.events))
      .then((reply) => {
        const errors = new Map(reply.errors.map((e) => [e.id, e.message]));
        const refused = [...rejected];
        for (const m of mapped) {
          const failed = m.events.find((e) => errors.has(e.id));
          if (failed) refused.push({ span: m.span, reason: `${failed.type}: ${errors.get(failed.id)}` });
        }
        otlpSpans.inc({ result: 'mapped' }, mapped.length - (refused.length - rejected.length));
        otlpSpans.inc({ result: 'rejected' }, refused.length);
        otlpSpans.inc({ result: 'ignored' }, ignored);
        if (refused.length) opts.logger.debug({ rejected: refused.length, spans: spans.length, request_id: res.locals.requestId }, 'OTLP export: spans rejected');
        const outcome: ExportOutcome = { rejectedSpans: refused.length, errorMessage: rejectionMessage(refused, spans.length) };
        res
          .status(200)
          .type(encoding === 'json' ? 'application/json' : 'application/x-protobuf')
          .send(encodeTraceResponse(outcome, encoding));
      })
      .catch((e: unknown) => opts.answerError(res, e));
  }

  return (req: Request, res: Response) => {
    const encoding = otlpEncodingOf(req.get('content-type'));
    if (!encoding) {
      req.resume();
      return sendProblem(res, problem(415, 'Unsupported Media Type', `send an OTLP ExportTraceServiceRequest as application/x-protobuf or application/json (got ${req.get('content-type') || 'no content type'})`));
    }
    raw(req, res, (err?: unknown) => {
      if (err) {
        const refusal: Problem | undefined = parseFailure(err, req, INGEST_MAX_BYTES);
        return refusal && !res.headersSent ? sendProblem(res, refusal) : undefined;
      }
      // Nothing may escape this callback (it runs in the body stream's event handler, where a throw would end the
      // process): an unexpected error is answered like any route's. The price database loads on the first export.
      loadPriceDatabase()
        .then(() => answer(req as AuthedRequest, res, encoding))
        .catch((e: unknown) => opts.answerError(res, e));
    });
  };
}
