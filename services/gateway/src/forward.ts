/**
 * The routes the gateway forwards as they are: every row of `HTTP_ROUTES` with `forward` is answered here, with no
 * handler written for it. The router (./router.ts) calls {@link forwardRoute} with the request's row; the rows that do
 * more than forward (stream, set headers, map statuses, answer from the gateway itself) have handlers (./handlers.ts).
 * Source: the route table (`HTTP_ROUTES` in `@agp/contracts`); architecture §1 (gateway), §4 (Errors).
 */
import type { Response } from 'express';
import { Wire, type HttpRoute, type WireKey } from '@agp/contracts';
import { callUnchecked, type Sender } from '@agp/bus';
import { isRawJson } from '@agp/runtime';
import { ctxOf, pathParams, type AuthedRequest } from './edge.js';

/**
 * The parts of the wire request of a forwarded route (`path`, `query`, `body`), each only when its row has it: the
 * path parameters renamed by the row's `params[name].field`, the query string, the JSON body (`{}` when absent).
 * @throws BadRequestError (400) for a path parameter that is not valid percent-encoding.
 */
function wireRequest(route: HttpRoute, req: AuthedRequest): Record<string, unknown> {
  const shape = (Wire[route.message as WireKey].request as unknown as { shape: Record<string, unknown> }).shape;
  const parts: Record<string, unknown> = {};
  if ('path' in shape) {
    const path: Record<string, string> = {};
    for (const [name, value] of Object.entries(pathParams(route, req))) path[route.params?.[name]?.field ?? name] = value;
    parts.path = path;
  }
  if ('query' in shape) parts.query = req.query;
  if ('body' in shape) parts.body = req.body ?? {};
  return parts;
}

/**
 * Answer a request whose row is forwarded: send the row's wire message with the caller's context (set by the auth
 * middleware, which runs first) and answer the reply with the row's status — JSON text (RawJson) as it is, no body for
 * a row whose reply is `null`. `forward.timeoutMs` is how long it waits (else the bus default).
 * @param fail answers what the forward throws (a wire row's 422, a service's problem, the bus being down) as the
 *   gateway answers every error.
 */
export function forwardRoute(bus: Sender, route: HttpRoute, req: AuthedRequest, res: Response, fail: (res: Response, err: unknown) => void): void {
  const timeoutMs = route.forward === true || route.forward === undefined ? undefined : route.forward.timeoutMs;
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
}
