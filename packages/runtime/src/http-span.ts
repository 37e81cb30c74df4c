/**
 * The HTTP server span of every HTTP server AGP runs (the gateway's API, embedded or distributed, and each service's
 * ops server), in place of `@opentelemetry/instrumentation-http`'s incoming side: one SERVER span per request, named
 * and described by the HTTP semantic conventions, that costs next to nothing when the sampler drops it.
 *
 * Per request: the trace context is read from the headers with the global propagator (`traceparent`/`tracestate`),
 * the tracer starts the span with only the method and path as attributes (what a sampler may read), and the rest of
 * the attributes, the listeners that end the span and the route lookup happen only when `span.isRecording()`. The
 * handler runs with `context.with(ctx, …)`, so spans started under it are its children and a sampled-out decision
 * still travels downstream (`traceparent` flags `00`); the request and response emitters are NOT bound to the context
 * (the instrumentation binds them, which wraps every listener Express, body-parser and Nest add). Code that resumes
 * from a request stream's own events (`req.on('end')`) must bind its callback (`context.bind`) to stay under the span;
 * body-parser's readers already do (raw-body runs its callback in the caller's async scope).
 *
 * With tracing off (no SDK started) the API's no-op propagator, tracer and context manager make this a few property
 * reads per request. Source: architecture §5 (operations), docs/operations.md (Tracing), docs/decisions.md (Tracing:
 * OpenTelemetry export), the OpenTelemetry HTTP semantic conventions (HTTP server spans, stable).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Span } from '@opentelemetry/api';

/** The instrumentation scope of the server spans. */
export const HTTP_SPAN_SCOPE = 'agp.http';

/** The paths never traced: the scrape and probe endpoints, polled all day long (with or without a trailing slash). */
const UNTRACED = /^\/(?:metrics|healthz|readyz)\/*$/;

/** The methods the HTTP semantic conventions know; any other is reported as `_OTHER` (with the original beside it). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', 'QUERY']);

/** Options of {@link httpServerSpan}. */
export interface HttpServerSpanOptions {
  /**
   * The route template of a request (`http.route`, e.g. `/api/v1/runs/{id}`), or undefined when none is known; called
   * only for recorded requests, with the method, the path without its query and the request (whose route an earlier
   * middleware may have matched). The span is named `<method> <route>`, or `<method>` alone without one. Must not throw.
   * @default no route: every span is named by its method
   */
  route?: (method: string, path: string, req: IncomingMessage) => string | undefined;
  /**
   * Paths (without the query) that get no span at all; their handler runs in the server's context. Must not throw.
   * @default `/metrics`, `/healthz` and `/readyz`
   */
  ignore?: (path: string) => boolean;
}

/**
 * A request handler in the middleware shape (`(req, res, next)`): Express's, and usable around a plain `node:http`
 * listener (call the listener in `next`).
 */
export type HttpServerSpanMiddleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Make the server-span middleware: mount it first, before anything that opens a span or reads the body. Throws
 * nothing of its own; with tracing off it only calls `next`.
 *
 * A recorded span has the stable HTTP server attributes: `http.request.method` (and `http.request.method_original`
 * for a method the conventions do not know), `url.path`, `url.scheme` (`http`, or `https` on a TLS socket),
 * `server.address` / `server.port` (from the `Host` header), `network.protocol.version`, `network.peer.address` /
 * `network.peer.port` and `client.address` (the socket's peer; forwarding headers are not read),
 * `user_agent.original`, `http.route` (when `route` knows it), `http.response.status_code`, and for a 5xx answer
 * `error.type` (the status code) with status ERROR; a 4xx leaves the status unset (the server did its job). The
 * query string is not recorded. The span ends when the response finishes, or when the connection closes before.
 * @example
 * ```ts
 * app.use(httpServerSpan({ route: (method, path) => matchHttpRoute(method, path)?.path }));
 * http.createServer((req, res) => serverSpan(req, res, () => listener(req, res)));
 * ```
 */
export function httpServerSpan(opts: HttpServerSpanOptions = {}): HttpServerSpanMiddleware {
  const ignore = opts.ignore ?? ((path: string) => UNTRACED.test(path));
  const tracer = trace.getTracer(HTTP_SPAN_SCOPE);
  return (req, res, next) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (ignore(path)) return next();
    const original = req.method ?? 'GET';
    const method = KNOWN_METHODS.has(original) ? original : '_OTHER';
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(method === '_OTHER' ? 'HTTP' : method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
    if (span.isRecording()) record(span, req, res, method, original, path, opts.route);
    context.with(trace.setSpan(parent, span), next);
  };
}

/** Describe a recorded request's span and end it with the answer's status when the response is done. */
function record(span: Span, req: IncomingMessage, res: ServerResponse, method: string, original: string, path: string, routeOf: HttpServerSpanOptions['route']): void {
  const route = routeOf?.(original, path, req);
  if (route) span.updateName(`${method === '_OTHER' ? 'HTTP' : method} ${route}`);
  const socket = req.socket as IncomingMessage['socket'] & { encrypted?: boolean };
  const attributes: Attributes = {
    'url.scheme': socket.encrypted ? 'https' : 'http',
    'network.protocol.version': req.httpVersion,
    'network.peer.address': socket.remoteAddress,
    'network.peer.port': socket.remotePort,
    'client.address': socket.remoteAddress,
    'user_agent.original': req.headers['user-agent'],
    ...(route ? { 'http.route': route } : {}),
    ...(method !== original ? { 'http.request.method_original': original } : {}),
    ...hostOf(req.headers.host, socket.encrypted ? 443 : 80),
  };
  span.setAttributes(attributes);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    const status = res.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
}

/** `server.address` and `server.port` from a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`). */
function hostOf(host: string | undefined, defaultPort: number): Attributes {
  if (!host) return {};
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(host);
  if (!m) return {};
  return { 'server.address': m[1].replace(/^\[|\]$/g, ''), 'server.port': m[2] ? Number(m[2]) : defaultPort };
}
