/**
 * Which webhook events a stored event is, and whether a subscription's filter lets one through. Pure: what the
 * mapping needs beyond the event (a policy's agent scope, an approval's intervention) comes in from the projection's
 * own tables. Source: docs/notifications.md (Event kinds and payloads).
 */
import {
  APPROVAL_ID_PREFIX,
  EvalRunEvents,
  EvalRunSubmittedDataSchema,
  InterventionEvents,
  InterventionRecordedDataSchema,
  KillSwitchEvents,
  PolicyEvents,
  RISK_LEVELS,
  governanceFeedEventOf,
  type GovernanceSourceEvent,
  type InterventionType,
  type RiskLevel,
  type WebhookEventKind,
  type WebhookFilter,
} from '@agp/contracts';

/** The event types the webhooks projection reads. */
export const WEBHOOK_SOURCE_EVENT_TYPES: string[] = [
  InterventionEvents.Recorded,
  InterventionEvents.OutcomeChanged,
  KillSwitchEvents.Engaged,
  KillSwitchEvents.Released,
  PolicyEvents.Created,
  PolicyEvents.Updated,
  PolicyEvents.Enabled,
  PolicyEvents.Disabled,
  EvalRunEvents.Submitted,
];

/** What the projection keeps of an escalated intervention, to describe its approval's decision. */
export interface EscalatedIntervention {
  agent_id: string;
  type: InterventionType;
  risk_level: RiskLevel | null;
}

/** One webhook event: its kind, its `data`, and what filters read. */
export interface WebhookEvent {
  kind: WebhookEventKind;
  /** Unique per source event and kind: with the subscription it makes the delivery id. */
  key: string;
  organization_id: string;
  /** When it happened, ISO 8601 UTC (the payload's `timestamp`). */
  at: string;
  data: Record<string, unknown>;
  /** The agents it concerns; null: every agent of the organisation. */
  agents: readonly string[] | null;
  intervention_type: InterventionType | null;
  risk_level: RiskLevel | null;
  /** For `budget.threshold`: the percentage passed (50, 80, 100), which `filter.budget_thresholds` selects. */
  budget_percent?: number;
}

/** What the mapping reads besides the event: the policy's agent scope before the event, an approval's intervention. */
export interface WebhookLookups {
  policyScope(organizationId: string, policyId: string): string[] | undefined;
  escalated(organizationId: string, interventionId: string): EscalatedIntervention | undefined;
}

/**
 * The webhook events `e` is: an InterventionRecorded is `intervention.created`, and also `approval.requested` when its
 * outcome is `escalated`; an EvalRunSubmitted whose summary counts regressions against its CI baseline is
 * `eval.regression`; policy, kill-switch and approval-deciding events are what the governance push channel streams
 * (`governanceFeedEventOf`), with the same `data`.
 */
export function webhookEventsOf(e: GovernanceSourceEvent & { event_id: string }, lookups: WebhookLookups): WebhookEvent[] {
  const org = e.metadata.organization_id;
  if (e.type === EvalRunEvents.Submitted) {
    const d = EvalRunSubmittedDataSchema.safeParse(e.data);
    if (!d.success || d.data.summary.regressions < 1 || d.data.summary.ci_baseline_id === null) return [];
    const r = d.data;
    const data = {
      eval_run_id: r.id,
      baseline_id: r.summary.ci_baseline_id,
      suite: r.suite,
      agent_id: r.agent_id,
      branch: r.branch,
      commit_sha: r.commit_sha,
      regressions: r.summary.regressions,
      grade: r.summary.grade,
      block_rate: r.summary.block_rate,
      ci_status: r.summary.ci_status,
    };
    return [{ kind: 'eval.regression', key: `${e.event_id}:eval.regression`, organization_id: org, at: r.created_at, data, agents: [r.agent_id], intervention_type: null, risk_level: null }];
  }
  if (e.type === InterventionEvents.Recorded) {
    const d = InterventionRecordedDataSchema.safeParse(e.data);
    if (!d.success) return [];
    const r = d.data;
    const intervention = {
      id: r.id,
      type: r.type,
      outcome: r.outcome,
      action_name: r.action_name,
      agent_id: r.agent_id,
      run_id: r.run_id ?? null,
      policy_id: r.policy_id ?? null,
      risk_level: r.risk_level ?? null,
      reason: r.reason ?? null,
      estimated_cost_usd: r.estimated_cost_usd ?? null,
      timestamp: r.timestamp,
    };
    const common = { organization_id: org, at: r.created_at, agents: [r.agent_id], intervention_type: r.type, risk_level: r.risk_level ?? null };
    const out: WebhookEvent[] = [{ ...common, kind: 'intervention.created', key: `${e.event_id}:intervention.created`, data: { intervention } }];
    if (r.outcome === 'escalated') {
      out.push({ ...common, kind: 'approval.requested', key: `${e.event_id}:approval.requested`, data: { approval_id: `${APPROVAL_ID_PREFIX}${r.id}`, intervention, expires_at: r.approval_expires_at ?? null } });
    }
    return out;
  }
  let stream: GovernanceSourceEvent[] = [];
  let escalated: EscalatedIntervention | undefined;
  if (e.type === InterventionEvents.OutcomeChanged) {
    const id = String((e.data as { id?: unknown }).id ?? '');
    escalated = lookups.escalated(org, id);
    if (!escalated) return [];
    stream = [{ type: InterventionEvents.Recorded, data: { agent_id: escalated.agent_id }, stream_version: 1, global_position: 0n, recorded_at: e.recorded_at, metadata: e.metadata }];
  } else if (Object.values(PolicyEvents).includes(e.type as never)) {
    const id = String((e.data as { id?: unknown }).id ?? '');
    const scope = lookups.policyScope(org, id);
    if (scope && e.stream_version > 1) stream = [{ type: PolicyEvents.Created, data: { id, at: e.recorded_at, agent_ids: scope }, stream_version: 1, global_position: 0n, recorded_at: e.recorded_at, metadata: e.metadata }];
  }
  const g = governanceFeedEventOf(e, stream);
  if (!g) return [];
  return [
    {
      kind: g.event,
      key: `${e.event_id}:${g.event}`,
      organization_id: org,
      at: e.recorded_at,
      data: g.data as Record<string, unknown>,
      agents: g.agents,
      intervention_type: escalated?.type ?? null,
      risk_level: escalated?.risk_level ?? null,
    },
  ];
}

const RANK = new Map(RISK_LEVELS.map((r, i) => [r, i]));

/**
 * Whether a subscription with `events` and `filter` receives `ev`. The kind must be one of `events`; each filter part
 * holds or does not apply: `agent_ids` (an event concerning every agent passes), `intervention_types` and
 * `min_risk_level` (only events of an intervention or approval are held to them; one without a risk level fails
 * `min_risk_level`), `budget_thresholds` (only `budget.threshold` events are held to it).
 */
export function subscriptionWants(events: readonly string[], filter: WebhookFilter | null, ev: Pick<WebhookEvent, 'kind' | 'agents' | 'intervention_type' | 'risk_level' | 'budget_percent'>): boolean {
  if (!events.includes(ev.kind)) return false;
  if (!filter) return true;
  if (ev.kind === 'budget.threshold' && filter.budget_thresholds && !filter.budget_thresholds.includes(ev.budget_percent as 50)) return false;
  if (filter.agent_ids && ev.agents !== null && !ev.agents.some((a) => filter.agent_ids!.includes(a))) return false;
  const aboutIntervention = ev.kind === 'intervention.created' || ev.kind === 'approval.requested' || ev.kind === 'approval.decided';
  if (aboutIntervention && filter.intervention_types && (ev.intervention_type === null || !filter.intervention_types.includes(ev.intervention_type))) return false;
  if (aboutIntervention && filter.min_risk_level) {
    if (ev.risk_level === null) return false;
    if (RANK.get(ev.risk_level)! > RANK.get(filter.min_risk_level)!) return false;
  }
  return true;
}
