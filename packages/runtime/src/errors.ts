/**
 * The platform's small error hierarchy. Every error that crosses a boundary is one of these;
 * `toProblem` (problem.ts) maps them to RFC 9457 problem details in exactly one place.
 *
 * Source: architecture §4 (Errors), style guide (Errors).
 */

import type { FieldError } from '@agp/contracts';

/** One invalid field (the wire definition is `FieldErrorSchema` in `@agp/contracts`). */
export type { FieldError };

/** Base class: carries the HTTP status it maps to and an optional `cause`. */
export abstract class AgpError extends Error {
  abstract readonly status: number;
  abstract readonly title: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** 400: the body is not parseable (malformed JSON). */
export class BadRequestError extends AgpError {
  readonly status = 400;
  readonly title = 'Bad Request';
}

/** 401: missing, unknown, expired or revoked bearer token. */
export class UnauthorizedError extends AgpError {
  readonly status = 401;
  readonly title = 'Unauthorized';
}

/** 403: a read-only key attempted a write. */
export class ForbiddenError extends AgpError {
  readonly status = 403;
  readonly title = 'Forbidden';
}

/** 404: unknown id, or an id that belongs to another organisation (never revealed). */
export class NotFoundError extends AgpError {
  readonly status = 404;
  readonly title = 'Not Found';
}

/** 409: optimistic-concurrency conflict (expected stream version mismatch) or a repeated decision. */
export class ConflictError extends AgpError {
  readonly status = 409;
  readonly title = 'Conflict';
}

/** 413: request body over the limit (5 MiB). */
export class PayloadTooLargeError extends AgpError {
  readonly status = 413;
  readonly title = 'Payload Too Large';
}

/** 422: well-formed but invalid; `errors` lists every bad field. */
export class ValidationError extends AgpError {
  readonly status = 422;
  readonly title = 'Unprocessable Content';
  constructor(
    message: string,
    readonly errors: FieldError[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 503: a dependency (NATS, PostgreSQL, JetStream) is unavailable or timed out. */
export class ServiceUnavailableError extends AgpError {
  readonly status = 503;
  readonly title = 'Service Unavailable';
}

/**
 * Expected stream version did not match; a ConflictError with the two versions. The stream id is kept as a property
 * (for logs) but not in the message, which a client may see as the problem's `detail`: stream names are internal.
 */
export class WrongExpectedVersionError extends ConflictError {
  constructor(
    readonly streamId: string,
    readonly expected: number | 'no_stream' | 'any',
    readonly actual: number,
  ) {
    super(
      expected === 'no_stream'
        ? `the record was created concurrently (it already has version ${actual}); read it again and retry`
        : `the record changed concurrently (expected version ${String(expected)}, found ${actual}); read it again and retry`,
    );
  }
}

/** Seconds a client is told to wait (`Retry-After`) before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;

/** SQLSTATE classes and codes of a database that is (re)starting, shutting down or unreachable. */
const TRANSIENT_SQLSTATE = /^(08...|53...|57P0[1-5]|58030)$/;
/** Socket error codes of a peer that refused, dropped or cannot be reached (Node `err.code`). */
const TRANSIENT_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Messages of the `pg` driver and pool when a connection is gone or cannot be made. */
const TRANSIENT_MESSAGE = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection closed|Error: Connection lost)/;
/** Error names of the NATS client (`@nats-io/nats-core`) for a connection that is down, closed or draining. */
const TRANSIENT_NAMES = new Set(['ClosedConnectionError', 'DrainingConnectionError', 'ConnectionError', 'NoResponders', 'NoRespondersError', 'RpcTimeoutError']);
/**
 * `type` of the KurrentDB client's command errors (`@kurrent/kurrentdb-client`, utils/CommandError) for a server that
 * cannot be reached, did not answer in time, or is a follower: their `name` is plain `Error`, so the kind is in `type`.
 */
const TRANSIENT_KURRENTDB_TYPES = new Set(['unavailable', 'deadline-exceeded', 'not-leader', 'timeout']);

/**
 * Whether `err` is a transient infrastructure failure: PostgreSQL shutting down or restarting (SQLSTATE 57P01–57P05),
 * a broken or refused connection (class 08, ECONNREFUSED, ECONNRESET, "Connection terminated", …), resources
 * exhausted (class 53), a NATS connection that is down or closed, a KurrentDB server unavailable, not answering in time
 * or not the leader, or Nest's NATS client rejecting with its string
 * "Connection lost. Trying to reconnect...". Such a failure is answered 503 with `Retry-After`, never 500; a retry
 * after the dependency is back succeeds. Follows `cause` chains and `AggregateError.errors` (Node's happy-eyeballs
 * connect). Data errors (class 22), conflicts and bugs are not transient.
 * Source: architecture §4 (Errors: transient infrastructure failure = 503).
 */
export function isTransientInfraError(err: unknown, depth = 0): boolean {
  if (err === null || err === undefined || depth > 5) return false;
  if (typeof err === 'string') return TRANSIENT_MESSAGE.test(err);
  if (typeof err !== 'object') return false;
  if (err instanceof ServiceUnavailableError) return true;
  if (err instanceof AgpError) return false;
  const e = err as { code?: unknown; name?: unknown; type?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (TRANSIENT_SQLSTATE.test(e.code) || TRANSIENT_ERRNO.has(e.code))) return true;
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  if (typeof e.type === 'string' && TRANSIENT_KURRENTDB_TYPES.has(e.type)) return true;
  if (typeof e.message === 'string' && TRANSIENT_MESSAGE.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isTransientInfraError(x, depth + 1))) return true;
  return isTransientInfraError(e.cause, depth + 1);
}

/** SQLSTATE of a table that does not exist: a query module's table its owning service has not created (migrated) yet. */
const UNDEFINED_TABLE = '42P01';

/**
 * Whether a database call failed because the database cannot answer now, not because the query is wrong: a transient
 * infrastructure failure ({@link isTransientInfraError}: down, restarting, overloaded, unreachable) or a table its
 * owning service has not created yet (SQLSTATE 42P01, a service still starting). The one classification of
 * unavailable database errors; such a failure is answered 503 with `Retry-After`.
 * Source: architecture §4 (Errors: transient infrastructure failure = 503).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return isTransientInfraError(err) || (err as { code?: unknown } | null)?.code === UNDEFINED_TABLE;
}

/**
 * A `catch` handler for a database call: a failure {@link isDatabaseUnavailable} calls unavailable becomes a
 * {@link ServiceUnavailableError} (503) naming `what` cannot be read now (`the key store`, `the interventions read
 * model`); anything else is rethrown as it is (a 500, or the domain error it is).
 * @example await keys.page(org, q).catch(databaseUnavailable('the key store'));
 */
export function databaseUnavailable(what: string): (err: unknown) => never {
  return (err) => {
    if (isDatabaseUnavailable(err)) throw new ServiceUnavailableError(`${what} cannot be read now; retry`, { cause: err });
    throw err;
  };
}
