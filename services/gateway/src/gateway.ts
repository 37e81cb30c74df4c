/**
 * The HTTP gateway: express, routed by the route table. Every request is matched to its row of `HTTP_ROUTES` once
 * (./edge.ts), authenticated and scope-checked from it, its body read as the row says, then forwarded to the owning
 * service over the bus or answered by the row's handler (./router.ts, ./handlers.ts; `GET /api/v1/interventions` is
 * read in-process with the interventions service's query module: docs/decisions.md (The read path)); every error is
 * answered as RFC 9457 problem details.
 * Also serves `/api/v1/openapi.json`, `/docs`, `/healthz`, `/readyz`, `/metrics` (admin key), and the web console's
 * built files (`/`, the console routes, `/assets/*`: ./console.ts).
 * Source: the spec; architecture §1 (gateway), §4 (Errors, Auth), §5 (operations).
 */
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import express, { type NextFunction, type Request, type Response } from 'express';
import { buildOpenApiDocument } from '@agp/contracts';
import { CachedKeyResolver, type KeyResolver, type KeyStore, type PeopleStore } from '@agp/auth';
import { problemOf, type Sender } from '@agp/bus';
import { eventStoreReadiness, type EventStore, type SqlExecutor } from '@agp/eventstore';
import { ServiceUnavailableError, DEFAULT_ANSWER_CACHE_ENTRIES, DEFAULT_LISTEN_HOST, NO_OUTBOUND_EXCEPTIONS, type OutboundAllowList, collectDefaultMetrics, httpServerSpan, metricsRegistry, problem, readinessOf, retryAfterHeaders, type Logger, type ReadinessCheck } from '@agp/runtime';
import { InterventionListReader } from '@agp/interventions/read-models';
import { METRICS_PATH, authenticate, boundAgent, matchRoute, readBody, requestIdAndMetrics, sendProblem, spanRoute, type AuthedRequest } from './edge.js';
import { consoleAssets } from './console.js';
import { ROUTE_HANDLERS } from './handlers.js';
import { serveRoutes, type RouteDeps } from './router.js';
import { rawResourceUrl } from './routes/mcp.js';
import type { GovernanceStreams } from './routes/governance.js';
import { GovernanceFeed, type GovernanceLog } from './governance-feed.js';
import { otlpTracesEndpoint } from './otlp/route.js';
import type { OidcSettings } from './env.js';
import { OidcRelyingParty } from './oidc.js';
import { AccessTokenVerifier } from './access-tokens.js';
import type { PriceTable } from './otlp/prices.js';
import { HostedMcpProxy, type HostedMcpLimits } from './hosted-mcp/proxy.js';

/**
 * Answer `err` as problem details `p` (by default `problemOf(err)`), unless the headers are out already; 5xx are
 * logged with the request id. The one error answer of the gateway's routes, forwarded or handled.
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

/** The people store of a gateway built without one: every call is refused with 503. */
const noPeopleStore = new Proxy({} as PeopleStore, {
  get: () => () => Promise.reject(new ServiceUnavailableError('this gateway has no people store')),
});

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /** Bus client the routes send requests with (NATS or in-process). */
  bus: Sender;
  /**
   * The key store: where keys resolve (wrapped in a short-lived cache), and where `/api/v1/keys` creates, lists and
   * revokes them.
   */
  keys: KeyResolver & Pick<KeyStore, 'createKey' | 'page' | 'revoke'>;
  /**
   * People: pending sign-ins, users, memberships and sessions (migrated by the caller, after the key store). Absent:
   * `/auth/*` and `/api/v1/members` answer 503 (a gateway built for a test of something else).
   */
  people?: PeopleStore;
  /** Sign-in through OpenID Connect (`oidcSettings` of the environment); null or absent: API keys only (AGP_AUTH_MODE=keys). */
  oidc?: OidcSettings | null;
  /** The platform's database: the readiness probe pings it, and the interventions list and the dead letters are read from it. */
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
  /** List pages the in-process interventions reader keeps (AGP_ANSWER_CACHE_ENTRIES); 0 reads each from the database. @default {@link DEFAULT_ANSWER_CACHE_ENTRIES} */
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
  /** The outbound address rules the hosted MCP proxy checks an upstream URL against at each connection (AGP_OUTBOUND_ALLOWED_HOSTS, `parseOutboundAllowList`). @default public addresses only */
  outbound?: OutboundAllowList;
  /** Bounds of the hosted MCP proxy's pools. @default HOSTED_MCP_LIMITS */
  hostedMcpLimits?: Partial<HostedMcpLimits>;
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
 * Build the gateway application (nothing listens until {@link Gateway.listen}).
 * @throws Error when the route map does not serve exactly the route table (a programming error).
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
  const fail = (res: Response, err: unknown) => answerProblem(opts.logger, res, err);
  // Requests being answered, so that shutdown can close every connection that carries none (./gateway.ts close).
  let answering = 0;
  server.use((_req: Request, res: Response, next: NextFunction) => {
    answering += 1;
    res.once('close', () => (answering -= 1));
    next();
  });
  server.disable('x-powered-by');
  server.set('etag', false);
  // The request's row of the route table, matched once; then the request's server span (docs/decisions.md, Tracing:
  // OpenTelemetry export), and everything else under it.
  server.use(matchRoute(rawResourceUrl));
  server.use(httpServerSpan({ route: (_method, path, req) => spanRoute(req as AuthedRequest, path) }));
  server.use(requestIdAndMetrics());
  server.get(['/healthz', '/healthz/'], (_req, res) => void res.json({ status: 'ok', service: 'gateway' }));
  // Not ready without the bus (nothing works); PostgreSQL down only degrades the gateway: ingest goes on accepting
  // (keys are served from the cache's stale window, events go to JetStream), so an orchestrator must keep routing to it.
  // KurrentDB, when it holds the events, is reported the same way (the push channel tails it; ingest does not need it).
  const required = readinessOf(opts.readiness ?? []);
  const database = readinessOf([{ name: 'postgres', check: async () => void (await opts.sql.query('SELECT 1')) }, ...eventStoreReadiness(opts.store)]);
  // Registered MCP upstreams the hosted proxy could not reach are named, without changing readiness: the gateway
  // itself serves every other route, and each agent's call to such an upstream is answered with a tool error.
  const upstreamsOf = () => {
    const failing = hostedMcp.failingUpstreams();
    return failing.length ? { mcp_upstreams_failing: failing } : {};
  };
  server.get(['/readyz', '/readyz/'], (_req, res) => {
    required().then(
      () =>
        database().then(
          () => res.json({ status: 'ready', service: 'gateway', ...upstreamsOf() }),
          (err: Error) => res.json({ status: 'degraded', service: 'gateway', detail: `${err.message}; ingest still accepts, other routes answer 503`, ...upstreamsOf() }),
        ),
      (err: Error) => sendProblem(res, problem(503, 'Service Unavailable', err.message), retryAfterHeaders(503)),
    );
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
  server.get('/', (_req, res) => void res.json({ name: 'AGP, the Agent Governance Platform', openapi: '/api/v1/openapi.json', docs: '/docs' }));
  const keyCache = new CachedKeyResolver(opts.keys, opts.keyCacheMs ?? 10_000, { staleMs: opts.keyStaleMs });
  const oidc = opts.oidc ?? null;
  // Sessions are read from the database on every request (never cached), so a sign-out or a removed member ends at once on every gateway.
  const people = opts.people;
  const relyingParty = oidc ? new OidcRelyingParty(oidc) : null;
  const tokens = oidc && people && relyingParty ? { verifier: new AccessTokenVerifier(oidc, relyingParty, people), settings: oidc } : undefined;
  server.use(authenticate(keyCache, oidc && people ? { resolve: (token) => people.resolveSession(token, oidc), publicUrl: oidc.publicUrl, tokens } : null));
  // Prometheus metrics: an admin key only (authenticate), since they describe the whole platform's traffic.
  server.get([METRICS_PATH, `${METRICS_PATH}/`], (_req, res) => {
    metricsRegistry.metrics().then((m) => res.type(metricsRegistry.contentType).send(m), (err: Error) => sendProblem(res, problem(503, 'Service Unavailable', err.message)));
  });
  server.use(readBody());
  server.use(boundAgent());
  const httpServer: Server = createServer(server);
  // The hosted MCP proxy's governors speak to this gateway over loopback with the caller's key.
  const hostedMcp = new HostedMcpProxy({
    bus: opts.bus,
    logger: opts.logger.child({ component: 'hosted-mcp-proxy' }),
    outbound: opts.outbound ?? NO_OUTBOUND_EXCEPTIONS,
    limits: opts.hostedMcpLimits,
    selfUrl: () => {
      const addr = httpServer.address();
      if (typeof addr !== 'object' || !addr) return null;
      const host = addr.address === '0.0.0.0' || addr.address === '' ? '127.0.0.1' : addr.address === '::' ? '[::1]' : addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      return `http://${host}:${addr.port}`;
    },
  });
  const deps: RouteDeps = {
    bus: opts.bus,
    keys: {
      createKey: (o) => opts.keys.createKey(o),
      page: (org, q) => opts.keys.page(org, q),
      revoke: (id, org, by) => opts.keys.revoke(id, org, by),
      invalidate: (id) => keyCache.invalidate(id),
    },
    people: opts.people ?? noPeopleStore,
    signIn: oidc && relyingParty ? { rp: relyingParty, settings: oidc } : null,
    // The list read model is read here, through its owning service's query module (docs/decisions.md (The read path)).
    interventions: new InterventionListReader(opts.sql, opts.listCacheEntries ?? DEFAULT_ANSWER_CACHE_ENTRIES),
    database: opts.sql,
    governance,
    // The OTLP trace receiver reads its own body (protobuf or JSON, gzip) and answers in OTLP's encodings (./otlp/route.ts).
    otlp: otlpTracesEndpoint({ bus: opts.bus, prices: opts.otlpPrices ?? null, logger: opts.logger, answerError: fail }),
    hostedMcp,
  };
  server.use(serveRoutes(ROUTE_HANDLERS, deps, fail));
  server.use((_req: Request, res: Response) => sendProblem(res, problem(404, 'Not Found', 'no such route')));
  // Anything a middleware throws synchronously.
  server.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => fail(res, err));
  httpServer.keepAliveTimeout = 65_000;
  let listening = false;
  return {
    async listen(port, host = DEFAULT_LISTEN_HOST) {
      await new Promise<void>((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => resolve());
      });
      listening = true;
      const addr = httpServer.address();
      return typeof addr === 'object' && addr ? addr.port : port;
    },
    address() {
      const addr = httpServer.address();
      return typeof addr === 'object' && addr ? { address: addr.address, port: addr.port } : null;
    },
    async close() {
      // The hosted MCP proxy first: its governors end their runs and deliver their reports through this gateway.
      await hostedMcp.close().catch((err: unknown) => opts.logger.warn({ err }, 'the hosted MCP proxy did not close cleanly'));
      // Open push-channel streams never end by themselves: end them, or the HTTP server would wait for them.
      for (const end of [...governance.open]) end();
      governance.feed.close();
      if (!listening) return;
      // Once no request is being answered, every connection left is closed: one whose last answer only just ended (a
      // push-channel stream, this process's own governors' requests) may not count as idle yet, and would otherwise be
      // left to the keep-alive timeout.
      await new Promise<void>((resolve) => {
        const sweep = setInterval(() => (answering === 0 ? httpServer.closeAllConnections() : httpServer.closeIdleConnections()), 50);
        httpServer.close(() => {
          clearInterval(sweep);
          resolve();
        });
        httpServer.closeIdleConnections();
      });
    },
  };
}
