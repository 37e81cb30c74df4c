/**
 * The gateway's one router: the route table (`HTTP_ROUTES` in `@agp/contracts`) served on express. The edge has
 * matched each request to its row once (`matchRoute` in ./edge.ts), authenticated it and read its body as the row
 * says; here a row with `forward` is forwarded as it is (./forward.ts), and every other row is answered by its handler
 * in one typed map keyed by the row's operation id ({@link RouteHandlers}, ./handlers.ts): the compiler requires one
 * handler per row that is not forwarded, and none for a row that is. Every error is answered as problem details.
 * Source: the route table; architecture §1 (gateway), §4 (Errors); docs/architecture.md (The route table).
 */
import type { NextFunction, Response } from 'express';
import { HTTP_ROUTES, type HandledOperationId, type HttpRoute } from '@agp/contracts';
import type { Sender } from '@agp/bus';
import type { SqlExecutor } from '@agp/eventstore';
import type { InterventionListReader } from '@agp/interventions/read-models';
import { isRawJson, type RequestContext } from '@agp/runtime';
import { ctxOf, pathParams, type AuthedRequest } from './edge.js';
import { forwardRoute } from './forward.js';
import type { GovernanceStreams } from './routes/governance.js';
import type { KeyAdmin } from './routes/keys.js';
import type { HostedMcpProxy } from './hosted-mcp/proxy.js';
import type { PeopleAdmin, SignInDeps } from './routes/people.js';

/**
 * The Content-Type of a JSON answer sent as bytes: what express sets for JSON text (`res.json`, `res.send` of a
 * string), so a Buffer answer carries the same header as the text it replaces.
 */
const JSON_UTF8 = 'application/json; charset=utf-8';

/** What the route handlers need of the gateway, built once by `createGateway`. */
export interface RouteDeps {
  /** The bus client requests are sent with (NATS or in-process). */
  bus: Sender;
  /** The key store and the key cache, for `/api/v1/keys`. */
  keys: KeyAdmin;
  /** The people store: pending sign-ins, users, sessions and members (`/auth/*`, `/api/v1/members`). */
  people: PeopleAdmin;
  /** The OpenID relying party and the sign-in settings; null when sign-in is off (AGP_AUTH_MODE=keys). */
  signIn: SignInDeps | null;
  /** The interventions list, read in this process through the interventions service's query module. */
  interventions: InterventionListReader;
  /** The platform's database, where the dead letters are read (through @agp/bus and @agp/eventstore). */
  database: SqlExecutor;
  /** The governance push channel's feed and bounds. */
  governance: GovernanceStreams;
  /** The OTLP trace receiver, an express handler that reads its own body (./otlp/route.ts). */
  otlp: (req: AuthedRequest, res: Response) => void;
  /** The hosted MCP proxy (`/api/v1/mcp/proxy/{server}`), with its pools of upstream clients and governors. */
  hostedMcp: HostedMcpProxy;
}

/** One request as its handler sees it. */
export interface RouteCall {
  req: AuthedRequest;
  res: Response;
  /** The request's row of the route table. */
  route: HttpRoute;
  /**
   * The caller's context (organisation, scope, key or person, correlation id), as the services receive it.
   * @throws UnauthorizedError when read on a row that needs no credentials (`auth: 'none'`).
   */
  readonly ctx: RequestContext;
  /** The row's `{name}` path parameters, by name, percent-decoded. */
  params: Record<string, string>;
  deps: RouteDeps;
}

/**
 * What a handler answers: the body (JSON; RawJson text goes out as it is, a Buffer as its bytes, which must be UTF-8
 * JSON) with `status`, by default the row's `status`. A handler that writes the response itself (a stream, a 304, an
 * express handler) returns nothing.
 */
export interface RouteAnswer {
  body: unknown;
  status?: number;
}

/** The handler of one row. @throws anything; the router answers it as problem details. */
export type RouteHandler = (call: RouteCall) => Promise<RouteAnswer | void> | RouteAnswer | void;

/** The handler of every row that is not forwarded, keyed by the row's operation id (the compiler checks the keys). */
export type RouteHandlers = { readonly [K in HandledOperationId]: RouteHandler };

/**
 * The rows of `handlers`' table that no handler and no forward serves, and the handlers for rows that are forwarded
 * or do not exist; both empty for a complete map. Pure.
 */
export function unservedRoutes(handlers: Readonly<Record<string, RouteHandler>>): { missing: string[]; extra: string[] } {
  const handled = new Set(HTTP_ROUTES.filter((r) => !r.forward).map((r) => r.operationId));
  return {
    missing: [...handled].filter((id) => !Object.hasOwn(handlers, id)),
    extra: Object.keys(handlers).filter((id) => !handled.has(id)),
  };
}

/**
 * The router middleware: answers every request the edge matched to a row (forwarded, or by the row's handler in
 * `handlers`) and passes any other request on (to the gateway's 404). A row with `wakesGovernance` wakes the governance
 * push channel's tailer as soon as its success is answered (it is committed by then), so this gateway's streams get it
 * without waiting for the next poll; other gateways poll.
 * @param fail answers what a handler or a forward throws, as the gateway answers every error.
 * @throws Error at once when `handlers` misses a row or holds one that is forwarded or unknown (a programming error).
 */
export function serveRoutes(handlers: RouteHandlers, deps: RouteDeps, fail: (res: Response, err: unknown) => void) {
  const { missing, extra } = unservedRoutes(handlers);
  if (missing.length || extra.length) throw new Error(`the gateway's route map does not match the route table: no handler for ${missing.join(', ') || 'none'}; handlers for rows that are forwarded or unknown: ${extra.join(', ') || 'none'}`);
  const byId = handlers as Readonly<Record<string, RouteHandler>>;
  return (req: AuthedRequest, res: Response, next: NextFunction) => {
    const route = req.agpRoute;
    if (!route) return next();
    if (route.wakesGovernance) res.once('finish', () => res.statusCode < 300 && deps.governance.feed.wake());
    if (route.forward) return forwardRoute(deps.bus, route, req, res, fail);
    Promise.resolve()
      // `ctx` is read when the handler asks for it: a row that needs no credentials (`auth: 'none'`) has none.
      .then(() => byId[route.operationId]({ req, res, route, get ctx() { return ctxOf(req); }, params: pathParams(route, req), deps }))
      .then(
        (answer) => {
          if (!answer) return;
          res.status(answer.status ?? route.status);
          if (route.reply === null || answer.body === undefined) res.end();
          else if (isRawJson(answer.body)) res.type('application/json').send(answer.body.$json);
          else if (Buffer.isBuffer(answer.body)) res.set('Content-Type', JSON_UTF8).send(answer.body);
          else res.json(answer.body);
        },
        (err) => fail(res, err),
      );
  };
}
