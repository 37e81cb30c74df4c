import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';

/** One span as an OTLP/HTTP JSON export carries it, flattened with its resource's `service.name` and its scope. */
export interface ReceivedSpan {
  service: string;
  scope: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

/** A loopback OTLP/HTTP trace receiver (protobuf, the exporters' default, or JSON) and what it received. */
export interface OtlpReceiver {
  /** The endpoint to give as `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Export requests received, by encoding. */
  encodings: { protobuf: number; json: number };
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };

function valueOf(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** One protobuf field: its number, and its varint value or its length-delimited bytes (fixed64 / fixed32 as bytes). */
type Field = { no: number; varint?: bigint; bytes?: Buffer };

/** The fields of one protobuf message (wire format: varint, fixed64, length-delimited, fixed32). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    switch (tag & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        out.push({ no, bytes: buf.subarray(i, (i += 8)) });
        break;
      case 2: {
        const len = Number(varint());
        out.push({ no, bytes: buf.subarray(i, (i += len)) });
        break;
      }
      case 5:
        out.push({ no, bytes: buf.subarray(i, (i += 4)) });
        break;
      default:
        throw new Error(`unsupported protobuf wire type ${tag & 7}`);
    }
  }
  return out;
}

const sub = (f: Field[], no: number) => f.filter((x) => x.no === no).map((x) => fields(x.bytes!));
const str = (f: Field[], no: number) => f.find((x) => x.no === no)?.bytes?.toString('utf8') ?? '';
const hex = (f: Field[], no: number) => f.find((x) => x.no === no)?.bytes?.toString('hex') ?? '';

/** An OTLP AnyValue (common.proto): string 1, bool 2, int 3, double 4, array 5. */
function protoValue(f: Field[]): unknown {
  for (const x of f) {
    if (x.no === 1) return x.bytes!.toString('utf8');
    if (x.no === 2) return x.varint === 1n;
    if (x.no === 3) return Number(BigInt.asIntN(64, x.varint!));
    if (x.no === 4) return x.bytes!.readDoubleLE(0);
    if (x.no === 5) return sub(fields(x.bytes!), 1).map(protoValue);
  }
  return undefined;
}

/** KeyValue list (key 1, value 2) as an object. */
const protoAttributes = (list: Field[][]) => Object.fromEntries(list.map((kv) => [str(kv, 1), protoValue(sub(kv, 2)[0] ?? [])]));

/**
 * The spans of an ExportTraceServiceRequest in protobuf (trace_service.proto / trace.proto field numbers):
 * ResourceSpans 1 → Resource 1 (attributes 1), ScopeSpans 2 → scope 1 (name 1), Span 2 → trace_id 1, span_id 2,
 * parent_span_id 4, name 5, kind 6, attributes 9, links 13 (trace_id 1, span_id 2).
 */
function protoSpans(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of sub(fields(body), 1)) {
    const service = String(protoAttributes(sub(sub(rs, 1)[0] ?? [], 1))['service.name'] ?? '');
    for (const ss of sub(rs, 2)) {
      const scope = str(sub(ss, 1)[0] ?? [], 1);
      for (const s of sub(ss, 2)) {
        spans.push({
          service,
          scope,
          name: str(s, 5),
          kind: Number(s.find((x) => x.no === 6)?.varint ?? 0n),
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          attributes: protoAttributes(sub(s, 9)),
          links: sub(s, 13).map((l) => ({ traceId: hex(l, 1), spanId: hex(l, 2) })),
        });
      }
    }
  }
  return spans;
}

/** The spans of an ExportTraceServiceRequest in OTLP JSON (ids in hex). */
function jsonSpans(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  const doc = JSON.parse(body.toString('utf8')) as { resourceSpans?: any[] };
  for (const rs of doc.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          service,
          scope: ss.scope?.name ?? '',
          name: s.name,
          kind: s.kind,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          attributes: attributesOf(s.attributes),
          links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({ traceId: l.traceId, spanId: l.spanId })),
        });
      }
    }
  }
  return spans;
}

/**
 * Start a real HTTP server on 127.0.0.1 that accepts `POST /v1/traces` in OTLP/HTTP, protobuf
 * (`application/x-protobuf`) or JSON (`application/json`), gzip or not; answers 200 as a collector does; and keeps
 * every span it decodes (`encodings` counts the requests by content type). Anything else is answered 415.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const encodings = { protobuf: 0, json: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const type = String(req.headers['content-type']);
      const json = type.startsWith('application/json');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(json || type.startsWith('application/x-protobuf'))) {
        res.writeHead(415).end();
        return;
      }
      spans.push(...(json ? jsonSpans(body) : protoSpans(body)));
      encodings[json ? 'json' : 'protobuf']++;
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, spans, encodings, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
