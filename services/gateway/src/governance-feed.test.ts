import { governanceFeedEventOf } from '@agp/contracts';
import { describe, expect, it } from 'vitest';
import { concerns } from './governance-feed.js';

const meta = { organization_id: 'acme', actor: 'key:k1' };
const at = { global_position: 42n, recorded_at: '2026-11-25T10:00:00.000Z', metadata: meta };

/** Who a feed event reaches: its organisation's streams of the agents it concerns. */
describe('governance feed fan-out', () => {
  it('a policy moved from agent a to b reaches a and b of its organisation only', () => {
    const moved = governanceFeedEventOf(
      { ...at, type: 'PolicyUpdated', stream_version: 2, data: { id: 'p1', at: 't', changes: { agent_ids: { from: ['a'], to: ['b'] } } } },
      [{ ...at, type: 'PolicyCreated', stream_version: 1, data: { id: 'p1', at: 't', agent_ids: ['a'] } }],
    )!;
    expect(concerns(moved, { organization_id: 'acme', agent_id: 'a' })).toBe(true);
    expect(concerns(moved, { organization_id: 'acme', agent_id: 'b' })).toBe(true);
    expect(concerns(moved, { organization_id: 'acme', agent_id: 'c' })).toBe(false);
    expect(concerns(moved, { organization_id: 'globex', agent_id: 'a' })).toBe(false);
  });

  it('the organisation kill switch reaches every agent of its organisation', () => {
    const org = governanceFeedEventOf({ ...at, type: 'KillSwitchEngaged', stream_version: 1, data: { scope: 'organization', agent_id: null, reason: null, at: 't' } }, [])!;
    expect(concerns(org, { organization_id: 'acme', agent_id: 'anyone' })).toBe(true);
    expect(concerns(org, { organization_id: 'globex', agent_id: 'anyone' })).toBe(false);
  });
});
