/**
 * The two ends of every message in the wire registry (`Wire` in `@agp/contracts`):
 * - {@link call}: the typed caller. It checks the request body against the row's schema (422 naming each bad field,
 *   nothing sent), sends it, and returns the reply data typed by the row;
 * - {@link serveRpc}: the one way a service serves its part of the table. It validates each request, runs the
 *   handler, maps errors to problem details, and is the single place that counts messages, times them and opens a
 *   trace span per message.
 * Source: architecture §1, §4 (Errors), §5 (operations).
 */
import { Controller, Module, type DynamicModule } from '@nestjs/common';
import { MessagePattern, Payload, type ClientProxy } from '@nestjs/microservices';
import { SpanKind, SpanStatusCode, context, propagation } from '@opentelemetry/api';
import { Wire, roundNumbers, wireKeysOf, wireMessage, type ServiceName, type WireKey, type WireKeyOf, type WireReply, type WireRequest, type WireRequestInput } from '@agp/contracts';
import { counter, histogram, parseOrThrow, type RequestContext, type RpcReply, type RpcRequest } from '@agp/runtime';
import { callRpc, failureReply, type RpcLogger } from './rpc.js';
import { MESSAGING_SYSTEM, busTracer, withSendSpan } from './tracing.js';

/** A client that can send a request (Nest's NATS client, the in-process client). */
export type Sender = Pick<ClientProxy, 'send'>;

/**
 * Send `body` to the service that answers `key` and return its reply data.
 * @param body the request body; checked against `Wire[key].request` before anything is sent.
 * @param timeoutMs how long to wait for the reply, in ms. @default 10000
 * @throws ValidationError (422) naming each bad field when `body` does not match the row's request schema.
 * @throws RemoteProblemError with the service's problem details (e.g. 404, 409, 422).
 * @throws ServiceUnavailableError (503) on timeout, no responders, or transport failure.
 */
export async function call<K extends WireKey>(bus: Sender, key: K, ctx: RequestContext, body: WireRequestInput<K>, timeoutMs?: number): Promise<WireReply<K>> {
  return send(bus, key, ctx, body, timeoutMs);
}

/**
 * {@link call} for input that has not been typed yet (an HTTP request's parts at the gateway): the row's schema is
 * the only check, so a bad field is a 422 exactly as the service would answer it.
 * @throws as {@link call}.
 */
export async function callUnchecked<K extends WireKey>(bus: Sender, key: K, ctx: RequestContext, body: unknown, timeoutMs?: number): Promise<WireReply<K>> {
  return send(bus, key, ctx, body, timeoutMs);
}

async function send<K extends WireKey>(bus: Sender, key: K, ctx: RequestContext, body: unknown, timeoutMs?: number): Promise<WireReply<K>> {
  // The service parses the body again (it is the authority); the original input is what goes on the wire, so its
  // transforms (comma lists, coercions, defaults) run exactly once on the data they were written for.
  parseOrThrow(Wire[key].request, body);
  // A CLIENT span per request; the service's server span is its child through the traceparent the context carries.
  return withSendSpan(key, ctx.traceparent, (traceparent) => callRpc<WireReply<K>>(bus, key, { ctx: traceparent === ctx.traceparent ? ctx : { ...ctx, traceparent }, body }, timeoutMs));
}

/** A service's handlers: exactly one per subject the table gives the service, each taking the parsed request body. */
export type WireHandlers<S extends ServiceName> = {
  [K in WireKeyOf<S>]: (ctx: RequestContext, body: WireRequest<K>) => Promise<WireReply<K>> | WireReply<K>;
};

const messages = counter('agp_rpc_messages_total', 'Request/reply messages served, by subject and outcome (ok, 4xx, 5xx)', ['subject', 'outcome']);
const latency = histogram('agp_rpc_duration_seconds', 'Time to answer a request/reply message, by subject, in seconds', ['subject'], [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]);

/**
 * Wrap one handler as a bus endpoint: validate the body against the row's schema, run the handler inside a SERVER
 * span `process <subject>` (messaging semantic conventions; parented by the request's `traceparent`), answer `{ok: true, data}` (USD amounts and ms durations rounded by
 * the row's reply schema: `roundNumbers` in `@agp/contracts`) or `{ok: false, problem}`, and record the count and
 * latency of the subject.
 */
export function wireEndpoint<K extends WireKey>(key: K, handler: (ctx: RequestContext, body: WireRequest<K>) => unknown, logger: RpcLogger): (request: RpcRequest) => Promise<RpcReply> {
  const row = Wire[key];
  return async (request) => {
    const started = performance.now();
    const carrier = request?.ctx?.traceparent ? { traceparent: request.ctx.traceparent } : {};
    const parent = propagation.extract(context.active(), carrier);
    const attributes = { 'messaging.system': MESSAGING_SYSTEM, 'messaging.operation.type': 'process', 'messaging.destination.name': key, 'agp.service': row.service };
    return busTracer.startActiveSpan(`process ${key}`, { kind: SpanKind.SERVER, attributes }, parent, async (span) => {
      let reply: RpcReply;
      try {
        const body = parseOrThrow(row.request, request?.body) as WireRequest<K>;
        // The one place answers are rounded: USD amounts and ms durations to the precision of docs/api.md (Numbers).
        reply = { ok: true, data: roundNumbers(row.reply, await handler(request.ctx, body)) };
      } catch (err) {
        reply = failureReply(logger, err, { subject: key, correlation_id: request?.ctx?.correlation_id });
      }
      const outcome = reply.ok ? 'ok' : reply.problem.status >= 500 ? '5xx' : '4xx';
      if (!reply.ok) span.setStatus({ code: reply.problem.status >= 500 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET, message: reply.problem.title });
      span.end();
      messages.inc({ subject: key, outcome });
      latency.observe({ subject: key }, (performance.now() - started) / 1000);
      return reply;
    });
  };
}

/**
 * The Nest module that serves `service`'s part of the wire table with `handlers` (one {@link wireEndpoint} each),
 * on whatever transport the app was created with (NATS in distributed mode, in-process when embedded).
 * @throws Error when `handlers` names a subject the table does not give to `service`, or misses one it does.
 */
export function serveRpc<S extends ServiceName>(service: S, handlers: WireHandlers<S>, logger: RpcLogger): DynamicModule {
  const expected = new Set<string>(wireKeysOf(service));
  const given = Object.keys(handlers);
  const foreign = given.filter((k) => !expected.has(k));
  if (foreign.length) {
    const owners = foreign.map((k) => `${k} (${wireMessage(k)?.service ?? 'not in the table'})`);
    throw new Error(`serveRpc(${service}): handlers for subjects the wire table does not give to ${service}: ${owners.join(', ')}`);
  }
  const missing = [...expected].filter((k) => !Object.hasOwn(handlers, k));
  if (missing.length) throw new Error(`serveRpc(${service}): no handler for ${missing.join(', ')}`);

  class WireController {}
  for (const key of given as Array<WireKeyOf<S>>) {
    const endpoint = wireEndpoint<WireKey>(key, handlers[key] as (ctx: RequestContext, body: WireRequest<WireKey>) => unknown, logger);
    const method = `serve:${key}`;
    Object.defineProperty(WireController.prototype, method, { value: (request: RpcRequest) => endpoint(request), writable: true, configurable: true });
    const descriptor = Object.getOwnPropertyDescriptor(WireController.prototype, method)!;
    Payload()(WireController.prototype, method, 0);
    MessagePattern(key)(WireController.prototype, method, descriptor);
  }
  Object.defineProperty(WireController, 'name', { value: `${service[0].toUpperCase()}${service.slice(1)}WireController` });
  Controller()(WireController);
  class WireModule {}
  Object.defineProperty(WireModule, 'name', { value: `${service[0].toUpperCase()}${service.slice(1)}WireModule` });
  Module({})(WireModule);
  return { module: WireModule, controllers: [WireController] };
}
