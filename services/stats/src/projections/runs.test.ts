import { describe, expect, it } from 'vitest';
import { RunEvents } from '@agp/contracts';
import { skewBucket, skewBucketIndex } from '@agp/contracts';
import { StatsDeltas, evolveRun, fineBucket, runEventRejection, runTs, skewOf } from './runs.js';
import { csvField } from '../queries.js';

const meta = { organization_id: 'acme' };
const started = (at: string) => ({ type: RunEvents.Started, data: { run_id: 'r', agent_id: 'a', started_at: at }, metadata: meta });
const ended = (status: string, at: string) => ({ type: RunEvents.Ended, data: { run_id: 'r', agent_id: 'a', status, ended_at: at }, metadata: meta });
const action = (at: string, cost?: number, actual?: number) => ({
  type: RunEvents.ActionRecorded,
  data: { id: 'x', run_id: 'r', agent_id: 'a', action_name: 'n', status: 'success', timestamp: at, cost_usd: cost, ...(actual === undefined ? {} : { actual_cost_usd: actual }) },
  metadata: meta,
});
const fold = (events: ReturnType<typeof action>[]) => events.reduce<ReturnType<typeof evolveRun> | null>((r, e) => evolveRun(r, e), null)!;

describe('evolveRun', () => {
  it('runs from running to completed, summing its actions', () => {
    let r = evolveRun(null, started('2026-01-02T00:00:00.000Z'));
    expect(r.status).toBe('running');
    r = evolveRun(r, action('2026-01-02T00:00:01.000Z', 1.5));
    r = evolveRun(r, action('2026-01-02T00:00:02.000Z', 2));
    r = evolveRun(r, ended('completed', '2026-01-02T00:01:00.000Z'));
    expect(r).toMatchObject({ status: 'completed', cost_usd: 3.5, action_count: 2, started_at: '2026-01-02T00:00:00.000Z' });
  });

  it('keeps a consistent row when run.end and an action come before run.start, and moves its day to the start', () => {
    let r = evolveRun(null, action('2026-01-03T00:00:00.000Z', 1));
    expect(runTs(r)).toBe('2026-01-03T00:00:00.000Z');
    r = evolveRun(r, ended('failed', '2026-01-03T01:00:00.000Z'));
    expect(r).toMatchObject({ status: 'failed', started_at: null, cost_usd: 1 });
    r = evolveRun(r, started('2026-01-02T23:00:00.000Z'));
    expect(runTs(r)).toBe('2026-01-02T23:00:00.000Z');
    expect(r.status).toBe('failed');
  });
});

describe('run cost: a blocked action spends nothing', () => {
  const blocked = (at: string) => {
    const e = action(at, 0.02, 0.02);
    return { ...e, data: { ...e.data, action_name: 'delete_db', status: 'blocked' } };
  };
  it('counts the blocked action but not its cost in the run row and every aggregate', () => {
    const events = [action('2026-01-02T00:00:01.000Z', 0.02), action('2026-01-02T00:00:02.000Z', 0.02, 0.02), blocked('2026-01-02T00:00:03.000Z')];
    const r = fold(events);
    expect(r).toMatchObject({ action_count: 3, estimated_cost_usd: 0.04, actual_cost_usd: 0.02 });
    expect(r.cost_usd).toBeCloseTo(0.04, 12);
    const d = new StatsDeltas();
    for (const e of events) d.action('acme', 'production', e.data as never);
    const [day] = [...d.daily.values()];
    expect(day.t).toMatchObject({ actions: 3, estimated: 0.04, actual: 0.02 });
    expect(day.t.cost).toBeCloseTo(0.04, 12);
    expect(d.agentActions.get('acme\u0000production\u0000a\u0000delete_db')).toMatchObject({ n: 1, cost: 0, estimated: 0 });
  });
});

describe('run cost: per action the actual cost where reported, else the estimate', () => {
  const at = (i: number) => `2026-01-02T00:00:0${i}.000Z`;
  it('a run estimated at 1 USD per action that cost 2 each costs 2×n, with n as estimated_cost_usd', () => {
    const n = 4;
    const r = fold(Array.from({ length: n }, (_, i) => action(at(i), 1, 2)));
    expect(r).toMatchObject({ cost_usd: 2 * n, estimated_cost_usd: n, actual_cost_usd: 2 * n, action_count: n });
  });
  it('actions with only an estimate cost their estimate', () => {
    expect(fold([action(at(0), 0.5), action(at(1), 0.25)])).toMatchObject({ cost_usd: 0.75, estimated_cost_usd: 0.75, actual_cost_usd: 0 });
  });
  it('a mix: actual where reported (also without an estimate, and an actual of 0), the estimate elsewhere, nothing when neither', () => {
    const r = fold([action(at(0), 1, 2), action(at(1), 1), action(at(2), undefined, 3), action(at(3), 5, 0), action(at(4))]);
    expect(r).toMatchObject({ cost_usd: 2 + 1 + 3 + 0 + 0, estimated_cost_usd: 1 + 1 + 5, actual_cost_usd: 2 + 3 + 0, action_count: 5 });
  });
  it('the aggregate deltas (day, agent, agent and action) carry the same three sums', () => {
    const d = new StatsDeltas();
    for (const e of [action(at(0), 1, 2), action(at(1), 1), action(at(2), undefined, 3)]) d.action('acme', 'production', e.data as never);
    for (const t of [d.daily.get('acme\u0000production\u00002026-01-02')!.t, d.agents.get('acme\u0000production\u0000a')!.t]) expect(t).toMatchObject({ actions: 3, cost: 6, estimated: 2, actual: 5 });
    expect(d.agentActions.get('acme\u0000production\u0000a\u0000n')).toMatchObject({ n: 3, cost: 6, estimated: 2 });
  });
});

describe('StatsDeltas.run', () => {
  it('subtracting the old contribution and adding the new one moves a run between days and statuses without double counting', () => {
    const before = evolveRun(null, action('2026-01-03T00:00:00.000Z'));
    const after = evolveRun(evolveRun(before, started('2026-01-02T23:00:00.000Z')), ended('completed', '2026-01-03T01:00:00.000Z'));
    const d = new StatsDeltas();
    d.run(before, -1);
    d.run(after, 1);
    expect(d.daily.get('acme\u0000production\u00002026-01-03')!.t).toMatchObject({ runs: -1, running: -1 });
    expect(d.daily.get('acme\u0000production\u00002026-01-02')!.t).toMatchObject({ runs: 1, completed: 1 });
    expect(d.agents.get('acme\u0000production\u0000a')!.t).toMatchObject({ runs: 0, running: -1, completed: 1 });
  });
});

describe('a run’s purpose', () => {
  const ev = (type: string, run: string, extra: Record<string, unknown> = {}) => ({
    type,
    data: { run_id: run, agent_id: 'a', started_at: '2026-01-02T00:00:00.000Z', ended_at: '2026-01-02T00:01:00.000Z', status: 'completed', id: 'x', action_name: 'n', timestamp: '2026-01-02T00:00:01.000Z', ...extra },
    metadata: meta,
  });
  it('is fixed by its first event: the stated purpose, else eval for the eval harness’s run ids, else production', () => {
    expect(evolveRun(null, ev(RunEvents.Started, 'r', { purpose: 'eval' })).purpose).toBe('eval');
    expect(evolveRun(null, ev(RunEvents.ActionRecorded, 'r', { purpose: 'eval' })).purpose).toBe('eval');
    expect(evolveRun(null, ev(RunEvents.Started, 'r')).purpose).toBe('production');
    expect(evolveRun(null, ev(RunEvents.Started, 'eval-denied_actions.delete-0123456789ab')).purpose).toBe('eval');
    expect(evolveRun(null, ev(RunEvents.Started, 'eval-denied_actions.delete-0123456789ab', { purpose: 'production' })).purpose).toBe('production');
    // Later events follow the run, whatever they state.
    const r = evolveRun(evolveRun(null, ev(RunEvents.Started, 'r', { purpose: 'eval' })), ev(RunEvents.ActionRecorded, 'r'));
    expect(r).toMatchObject({ purpose: 'eval', action_count: 1 });
  });
  it('a run.start or run.end stating another purpose is refused; one stating none or the same is applied', () => {
    const run = evolveRun(null, ev(RunEvents.ActionRecorded, 'r', { purpose: 'eval' }));
    expect(runEventRejection(run, ev(RunEvents.Started, 'r', { purpose: 'production' }))).toBe('run.start states purpose production, but run r has purpose eval');
    expect(runEventRejection(run, ev(RunEvents.Ended, 'r', { purpose: 'production' }))).toMatch(/^run.end states purpose production/);
    expect(runEventRejection(run, ev(RunEvents.Ended, 'r'))).toBeNull();
    expect(runEventRejection(run, ev(RunEvents.Started, 'r', { purpose: 'eval' }))).toBeNull();
  });
  it('the deltas keep each purpose on rows of its own; a negative action delta undoes a positive one', () => {
    const d = new StatsDeltas();
    const a = ev(RunEvents.ActionRecorded, 'r', { cost_usd: 1, actual_cost_usd: 2, duration_ms: 5 }).data as never;
    d.action('acme', 'eval', a);
    d.action('acme', 'production', a);
    d.action('acme', 'production', a, -1);
    expect(d.daily.get('acme\u0000eval\u00002026-01-02')!.t).toMatchObject({ actions: 1, cost: 2, estimated: 1, actual: 2, dur: 5, durN: 1 });
    expect(d.daily.get('acme\u0000production\u00002026-01-02')!.t).toMatchObject({ actions: 0, cost: 0, estimated: 0, actual: 0, dur: 0, durN: 0 });
    expect(d.skewActions.get('acme\u0000production\u0000n')).toMatchObject({ n: 0, sum: 0, b: [0, 0, 0, 0, 0, 0] });
    expect(d.skewActions.get('acme\u0000eval\u0000n')).toMatchObject({ n: 1, sum: 1, b: [0, 0, 0, 0, 1, 0] });
  });
});

describe('skew', () => {
  it('is (actual − estimated) ÷ estimated, null without an estimate > 0 or an actual cost', () => {
    expect(skewOf({ cost_usd: 1, actual_cost_usd: 1.2 })).toBe(0.2);
    expect(skewOf({ cost_usd: 0, actual_cost_usd: 1 })).toBeNull();
    // A near-zero estimate cannot make the skew infinite (the sums would overflow float8 in PostgreSQL).
    expect(skewOf({ cost_usd: 1e-320, actual_cost_usd: 1 })).toBe(1e6);
    expect(skewOf({ cost_usd: 1 })).toBeNull();
  });

  it('falls into the six fixed buckets at their documented bounds', () => {
    expect([-0.5, -0.49, -0.1, 0.1, 0.11, 0.5, 1, 1.01].map(skewBucketIndex)).toEqual([0, 1, 2, 2, 3, 3, 4, 5]);
    expect(skewBucket(0.3)).toBe('10%..50%');
  });

  it('uses 1-point fine buckets, clamped to -100..1000', () => {
    expect([0.2, 0.29, -1, -0.005, 25].map(fineBucket)).toEqual([20, 29, -100, -1, 1000]);
  });
});

describe('csvField', () => {
  it('quotes fields with commas, quotes or line breaks and doubles quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"\n')).toBe('"say ""hi""\n"');
    expect(csvField(null)).toBe('');
    expect(csvField(2.5)).toBe('2.5');
  });

  it('neutralises text cells a spreadsheet would read as a formula (OWASP): quote prefix, quoted; numbers stay numbers', () => {
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    for (const c of ['+', '-', '@', '\t', '\r']) expect(csvField(`${c}cmd`)).toBe(`"'${c}cmd"`);
    expect(csvField('-5')).toBe('"\'-5"');
    expect(csvField(-5)).toBe('-5');
    expect(csvField('a=b')).toBe('a=b');
  });
});

describe('runEventRejection', () => {
  const meta = { organization_id: 'o' };
  const start = (agent: string, at: string) => ({ type: RunEvents.Started, data: { run_id: 'r', agent_id: agent, started_at: at }, metadata: meta });
  const end = (agent: string, at: string) => ({ type: RunEvents.Ended, data: { run_id: 'r', agent_id: agent, status: 'completed', ended_at: at }, metadata: meta });

  it('refuses another agent, an end before the start and a start after the end, whichever arrived first; never a negative duration', () => {
    const started = evolveRun(null, start('a', '2030-01-01T10:00:00.000Z'));
    expect(runEventRejection(started, start('b', '2030-01-01T10:00:00.000Z'))).toBe('run.start names agent b, but run r belongs to agent a');
    expect(runEventRejection(started, end('b', '2030-01-01T11:00:00.000Z'))).toMatch(/^run.end names agent b/);
    expect(runEventRejection(started, end('a', '2030-01-01T09:00:00.000Z'))).toBe("run.end ended_at 2030-01-01T09:00:00.000Z is before the run's started_at 2030-01-01T10:00:00.000Z");
    expect(runEventRejection(started, end('a', '2030-01-01T10:00:00.000Z'))).toBeNull();
    const endedFirst = evolveRun(null, end('a', '1001-01-01T00:00:00.000Z'));
    expect(runEventRejection(endedFirst, start('a', '9999-01-01T00:00:00.000Z'))).toBe("run.start started_at 9999-01-01T00:00:00.000Z is after the run's ended_at 1001-01-01T00:00:00.000Z");
    expect(runEventRejection(endedFirst, start('a', '1000-06-01T00:00:00.000Z'))).toBeNull();
    expect(runEventRejection(null, start('b', '2030-01-01T10:00:00.000Z'))).toBeNull();
  });

  it("refuses an action naming another agent than its run's, and only for that", () => {
    const act = (agent: string) => ({ type: RunEvents.ActionRecorded, data: { id: 'x', run_id: 'r', agent_id: agent, action_name: 'a', status: 'success', timestamp: '2030-01-01T12:00:00.000Z' }, metadata: meta });
    const started = evolveRun(null, start('a', '2030-01-01T10:00:00.000Z'));
    expect(runEventRejection(started, act('b'))).toBe('action.record names agent b, but run r belongs to agent a');
    expect(runEventRejection(started, act('a'))).toBeNull();
    // An action before its run's start makes the run its agent's.
    expect(runEventRejection(evolveRun(null, act('b')), start('a', '2030-01-01T10:00:00.000Z'))).toMatch(/^run.start names agent a, but run r belongs to agent b/);
  });
});
