import { describe, expect, it } from 'vitest';
import { governanceFeedEventOf, governanceFeedNeedsStream, type GovernanceSourceEvent } from './governance-feed.js';

/** A stored event of organisation `acme` at position 42, version 1, acting key `key:k1`. */
const ev = (type: string, data: unknown, over: Partial<GovernanceSourceEvent> = {}): GovernanceSourceEvent => ({
  type,
  data,
  stream_version: 1,
  global_position: 42n,
  recorded_at: '2026-11-25T10:00:00.000Z',
  metadata: { organization_id: 'acme', actor: 'key:k1' },
  ...over,
});
const created = (agent_ids: string[]) => ev('PolicyCreated', { id: 'p1', at: 't0', name: 'n', agent_ids });

/** The push channel's mapping of stored events to feed events, and the agents each concerns. */
describe('governance feed mapping', () => {
  it('a policy moved from agent a to b concerns both, with its scope after the move and its fields', () => {
    const moved = ev('PolicyUpdated', { id: 'p1', at: 't1', changes: { agent_ids: { from: ['a'], to: ['b'] } } }, { stream_version: 3, global_position: 50n });
    expect(governanceFeedNeedsStream(moved)).toBe(true);
    expect(governanceFeedEventOf(moved, [created(['a'])])).toEqual({
      position: 50n,
      organization_id: 'acme',
      event: 'policy.changed',
      agents: ['a', 'b'],
      data: { policy_id: 'p1', version: 3, change: 'updated', fields: ['agent_ids'], agent_ids: ['b'], actor: 'key:k1', at: 't1' },
    });
  });

  it("a toggle reads the scope from its stream as of the toggle; an empty scope concerns every agent", () => {
    const disabled = ev('PolicyDisabled', { id: 'p1', at: 't2' }, { stream_version: 2 });
    // A later update of the scope does not count for the toggle before it.
    const later = ev('PolicyUpdated', { id: 'p1', at: 't3', changes: { agent_ids: { from: ['a'], to: [] } } }, { stream_version: 3 });
    expect(governanceFeedEventOf(disabled, [later, created(['a']), disabled])).toMatchObject({ agents: ['a'], data: { change: 'disabled', fields: [], agent_ids: ['a'] } });
    expect(governanceFeedEventOf(ev('PolicyEnabled', { id: 'p2', at: 't' }, { stream_version: 2 }), [ev('PolicyCreated', { id: 'p2', at: 't', agent_ids: [] })])!.agents).toBeNull();
    // A policy created reads its scope from its own data.
    expect(governanceFeedEventOf(created(['c']), [])).toMatchObject({ agents: ['c'], data: { change: 'created', version: 1, agent_ids: ['c'] } });
  });

  it('narrowed from every agent to one: every agent hears of it (it stopped applying to the others)', () => {
    const narrowed = ev('PolicyUpdated', { id: 'p3', at: 't', changes: { agent_ids: { from: [], to: ['a'] } } }, { stream_version: 2 });
    expect(governanceFeedEventOf(narrowed, [created([])])!.agents).toBeNull();
  });

  it('the organisation kill switch concerns every agent, an agent switch its agent; no stream is needed', () => {
    const org = ev('KillSwitchEngaged', { scope: 'organization', agent_id: null, reason: 'x', at: 't' });
    expect(governanceFeedNeedsStream(org)).toBe(false);
    expect(governanceFeedEventOf(org, [])).toMatchObject({ event: 'kill_switch.changed', agents: null, data: { engaged: true, changed_by: 'key:k1', reason: 'x' } });
    expect(governanceFeedEventOf(ev('KillSwitchReleased', { scope: 'agent', agent_id: 'a', reason: null, at: 't' }), [])).toMatchObject({ agents: ['a'], data: { engaged: false, agent_id: 'a' } });
  });

  it('only an outcome change from escalated is an approval decision, under the approval id; the expiry reason makes it expired', () => {
    const recorded = ev('InterventionRecorded', { id: 'i1', agent_id: 'a' });
    const overridden = ev('InterventionOutcomeChanged', { id: 'i1', from: 'blocked', to: 'overridden' }, { stream_version: 2 });
    expect(governanceFeedNeedsStream(overridden)).toBe(false);
    expect(governanceFeedEventOf(overridden, [recorded])).toBeNull();
    const expired = ev('InterventionOutcomeChanged', { id: 'i1', from: 'escalated', to: 'rejected_after_review', reason: 'expired' }, { stream_version: 2, metadata: { organization_id: 'acme' } });
    expect(governanceFeedNeedsStream(expired)).toBe(true);
    expect(governanceFeedEventOf(expired, [recorded, expired])).toEqual({
      position: 42n,
      organization_id: 'acme',
      event: 'approval.decided',
      agents: ['a'],
      data: { approval_id: 'apr-i1', intervention_id: 'i1', agent_id: 'a', status: 'expired', decided_by: 'system', notes: null, at: '2026-11-25T10:00:00.000Z' },
    });
    const approved = ev('InterventionOutcomeChanged', { id: 'i1', from: 'escalated', to: 'approved_after_review', notes: 'ok' }, { stream_version: 2 });
    expect(governanceFeedEventOf(approved, [recorded])!.data).toMatchObject({ status: 'approved', notes: 'ok' });
    expect(governanceFeedEventOf(ev('InterventionOutcomeChanged', { id: 'i1', from: 'escalated', to: 'rejected_after_review' }, { stream_version: 2 }), [recorded])!.data).toMatchObject({ status: 'rejected' });
  });

  it('maps nothing for other event types, data that does not match its schema, or a decision whose intervention is not in the stream', () => {
    expect(governanceFeedEventOf(ev('InterventionRecorded', { id: 'i1', agent_id: 'a' }), [])).toBeNull();
    expect(governanceFeedEventOf(ev('KillSwitchEngaged', { scope: 'galaxy', agent_id: null, reason: null, at: 't' }), [])).toBeNull();
    expect(governanceFeedEventOf(ev('KillSwitchEngaged', { scope: 'agent', agent_id: null, reason: null, at: 't' }), [])).toBeNull();
    expect(governanceFeedEventOf(ev('PolicyUpdated', { id: 'p1', changes: {} }), [])).toBeNull();
    expect(governanceFeedEventOf(ev('InterventionOutcomeChanged', { id: 'i1', from: 'escalated', to: 'approved_after_review' }, { stream_version: 2 }), [])).toBeNull();
  });
});
