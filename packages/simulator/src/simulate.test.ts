import { describe, expect, it } from 'vitest';
import { CreateInterventionSchema, GUARDRAIL_FOR_TYPE, INTERVENTION_OUTCOMES, INTERVENTION_TYPES, IngestEventSchema, RISK_LEVELS } from '@agp/contracts';
import { buildFleet, simulateEvents, type SimulatedEvent, type SimulationPlan } from './simulate.js';

const FROM = Date.parse('2026-03-02T09:00:00Z');
const plan = (over: Partial<SimulationPlan> = {}): SimulationPlan => ({ seed: 42, agents: 8, count: 3000, fromMs: FROM, toMs: FROM + 60_000, ...over });
const events = [...simulateEvents(plan())];

/** Value at a dotted path of an object. */
const at = (obj: Record<string, unknown>, path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], obj);

describe('simulateEvents', () => {
  it('yields exactly `count` events with unique ids sim-<seed>-<n>', () => {
    expect(events).toHaveLength(3000);
    expect(new Set(events.map((e) => e.id)).size).toBe(3000);
    expect(events[0].id).toBe('sim-42-0');
    expect(events[2999].id).toBe('sim-42-2999');
  });

  it('produces envelopes and bodies that parse with the ingest and create schemas', () => {
    for (const e of events) {
      expect(IngestEventSchema.safeParse(e).success).toBe(true);
      const parsed = CreateInterventionSchema.safeParse(e.body);
      expect(parsed.success, `${e.id}: ${parsed.error?.message}`).toBe(true);
      expect(e.body.timestamp).toBe(e.timestamp);
    }
  });

  it('covers all ten types and all six outcomes in a few thousand events', () => {
    expect(new Set(events.map((e) => e.body.type))).toEqual(new Set(INTERVENTION_TYPES));
    expect(new Set(events.map((e) => e.body.outcome))).toEqual(new Set(INTERVENTION_OUTCOMES));
    expect(new Set(events.map((e) => e.body.risk_level))).toEqual(new Set(RISK_LEVELS));
  });

  it('makes blocks and warnings the bulk, and the review outcomes rare', () => {
    const share = (outcome: string) => events.filter((e) => e.body.outcome === outcome).length / events.length;
    expect(share('blocked') + share('warned')).toBeGreaterThan(0.6);
    expect(share('approved_after_review')).toBeLessThan(0.06);
    expect(share('rejected_after_review')).toBeLessThan(0.06);
  });

  it('pairs outcomes with their types: modified for downgrade, warned for warning, reviews only for approvals', () => {
    for (const { body } of events) {
      if (body.type === 'downgrade') expect(body.outcome).toBe('modified');
      if (body.type === 'warning') expect(body.outcome).toBe('warned');
      if (body.outcome === 'approved_after_review' || body.outcome === 'rejected_after_review') expect(body.type).toBe('approval_required');
      if (body.outcome === 'escalated') expect(['approval_required', 'budget_exceeded']).toContain(body.type);
    }
  });

  it('attaches a context only to guardrail types, with the matching discriminator', () => {
    for (const { body } of events) {
      expect(body.context?.guardrail).toBe(GUARDRAIL_FOR_TYPE[body.type]);
    }
  });

  it('points PII matches at argument fields that hold the value, masked', () => {
    const pii = events.filter((e) => e.body.context?.guardrail === 'pii');
    expect(pii.length).toBeGreaterThan(50);
    for (const { body } of pii) {
      if (body.context?.guardrail !== 'pii') continue;
      expect(body.context.matches.length).toBeGreaterThan(0);
      for (const m of body.context.matches) {
        expect(typeof at(body.original_inputs!, m.field_path)).toBe('string');
        expect(m.matched_text).toMatch(/\*/);
        expect(body.context.fields).toContain(m.field_path);
        expect(body.context.categories).toContain(m.category);
      }
    }
    const categories = new Set(pii.flatMap((e) => (e.body.context?.guardrail === 'pii' ? e.body.context.categories : [])));
    expect(categories).toEqual(new Set(['email', 'phone_number', 'credit_card', 'us_ssn']));
  });

  it('gives moderation matches a score, and loop contexts a repeat count above the threshold', () => {
    for (const { body } of events) {
      const c = body.context;
      if (c?.guardrail === 'moderation') {
        for (const m of c.matches) {
          expect(m.score).toBeGreaterThanOrEqual(0.7);
          expect(m.matched_text).toMatch(/\*/);
          expect(String(at(body.original_inputs!, m.field_path))).not.toMatch(/[[\]*]/);
        }
      }
      if (c?.guardrail === 'loop') {
        expect(c.repeat_count).toBeGreaterThan(c.threshold);
        expect(c.action_name).toBe(body.action_name);
        expect(c.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
      }
      if (c?.guardrail === 'idempotency') expect(Date.parse(c.original_timestamp)).toBeLessThan(Date.parse(body.timestamp!));
    }
  });

  it('correlates risk with the action (money movements and deletes high, Slack posts low) and with leaked card numbers', () => {
    const levels = (action: string) =>
      new Set(events.filter((e) => e.body.action_name === action && e.body.type !== 'pii_blocked').map((e) => e.body.risk_level));
    for (const l of levels('transfer_funds')) expect(['critical', 'high', 'medium']).toContain(l);
    for (const l of levels('delete_records')) expect(['critical', 'high', 'medium']).toContain(l);
    for (const l of levels('post_to_slack')) expect(['medium', 'low', 'minimal']).toContain(l);
    for (const { body } of events) {
      if (body.context?.guardrail === 'pii' && body.context.categories.some((c) => c === 'credit_card' || c === 'us_ssn')) {
        expect(['critical', 'high']).toContain(body.risk_level);
      }
    }
  });

  it('keeps costs in USD cents between a cent and the cap, prevented costs only where something was stopped or reduced', () => {
    const costs = events.map((e) => e.body.estimated_cost_usd);
    expect(Math.min(...costs)).toBeLessThan(0.1);
    expect(Math.max(...costs)).toBeGreaterThan(100);
    for (const { body } of events) {
      expect(Math.round(body.estimated_cost_usd * 100) / 100).toBe(body.estimated_cost_usd);
      if (body.outcome === 'blocked' || body.outcome === 'rejected_after_review') expect(body.cost_prevented_usd).toBe(body.estimated_cost_usd);
      else if (body.outcome === 'modified') expect(body.cost_prevented_usd).toBeLessThan(body.estimated_cost_usd);
      else expect(body.cost_prevented_usd).toBeUndefined();
      if (body.actual_cost_usd !== undefined) expect(['warned', 'approved_after_review', 'modified']).toContain(body.outcome);
    }
  });

  it('sets modified_inputs exactly for downgrades, and suggests rewrites sometimes', () => {
    for (const { body } of events) {
      if (body.type === 'downgrade') expect(body.modified_inputs).not.toEqual(body.original_inputs);
      else expect(body.modified_inputs).toBeNull();
    }
    const withRewrite = events.filter((e) => e.body.remediation_payload?.suggested_rewrite).length;
    expect(withRewrite / events.length).toBeGreaterThan(0.2);
    expect(withRewrite / events.length).toBeLessThan(0.5);
  });

  it('organises interventions into runs of agents, with every agent and policy present', () => {
    const fleet = buildFleet(42, 8);
    expect(new Set(events.map((e) => e.body.agent_id))).toEqual(new Set(fleet.agents.map((a) => a.id)));
    expect(new Set(events.map((e) => e.body.policy_id))).toEqual(new Set(fleet.policies.map((p) => p.id)));
    const runs = new Map<string, Set<string>>();
    for (const { body } of events) runs.set(body.run_id, (runs.get(body.run_id) ?? new Set()).add(body.agent_id));
    expect(runs.size).toBeGreaterThan(200);
    for (const [id, agents] of runs) {
      expect(id).toMatch(/^run-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(agents.size).toBe(1);
    }
    const perAgent = new Map<string, Set<string>>();
    for (const { body } of events) perAgent.set(body.agent_id, (perAgent.get(body.agent_id) ?? new Set()).add(body.run_id));
    for (const runIds of perAgent.values()) expect(runIds.size).toBeGreaterThan(3);
  });

  it('is deterministic: the same plan yields the same events, another seed other events', () => {
    expect([...simulateEvents(plan())]).toEqual(events);
    const other = [...simulateEvents(plan({ seed: 7 }))];
    expect(other[0].id).toBe('sim-7-0');
    expect(other.map((e) => e.body)).not.toEqual(events.map((e) => e.body));
  });

  it('spreads uniform timestamps evenly over the window, in order', () => {
    expect(events[0].timestamp).toBe('2026-03-02T09:00:00.000Z');
    expect(events[1500].timestamp).toBe('2026-03-02T09:00:30.000Z');
    expect(Date.parse(events[2999].timestamp)).toBeLessThan(FROM + 60_000);
  });

  it('shapes a backfill: ordered timestamps inside the period, busier on weekday afternoons than at night', () => {
    const to = Date.parse('2026-03-16T00:00:00Z');
    const from = to - 14 * 86_400_000;
    const backfill: SimulatedEvent[] = [...simulateEvents(plan({ fromMs: from, toMs: to, shape: 'daily' }))];
    const times = backfill.map((e) => Date.parse(e.timestamp));
    expect(times.every((t, i) => t >= from && t <= to && (i === 0 || t >= times[i - 1]))).toBe(true);
    const hours = times.map((t) => new Date(t).getUTCHours());
    const afternoon = hours.filter((h) => h >= 12 && h < 17).length;
    const night = hours.filter((h) => h < 5).length;
    expect(afternoon).toBeGreaterThan(night * 2);
    expect(new Set(backfill.map((e) => e.timestamp.slice(0, 10))).size).toBe(14);
  });

  it('names agents after their family and rejects an empty fleet', () => {
    const fleet = buildFleet(1, 13);
    expect(fleet.agents).toHaveLength(13);
    for (const a of fleet.agents) expect(a.id).toMatch(/^(billing-agent|support-triage|devops-runner|finance-ops|data-steward|sales-outreach)-[1-3]$/);
    expect(new Set(fleet.agents.map((a) => a.id)).size).toBe(13);
    expect(() => buildFleet(1, 0)).toThrow(RangeError);
  });
});
