/**
 * Request/reply patterns. On NATS each becomes `<AGP_SUBJECT_PREFIX>.<pattern>` (e.g. `agp.interventions.list`).
 * Source: STYLE.md (Names).
 */
export const Patterns = {
  ingestBatch: 'ingest.batch',
  interventionsCreate: 'interventions.create',
  interventionsList: 'interventions.list',
  interventionsGet: 'interventions.get',
  interventionsStats: 'interventions.stats',
  interventionsDelete: 'interventions.delete',
} as const;

/** Queue groups, one per service, so replicas share requests. */
export const QueueGroups = { ingest: 'ingest', interventions: 'interventions' } as const;

/** Which service consumes which ingest event types (the JetStream subject's last token). */
export const INGEST_TARGETS = { 'intervention.create': 'interventions' } as const;

/** Durable consumer names, `<service>-<purpose>`. */
export const Durables = { interventionsIngest: 'interventions-ingest' } as const;
