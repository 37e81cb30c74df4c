import { describe, expect, it } from 'vitest';
import { AgentEvents, AgentRegisterSchema } from '@agp/contracts';
import { agentStream, decideRegister, foldAgent } from './agent.js';

const T0 = '2026-11-22T10:00:00.000Z';
const T1 = '2026-11-22T11:00:00.000Z';
const body = AgentRegisterSchema.parse({ agent_id: 'billing-bot', name: 'Billing', actions: [{ name: 'refund', risk_level: 'high', typical_cost_usd: 0.02, parameters: { type: 'object' } }] });
const stored = (d: { type: string; data: object }, v: number) => ({ type: d.type, data: d.data as Record<string, unknown>, stream_version: v, metadata: { organization_id: 'acme', actor: 'key:k1', schema_version: 1 } });

describe('decideRegister', () => {
  it('registers a new agent with its normalised definition', () => {
    const d = decideRegister(null, body, T0)!;
    expect(d.type).toBe(AgentEvents.Registered);
    expect(foldAgent([stored(d, 1)])).toEqual({
      agent_id: 'billing-bot', organization_id: 'acme', name: 'Billing', description: null, framework: null, owner: null, metadata: {},
      actions: [{ name: 'refund', description: null, parameters: { type: 'object' }, risk_level: 'high', typical_cost_usd: 0.02 }],
      registered_at: T0, updated_at: T0, version: 1, changed_by: 'key:k1', changed_by_name: null,
    });
  });
  it('appends nothing for an identical re-registration', () => {
    const state = foldAgent([stored(decideRegister(null, body, T0)!, 1)]);
    expect(decideRegister(state, AgentRegisterSchema.parse({ ...body }), T1)).toBeNull();
  });
  it('updates only the changed fields; a re-registration replaces the definition', () => {
    const state = foldAgent([stored(decideRegister(null, body, T0)!, 1)]);
    const d = decideRegister(state, AgentRegisterSchema.parse({ agent_id: 'billing-bot', owner: 'ops', actions: [] }), T1)!;
    expect(d).toEqual({
      type: AgentEvents.Updated,
      data: { agent_id: 'billing-bot', at: T1, changes: { name: { from: 'Billing', to: null }, owner: { from: null, to: 'ops' }, actions: { from: state!.actions, to: [] } } },
    });
    expect(foldAgent([stored(decideRegister(null, body, T0)!, 1), stored(d, 2)])).toMatchObject({ owner: 'ops', name: null, actions: [], version: 2, registered_at: T0, updated_at: T1 });
  });
  it('names the stream per organisation', () => {
    expect(agentStream('acme', 'a')).not.toBe(agentStream('globex', 'a'));
    expect(agentStream('acme', 'a')).toMatch(/^agent-[0-9a-f-]{36}$/);
  });
});
