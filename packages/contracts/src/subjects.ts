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
