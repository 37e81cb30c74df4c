import { describe, expect, it } from 'vitest';
import type { ReplayBundle } from '@agp/contracts';
import { SIMULATED_ACTIONS, simulateFleetEvents, type FleetEvent } from '@agp/simulator';
import { replayBundle, toHandlerModule } from './replay.js';

// `agp replay` against what `agp simulate` records: the simulator's catalogue and the example handlers stay in step.
const FROM = Date.parse('2026-03-02T09:00:00Z');
const events = [...simulateFleetEvents({ seed: 7, agents: 6, count: 4000, fromMs: FROM, toMs: FROM + 3_600_000 })];
const ofType = <T extends FleetEvent['type']>(t: T) => events.filter((e): e is Extract<FleetEvent, { type: T }> => e.type === t);

describe('simulated outputs replay with examples/replay-handlers.mjs', () => {
  it('every simulated action has a handler; each output is reproduced from the inputs, except generate_report (non-deterministic)', async () => {
    const mod = toHandlerModule(await import(new URL('../../../../examples/replay-handlers.mjs', import.meta.url).href));
    const records = ofType('action.record');
    // The bundle carries what the ledger stored: inputs and outputs as JSON.
    const actions = records.map((e, i) => ({
      id: `a${i}`,
      run_id: e.body.run_id,
      agent_id: e.body.agent_id,
      action_name: e.body.action_name,
      status: e.body.status,
      timestamp: e.timestamp,
      cost_usd: e.body.cost_usd,
      actual_cost_usd: e.body.actual_cost_usd ?? null,
      duration_ms: e.body.duration_ms,
      inputs: JSON.parse(JSON.stringify(e.body.inputs)) as Record<string, unknown>,
      outputs: JSON.parse(JSON.stringify(e.body.outputs ?? null)) as unknown,
      error: e.body.error ?? null,
    }));
    const names = new Set(actions.map((a) => a.action_name));
    expect(names).toEqual(new Set(Object.keys(SIMULATED_ACTIONS)));
    for (const name of names) expect(Object.hasOwn(mod.handlers, name), name).toBe(true);
    const bundle = { run: { id: 'all', agent_id: 'x' }, actions } as unknown as ReplayBundle;
    const r = await replayBundle(bundle, mod);
    const reports = actions.filter((a) => a.action_name === 'generate_report').length;
    expect(reports).toBeGreaterThan(0);
    expect(actions.some((a) => a.status === 'error')).toBe(true);
    expect(r).toMatchObject({ actions_total: actions.length, actions_replayed: actions.length - reports, skipped_nondeterministic: reports, skipped_no_handler: 0, divergences: 0, status: 'completed' });
  });
});
