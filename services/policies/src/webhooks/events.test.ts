import { describe, expect, it } from 'vitest';
import { subscriptionWants, webhookEventsOf, type WebhookLookups } from './events.js';

const meta = { organization_id: 'acme', actor: 'key:k1' };
const recorded = (outcome: string, over: Record<string, unknown> = {}) => ({
  event_id: 'e1',
  type: 'InterventionRecorded',
  stream_version: 1,
  global_position: 10n,
  recorded_at: '2026-11-29T10:00:00.000Z',
  metadata: meta,
  data: { id: 'i1', type: 'approval_required', outcome, action_name: 'wire_transfer', agent_id: 'a1', risk_level: 'high', timestamp: '2026-11-29T10:00:00.000Z', created_at: '2026-11-29T10:00:00.000Z', cost_prevented_usd: 0, source: 'api', original_inputs: {}, ...over },
});
const none: WebhookLookups = { policyScope: () => undefined, escalated: () => undefined };

describe('webhook events of stored events', () => {
  it('an escalated intervention is intervention.created and approval.requested; another outcome only the first', () => {
    const evs = webhookEventsOf(recorded('escalated'), none);
    expect(evs.map((e) => e.kind)).toEqual(['intervention.created', 'approval.requested']);
    expect(evs[1]).toMatchObject({ agents: ['a1'], intervention_type: 'approval_required', risk_level: 'high', data: { approval_id: 'apr-i1', intervention: { id: 'i1', agent_id: 'a1' } } });
    expect(new Set(evs.map((e) => e.key)).size).toBe(2);
    expect(webhookEventsOf(recorded('blocked'), none).map((e) => e.kind)).toEqual(['intervention.created']);
  });

  it('an approval decision carries its intervention’s agent, type and risk from the lookups', () => {
    const decided = { event_id: 'e2', type: 'InterventionOutcomeChanged', stream_version: 2, global_position: 11n, recorded_at: '2026-11-29T10:01:00.000Z', metadata: meta, data: { id: 'i1', from: 'escalated', to: 'approved_after_review' } };
    expect(webhookEventsOf(decided, none)).toEqual([]);
    const [ev] = webhookEventsOf(decided, { ...none, escalated: () => ({ agent_id: 'a1', type: 'approval_required', risk_level: 'critical' }) });
    expect(ev).toMatchObject({ kind: 'approval.decided', agents: ['a1'], risk_level: 'critical', data: { approval_id: 'apr-i1', status: 'approved', agent_id: 'a1' } });
  });

  it('a policy toggle concerns the agents of the policy’s scope', () => {
    const toggled = { event_id: 'e3', type: 'PolicyDisabled', stream_version: 3, global_position: 12n, recorded_at: '2026-11-29T10:02:00.000Z', metadata: meta, data: { id: 'p1', at: '2026-11-29T10:02:00.000Z' } };
    const [ev] = webhookEventsOf(toggled, { ...none, policyScope: () => ['a2'] });
    expect(ev).toMatchObject({ kind: 'policy.changed', agents: ['a2'], data: { policy_id: 'p1', change: 'disabled', agent_ids: ['a2'] } });
  });
});

describe('eval.regression', () => {
  const submitted = (regressions: number) => ({
    event_id: 'e4',
    type: 'EvalRunSubmitted',
    stream_version: 1,
    global_position: 13n,
    recorded_at: '2026-11-29T10:03:00.000Z',
    metadata: meta,
    data: {
      id: 'run-2', organization_id: 'acme', suite: 's', agent_id: 'a1', branch: 'feature', commit_sha: 'abc', default_branch: 'main', source: 'agp', created_at: '2026-11-29T10:03:00.000Z', started_at: null, completed_at: null,
      summary: { total: 1, adversarial: 1, blocked: 0, passed: 0, block_rate: 0, correctness_rate: 0, damage_prevented_usd: 0, avg_detection_time_ms: null, grade: 'F', ci_status: 'fail', threshold: 0.9, ci_baseline_id: 'run-1', regressions, by_category: {} },
      scenarios: [],
    },
  });
  it('is sent for a run with regressions against its baseline, not for one without', () => {
    expect(webhookEventsOf(submitted(0), none)).toEqual([]);
    const [ev] = webhookEventsOf(submitted(2), none);
    expect(ev).toMatchObject({ kind: 'eval.regression', agents: ['a1'], data: { eval_run_id: 'run-2', baseline_id: 'run-1', regressions: 2, grade: 'F' } });
  });
});

describe('subscription filters', () => {
  const ev = { kind: 'approval.requested' as const, agents: ['a1'], intervention_type: 'approval_required' as const, risk_level: 'medium' as const };
  it('needs the kind, and each filter part to hold', () => {
    expect(subscriptionWants(['approval.requested'], null, ev)).toBe(true);
    expect(subscriptionWants(['approval.decided'], null, ev)).toBe(false);
    expect(subscriptionWants(['approval.requested'], { agent_ids: ['a2'] }, ev)).toBe(false);
    expect(subscriptionWants(['approval.requested'], { intervention_types: ['hard_block'] }, ev)).toBe(false);
    expect(subscriptionWants(['approval.requested'], { min_risk_level: 'high' }, ev)).toBe(false);
    expect(subscriptionWants(['approval.requested'], { min_risk_level: 'medium', agent_ids: ['a1'] }, ev)).toBe(true);
  });
  it('lets organisation-wide events through an agent filter, and holds only intervention events to type and risk', () => {
    const ks = { kind: 'kill_switch.changed' as const, agents: null, intervention_type: null, risk_level: null };
    expect(subscriptionWants(['kill_switch.changed'], { agent_ids: ['a1'], min_risk_level: 'critical', intervention_types: ['hard_block'] }, ks)).toBe(true);
  });
});
