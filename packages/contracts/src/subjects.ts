/**
 * Request/reply patterns. On NATS each becomes `<AGP_SUBJECT_PREFIX>.<pattern>` (e.g. `agp.interventions.list`).
 * The first token names the owning service's area. Source: STYLE.md (Names).
 */
export const Patterns = {
  ingestBatch: 'ingest.batch',
  // services/interventions
  interventionsCreate: 'interventions.create',
  interventionsList: 'interventions.list',
  interventionsGet: 'interventions.get',
  interventionsStats: 'interventions.stats',
  interventionsDelete: 'interventions.delete',
  interventionsEnrich: 'interventions.enrich',
  /** Intervention counts of one agent (for the stats service's agent stats). */
  interventionsAgentCounts: 'interventions.agent-counts',
  approvalsList: 'approvals.list',
  approvalsGet: 'approvals.get',
  approvalsApprove: 'approvals.approve',
  approvalsReject: 'approvals.reject',
  // services/policies
  policiesCreate: 'policies.create',
  policiesList: 'policies.list',
  policiesGet: 'policies.get',
  policiesUpdate: 'policies.update',
  policiesHistory: 'policies.history',
  agentsRegister: 'agents.register',
  agentsList: 'agents.list',
  agentsGet: 'agents.get',
  killSwitchesList: 'kill-switches.list',
  killSwitchesSet: 'kill-switches.set',
  // services/stats
  statsSummary: 'stats.summary',
  statsDaily: 'stats.daily',
  statsEstimationAccuracy: 'stats.estimation-accuracy',
  statsAgent: 'stats.agent',
  runsList: 'runs.list',
  runsGet: 'runs.get',
  /** One page of a ledger export (keyset-paginated; the gateway streams the pages). */
  ledgerExportPage: 'ledger.export-page',
} as const;


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
