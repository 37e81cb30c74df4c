/**
 * What the policies decide of an action by its name alone (`deniedByName`, `standingByName`): deny and allow lists,
 * approval-required actions, disabled policies, the oldest deciding policy named, and agreement with `decide` for the
 * same action without arguments or spend. No I/O.
 */
import { describe, expect, it } from 'vitest';
import { decide, deniedByName, enginePolicy, NO_KILL_SWITCHES, standingByName, type EnginePolicy } from '../src/index.js';

const pol = (n: number, s: Partial<EnginePolicy>): EnginePolicy => enginePolicy(`p-${n}`, `2026-11-0${n}T00:00:00.000Z`, { name: `policy ${n}`, ...s });

describe('standingByName', () => {
  const policies = [
    pol(3, { approval_required_actions: ['gh.merge', 'gh.delete'] }),
    pol(2, { denied_actions: ['gh.delete'] }),
    pol(1, { approval_required_actions: ['gh.merge'] }),
    pol(4, { enabled: false, denied_actions: ['gh.read'] }),
  ];

  it('denied beats escalates; the oldest deciding policy is named; a disabled policy decides nothing', () => {
    expect(standingByName(policies, 'gh.delete')).toEqual({ decision: 'denied', policy: { id: 'p-2', name: 'policy 2' } });
    expect(standingByName(policies, 'gh.merge')).toEqual({ decision: 'escalates', policy: { id: 'p-1', name: 'policy 1' } });
    expect(standingByName(policies, 'gh.read')).toEqual({ decision: 'allowed', policy: null });
    expect(deniedByName(policies, 'gh.delete')).toBe(true);
    expect(deniedByName(policies, 'gh.read')).toBe(false);
  });

  it('an allow list denies every action it does not name', () => {
    const listed = [pol(1, { allowed_actions: ['gh.read'] })];
    expect(standingByName(listed, 'gh.read').decision).toBe('allowed');
    expect(standingByName(listed, 'gh.write')).toEqual({ decision: 'denied', policy: { id: 'p-1', name: 'policy 1' } });
    expect(deniedByName(listed, 'gh.write')).toBe(true);
    expect(standingByName([], 'gh.write')).toEqual({ decision: 'allowed', policy: null });
  });

  it('agrees with decide for an action without arguments or spend', () => {
    const expected = { denied: 'block', escalates: 'escalate', allowed: 'allow' } as const;
    for (const name of ['gh.delete', 'gh.merge', 'gh.read']) {
      const d = decide(policies, NO_KILL_SWITCHES, { agent_id: 'a-1', action_name: name }, { now: Date.parse('2026-11-29T00:00:00Z') });
      const s = standingByName(policies, name);
      expect(d.decision).toBe(expected[s.decision]);
      expect(d.policy_id).toBe(s.policy?.id ?? null);
    }
  });
});
