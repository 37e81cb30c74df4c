/**
 * The gateway's edge middleware, in front of its router (./router.ts): the one match of a request to its row of the
 * route table, request ids and trace context, HTTP metrics, API-key authentication and scope checks, and the body
 * reader with the error answers architecture §4 lists (400 malformed JSON, 401, 403, 413 over 5 MiB, 415 not JSON).
 * Source: spec §Authentication, architecture §4 (Errors, Auth).
 */
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { trace } from '@opentelemetry/api';
import { INGEST_MAX_BYTES, KEY_SCOPES, MAX_JSON_DEPTH, SCOPE_ROLE, httpRouteParams, matchHttpRoute, roleAllows, roleScope, routeOperation, routeRole, type HttpRoute, type Role, type Scope } from '@agp/contracts';
import { boundKeyRefusal, type KeyResolver, type Principal, type SessionPrincipal } from '@agp/auth';
import { SESSION_COOKIE, cookieOf, csrfRefusal } from './oidc.js';
import { InvalidAccessTokenError, TokenWithoutMembershipError, bearerChallenge, looksLikeJwt, type AccessTokenVerifier } from './access-tokens.js';
import type { OidcSettings } from './env.js';
import { BadRequestError, counter, ServiceUnavailableError, describeJsonInputErrors, UnauthorizedError, histogram, jsonInputErrors, jsonNestingDepth, jsonPathPastDepth, nestingError, problem, retryAfterHeaders, UNSTORABLE_TEXT_ESCAPES, type Problem, type RequestContext } from '@agp/runtime';

/**
 * What the edge attaches to a request: its row of the route table (`agpRoute`, matched once by {@link matchRoute};
 * absent when no row answers it), and, from the auth middleware (absent on public paths), the request context sent to
 * services and the key's principal (with its expiry) for the routes the gateway answers itself.
 */
export type AuthedRequest = Request & { agp?: RequestContext; agpKey?: Principal; agpSession?: SessionPrincipal; agpRoute?: HttpRoute };

/** The caller's context, attached by the auth middleware. @throws UnauthorizedError when absent. */
export function ctxOf(req: AuthedRequest): RequestContext {
  if (!req.agp) throw new UnauthorizedError('missing API key');
  return req.agp;
}

/**
 * The `{name}` parameters of `route` in `req`'s path, percent-decoded, by name.
 * @throws BadRequestError (400) naming a parameter that is not valid percent-encoding.
 */
export function pathParams(route: HttpRoute, req: AuthedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(httpRouteParams(route, req.path))) {
    try {
      out[name] = decodeURIComponent(raw);
    } catch {
      throw new BadRequestError(`path parameter ${name} is not valid percent-encoding: ${raw}`);
    }
  }
  return out;
}

/**
 * The first middleware of the gateway: matches the request to its row of the route table once (`matchHttpRoute`,
 * HEAD as GET) and keeps it on the request (`agpRoute`) for everything after it: the span's route, the metrics label,
 * the scope check, the body reader and the router. A resource URI sent raw in the path
 * (`/api/v1/mcp/resources/platform://stats/dashboard`) is percent-encoded first (`rewrite`), so it matches its row.
 * @param rewrite turns a request URL into the URL to route (./routes/mcp.ts, `rawResourceUrl`).
 */
export function matchRoute(rewrite: (method: string, url: string) => string = (_m, url) => url) {
  return (req: AuthedRequest, _res: Response, next: NextFunction) => {
    req.url = rewrite(req.method, req.url);
    req.agpRoute = matchHttpRoute(req.method, req.path);
    next();
  };
}

/** Send problem details with `application/problem+json`. */
export function sendProblem(res: Response, p: Problem, headers: Record<string, string> = {}): void {
  res.status(p.status).set({ 'content-type': 'application/problem+json', ...headers }).send(JSON.stringify(p));
}

const httpRequests = counter('agp_http_requests_total', 'HTTP requests answered by the gateway', ['method', 'route', 'status']);
const httpDuration = histogram('agp_http_request_duration_seconds', 'HTTP request duration at the gateway, in seconds', ['method', 'route'], [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);

/** The methods a route label is looked up with, in this order. */
const LABEL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Route label for metrics: the path of the route-table row that answers `path` (by any method), so ids collapse to
 * their parameter and cardinality stays bounded (`/api/v1/runs/run-42` → `/api/v1/runs/{id}`,
 * `/api/v1/approvals/apr-1/approve` → `/api/v1/approvals/{id}/approve`); `/docs/*` is `/docs`; any other path is
 * itself (without a trailing slash), or `other` when longer than 64 characters.
 */
export function routeLabel(path: string): string {
  const p = path.replace(/\/+$/, '') || '/';
  if (p.startsWith('/docs')) return '/docs';
  for (const method of LABEL_METHODS) {
    const route = matchHttpRoute(method, p);
    if (route) return route.path;
  }
  return p.length > 64 ? 'other' : p;
}

/**
 * The `http.route` of a request's server span (`httpServerSpan` in `@agp/runtime`) and its metrics label: the path
 * pattern of its row (`/api/v1/ingest`, `/api/v1/runs/{id}`), else {@link routeLabel}.
 */
export function spanRoute(req: AuthedRequest, path: string): string {
  return req.agpRoute?.path ?? routeLabel(path);
}

/**
 * Assigns `X-Request-Id` (kept when the client sent a sane one) and records metrics when the response ends. When
 * the request's server span is recording, gives it the request id (`agp.request_id`).
 */
export function requestIdAndMetrics() {
  return (req: AuthedRequest, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    const id = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.set('x-request-id', id);
    const span = trace.getActiveSpan();
    if (span?.isRecording()) span.setAttribute('agp.request_id', id);
    const end = httpDuration.startTimer();
    res.on('finish', () => {
      const route = spanRoute(req, req.path);
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      end({ method: req.method, route });
    });
    next();
  };
}

/** Paths under /api/v1 that need no key. */
const PUBLIC = new Set(['/api/v1/openapi.json']);
/** The Prometheus scrape path of the gateway's public port: it needs an admin key (docs/operations.md, Health, readiness and metrics). */
export const METRICS_PATH = '/metrics';
/** Methods that need a write key on a path no route of the table matches (it answers 404 to a write key). */
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The scope a request needs: the scope of the wire message or gateway operation its row names (`HTTP_ROUTES` in
 * `@agp/contracts`), or, for a request no row answers, `write` when its method writes (POST, PUT, PATCH, DELETE), so
 * an unknown route answers a read key's write with 403 and anything else with 404. Source: the route table;
 * architecture §4 (Auth).
 * @param method the HTTP method, upper case.
 * @param route the request's row ({@link matchRoute}), or undefined.
 */
export function requiredScope(method: string, route: HttpRoute | undefined): Scope {
  return route ? routeOperation(route.message).scope : WRITE_METHODS.has(method) ? 'write' : 'read';
}

/**
 * The role a request needs: its row's role (`routeRole` in `@agp/contracts`: the row's `role`, else the role of its
 * operation's scope), or, for a request no row answers, policy_admin when its method writes, else viewer. The one
 * source of the edge's permission check, for keys (by their scope's role) and people (by their membership's role).
 */
export function requiredRole(method: string, route: HttpRoute | undefined): Role {
  return route ? routeRole(route) : SCOPE_ROLE[requiredScope(method, route)];
}

/** Where the edge resolves session cookies, when people may sign in (AGP_AUTH_MODE oidc or both). */
export interface SessionAuth {
  /** The session of a cookie's token, or null when it is unknown, revoked, idle too long or past its end. */
  resolve(token: string): Promise<SessionPrincipal | null>;
  /** The public URL; a cookie-authenticated write must carry its origin in `Origin` (CSRF). */
  publicUrl: URL;
  /** OAuth access tokens (a JWT where a key would be) and the settings their challenges name; see access-tokens.ts. */
  tokens?: { verifier: Pick<AccessTokenVerifier, 'resolve'>; settings: OidcSettings };
}

/** The key of a request: `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
export function presentedKey(req: Request): string | null {
  const auth = req.get('authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1] : null;
  }
  return req.get('x-api-key')?.trim() || null;
}

/**
 * Resolves the key of every `/api/v1` request (but the OpenAPI document) and of every request a row of the route
 * table answers (the un-prefixed tool gateway lists `/mcp/*` too, docs/mcp.md; not the `auth: 'none'` rows, `/auth/*`),
 * and of `/metrics`, which needs an admin key: 401 without a key or with an unknown, revoked or expired one; 403 when
 * the caller's role is below the role the route needs ({@link requiredRole}; a key acts with its scope's role: a read
 * key on a write route, a read or write key on a key-management route). Without a key, and when `sessions` is given
 * (people may sign in), the `agp_session` cookie authenticates instead: 401 for an ended session, 403 for a write
 * whose `Origin` is not the public URL (CSRF, `csrfRefusal`) or a role below the route's. Runs before the body is
 * parsed, so an unauthenticated client cannot make the gateway parse 5 MiB.
 */
export function authenticate(keys: KeyResolver, sessions: SessionAuth | null = null) {
  return async (req: AuthedRequest, res: Response, next: NextFunction) => {
    const path = req.path.replace(/\/+$/, '');
    const route = req.agpRoute;
    const metrics = path === METRICS_PATH;
    if (!(route || metrics || path.startsWith('/api/v1')) || PUBLIC.has(path) || route?.auth === 'none') return next();
    const presented = presentedKey(req);
    const tokens = sessions?.tokens;
    const challenge = { 'www-authenticate': bearerChallenge(tokens?.settings ?? null, path) };
    const bearerToken = presented && tokens && looksLikeJwt(presented) ? presented : null;
    const key = bearerToken ? null : presented;
    const need: Role = metrics ? 'admin' : requiredRole(req.method, route);
    const traceparent = req.get('traceparent');
    const trace = traceparent && /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/.test(traceparent) ? { traceparent } : {};
    const token = !presented && sessions ? cookieOf(req, SESSION_COOKIE) : null;
    if ((token || bearerToken) && sessions) {
      let session;
      if (bearerToken && tokens) {
        try {
          session = await tokens.verifier.resolve(bearerToken);
        } catch (err) {
          if (err instanceof InvalidAccessTokenError) return sendProblem(res, problem(401, 'Unauthorized', err.message), { 'www-authenticate': bearerChallenge(tokens.settings, path, err.message) });
          if (err instanceof TokenWithoutMembershipError) return sendProblem(res, problem(403, 'Forbidden', err.message));
          return sendProblem(res, problem(503, 'Service Unavailable', err instanceof ServiceUnavailableError ? err.message : 'the session store is unavailable; retry'), retryAfterHeaders(503));
        }
      } else {
        try {
          session = await sessions.resolve(token!);
        } catch {
          return sendProblem(res, problem(503, 'Service Unavailable', 'the session store is unavailable; retry'), retryAfterHeaders(503));
        }
        if (!session) return sendProblem(res, problem(401, 'Unauthorized', 'the session has ended (signed out, idle too long or expired); sign in again at /auth/login'), challenge);
        // A bearer token is never sent by the browser on its own: only the cookie needs the CSRF check.
        const csrf = csrfRefusal(req, sessions.publicUrl);
        if (csrf) return sendProblem(res, problem(403, 'Forbidden', csrf));
      }
      if (!roleAllows(session.role, need)) return sendProblem(res, problem(403, 'Forbidden', `the role ${session.role} cannot ${req.method} ${path}; it needs ${need} or above`));
      // Services are told the scope of the person's role, raised to the route's own scope once the role check passed.
      const routeScope = route ? routeOperation(route.message).scope : 'read';
      const own = roleScope(session.role);
      req.agpSession = session;
      req.agp = {
        organization_id: session.organization_id,
        scope: KEY_SCOPES.indexOf(routeScope) > KEY_SCOPES.indexOf(own) ? routeScope : own,
        key_id: session.session_id,
        key_name: session.user.email ?? session.user.name,
        user_id: session.user.id,
        user_email: session.user.email ?? null,
        user_name: session.user.name ?? null,
        correlation_id: res.locals.requestId as string,
        ...trace,
      };
      return next();
    }
    if (!key) return sendProblem(res, problem(401, 'Unauthorized', `send an API key as "Authorization: Bearer <key>" or "X-API-Key: <key>"${sessions ? ', or sign in at /auth/login' : ''}`), challenge);
    let principal;
    try {
      principal = await keys.resolve(key);
    } catch {
      return sendProblem(res, problem(503, 'Service Unavailable', 'the key store is unavailable; retry'), retryAfterHeaders(503));
    }
    if (!principal) return sendProblem(res, problem(401, 'Unauthorized', 'unknown, revoked or expired API key'), challenge);
    if (!roleAllows(SCOPE_ROLE[principal.scope], need)) {
      return sendProblem(res, problem(403, 'Forbidden', `a ${principal.scope} key cannot ${req.method} ${path}; use ${need === 'admin' ? 'an admin' : 'a write'} key`));
    }
    req.agpKey = principal;
    req.agp = {
      organization_id: principal.organization_id,
      scope: principal.scope,
      key_id: principal.key_id,
      key_name: principal.name ?? null,
      ...(principal.agent_id ? { agent_id: principal.agent_id } : {}),
      correlation_id: res.locals.requestId as string,
      ...trace,
    };
    next();
  };
}

/**
 * Holds an agent-bound key to its agent (`agentId` and `boundKeys` of the request's row in `HTTP_ROUTES`), before any
 * handler runs, so nothing is written or streamed (403 problem details):
 * - a route that names an agent in its path, body (with `each`, in every item of a body list) or a header must name
 *   the bound one; the detail names the field and the bound agent. Ingest events are checked per event by the ingest
 *   service (`agentId: {in: 'events'}`), not here;
 * - a route that changes state and names no agent is refused unless its row allows bound keys (`boundKeys`).
 * Runs after {@link readBody}. A key bound to no agent passes untouched. Source: docs/decisions.md (Agent-bound keys).
 */
export function boundAgent() {
  return (req: AuthedRequest, res: Response, next: NextFunction) => {
    const route = req.agpRoute;
    if (!route || !req.agp?.agent_id) return next();
    let path: Record<string, string> | undefined;
    if (route.agentId?.in === 'path') {
      try {
        path = pathParams(route, req);
      } catch {
        return next(); // a bad percent-encoding: the router answers 400
      }
    }
    const refusal = boundKeyRefusal(req.agp, route, { path, body: req.body, headers: req.headers });
    if (refusal) return sendProblem(res, problem(403, 'Forbidden', refusal));
    next();
  };
}

/** The escapes that may spell text PostgreSQL cannot store, as bytes (searched in the raw body). */
const MAYBE_UNSTORABLE = UNSTORABLE_TEXT_ESCAPES.map((s) => Buffer.from(s));

/** A body size for a message: `900 KiB`, `5 MiB`, or bytes. */
const sizeText = (bytes: number) => (bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);

/** What the body parser's `verify` learnt from the raw bytes: which checks the parsed body needs. */
export type ScannedRequest = Request & { agpMaybeNul?: boolean; agpDepth?: number };

/**
 * The refusal of a parsed JSON body, or null: nested deeper than MAX_JSON_DEPTH (64), or holding text PostgreSQL
 * cannot store (NUL, unpaired surrogates) — 422 naming each path and the limit. A body read as bytes (a row with
 * `bodyAs: 'bytes'`, ingest) is never scanned, so never refused whole: the ingest service answers per event (207).
 * Never throws: the walk is iterative (`jsonInputErrors` in `@agp/runtime`).
 */
export function bodyRefusal(req: ScannedRequest): Problem | null {
  if (!req.agpMaybeNul && (req.agpDepth ?? 0) <= MAX_JSON_DEPTH) return null;
  const errors = jsonInputErrors(req.body, 'body', { text: req.agpMaybeNul === true });
  return errors.length ? problem(422, 'Unprocessable Content', describeJsonInputErrors(errors), errors) : null;
}

/** The error type the parser's `verify` throws for a body nested deeper than MAX_JSON_DEPTH (its `agpPath` says where). */
const TOO_DEEP = 'agp.nested.too.deep';

/**
 * The problem of a body-parser error (422 too deep, 413, 400, 415), or undefined when the client went away (nothing
 * to answer). Also answers the OTLP trace endpoint's raw body reader (./otlp/route.ts).
 */
export function parseFailure(err: unknown, req: Request, limit: number): Problem | undefined {
  const e = err as { type?: string; status?: number; message?: string; agpPath?: string[] };
  if (e.type === TOO_DEEP) {
    const errors = [nestingError(['body', ...(e.agpPath ?? [])].join('.'))];
    return problem(422, 'Unprocessable Content', describeJsonInputErrors(errors), errors);
  }
  if (e.type === 'entity.too.large') return problem(413, 'Content Too Large', `the body is over the ${limit} byte (${sizeText(limit)}) limit of ${req.method} ${req.path.replace(/\/+$/, '')}`);
  if (e.type === 'entity.parse.failed') return problem(400, 'Bad Request', `malformed JSON: ${e.message ?? 'parse error'}`);
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return problem(415, 'Unsupported Media Type', e.message ?? 'unsupported encoding');
  if (e.type === 'request.aborted') return undefined;
  return problem(400, 'Bad Request', e.message ?? 'unreadable body');
}

/**
 * The body reader, as the request's row says (`bodyAs` in `HTTP_ROUTES`). A row whose handler reads its own body
 * (`handler`: the MCP endpoint, OTLP) is passed on untouched. Otherwise a request with a body must be
 * `application/json` (or `+json`), at most 5 MiB. `json` (the default, and a request no row answers): at most the
 * row's smaller `maxBodyBytes` (an eval run submission: 900 KiB, one bus message), well-formed, nested at most
 * MAX_JSON_DEPTH (64) levels and free of unstorable text ({@link bodyRefusal}); the depth is read from the bytes
 * first (`jsonNestingDepth`), so a body too deep is refused (422, with the path from `jsonPathPastDepth`) before the
 * parser builds it. `bytes` (ingest): read as bytes, UTF-8 only, never parsed here; its handler forwards them to the
 * ingest service, which parses them once and answers per event (docs/decisions.md, The gateway forwards the ingest
 * body's bytes). Errors are answered here as problem details, before any handler runs. Nothing the checks throw
 * escapes the parser's callback (an exception there would be uncaught and end the process): it is answered as a 400.
 */
export function readBody() {
  // PostgreSQL cannot store U+0000 or an unpaired surrogate. JSON carries either only as an escape (`\u0000`,
  // `\ud800`; raw bytes that are not UTF-8 decode to U+FFFD), so a raw-bytes search (fast) flags the rare body
  // that needs the exact check after parsing; likewise the nesting depth is read from the bytes (a few ms for 5 MiB),
  // so only a body that is too deep is walked again to name the path.
  const parser = (limit: number) =>
    express.json({
      limit,
      type: () => true,
      strict: false,
      verify: (req, _res, buf) => {
        const r = req as ScannedRequest;
        r.agpDepth = jsonNestingDepth(buf);
        // Too deep: refused before the parser builds the structure.
        if (r.agpDepth > MAX_JSON_DEPTH) {
          throw Object.assign(new Error('nested too deep'), { type: TOO_DEEP, agpPath: jsonPathPastDepth(buf, MAX_JSON_DEPTH) ?? [] });
        }
        if (MAYBE_UNSTORABLE.some((needle) => buf.includes(needle))) r.agpMaybeNul = true;
      },
    });
  // The ingest route's body is forwarded as its bytes (`ingest.raw`): read, size-limited, inflated, never parsed here.
  const rawParser = express.raw({ limit: INGEST_MAX_BYTES, type: () => true });
  const parsers = new Map([[INGEST_MAX_BYTES, parser(INGEST_MAX_BYTES)]]);
  return (req: AuthedRequest, res: Response, next: NextFunction) => {
    const route = req.agpRoute;
    if (route?.bodyAs === 'handler') return next();
    if (/%00/i.test(req.originalUrl)) return sendProblem(res, problem(400, 'Bad Request', 'the URL contains a NUL character (%00), which is not allowed'));
    const length = req.get('content-length');
    const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    if (!hasBody) return next();
    const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
      req.resume();
      return sendProblem(res, problem(415, 'Unsupported Media Type', `send the body as application/json (got ${type || 'no content type'})`));
    }
    const limit = route?.maxBodyBytes ?? INGEST_MAX_BYTES;
    let parse = parsers.get(limit);
    if (!parse) parsers.set(limit, (parse = parser(limit)));
    if (route?.bodyAs === 'bytes') {
      const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase();
      if (charset && charset !== 'utf-8' && charset !== 'utf8') {
        req.resume();
        return sendProblem(res, problem(415, 'Unsupported Media Type', `unsupported charset "${charset.toUpperCase()}"; send the body as UTF-8`));
      }
      parse = rawParser;
    }
    parse(req, res, (err?: unknown) => {
      let refusal: Problem | null | undefined;
      try {
        refusal = err ? parseFailure(err, req, limit) : bodyRefusal(req);
      } catch (e) {
        refusal = problem(400, 'Bad Request', `the body could not be checked: ${(e as Error)?.message ?? String(e)}`);
      }
      if (refusal === undefined) return; // the client went away
      if (refusal) return res.headersSent ? undefined : sendProblem(res, refusal);
      next();
    });
  };
}
