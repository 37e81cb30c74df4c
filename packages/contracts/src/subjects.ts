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
