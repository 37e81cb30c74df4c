import { ConflictError, WrongExpectedVersionError, deterministicId, type Logger, type RequestContext } from '@agp/runtime';
import type { EventMetadata, Subscription } from './types.js';

/** Schema version of the events every service appends today. Source: architecture §3 (Event metadata). */
export const EVENT_SCHEMA_VERSION = 1;

/**
 * Metadata of an event appended for an API request: the caller's organisation, `key:<key id>` (a signed-in person: `user:<user id>`) as actor with the key's
 * name as `actor_name` (unless `actor` says otherwise, e.g. `approver:<email>`: then no name), its correlation id and
 * W3C trace context. The name is captured here, at write time: the record keeps the name that acted.
 * Source: architecture §3 (Event metadata); docs/decisions.md (Actor names).
 */
export function requestMetadata(ctx: RequestContext, opts: { actor?: string; causationId?: string } = {}): EventMetadata {
  return {
    organization_id: ctx.organization_id,
    actor: opts.actor ?? (ctx.user_id ? `user:${ctx.user_id}` : `key:${ctx.key_id}`),
    ...(opts.actor === undefined && ctx.key_name ? { actor_name: ctx.key_name } : {}),
    correlation_id: ctx.correlation_id,
    ...(opts.causationId ? { causation_id: opts.causationId } : {}),
    ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
    schema_version: EVENT_SCHEMA_VERSION,
  };
}

/**
 * The event-store `event_id` of an ingested event: derived from the organisation and the client's event id, so the
 * same client event is stored once whichever consumer or redelivery appends it, and the ingest service can ask
 * whether it is already stored. The one definition for the consumers and the ingest service. Source: docs/ingest.md (Ingest answers).
 */
export function ingestedEventId(organizationId: string, clientEventId: string): string {
  return deterministicId(organizationId, 'ingest', clientEventId);
}

/**
 * Metadata of an event appended from an accepted ingest envelope: its organisation, ingesting key, request id and,
 * when the HTTP request carried one, its W3C `traceparent`, so a trace that starts at HTTP continues past JetStream.
 * Source: docs/architecture.md (Telemetry).
 */
export function ingestMetadata(envelope: { organization_id: string; actor: string; correlation_id: string; traceparent?: string }): EventMetadata {
  return {
    organization_id: envelope.organization_id,
    actor: envelope.actor,
    correlation_id: envelope.correlation_id,
    ...(envelope.traceparent ? { traceparent: envelope.traceparent } : {}),
    schema_version: EVENT_SCHEMA_VERSION,
  };
}

/**
 * Read-your-writes for a synchronous write: wait until every given subscription has applied `position` (the
 * global position of the last appended event), at most `timeoutMs` in all. Never throws: when a projection lags
 * it logs a warning and returns, and the caller answers from its own fold.
 */
export async function waitForProjections(subscriptions: Array<Subscription | undefined>, position: bigint | undefined, opts: { timeoutMs?: number; logger: Pick<Logger, 'warn'> }): Promise<void> {
  if (position === undefined) return;
  const deadline = Date.now() + (opts.timeoutMs ?? 3000);
  try {
    for (const s of subscriptions) if (s) await s.waitFor(position, Math.max(1, deadline - Date.now()));
  } catch {
    opts.logger.warn({ position: String(position) }, 'read model lagging; answering before it caught up');
  }
}

/** How many times {@link retryOnConflict} tries by default. */
export const CONFLICT_ATTEMPTS = 10;

/**
 * Optimistic concurrency for a synchronous write: run `attempt` (read the stream, decide, append with the expected
 * version) and, when its append meets a concurrent change (`WrongExpectedVersionError`), run it again: it re-reads
 * and re-decides. An idempotent write (a PUT of a state, a re-registration) then converges on the state it asked for,
 * and a conditional one fails with the domain's own reason (an If-Match that no longer matches, an approval already
 * decided), never with the store's. Between tries it pauses 1..5 ms × the try number (random, so racing writers
 * spread out). Appends are serialised by the store, so every round lets at least one writer through.
 * @param what what is being written, for the final error's detail (e.g. `the kill switch`).
 * @param attempts tries in all. @default CONFLICT_ATTEMPTS (10)
 * @throws ConflictError (409) `<what> changed concurrently N times in a row; retry the request` (no internal names)
 *   when every try met a concurrent change; whatever `attempt` throws otherwise.
 * Source: architecture §3 (optimistic concurrency); docs/decisions.md (Concurrent writes).
 */
export async function retryOnConflict<T>(what: string, attempt: () => Promise<T>, attempts = CONFLICT_ATTEMPTS): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      if (i >= attempts) throw new ConflictError(`${what} changed concurrently ${attempts} times in a row; retry the request`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.ceil(Math.random() * 5 * i)));
    }
  }
}
