/**
 * The request/reply envelope on the wire, under the typed ends in wire.ts (`call`, `serveRpc`): the raw send
 * (`callRpc`), the failure reply a handler answers with, and the `RemoteProblemError` that carries a service's problem
 * details back to the HTTP edge unchanged. Every reply is an `RpcReply`: `{ok: true, data}` or `{ok: false, problem}`;
 * no exception crosses the wire. Source: architecture §1, §4 (Errors); style guide (Errors).
 */
import type { ClientProxy } from '@nestjs/microservices';
import { AgpError, isTransientInfraError, problem, ServiceUnavailableError, toProblem, type Problem, type RpcReply, type RpcRequest } from '@agp/runtime';
import { firstValueFrom, throwError, timeout } from 'rxjs';

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

/**
 * Map what a failed `send` errored with: transport errors are 503, an error value from the remote handler is a 500
 * problem. Nest's NATS client rejects with a plain string while its connection is down ("Error: Connection lost.
 * Trying to reconnect..."): that is a transport failure too (503), never a 500.
 */
function remoteFailure(pattern: string, err: unknown): AgpError {
  if (err instanceof Error || err === NO_MESSAGE_HANDLER || (typeof err === 'string' && isTransientInfraError(err))) {
    const why = err instanceof Error ? err.message : err === NO_MESSAGE_HANDLER ? 'the service has no handler for it' : err;
    return new ServiceUnavailableError(`${pattern} is unavailable: ${why}`, { cause: err });
  }
  // A plain value is what Nest's default exception filter sent for an unwrapped handler error
  // (`{status: 'error', message}`) or an RpcException; it did reach the service.
  if (typeof err === 'object' && err !== null && typeof (err as Problem).status === 'number' && typeof (err as Problem).title === 'string') {
    return new RemoteProblemError(err as Problem);
  }
  return new RemoteProblemError(problem(500, 'Internal Server Error', `${pattern} failed without a problem reply`), { cause: err });
}
