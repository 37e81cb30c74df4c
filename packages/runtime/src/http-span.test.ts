import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMemoryTracing, type MemoryTracing } from '../../../test/support/spans.js';
import { HTTP_SPAN_SCOPE, httpServerSpan } from './http-span.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';

/** What the handler saw of the context it ran in: the child span it opened, and the `traceparent` it would pass on. */
interface Seen {
  child?: { recording: boolean; traceId: string; parentSpanId?: string };
  traceparent?: string;
  activeSpan: boolean;
}

// A real loopback `node:http` server whose listener runs behind the middleware, the SDK's tracer provider with its
// in-memory exporter and the default parent-based sampler (a caller's `traceparent` flags decide).
describe('httpServerSpan (real HTTP server, in-memory exporter)', () => {
  let tracing: MemoryTracing;
  let server: Server;
  let port = 0;
  let seen: Seen[] = [];
  /** Resolved when the last response finished (after the span's own 'finish' listener, registered before). */
  let finished: Promise<void> = Promise.resolve();

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let done!: () => void;
    finished = new Promise((r) => (done = r));
    res.once('finish', done);
    // Read the body through a promise (as a handler awaiting its body does), then open a child span.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    const read = new Promise<void>((r) => req.on('end', r));
    const active = trace.getActiveSpan();
    void read.then(() => {
      const child = trace.getTracer('test').startSpan('send work');
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      seen.push({
        activeSpan: active !== undefined,
        child: { recording: child.isRecording(), traceId: child.spanContext().traceId, parentSpanId: (child as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId },
        traceparent: carrier.traceparent,
      });
      child.end();
      const status = Number(/status=(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  };

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers: { 'user-agent': 'span-test/1', ...headers } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });

  beforeAll(async () => {
    tracing = startMemoryTracing();
    const span = httpServerSpan({ route: (method, path) => (path.startsWith('/things/') ? '/things/{id}' : undefined) });
    server = createServer((req, res) => span(req, res, () => handler(req, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await tracing.stop();
  });
  beforeEach(() => {
    tracing.reset();
    seen = [];
  });

  const serverSpans = () => tracing.spans().filter((s) => s.instrumentationScope.name === HTTP_SPAN_SCOPE);

  it('records a sampled request as a SERVER span with the HTTP semantic-convention attributes, the child under it', async () => {
    expect(await send('POST', '/things/t-42?verbose=1', { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01`, 'content-type': 'application/json' }, '{"a":1}')).toBe(200);
    await finished;
    const [span] = serverSpans();
    expect(serverSpans()).toHaveLength(1);
    expect(span.name).toBe('POST /things/{id}');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(CLIENT_SPAN_ID);
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': '/things/t-42',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': port,
      'network.protocol.version': '1.1',
      'network.peer.address': '127.0.0.1',
      'network.peer.port': expect.any(Number),
      'client.address': '127.0.0.1',
      'user_agent.original': 'span-test/1',
      'http.route': '/things/{id}',
      'http.response.status_code': 200,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    // The handler resumed from the body read (no emitter bound) and still ran under the server span.
    expect(seen).toEqual([{ activeSpan: true, child: { recording: true, traceId: TRACE_ID, parentSpanId: span.spanContext().spanId }, traceparent: expect.stringMatching(new RegExp(`^00-${TRACE_ID}-[\\da-f]{16}-01$`)) }]);
  });

  it('starts a new trace for a request without traceparent, named by its method when no route is known', async () => {
    expect(await send('GET', '/elsewhere')).toBe(200);
    await finished;
    const [span] = serverSpans();
    expect(span.name).toBe('GET');
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.attributes).not.toHaveProperty('http.route');
    expect(seen[0].child?.traceId).toBe(span.spanContext().traceId);
  });

  it('records nothing for a sampled-out request, yet its handler runs under the not-sampled parent and passes it on', async () => {
    expect(await send('POST', '/things/t-1', { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-00` }, '{}')).toBe(200);
    await finished;
    expect(tracing.spans()).toEqual([]);
    const [s] = seen;
    expect(s.activeSpan).toBe(true);
    expect(s.child).toMatchObject({ recording: false, traceId: TRACE_ID });
    // Downstream sees the same trace and the not-sampled flag, so it starts no sampled root of its own.
    expect(s.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[\\da-f]{16}-00$`));
  });

  it('makes no span for the scrape and probe paths', async () => {
    for (const path of ['/metrics', '/healthz/', '/readyz?full=1']) {
      expect(await send('GET', path, { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` })).toBe(200);
      await finished;
    }
    expect(serverSpans()).toEqual([]);
    // The handler ran outside any server span: its child continues nothing (no active span to parent it).
    expect(seen.map((s) => s.activeSpan)).toEqual([false, false, false]);
  });

  it('sets error status and error.type on a 5xx, and leaves the status unset on a 4xx', async () => {
    expect(await send('GET', '/things/x?status=500')).toBe(500);
    await finished;
    expect(await send('GET', '/things/y?status=404')).toBe(404);
    await finished;
    const [failed, missing] = serverSpans();
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
    expect(missing.status.code).toBe(SpanStatusCode.UNSET);
    expect(missing.attributes['http.response.status_code']).toBe(404);
    expect(missing.attributes).not.toHaveProperty('error.type');
  });

  it('reports a method the conventions do not know as _OTHER, with the original beside it', async () => {
    expect(await send('PURGE', '/things/z')).toBe(200);
    await finished;
    const [span] = serverSpans();
    expect(span.name).toBe('HTTP /things/{id}');
    expect(span.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'PURGE' });
  });
});
