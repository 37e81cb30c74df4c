import { describe, expect, it } from 'vitest';
import { INGEST_BODY_SCHEMAS, IngestEventSchema, type ReplayBundle } from '@agp/contracts';
import { ACTIONS } from './catalogue.js';
import { simulateFleetEvents, type FleetEvent } from './fleet.js';
import { createRng } from './prng.js';
import { replayBundle, toHandlerModule } from './replay/replay.js';

const FROM = Date.parse('2026-03-02T09:00:00Z');
const plan = { seed: 7, agents: 6, count: 4000, fromMs: FROM, toMs: FROM + 3_600_000 };
const events = [...simulateFleetEvents(plan)];
const ofType = <T extends FleetEvent['type']>(t: T) => events.filter((e): e is Extract<FleetEvent, { type: T }> => e.type === t);

describe('simulateFleetEvents', () => {
  it('yields exactly `count` events with unique ids, every body valid for its ingest type', () => {
    expect(events).toHaveLength(4000);
    expect(new Set(events.map((e) => e.id)).size).toBe(4000);
    for (const e of events) {
      expect(IngestEventSchema.safeParse(e).success, e.id).toBe(true);
      const parsed = INGEST_BODY_SCHEMAS[e.type].safeParse(e.body);
      expect(parsed.success, `${e.id} ${e.type}: ${parsed.error?.message}`).toBe(true);
    }
  });

  it('registers every agent first, with action definitions carrying a parameter schema, risk level and typical cost', () => {
    const regs = ofType('agent.register');
    expect(regs).toHaveLength(6);
    expect(events.slice(0, 6).every((e) => e.type === 'agent.register')).toBe(true);
    for (const r of regs) {
      expect(r.body.actions!.length).toBeGreaterThanOrEqual(4);
      for (const a of r.body.actions!) {
        expect(a.parameters).toMatchObject({ type: 'object', properties: expect.any(Object) });
        expect(a.risk_level).toBeDefined();
        expect(a.typical_cost_usd).toBeGreaterThan(0);
      }
    }
  });

  it('describes each action as what it does (the same for every agent), never one call; agents by what they do', () => {
    const described = new Map<string, Set<string>>();
    for (const r of ofType('agent.register')) {
      expect(r.body.description).toMatch(/^Simulated [a-zA-Z ]+: /);
      expect(r.body.description).not.toMatch(/\bagent agent\b/);
      for (const a of r.body.actions!) {
        expect(a.description).toBe(ACTIONS[a.name].summary);
        // No amount, order, id or command of a sampled call.
        expect(a.description, a.name).not.toMatch(/\$|\d|ord-|pay_|`/);
        (described.get(a.name) ?? described.set(a.name, new Set()).get(a.name)!).add(a.description!);
      }
    }
    for (const [name, descriptions] of described) expect(descriptions.size, name).toBe(1);
    expect(ofType('agent.register').find((r) => r.body.agent_id.startsWith('billing-agent'))!.body.description).toBe('Simulated billing agent: refunds, transfers and customer billing questions');
  });

  it('emits every fleet type, and each run starts before its actions and ends after them', () => {
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['agent.register', 'run.start', 'action.record', 'intervention.create', 'run.end']));
    const started = new Set<string>();
    const ended = new Set<string>();
    for (const e of events) {
      if (e.type === 'agent.register') continue;
      const runId = e.body.run_id!;
      if (e.type === 'run.start') {
        expect(started.has(runId)).toBe(false);
        started.add(runId);
      } else {
        expect(started.has(runId), `${e.type} before run.start of ${runId}`).toBe(true);
        expect(ended.has(runId), `${e.type} after run.end of ${runId}`).toBe(false);
        if (e.type === 'run.end') ended.add(runId);
      }
    }
    expect(ended.size).toBeGreaterThan(100);
    const ends = ofType('run.end');
    expect(ends.some((e) => e.body.status === 'failed')).toBe(true);
    expect(ends.filter((e) => e.body.status === 'completed').length).toBeGreaterThan(ends.length * 0.7);
  });

  it('records ledger entries with estimated costs, mostly-reported actual costs skewed per action, and durations', () => {
    const actions = ofType('action.record');
    expect(actions.length).toBeGreaterThan(2000);
    const withActual = actions.filter((a) => a.body.actual_cost_usd !== undefined);
    expect(withActual.length / actions.length).toBeGreaterThan(0.7);
    expect(withActual.length).toBeLessThan(actions.length);
    for (const a of actions) {
      expect(a.body.cost_usd).toBeGreaterThan(0);
      expect(a.body.duration_ms).toBeGreaterThanOrEqual(0);
    }
    const meanSkew = (name: string) => {
      const xs = withActual.filter((a) => a.body.action_name === name).map((a) => (a.body.actual_cost_usd! - a.body.cost_usd) / a.body.cost_usd);
      return xs.reduce((s, x) => s + x, 0) / xs.length;
    };
    // generate_report's estimator undercounts (bias 1.6); post_to_slack's slightly overcounts (0.9).
    expect(meanSkew('generate_report')).toBeGreaterThan(0.3);
    expect(meanSkew('post_to_slack')).toBeLessThan(0);
    expect(actions.some((a) => a.body.status === 'error')).toBe(true);
  });

  it('is deterministic for a seed and keeps timestamps in order', () => {
    expect([...simulateFleetEvents(plan)]).toEqual(events);
    expect([...simulateFleetEvents({ ...plan, seed: 8 })].map((e) => e.id)).not.toEqual(events.map((e) => e.id));
    const ts = events.map((e) => Date.parse(e.timestamp));
    expect(ts.every((t, i) => i === 0 || t >= ts[i - 1])).toBe(true);
  });
});

describe('simulated outputs replay with examples/replay-handlers.mjs', () => {
  it('every simulated action has a handler; each output is reproduced from the inputs, except generate_report (non-deterministic)', async () => {
    const mod = toHandlerModule(await import(new URL('../../../examples/replay-handlers.mjs', import.meta.url).href));
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
    expect(names).toEqual(new Set(Object.keys(ACTIONS)));
    for (const name of names) expect(Object.hasOwn(mod.handlers, name), name).toBe(true);
    const bundle = { run: { id: 'all', agent_id: 'x' }, actions } as unknown as ReplayBundle;
    const r = await replayBundle(bundle, mod);
    const reports = actions.filter((a) => a.action_name === 'generate_report').length;
    expect(reports).toBeGreaterThan(0);
    expect(actions.some((a) => a.status === 'error')).toBe(true);
    expect(r).toMatchObject({ actions_total: actions.length, actions_replayed: actions.length - reports, skipped_nondeterministic: reports, skipped_no_handler: 0, divergences: 0, status: 'completed' });
    // Only generate_report's catalogue output draws from the generator: the same inputs give another output.
    for (const spec of Object.values(ACTIONS)) {
      const inputs = spec.inputs(createRng(1), spec.cost.median);
      const same = JSON.stringify(spec.output(inputs, createRng(2))) === JSON.stringify(spec.output(inputs, createRng(3)));
      expect(same, spec.name).toBe(!spec.nondeterministicOutput);
      expect(spec.nondeterministicOutput === true, spec.name).toBe(spec.name === 'generate_report');
    }
  });
});
