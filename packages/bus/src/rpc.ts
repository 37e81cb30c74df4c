/**
 * Request/reply helpers shared by every service: the caller side (`callRpc`), the handler side
 * (`rpcHandler`, or `RpcReplyInterceptor` + `RpcProblemFilter` installed once per app) and the
 * `RemoteProblemError` that carries a service's problem details back to the HTTP edge unchanged.
 * Every reply on the wire is an `RpcReply`: `{ok: true, data}` or `{ok: false, problem}`; handlers
 * never let an exception cross the wire. Source: ARCHITECTURE.md §1, §4 (Errors), STYLE.md (Errors).
 */
import { Catch, type ArgumentsHost, type CallHandler, type ExecutionContext, type NestInterceptor, type RpcExceptionFilter } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { AgpError, problem, ServiceUnavailableError, toProblem, type Problem, type RpcReply, type RpcRequest } from '@agp/runtime';
import { firstValueFrom, of, throwError, timeout, type Observable } from 'rxjs';
import { catchError, map } from 'rxjs/operators';

/** The part of a (pino) logger the RPC helpers use. */
export interface RpcLogger {
  error(obj: object, msg?: string): void;
}

/**
 * A problem that a remote service replied with (`{ok: false, problem}`), rethrown on the caller's side.
 * `status` and `title` are the problem's; `problem` is the exact body to return at the HTTP edge
 * (use {@link problemOf} rather than `toProblem` so `type` and `errors` survive).
 */
export class RemoteProblemError extends AgpError {
  readonly status: number;
  readonly title: string;
  constructor(
    readonly problem: Problem,
    options?: { cause?: unknown },
  ) {
    super(problem.detail, options);
    this.status = problem.status;
    this.title = problem.title;
  }
}

/**
 * Problem details for any thrown value: a {@link RemoteProblemError}'s own problem unchanged,
 * otherwise `toProblem(err)` (AgpErrors keep their status; anything else is a 500 that hides internals).
 */
export function problemOf(err: unknown): Problem {
  if (err instanceof RemoteProblemError) return err.problem;
  return toProblem(err);
}

/** True when `value` has the shape of an {@link RpcReply}. */
export function isRpcReply(value: unknown): value is RpcReply {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  if (v.ok === true) return keys.length <= 2 && keys.every((k) => k === 'ok' || k === 'data');
  if (v.ok === false) return keys.length === 2 && typeof v.problem === 'object' && v.problem !== null && typeof (v.problem as Problem).status === 'number';
  return false;
}

/**
 * The failure reply for `err`; logs it (with the error and `meta`) when its status is 5xx.
 * @returns `{ok: false, problem}`
 */
export function failureReply(logger: RpcLogger, err: unknown, meta: Record<string, unknown> = {}): RpcReply<never> {
  const p = problemOf(err);
  if (p.status >= 500) logger.error({ err, status: p.status, ...meta }, 'rpc handler failed');
  return { ok: false, problem: p };
}

/**
 * Wrap a handler so it always resolves to an `RpcReply`: `{ok: true, data}` with what `fn` returns,
 * `{ok: false, problem: problemOf(err)}` when it throws (5xx are logged with the error).
 *
 * @example
 * \@MessagePattern('interventions.get')
 * get(\@Payload() req: RpcRequest<{ id: string }>) {
 *   return rpcHandler(this.logger, (r) => this.queries.get(r.ctx, r.body.id))(req);
 * }
 */
export function rpcHandler<Req, Res>(logger: RpcLogger, fn: (request: RpcRequest<Req>) => Res | Promise<Res>): (request: RpcRequest<Req>) => Promise<RpcReply<Res>> {
  return async (request) => {
    try {
      return { ok: true, data: await fn(request) };
    } catch (err) {
      return failureReply(logger, err, { correlation_id: request?.ctx?.correlation_id });
    }
  };
}

/**
 * Nest interceptor that turns every handler result into `{ok: true, data}` and every error thrown by
 * the handler into `{ok: false, problem}`, logging 5xx. Values that already are an `RpcReply` (from
 * {@link rpcHandler}) pass through unchanged. Install once per app, with {@link RpcProblemFilter} for
 * errors thrown before the handler (guards, pipes): see {@link useRpcReplies}.
 */
export class RpcReplyInterceptor implements NestInterceptor {
  constructor(private readonly logger: RpcLogger) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<RpcReply> {
    const handler = `${context.getClass().name}.${context.getHandler().name}`;
    const request = context.switchToRpc().getData() as Partial<RpcRequest> | undefined;
    return next.handle().pipe(
      map((data: unknown) => (isRpcReply(data) ? data : { ok: true as const, data })),
      catchError((err: unknown) => of(failureReply(this.logger, err, { handler, correlation_id: request?.ctx?.correlation_id }))),
    );
  }
}

/**
 * Nest RPC exception filter that replies `{ok: false, problem}` for anything thrown outside the handler
 * body (guards, pipes, interceptors), so no exception crosses the wire. Logs 5xx.
 */
@Catch()
export class RpcProblemFilter implements RpcExceptionFilter {
  constructor(private readonly logger: RpcLogger) {}

  catch(exception: unknown, host: ArgumentsHost): Observable<RpcReply> {
    const request = host.switchToRpc().getData() as Partial<RpcRequest> | undefined;
    return of(failureReply(this.logger, exception, { correlation_id: request?.ctx?.correlation_id }));
  }
}

/** Anything with Nest's `useGlobalInterceptors` / `useGlobalFilters` (an `INestMicroservice`). */
export interface RpcReplyApp {
  useGlobalInterceptors(...interceptors: NestInterceptor[]): unknown;
  useGlobalFilters(...filters: RpcExceptionFilter[]): unknown;
}

/**
 * Make every handler of `app` reply with an `RpcReply`: installs {@link RpcReplyInterceptor} and
 * {@link RpcProblemFilter} globally. Handlers then just return data or throw AgpErrors.
 */
export function useRpcReplies<A extends RpcReplyApp>(app: A, logger: RpcLogger): A {
  app.useGlobalInterceptors(new RpcReplyInterceptor(logger));
  app.useGlobalFilters(new RpcProblemFilter(logger));
  return app;
}

/** Error a call fails with when no reply came within its timeout. */
export class RpcTimeoutError extends Error {
  constructor(
    readonly pattern: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply to ${pattern} within ${timeoutMs} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/** Nest's error value for a server that has no handler for the pattern (it cannot answer). */
const NO_MESSAGE_HANDLER = 'There is no matching message handler defined in the remote service.';

/**
 * Send `request` to `pattern` and return the reply's data.
 *
 * @param timeoutMs how long to wait for the reply, in ms. @default 10000
 * @throws RemoteProblemError when the service replied `{ok: false, problem}` (its status is the
 *   problem's, e.g. 404), or answered outside the `RpcReply` contract (500).
 * @throws ServiceUnavailableError (503, with `cause`) on timeout, no responders, or transport failure.
 */
export async function callRpc<T>(client: Pick<ClientProxy, 'send'>, pattern: string, request: RpcRequest, timeoutMs = 10_000): Promise<T> {
  let reply: unknown;
  try {
    reply = await firstValueFrom(
      client.send<unknown, RpcRequest>(pattern, request).pipe(timeout({ first: timeoutMs, with: () => throwError(() => new RpcTimeoutError(pattern, timeoutMs)) })),
    );
  } catch (err) {
    throw remoteFailure(pattern, err);
  }
  if (!isRpcReply(reply)) {
    throw new RemoteProblemError(problem(500, 'Internal Server Error', `${pattern} replied outside the RpcReply contract`));
  }
  if (reply.ok) return reply.data as T;
  throw new RemoteProblemError(reply.problem);
}

/** Map what a failed `send` errored with: transport errors are 503, an error value from the remote handler is a 500 problem. */
function remoteFailure(pattern: string, err: unknown): AgpError {
  if (err instanceof Error || err === NO_MESSAGE_HANDLER) {
    const why = err instanceof Error ? err.message : 'the service has no handler for it';
    return new ServiceUnavailableError(`${pattern} is unavailable: ${why}`, { cause: err });
  }
  // A plain value is what Nest's default exception filter sent for an unwrapped handler error
  // (`{status: 'error', message}`) or an RpcException; it did reach the service.
  if (typeof err === 'object' && err !== null && typeof (err as Problem).status === 'number' && typeof (err as Problem).title === 'string') {
    return new RemoteProblemError(err as Problem);
  }
  return new RemoteProblemError(problem(500, 'Internal Server Error', `${pattern} failed without a problem reply`), { cause: err });
}
