import type { ServiceName } from './wire.js';

/**
 * Ingest routing: which service consumes which ingest event type, and the durable consumer names. (Request/reply
 * subjects are the wire table, wire.ts.) Source: architecture §4 (Ingest).
 */
/** Which service consumes which ingest event types (the JetStream subject's last token). */
export const INGEST_TARGETS = {
  'intervention.create': 'interventions',
  'approval.request': 'interventions',
  'agent.register': 'policies',
  'run.start': 'stats',
  'run.end': 'stats',
  'action.record': 'stats',
} as const;

/** Durable consumer names, `<service>-<purpose>`. */
export const Durables = { interventionsIngest: 'interventions-ingest', policiesIngest: 'policies-ingest', statsIngest: 'stats-ingest' } as const;

/**
 * The durable consumer of each ingest target (`INGEST_TARGETS` values), one per target: the ingest stream (work-queue
 * retention) removes a message once the consumer of its subject acks it and refuses a second consumer over the same
 * subjects; every process that opens the stream creates these first. Source: architecture §4 (Ingest);
 * docs/decisions.md (ingest stream retention; the ingest stream and a NATS server stopped by SIGTERM).
 */
export const INGEST_DURABLES = { interventions: Durables.interventionsIngest, policies: Durables.policiesIngest, stats: Durables.statsIngest } as const satisfies Record<(typeof INGEST_TARGETS)[keyof typeof INGEST_TARGETS], string>;

/**
 * The projections (catch-up subscriptions that build a read model; the name is their checkpoint's and their dead
 * letters' `source`) of each event-sourced service. Only the owner runs a projection's code, so only the owner applies
 * one of its dead letters again: the gateway sends the retry to `<owner>.retry-projection-dead-letter`.
 * Source: docs/architecture.md (Projection dead letters); docs/api.md (Dead letters).
 */
export const PROJECTION_OWNERS = {
  'interventions-read-model': 'interventions',
  'approvals-read-model': 'interventions',
  'policies-read-model': 'policies',
  'stats-read-model': 'stats',
  'evals-read-model': 'evals',
  'replay-read-model': 'replay',
  'audit-log-read-model': 'policies',
  'audit-trail': 'policies',
} as const satisfies Record<string, ServiceName>;

/** A projection of {@link PROJECTION_OWNERS}. */
export type ProjectionName = keyof typeof PROJECTION_OWNERS;
/** A service that owns projections. */
export type ProjectionOwner = (typeof PROJECTION_OWNERS)[ProjectionName];

/** The service that runs projection `name`, or undefined for a subscription no service retries (e.g. the enrichment worker's). */
export function projectionOwner(name: string): ProjectionOwner | undefined {
  return Object.hasOwn(PROJECTION_OWNERS, name) ? PROJECTION_OWNERS[name as ProjectionName] : undefined;
}
