/**
 * The HTTP gateway: a NestJS 12 application on express. It authenticates every `/api/v1` request, turns
 * routes into bus requests to the owning services (but `GET /api/v1/interventions`, read in-process with the
 * interventions service's query module: docs/decisions.md (The read path)), and answers every error as RFC 9457 problem
 * details.
 * Also serves `/api/v1/openapi.json`, `/docs`, `/healthz`, `/readyz`, `/metrics`, and the web console's built files
 * (`/`, the console routes, `/assets/*`: ./console.ts), and receives OTLP/HTTP trace exports (./otlp/route.ts).
 * Source: the spec; architecture §1 (gateway), §4 (Errors, Auth), §5 (operations).
 */
import { createRequire } from 'node:module';
import { Catch, Controller, Get, Header, Module, NotFoundException, type ArgumentsHost, type DynamicModule, type ExceptionFilter, HttpException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { ClientProxy } from '@nestjs/microservices';
import express, { type Response } from 'express';
import { buildOpenApiDocument, matchHttpRoute } from '@agp/contracts';
import { CachedKeyResolver, type KeyResolver, type KeyStore } from '@agp/auth';
import { problemOf } from '@agp/bus';
import { eventStoreReadiness, type EventStore, type SqlExecutor } from '@agp/eventstore';
import { DEFAULT_LISTEN_HOST, collectDefaultMetrics, httpServerSpan, metricsRegistry, problem, readinessOf, retryAfterHeaders, type Logger, type ReadinessCheck } from '@agp/runtime';
import { BUS, IngestController, InterventionsController, LIST_READER } from './controllers.js';
import { InterventionListReader } from '@agp/interventions/read-models';
import { authenticate, jsonBody, requestIdAndMetrics, sendProblem, spanRoute } from './edge.js';
import { forwardRoutes } from './forward.js';
import { consoleAssets } from './console.js';
import { evalsControllers } from './routes/evals.js';
import { KEY_ADMIN, keysControllers, type KeyAdmin } from './routes/keys.js';
import { replayControllers } from './routes/replay.js';
import { mcpControllers, mcpEndpoint, rawResourceUris } from './routes/mcp.js';
import { policiesControllers } from './routes/policies.js';
import { GOVERNANCE_FEED, GovernanceController, type GovernanceStreams } from './routes/governance.js';
import { GovernanceFeed, type GovernanceLog } from './governance-feed.js';
import { statsControllers } from './routes/stats.js';
import { OTLP_TRACES_PATH, otlpTracesEndpoint } from './otlp/route.js';
import type { PriceTable } from './otlp/prices.js';

/**
 * The Nest controllers of the routes that do more than forward (every row of `HTTP_ROUTES` without `forward` but
 * `POST /api/v1/mcp`, an express handler of the protocol); the forwarded rows are answered by ./forward.ts.
 */
export const HANDWRITTEN_CONTROLLERS = [InterventionsController, IngestController, ...policiesControllers, GovernanceController, ...statsControllers, ...evalsControllers, ...replayControllers, ...mcpControllers, ...keysControllers];

/** Wire messages whose success changes what the governance push channel streams (policies, kill switches, approval decisions). */
const WAKES_GOVERNANCE = /^(policies\.(create|update)|kill-switches\.set|approvals\.(approve|reject))$/;

/** Maps anything a route throws to problem details; 5xx are logged with the request id. */
@Catch()
class ProblemFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    let p;
    if (err instanceof HttpException) {
      const status = err.getStatus();
      p = problem(status, err.name.replace(/Exception$/, '').replace(/([a-z])([A-Z])/g, '$1 $2') || 'Error', err instanceof NotFoundException ? 'no such route' : err.message);
    } else p = problemOf(err);
    answerProblem(this.logger, res, err, p);
  }
}

/**
 * Answer `err` as problem details `p` (by default `problemOf(err)`), unless the headers are out already; 5xx are
 * logged with the request id. The one error answer of the gateway's routes, forwarded or hand-written.
 */
function answerProblem(logger: Logger, res: Response, err: unknown, p = problemOf(err)): void {
  if (res.headersSent) return;
  // A 503 is a dependency that is down (NATS, PostgreSQL): its connection watcher already logged the outage once, so
  // each request it refuses is a debug line, not an error line per request.
  if (p.status === 503) logger.debug({ err, request_id: res.locals.requestId }, 'request refused: service unavailable');
  else if (p.status >= 500) logger.error({ err, request_id: res.locals.requestId }, 'request failed');
  sendProblem(res, p, retryAfterHeaders(p.status));
}

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>AGP API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#ui' });</script>
</body></html>`;

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /** Bus client the routes send requests with (NATS or in-process). */
  bus: Pick<ClientProxy, 'send'>;
  /**
   * The key store: where keys resolve (wrapped in a short-lived cache), and where `/api/v1/keys` creates, lists and
   * revokes them.
   */
  keys: KeyResolver & Pick<KeyStore, 'createKey' | 'page' | 'revoke'>;
  /** The platform's database: the readiness probe pings it, and the interventions list is read from it. */
  sql: SqlExecutor;
  /**
   * The event store: the governance push channel tails its log; `/readyz` checks its server when it is not the
   * platform's database (KurrentDB: `eventStoreReadiness`).
   */
  store: GovernanceLog & Pick<EventStore, 'kind' | 'ready'>;
  /**
   * Dependencies `/readyz` requires (distributed mode: the NATS connection): it answers 503 problem+json naming each
   * one that is down, and 200 again once they are back. The database is not among them: while it is down `/readyz`
   * answers 200 with `status: "degraded"` and the reason, since ingest keeps accepting (docs/reliability.md).
   */
  readiness?: ReadinessCheck[];
  logger: Logger;
  /** How long a resolved key stays cached, in ms (a revoked key stops working within it). @default 10000 */
  keyCacheMs?: number;
  /** Serve-stale window of the key cache while the key store fails, in ms (`AGP_KEY_STALE_MS`); 0 turns it off. @default 300000 */
  keyStaleMs?: number;
  /** List pages the in-process interventions reader keeps (AGP_ANSWER_CACHE_ENTRIES); 0 reads each from the database. @default 256 */
  listCacheEntries?: number;
  /** How often the governance push channel reads the event log while a stream is open, in ms (AGP_GOVERNANCE_POLL_MS). @default 100 */
  governancePollMs?: number;
  /** Most push-channel streams per organisation in this process (AGP_GOVERNANCE_MAX_STREAMS). @default 100 */
  governanceMaxStreams?: number;
  /** Interval of the push channel's heartbeat comment, in ms. @default 15000 */
  governanceHeartbeatMs?: number;
  /** Folder of the built web console. @default services/console/dist, or AGP_CONSOLE_DIR (see ./console.ts) */
  consoleDir?: string;
  /** The operator's model price table, whose entries OTLP trace ingest prices token usage with before the price database (AGP_OTLP_PRICE_TABLE, `loadPriceTable`). @default none (the price database alone) */
  otlpPrices?: PriceTable | null;
}

/** A built gateway: listen on a port (0 picks one) and close. */
export interface Gateway {
  /** Listen on `port` (0 picks one) at `host` (HOST; default loopback); resolves with the bound port. */
  listen(port: number, host?: string): Promise<number>;
  /** The bound address and port once listening, else null. */
  address(): { address: string; port: number } | null;
  close(): Promise<void>;
}

/**
 * Build the gateway application.
 * @throws when Nest cannot initialise the module (a programming error).
 */
export async function createGateway(opts: GatewayOptions): Promise<Gateway> {
  collectDefaultMetrics();
  const server = express();
  // The governance push channel: one tailer of the event log for every stream of this process (./governance-feed.ts).
  const governance: GovernanceStreams = {
    feed: new GovernanceFeed({ store: opts.store, logger: opts.logger, pollMs: opts.governancePollMs }),
    maxStreamsPerOrg: opts.governanceMaxStreams,
    heartbeatMs: opts.governanceHeartbeatMs,
    open: new Set(),
  };
  server.disable('x-powered-by');
  server.set('etag', false);
  // The request's server span first (docs/decisions.md, Tracing: OpenTelemetry export), then everything else under it.
  server.use(httpServerSpan({ route: spanRoute }));
  server.use(requestIdAndMetrics());
  server.get(['/healthz', '/healthz/'], (_req, res) => void res.json({ status: 'ok', service: 'gateway' }));
  // Not ready without the bus (nothing works); PostgreSQL down only degrades the gateway: ingest goes on accepting
  // (keys are served from the cache's stale window, events go to JetStream), so an orchestrator must keep routing to it.
  // KurrentDB, when it holds the events, is reported the same way (the push channel tails it; ingest does not need it).
  const required = readinessOf(opts.readiness ?? []);
  const database = readinessOf([{ name: 'postgres', check: async () => void (await opts.sql.query('SELECT 1')) }, ...eventStoreReadiness(opts.store)]);
  server.get(['/readyz', '/readyz/'], (_req, res) => {
    required().then(
      () =>
        database().then(
          () => res.json({ status: 'ready', service: 'gateway' }),
          (err: Error) => res.json({ status: 'degraded', service: 'gateway', detail: `${err.message}; ingest still accepts, other routes answer 503` }),
        ),
      (err: Error) => sendProblem(res, problem(503, 'Service Unavailable', err.message), retryAfterHeaders(503)),
    );
  });
  server.get(['/metrics', '/metrics/'], (_req, res) => {
    metricsRegistry.metrics().then((m) => res.type(metricsRegistry.contentType).send(m), (err: Error) => sendProblem(res, problem(503, 'Service Unavailable', err.message)));
  });
  let openapi: string | null = null;
  server.get(['/api/v1/openapi.json', '/api/v1/openapi.json/'], (_req, res) => {
    openapi ??= JSON.stringify(buildOpenApiDocument('/'));
    res.type('application/json').send(openapi);
  });
  const require = createRequire(import.meta.url);
  const swaggerDir = (require('swagger-ui-dist') as { getAbsoluteFSPath(): string }).getAbsoluteFSPath();
  server.get(['/docs', '/docs/'], (_req, res) => void res.type('html').send(DOCS_HTML));
  server.use('/docs/assets', express.static(swaggerDir, { index: false }));
  // The console's files are public (its data comes from the authenticated API); only browser navigations to console
  // routes and /assets/* are answered here, so no API path is shadowed.
  server.use(consoleAssets({ dir: opts.consoleDir }));
  const keyCache = new CachedKeyResolver(opts.keys, opts.keyCacheMs ?? 10_000, { staleMs: opts.keyStaleMs });
  server.use(authenticate(keyCache));
  const keyAdmin: KeyAdmin = {
    createKey: (o) => opts.keys.createKey(o),
    page: (org, q) => opts.keys.page(org, q),
    revoke: (id, org) => opts.keys.revoke(id, org),
    invalidate: (id) => keyCache.invalidate(id),
  };
  // The MCP endpoint reads its own body (a malformed one is a JSON-RPC parse error, not a problem document).
  const mcp = mcpEndpoint(opts.bus);
  server.post(['/api/v1/mcp', '/api/v1/mcp/'], mcp);
  // GET and DELETE (2025 session operations) reach the protocol too, which answers 405 (it is stateless).
  server.use((req, res, next) => (req.path.replace(/\/+$/, '') === '/api/v1/mcp' ? mcp(req, res) : next()));
  // The OTLP trace receiver reads its own body (protobuf or JSON, gzip) and answers in OTLP's encodings (./otlp/route.ts).
  server.post([OTLP_TRACES_PATH, `${OTLP_TRACES_PATH}/`], otlpTracesEndpoint({ bus: opts.bus, prices: opts.otlpPrices ?? null, logger: opts.logger, answerError: (res, err) => answerProblem(opts.logger, res, err) }));
  server.use(rawResourceUris());
  server.use(jsonBody());
  // A change written through this gateway wakes the push channel's tailer as soon as it is answered (it is committed
  // by then), so this gateway's streams get it without waiting for the next poll; other gateways poll.
  server.use((req, res, next) => {
    if (req.method !== 'GET' && WAKES_GOVERNANCE.test(matchHttpRoute(req.method, req.path)?.message ?? '')) {
      res.once('finish', () => res.statusCode < 300 && governance.feed.wake());
    }
    next();
  });
  // The plain forwarding routes, generated from the route table; the rest are the Nest controllers below.
  server.use(forwardRoutes(opts.bus, (res, err) => answerProblem(opts.logger, res, err)));

  @Controller()
  class FallbackController {
    @Get()
    @Header('content-type', 'application/json')
    root() {
      return { name: 'AGP, the Agent Governance Platform', openapi: '/api/v1/openapi.json', docs: '/docs' };
    }
  }

  // The list read model is read here, through its owning service's query module (docs/decisions.md (The read path)).
  const listReader = new InterventionListReader(opts.sql, opts.listCacheEntries ?? 256);

  @Module({})
  class GatewayModule {
    static register(): DynamicModule {
      return { module: GatewayModule, controllers: [...HANDWRITTEN_CONTROLLERS, FallbackController], providers: [{ provide: BUS, useValue: opts.bus }, { provide: KEY_ADMIN, useValue: keyAdmin }, { provide: LIST_READER, useValue: listReader }, { provide: GOVERNANCE_FEED, useValue: governance }] };
    }
  }

  const app = await NestFactory.create(GatewayModule.register(), new ExpressAdapter(server), { bodyParser: false, logger: false });
  app.useGlobalFilters(new ProblemFilter(opts.logger));
  await app.init();
  let httpServer: import('node:http').Server | null = null;
  return {
    async listen(port, host = DEFAULT_LISTEN_HOST) {
      httpServer = app.getHttpServer() as import('node:http').Server;
      httpServer.keepAliveTimeout = 65_000;
      await new Promise<void>((resolve, reject) => {
        httpServer!.once('error', reject);
        httpServer!.listen(port, host, () => resolve());
      });
      const addr = httpServer.address();
      return typeof addr === 'object' && addr ? addr.port : port;
    },
    address() {
      const addr = httpServer?.address();
      return typeof addr === 'object' && addr ? { address: addr.address, port: addr.port } : null;
    },
    async close() {
      // Open push-channel streams never end by themselves: end them, or the HTTP server would wait for them.
      for (const end of [...governance.open]) end();
      governance.feed.close();
      await app.close();
    },
  };
}
