/**
 * The routes the gateway forwards as they are, generated from the route table: every row of `HTTP_ROUTES` with
 * `forward` is answered here, with no handler written for it. The routes that do more than forward (stream, set
 * headers, map statuses, answer from the gateway itself) are the Nest controllers of ./controllers.ts and ./routes.
 * Source: the route table (`HTTP_ROUTES` in `@agp/contracts`); architecture §1 (gateway), §4 (Errors).
 */
import type { NextFunction, Request, Response } from 'express';
import { HTTP_ROUTES, Wire, httpRouteParams, matchHttpRoute, type HttpRoute, type WireKey } from '@agp/contracts';
import { callUnchecked, type Sender } from '@agp/bus';
import { BadRequestError, isRawJson } from '@agp/runtime';
import { ctxOf } from './controllers.js';
import type { AuthedRequest } from './edge.js';

/** The rows of the route table the gateway forwards ({@link forwardRoutes}), in table order. */
export const FORWARDED_ROUTES: readonly HttpRoute[] = HTTP_ROUTES.filter((r) => r.forward);

/** The parts of the wire request of a forwarded route (`path`, `query`, `body`), each only when its row has it. */
function wireRequest(route: HttpRoute, req: Request): Record<string, unknown> {
  const shape = (Wire[route.message as WireKey].request as unknown as { shape: Record<string, unknown> }).shape;
  const parts: Record<string, unknown> = {};
  if ('path' in shape) {
    const path: Record<string, string> = {};
    for (const [name, raw] of Object.entries(httpRouteParams(route, req.path))) {
      try {
        path[route.params?.[name]?.field ?? name] = decodeURIComponent(raw);
      } catch {
        throw new BadRequestError(`path parameter ${name} is not valid percent-encoding: ${raw}`);
      }
    }
    parts.path = path;
  }
  if ('query' in shape) parts.query = req.query;
  if ('body' in shape) parts.body = req.body ?? {};
  return parts;
}

/**
 * Express middleware that answers every request whose route (`matchHttpRoute`, HEAD as GET) is a forwarded row: it
 * sends the route's wire message with the caller's context (set by the auth middleware, which runs first) and
 * answers the reply with the row's status — JSON text (RawJson) as it is, no body for a row whose reply is `null`.
 * Any other request goes on to the Nest controllers. Mounted after authentication and the JSON body parser.
 * @param bus the bus client the messages are sent with.
 * @param fail answers what a forward throws (a wire row's 422, a service's problem, the bus being down) as the
 *   gateway answers every error.
 */
export function forwardRoutes(bus: Sender, fail: (res: Response, err: unknown) => void) {
  return (req: AuthedRequest, res: Response, next: NextFunction) => {
    const route = matchHttpRoute(req.method === 'HEAD' ? 'GET' : req.method, req.path);
    if (!route?.forward) return next();
    const timeoutMs = route.forward === true ? undefined : route.forward.timeoutMs;
    Promise.resolve()
      .then(() => callUnchecked(bus, route.message as WireKey, ctxOf(req), wireRequest(route, req), timeoutMs))
      .then(
        (reply) => {
          if (route.reply === null) res.status(route.status).end();
          else if (isRawJson(reply)) res.status(route.status).type('application/json').send(reply.$json);
          else res.status(route.status).json(reply);
        },
        (err) => fail(res, err),
      );
  };
}
