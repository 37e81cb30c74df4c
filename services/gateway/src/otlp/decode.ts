/**
 * Decoding and encoding OTLP/HTTP trace exports: an `ExportTraceServiceRequest` in protobuf (`application/x-protobuf`)
 * or in OTLP JSON (`application/json`: lowerCamelCase fields, hex trace and span ids, enums as integers) becomes a
 * flat list of {@link OtlpSpan}; an `ExportTraceServiceResponse` is encoded in the request's content type.
 * Protobuf goes through protobufjs with the descriptor generated from the official opentelemetry-proto v1.9.0 files
 * vendored in services/gateway/proto (Apache-2.0; regenerate with `node scripts/otlp-proto.mjs`).
 * Source: OTLP specification 1.x (OTLP/HTTP, JSON encoding); docs/ingest.md (OTLP trace ingest); docs/decisions.md (OTLP ingest).
 */
import protobuf from 'protobufjs';
import { z } from 'zod';
import descriptor from './otlp-trace.proto.json' with { type: 'json' };

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const RequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const ResponseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

/** OTLP span status codes (trace.proto `Status.StatusCode`). */
export const OTLP_STATUS = { unset: 0, ok: 1, error: 2 } as const;

/** One span of an export, flattened with its resource's attributes and its instrumentation scope. */
export interface OtlpSpan {
  /** Attributes of the span's resource (`service.name`, …). */
  resource: Record<string, unknown>;
  /** Name of the instrumentation scope that made the span. */
  scope: string;
  /** 32 lowercase hex digits ('' when absent). */
  traceId: string;
  /** 16 lowercase hex digits ('' when absent). */
  spanId: string;
  /** 16 lowercase hex digits, '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Start, nanoseconds since the Unix epoch; null when absent or not an integer. */
  startTimeUnixNano: bigint | null;
  /** End, nanoseconds since the Unix epoch; null when absent or not an integer. */
  endTimeUnixNano: bigint | null;
  /** The span's attributes; integers as numbers, arrays as arrays, key/value lists as objects. */
  attributes: Record<string, unknown>;
  /** Status: code 0 unset, 1 ok, 2 error ({@link OTLP_STATUS}), and its message. */
  status: { code: number; message: string };
}

/** A body that is not a well-formed export request of its content type (answered 400, nothing written). */
export class OtlpDecodeError extends Error {}

/** The OTLP encodings the endpoint speaks. */
export type OtlpEncoding = 'protobuf' | 'json';

/**
 * The encoding of a `content-type` header value, or null for any other media type (answered 415).
 * `application/x-protobuf` (also `application/protobuf`) and `application/json`, parameters ignored.
 */
export function otlpEncodingOf(contentType: string | undefined): OtlpEncoding | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return null;
}

type KeyValue = { key?: unknown; value?: unknown };

/** An OTLP AnyValue (protobufjs object or OTLP JSON, same field names) as a plain value. */
function anyValue(v: unknown): unknown {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (o.stringValue !== undefined) return String(o.stringValue);
  if (o.boolValue !== undefined) return Boolean(o.boolValue);
  if (o.intValue !== undefined) {
    const n = Number(o.intValue);
    return Number.isSafeInteger(n) ? n : String(o.intValue);
  }
  if (o.doubleValue !== undefined) return Number(o.doubleValue);
  if (o.arrayValue !== undefined) return (((o.arrayValue as { values?: unknown[] })?.values ?? []) as unknown[]).map(anyValue);
  if (o.kvlistValue !== undefined) return attributes((o.kvlistValue as { values?: KeyValue[] })?.values);
  if (o.bytesValue !== undefined) return typeof o.bytesValue === 'string' ? o.bytesValue : Buffer.from(o.bytesValue as Uint8Array).toString('base64');
  return undefined;
}

/** A KeyValue list as an object (later keys win, as OTLP receivers do). */
function attributes(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list as KeyValue[]) if (kv && typeof kv.key === 'string') out[kv.key] = anyValue(kv.value);
  return out;
}

/** Nanoseconds from a protobufjs long string, an OTLP JSON string or number; null when absent or not an integer. */
function nanos(v: unknown): bigint | null {
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return null;
}

/** An id as lowercase hex: protobuf bytes, or the hex string of OTLP JSON. */
function hexId(v: unknown): string {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  return typeof v === 'string' ? v.toLowerCase() : '';
}

type RawSpan = Record<string, unknown> & { status?: { code?: unknown; message?: unknown } };
type RawRequest = { resourceSpans?: Array<{ resource?: { attributes?: unknown }; scopeSpans?: Array<{ scope?: { name?: unknown }; spans?: RawSpan[] }> }> };

/** The spans of a decoded request (protobufjs object or OTLP JSON, which share field names). */
function flatten(req: RawRequest): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      const scope = typeof ss.scope?.name === 'string' ? ss.scope.name : '';
      for (const s of ss.spans ?? []) {
        spans.push({
          resource,
          scope,
          traceId: hexId(s.traceId),
          spanId: hexId(s.spanId),
          parentSpanId: hexId(s.parentSpanId),
          name: typeof s.name === 'string' ? s.name : '',
          kind: Number(s.kind ?? 0) || 0,
          startTimeUnixNano: nanos(s.startTimeUnixNano),
          endTimeUnixNano: nanos(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          status: { code: Number(s.status?.code ?? 0) || 0, message: typeof s.status?.message === 'string' ? s.status.message : '' },
        });
      }
    }
  }
  return spans;
}

const Obj = z.looseObject({});
/** The structure of an OTLP JSON export request the decoder walks (unknown fields are ignored, as OTLP requires). */
const JsonRequestSchema = z.looseObject({
  resourceSpans: z
    .array(
      z.looseObject({
        resource: z.looseObject({ attributes: z.array(Obj).optional() }).optional(),
        scopeSpans: z
          .array(
            z.looseObject({
              scope: z.looseObject({ name: z.string().optional() }).optional(),
              spans: z.array(z.looseObject({ attributes: z.array(Obj).optional(), status: z.looseObject({ message: z.string().optional() }).optional() })).optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});

/**
 * The spans of an export request body.
 * @param body the request body, already gunzipped.
 * @throws OtlpDecodeError when the body is not a well-formed protobuf `ExportTraceServiceRequest`, not JSON, JSON
 *   whose structure is not an export request (the message names the first bad path), or nested too deeply to walk.
 */
export function decodeTraceRequest(body: Buffer, encoding: OtlpEncoding): OtlpSpan[] {
  if (encoding === 'protobuf') {
    let decoded: protobuf.Message;
    try {
      // protobufjs reads nested messages recursively: a stack overflow on a hostile nesting is a malformed body too.
      decoded = RequestType.decode(body);
    } catch (err) {
      throw new OtlpDecodeError(`malformed protobuf ExportTraceServiceRequest: ${(err as Error).message}`);
    }
    return guarded(() => flatten(RequestType.toObject(decoded, { longs: String, enums: Number, defaults: false }) as RawRequest));
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new OtlpDecodeError(`malformed JSON: ${(err as Error).message}`);
  }
  const parsed = JsonRequestSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OtlpDecodeError(`not an OTLP JSON ExportTraceServiceRequest: body.${issue.path.join('.')}: ${issue.message}`);
  }
  return guarded(() => flatten(parsed.data as RawRequest));
}

/** `fn`, with a stack overflow (attribute values nested too deeply to walk) answered as a bad request. */
function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new OtlpDecodeError(`the export request is nested too deeply to decode: ${err.message}`);
    throw err;
  }
}

/** What an export answers: how many spans were refused and why (empty and 0 when all were accepted). */
export interface ExportOutcome {
  rejectedSpans: number;
  /** The reasons, or a warning (spans ignored) when none was refused; '' when there is nothing to say. */
  errorMessage: string;
}

/**
 * The `ExportTraceServiceResponse` body for `outcome` in `encoding`: `partialSuccess` is left out when nothing was
 * refused and there is no message (the OTLP spec's full success); `rejectedSpans` is an int64 (a decimal string in
 * JSON, per the proto3 JSON mapping).
 */
export function encodeTraceResponse(outcome: ExportOutcome, encoding: OtlpEncoding): Buffer {
  const partial = outcome.rejectedSpans > 0 || outcome.errorMessage ? { partialSuccess: { rejectedSpans: outcome.rejectedSpans, errorMessage: outcome.errorMessage } } : {};
  if (encoding === 'json') {
    const json = 'partialSuccess' in partial ? { partialSuccess: { rejectedSpans: String(outcome.rejectedSpans), errorMessage: outcome.errorMessage } } : {};
    return Buffer.from(JSON.stringify(json));
  }
  return Buffer.from(ResponseType.encode(ResponseType.fromObject(partial)).finish());
}
