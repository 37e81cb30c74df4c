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

/** A loopback OTLP/HTTP trace receiver (JSON encoding, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and what it received. */
export interface OtlpReceiver {
  /** The endpoint to give as `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
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

/**
 * Start a real HTTP server on 127.0.0.1 that accepts `POST /v1/traces` in OTLP/HTTP JSON (gzip or not), answers 200
 * `{}` as a collector does, and keeps every span it decodes. Anything else is answered 415 and kept nowhere.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
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
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, spans, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
