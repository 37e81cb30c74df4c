import { describe, expect, it } from 'vitest';
import { KillSwitchEvents } from '@agp/contracts';
import { decideKillSwitch, evolveKillSwitch, initialKillSwitch } from './killswitch.js';

const T0 = '2026-11-22T10:00:00.000Z';
const stored = (d: { type: string; data: object }, v: number, actor: string, actorName?: string) => ({ type: d.type, data: d.data as Record<string, unknown>, stream_version: v, metadata: { organization_id: 'acme', actor, ...(actorName ? { actor_name: actorName } : {}), schema_version: 1 } });

describe('decideKillSwitch', () => {
  it('engages with the reason and records the actor with the name it had (from the event metadata)', () => {
    const s0 = initialKillSwitch('agent', 'bot');
    const d = decideKillSwitch(s0, { engaged: true, reason: 'runaway spend' }, T0)!;
    expect(d).toEqual({ type: KillSwitchEvents.Engaged, data: { scope: 'agent', agent_id: 'bot', reason: 'runaway spend', at: T0 } });
    expect(evolveKillSwitch(s0, stored(d, 1, 'key:k1', 'on-call bot'))).toEqual({ scope: 'agent', agent_id: 'bot', engaged: true, reason: 'runaway spend', changed_at: T0, changed_by: 'key:k1', actor_name: 'on-call bot', version: 1 });
    // An event appended before names were recorded (or by a key without one) has no name.
    expect(evolveKillSwitch(s0, stored(d, 1, 'key:k1')).actor_name).toBeNull();
  });
  it('releases an engaged switch and ignores a PUT of the state it already has', () => {
    const s0 = initialKillSwitch('organization', null);
    expect(decideKillSwitch(s0, { engaged: false }, T0)).toBeNull();
    const s1 = evolveKillSwitch(s0, stored(decideKillSwitch(s0, { engaged: true }, T0)!, 1, 'key:k1'));
    expect(decideKillSwitch(s1, { engaged: true, reason: 'again' }, T0)).toBeNull();
    const d = decideKillSwitch(s1, { engaged: false, reason: 'fixed' }, T0)!;
    expect(d.type).toBe(KillSwitchEvents.Released);
    expect(evolveKillSwitch(s1, stored(d, 2, 'key:k2'))).toMatchObject({ engaged: false, reason: 'fixed', changed_by: 'key:k2', version: 2 });
  });
});
