/**
 * What the OpenTelemetry SDK costs one HTTP request when the request is sampled out, in isolation (not a test;
 * docs/performance.md, the cost of tracing): a loopback `node:http` server answering a small JSON body, hit by a
 * keep-alive client in the same process, 16 requests in flight, each posting an ~80 KB JSON body the server reads
 * and parses. Each mode runs in its own child process, alternating,
 * `ROUNDS` times:
 *   - `off`: no SDK (the API's no-op tracer and context);
 *   - `sampled`: the Node SDK set up as `startTracing` does it (AsyncLocalStorage context manager, the HTTP
 *     instrumentation with the same options) with `parentbased_traceidratio` at 0.01 and no exporter, the server
 *     span plus one child span per request (as the gateway's `send` span), none recorded but 1 %;
 *   - `sampled-ctx`: the context manager alone, enabled, no provider and no instrumentation;
 *   - `on`: as `sampled` with every span sampled (recorded, then dropped by a span processor that does nothing);
 *   - `lean-sampled`, `lean-on`: as `sampled` and `on`, with AGP's own server span (`httpServerSpan` in
 *     `@agp/runtime`, what `startTracing` runs now) in place of the HTTP instrumentation.
 * The server resumes from the body's `end` event in the caller's async scope (`AsyncResource.bind`), as body-parser's
 * reader does in the gateway, so the child span is the server span's child in every mode. The client's own requests
 * are not instrumented (`ignoreOutgoingRequestHook`), so the difference is the server side.
 * Prints CPU µs per request per mode (client and server together; the same client in every mode).
 * Run: `node --import tsx bench/http-span-cost.ts` (knobs: SPAN_COST_REQUESTS, SPAN_COST_ROUNDS, SPAN_COST_BODY_BYTES).
 */
import { AsyncResource } from 'node:async_hooks';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const REQUESTS = Number(process.env.SPAN_COST_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.SPAN_COST_ROUNDS ?? 3);
/** Bytes of each request's body (the gateway's 100-event ingest batch is ~80 KB). */
const BODY_BYTES = Number(process.env.SPAN_COST_BODY_BYTES ?? 80_000);
const MODES = ['off', 'sampled-ctx', 'sampled', 'lean-sampled', 'on', 'lean-on'] as const;
type Mode = (typeof MODES)[number];

/** Set up the mode's tracing, then serve and send `REQUESTS` requests; CPU µs per request. */
async function child(mode: Mode): Promise<number> {
  if (mode === 'sampled-ctx') {
    const { context } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  } else if (mode !== 'off') {
    const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
    const { ParentBasedSampler, TraceIdRatioBasedSampler, AlwaysOnSampler } = await import('@opentelemetry/sdk-trace-base');
    const { registerInstrumentations } = await import('@opentelemetry/instrumentation');
    const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
    const sampler = new ParentBasedSampler({ root: mode.endsWith('on') ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(0.01) });
    const dropAll = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };
    const provider = new NodeTracerProvider({ sampler, spanProcessors: [dropAll] });
    provider.register();
    if (!mode.startsWith('lean')) {
      registerInstrumentations({
        instrumentations: [new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(?:metrics|healthz|readyz)(?:\?|$)/.test(req.url ?? ''), ignoreOutgoingRequestHook: () => true })],
      });
    }
  }
  const { httpServerSpan } = await import('../packages/runtime/src/http-span.js');
  const span = mode.startsWith('lean') ? httpServerSpan() : (_req: unknown, _res: unknown, next: () => void) => next();
  // Loaded after the instrumentation is registered, so that it patches them.
  const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');
  const { trace } = await import('@opentelemetry/api');
  const tracer = trace.getTracer('bench');
  const body = JSON.stringify({ accepted: 100, errors: [] });
  const payload = JSON.stringify({ events: [], pad: 'x'.repeat(Math.max(0, BODY_BYTES - 24)) });
  const listener = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', AsyncResource.bind(() => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const child = tracer.startSpan('send agp.ingest.submit');
      setImmediate(() => {
        child.end();
        res.writeHead(207, { 'content-type': 'application/json' }).end(body);
      });
    }));
  };
  const server = http.createServer((req, res) => span(req, res, () => listener(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/ingest/', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer agp_bench' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(payload);
    });
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next++ < n) await one();
    }));
  };
  await run(2_000); // warm up
  const before = process.cpuUsage();
  await run(REQUESTS);
  const used = process.cpuUsage(before);
  agent.destroy();
  server.close();
  return (used.user + used.system) / REQUESTS;
}

const mode = process.argv[2] as Mode | undefined;
if (mode) {
  process.stdout.write(String(await child(mode)));
  process.exit(0);
} else {
  const results = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const m of MODES) {
      const out = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), m], { encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`http-span-cost ${m}: ${out.stderr}`);
      results.get(m)!.push(Number(out.stdout));
    }
  }
  console.log(`HTTP request cost of tracing: ${REQUESTS} requests, 16 in flight, loopback, node ${process.version}, ${ROUNDS} rounds`);
  console.log('| mode | CPU µs per request (each round) | median | over off |');
  console.log('|---|---|---|---|');
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = med(results.get('off')!);
  for (const [m, xs] of results) console.log(`| ${m} | ${xs.map((x) => x.toFixed(1)).join(', ')} | ${med(xs).toFixed(1)} | +${(med(xs) - base).toFixed(1)} µs |`);
}
