import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import client from 'prom-client';
import { DEFAULT_LISTEN_HOST } from './config.js';
import { httpServerSpan } from './http-span.js';

/** The process-wide Prometheus registry (default metrics collected once). */
export const metricsRegistry = client.register;
let defaultsStarted = false;

/** Start collecting the default process metrics once per process. */
export function collectDefaultMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  client.collectDefaultMetrics({ register: metricsRegistry, prefix: 'agp_' });
}

/** Get or create a counter in the process registry (safe when several services share one process). */
export function counter(name: string, help: string, labelNames: string[] = []): client.Counter<string> {
  return (metricsRegistry.getSingleMetric(name) as client.Counter<string>) ?? new client.Counter({ name, help, labelNames, registers: [metricsRegistry] });
}

/** Get or create a histogram (seconds) in the process registry. */
export function histogram(name: string, help: string, labelNames: string[] = [], buckets?: number[]): client.Histogram<string> {
  return (
    (metricsRegistry.getSingleMetric(name) as client.Histogram<string>) ??
    new client.Histogram({ name, help, labelNames, registers: [metricsRegistry], ...(buckets ? { buckets } : {}) })
  );
}

/** Get or create a gauge in the process registry. */
export function gauge(name: string, help: string, labelNames: string[] = []): client.Gauge<string> {
  return (metricsRegistry.getSingleMetric(name) as client.Gauge<string>) ?? new client.Gauge({ name, help, labelNames, registers: [metricsRegistry] });
}

const readinessDetails = new Map<string, () => unknown>();

/**
 * Add (or, with `provide` undefined, remove) a fact every `/readyz` answer of this process shows under
 * `detail.<name>` without changing readiness, e.g. the ingest consumers' lag. `provide` is called per request and
 * must be cheap (return a cached snapshot).
 */
export function readinessDetail(name: string, provide: (() => unknown) | undefined): void {
  if (provide) readinessDetails.set(name, provide);
  else readinessDetails.delete(name);
}

/** The registered readiness details (see {@link readinessDetail}), or undefined when none is registered. */
export function currentReadinessDetails(): Record<string, unknown> | undefined {
  if (readinessDetails.size === 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, provide] of readinessDetails) {
    try {
      out[name] = provide();
    } catch (err) {
      out[name] = { error: (err as Error).message };
    }
  }
  return out;
}

/**
 * A minimal HTTP server for a service process without an HTTP API: `GET /healthz` (the process is up),
 * `GET /readyz` (runs `readiness`; 503 problem+json when it throws; the 200 body carries the
 * {@link readinessDetail} facts as `detail`) and `GET /metrics` (Prometheus).
 * Source: architecture §5 (every service exposes /healthz, /readyz and /metrics).
 * @param port 0 picks a free port. Resolves with the bound port.
 * @param host listen address (OPS_HOST). @default 127.0.0.1 (loopback: `/metrics` is unauthenticated)
 */
export async function startOpsServer(opts: { port: number; host?: string; service: string; readiness: () => Promise<void> }): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  collectDefaultMetrics();
  // Its three paths are never traced; anything else (a 404, a 405) is a server span like the gateway's requests.
  const span = httpServerSpan();
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/';
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, 'application/problem+json', JSON.stringify({ type: 'about:blank', title: 'Method Not Allowed', status: 405, detail: 'only GET' }));
    if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok', service: opts.service }));
    if (path === '/readyz') {
      opts.readiness().then(
        () => send(200, 'application/json', JSON.stringify({ status: 'ready', service: opts.service, detail: currentReadinessDetails() })),
        (err: Error) => send(503, 'application/problem+json', JSON.stringify({ type: 'https://agp.dev/problems/service-unavailable', title: 'Service Unavailable', status: 503, detail: err.message })),
      );
      return;
    }
    if (path === '/metrics') {
      metricsRegistry.metrics().then((m) => send(200, metricsRegistry.contentType, m), (err: Error) => send(500, 'text/plain', err.message));
      return;
    }
    send(404, 'application/problem+json', JSON.stringify({ type: 'https://agp.dev/problems/not-found', title: 'Not Found', status: 404, detail: `no route ${path}` }));
  };
  const server = createServer((req, res) => span(req, res, () => answer(req, res)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? DEFAULT_LISTEN_HOST, () => resolve());
  });
  const addr = server.address();
  return { port: typeof addr === 'object' && addr ? addr.port : opts.port, server, close: () => new Promise((r) => server.close(() => r())) };
}

/** One dependency a readiness probe checks: its name (`postgres`, `nats`) and a check that throws when it is down. */
export interface ReadinessCheck {
  name: string;
  /** Throws (or rejects) when the dependency cannot serve; its message goes into the 503's detail. */
  check(): void | Promise<void>;
}

/**
 * A readiness callback (for {@link startOpsServer} or the gateway's `/readyz`) that runs every check at once, each
 * bounded by `timeoutMs`, and rejects naming each dependency that is down, e.g.
 * `not ready: postgres: connect ECONNREFUSED 127.0.0.1:5432; nats: NATS (rpc server) disconnected, reconnecting for 3.1 s`.
 * Readiness turns false while a dependency is down and true again when it is back, without a restart.
 * @param timeoutMs how long one check may take before it counts as down, in ms. @default 2000
 */
export function readinessOf(checks: ReadinessCheck[], timeoutMs = 2_000): () => Promise<void> {
  return async () => {
    const failures = await Promise.all(
      checks.map(async (c) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(() => c.check()),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
            }),
          ]);
          return null;
        } catch (err) {
          return `${c.name}: ${(err as Error)?.message ?? String(err)}`;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const down = failures.filter((f): f is string => f !== null);
    if (down.length) throw new Error(`not ready: ${down.join('; ')}`);
  };
}
