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

/** 415: request body is not `application/json`. */
export class UnsupportedMediaTypeError extends AgpError {
  readonly status = 415;
  readonly title = 'Unsupported Media Type';
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
