import type { Problem } from '@agp/contracts';
import { AgpError, type FieldError, isTransientInfraError, RETRY_AFTER_SECONDS, ValidationError } from './errors.js';

/** RFC 9457 problem details, as defined once by `ProblemSchema` in `@agp/contracts`. Source: architecture §4 (Errors). */
export type { Problem };

/** Base URI for problem `type` values; each status has its own documented type. */
export const PROBLEM_TYPE_BASE = 'https://agp.dev/problems/';

const SLUGS: Record<number, string> = {
  400: 'malformed-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  422: 'validation-failed',
  429: 'rate-limited',
  503: 'service-unavailable',
  500: 'internal',
};

/** Build a problem body for a status. */
export function problem(status: number, title: string, detail: string, errors?: FieldError[]): Problem {
  const p: Problem = { type: PROBLEM_TYPE_BASE + (SLUGS[status] ?? 'error'), title, status, detail };
  if (errors && errors.length) p.errors = errors;
  return p;
}

/**
 * Map any thrown value to a problem. AgpErrors keep their status; a transient infrastructure failure
 * ({@link isTransientInfraError}: the database restarting, a refused or dropped connection, NATS down) is a 503
 * (answer it with {@link retryAfterHeaders}); anything else is a 500 whose detail hides internals (the caller logs
 * the original). The one place where errors become problems: the gateway, the MCP facade, ingest and RPC replies
 * all go through it. Source: architecture §4 (Errors).
 */
export function toProblem(err: unknown): Problem {
  if (err instanceof ValidationError) return problem(422, err.title, err.message, err.errors);
  if (err instanceof AgpError) return problem(err.status, err.title, err.message);
  if (isTransientInfraError(err)) return problem(503, 'Service Unavailable', 'A dependency (database or message bus) is temporarily unavailable; retry.');
  return problem(500, 'Internal Server Error', 'An unexpected error occurred; it has been logged.');
}

/**
 * The extra response headers of an answer with `status`: `Retry-After` ({@link RETRY_AFTER_SECONDS}) for a 503,
 * none otherwise. Every HTTP answer that can be a 503 sends these.
 */
export function retryAfterHeaders(status: number): Record<string, string> {
  return status === 503 ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {};
}
