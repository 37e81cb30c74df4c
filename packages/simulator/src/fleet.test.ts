import { describe, expect, it } from 'vitest';
import { INGEST_BODY_SCHEMAS, IngestEventSchema } from '@agp/contracts';
import { ACTIONS } from './catalogue.js';
import { simulateFleetEvents, type FleetEvent } from './fleet.js';
import { createRng } from './prng.js';

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

describe('the catalogue of simulated actions', () => {
  it('only generate_report draws its output from the generator: the same inputs give another output', () => {
    for (const spec of Object.values(ACTIONS)) {
      const inputs = spec.inputs(createRng(1), spec.cost.median);
      const same = JSON.stringify(spec.output(inputs, createRng(2))) === JSON.stringify(spec.output(inputs, createRng(3)));
      expect(same, spec.name).toBe(!spec.nondeterministicOutput);
      expect(spec.nondeterministicOutput === true, spec.name).toBe(spec.name === 'generate_report');
    }
  });
});
