import { describe, expect, it } from 'vitest';
import { concerns, feedEventOf } from './governance-feed.js';

/** A row as the feed's SQL returns it. */
const row = (over: Record<string, unknown>) =>
  ({ position: '42', organization_id: 'acme', actor: 'key:k1', stream_version: 1, recorded_at: '2026-11-25T10:00:00.000Z', approval_agent: null, policy_scope: null, ...over }) as never;

/** The governance feed's translation of event-store rows into push-channel events, and who they concern. */
describe('governance feed events', () => {
  it('a policy moved from agent a to b concerns both; one scoped to every agent concerns every agent', () => {
    const moved = feedEventOf(row({ event_type: 'PolicyUpdated', stream_version: 3, data: { id: 'p1', at: 't', changes: { agent_ids: { from: ['a'], to: ['b'] } } }, policy_scope: ['b'] }))!;
    expect(moved).toMatchObject({ event: 'policy.changed', agents: ['a', 'b'], data: { policy_id: 'p1', version: 3, change: 'updated', fields: ['agent_ids'], agent_ids: ['b'] } });
    expect(concerns(moved, { organization_id: 'acme', agent_id: 'a' })).toBe(true);
    expect(concerns(moved, { organization_id: 'acme', agent_id: 'c' })).toBe(false);
    expect(concerns(moved, { organization_id: 'globex', agent_id: 'a' })).toBe(false);
    const everyone = feedEventOf(row({ event_type: 'PolicyDisabled', data: { id: 'p2', at: 't' }, policy_scope: [] }))!;
    expect(everyone).toMatchObject({ agents: null, data: { change: 'disabled', fields: [] } });
    // Narrowed from every agent to one: every agent hears of it (it stopped applying to the others).
    expect(feedEventOf(row({ event_type: 'PolicyUpdated', data: { id: 'p3', at: 't', changes: { agent_ids: { from: [], to: ['a'] } } }, policy_scope: ['a'] }))!.agents).toBeNull();
  });

  it('the organisation kill switch concerns every agent, an agent switch its agent', () => {
    expect(feedEventOf(row({ event_type: 'KillSwitchEngaged', data: { scope: 'organization', agent_id: null, reason: 'x', at: 't' } }))).toMatchObject({ agents: null, data: { engaged: true, changed_by: 'key:k1' } });
    expect(feedEventOf(row({ event_type: 'KillSwitchReleased', data: { scope: 'agent', agent_id: 'a', reason: null, at: 't' } }))).toMatchObject({ agents: ['a'], data: { engaged: false } });
  });

  it('only an outcome change from escalated is an approval decision; the expiry reason makes it expired', () => {
    expect(feedEventOf(row({ event_type: 'InterventionOutcomeChanged', data: { id: 'i1', from: 'blocked', to: 'overridden' } }))).toBeNull();
    const expired = feedEventOf(row({ event_type: 'InterventionOutcomeChanged', approval_agent: 'a', actor: 'system', data: { id: 'i1', from: 'escalated', to: 'rejected_after_review', reason: 'expired' } }))!;
    expect(expired).toMatchObject({ event: 'approval.decided', agents: ['a'], data: { approval_id: 'apr-i1', status: 'expired', decided_by: 'system', notes: null } });
    expect(feedEventOf(row({ event_type: 'InterventionOutcomeChanged', approval_agent: 'a', data: { id: 'i2', from: 'escalated', to: 'rejected_after_review' } }))!.data.status).toBe('rejected');
  });
});
