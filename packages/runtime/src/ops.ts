import { createServer, type Server } from 'node:http';
import client from 'prom-client';
import { DEFAULT_LISTEN_HOST } from './config.js';

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

/**
 * A minimal HTTP server for a service process without an HTTP API: `GET /healthz` (the process is up),
 * `GET /readyz` (runs `readiness`; 503 problem+json when it throws) and `GET /metrics` (Prometheus).
 * Source: architecture §5 (every service exposes /healthz, /readyz and /metrics).
 * @param port 0 picks a free port. Resolves with the bound port.
 * @param host listen address (OPS_HOST). @default 127.0.0.1 (loopback: `/metrics` is unauthenticated)
 */
export async function startOpsServer(opts: { port: number; host?: string; service: string; readiness: () => Promise<void> }): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  collectDefaultMetrics();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/';
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, 'application/problem+json', JSON.stringify({ type: 'about:blank', title: 'Method Not Allowed', status: 405, detail: 'only GET' }));
    if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok', service: opts.service }));
    if (path === '/readyz') {
      opts.readiness().then(
        () => send(200, 'application/json', JSON.stringify({ status: 'ready', service: opts.service })),
        (err: Error) => send(503, 'application/problem+json', JSON.stringify({ type: 'https://agp.dev/problems/service-unavailable', title: 'Service Unavailable', status: 503, detail: err.message })),
      );
      return;
    }
    if (path === '/metrics') {
      metricsRegistry.metrics().then((m) => send(200, metricsRegistry.contentType, m), (err: Error) => send(500, 'text/plain', err.message));
      return;
    }
    send(404, 'application/problem+json', JSON.stringify({ type: 'https://agp.dev/problems/not-found', title: 'Not Found', status: 404, detail: `no route ${path}` }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? DEFAULT_LISTEN_HOST, () => resolve());
  });
  const addr = server.address();
  return { port: typeof addr === 'object' && addr ? addr.port : opts.port, server, close: () => new Promise((r) => server.close(() => r())) };
}
