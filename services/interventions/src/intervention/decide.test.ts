import { describe, expect, it } from 'vitest';
import { CreateInterventionSchema, InterventionEvents } from '@agp/contracts';
import { NotFoundError } from '@agp/runtime';
import { costPrevented, decideDelete, decideRecord, maskMatchedText } from './decide.js';
import { auditTrail, fold } from './intervention.js';

const meta = { now: '2026-11-22T10:00:00.000Z', id: '01900000-0000-7000-8000-000000000001', organization_id: 'acme' };
const body = CreateInterventionSchema.parse({ type: 'hard_block', outcome: 'blocked', action_name: 'delete_db', agent_id: 'a1', estimated_cost_usd: 12.5 });
const ev = (type: string, data: unknown, v: number) => ({
  type, data: data as Record<string, unknown>, stream_version: v, stream_id: 's', event_id: `e${v}`, global_position: BigInt(v), recorded_at: meta.now,
  metadata: { organization_id: 'acme', actor: 'key:k1', schema_version: 1 },
});

describe('decideRecord', () => {
  it('assigns the id, created_at and defaults timestamp to now', () => {
    const d = decideRecord(body, meta, 'api');
    expect(d).toMatchObject({ id: meta.id, created_at: meta.now, timestamp: meta.now, source: 'api' });
  });
  it('defaults cost prevented to the estimate for blocking outcomes only', () => {
    expect(costPrevented(body)).toBe(12.5);
    expect(costPrevented({ ...body, outcome: 'warned' })).toBe(0);
    expect(costPrevented({ ...body, cost_prevented_usd: 3 })).toBe(3);
  });
  it('masks matched text in pii contexts', () => {
    const pii = CreateInterventionSchema.parse({
      ...body, type: 'pii_blocked',
      context: { guardrail_schema_version: 1, guardrail: 'pii', matches: [{ category: 'email', field_path: 'to', matched_text: 'jane.doe@example.com' }], categories: ['email'], fields: ['to'] },
    });
    const d = decideRecord(pii, meta, 'api');
    expect(d.context).toMatchObject({ matches: [{ matched_text: 'ja****************om' }] });
  });
  it('normalises the client timestamp to UTC', () => {
    expect(decideRecord({ ...body, timestamp: '2026-11-22T12:00:00+02:00' }, meta, 'api').timestamp).toBe('2026-11-22T10:00:00.000Z');
  });
});

describe('maskMatchedText', () => {
  it('keeps already-masked text and masks short text', () => {
    expect(maskMatchedText('4111-****-1111')).toBe('4111-****-1111');
    expect(maskMatchedText('abc')).toBe('a**');
  });
  it('counts characters as code points, never keeping half of a surrogate pair', () => {
    expect(maskMatchedText('\u{1F600}bc')).toBe('\u{1F600}**');
    expect(maskMatchedText('x\u{1F600}cdef\u{1F601}')).toBe('x\u{1F600}***f\u{1F601}');
  });
});

describe('fold and decideDelete', () => {
  const recorded = ev(InterventionEvents.Recorded, decideRecord(body, meta, 'api'), 1);
  it('folds the record and deletes it once', () => {
    const s = fold([recorded]);
    expect(s?.record.outcome).toBe('blocked');
    expect(decideDelete(s, 'acme').type).toBe(InterventionEvents.Deleted);
    const deleted = fold([recorded, ev(InterventionEvents.Deleted, { id: meta.id }, 2)]);
    expect(() => decideDelete(deleted, 'acme')).toThrow(NotFoundError);
  });
  it('hides another organisation\'s record', () => {
    expect(() => decideDelete(fold([recorded]), 'other')).toThrow(NotFoundError);
  });
  it('counts the estimate as prevented once an escalation is rejected (or expires), not when approved', () => {
    const escalated = ev(InterventionEvents.Recorded, decideRecord({ ...body, type: 'approval_required', outcome: 'escalated', estimated_cost_usd: 50 }, meta, 'api'), 1);
    expect(fold([escalated])?.record.cost_prevented_usd).toBe(0);
    const change = (to: string) => ev(InterventionEvents.OutcomeChanged, { id: meta.id, from: 'escalated', to }, 2);
    expect(fold([escalated, change('rejected_after_review')])?.record).toMatchObject({ outcome: 'rejected_after_review', cost_prevented_usd: 50 });
    expect(fold([escalated, change('approved_after_review')])?.record).toMatchObject({ outcome: 'approved_after_review', cost_prevented_usd: 0 });
  });
  it('audits outcome changes with from and to', () => {
    const trail = auditTrail([recorded, ev(InterventionEvents.OutcomeChanged, { id: meta.id, from: 'escalated', to: 'approved_after_review', approver_email: 'a@b.c' }, 2)]);
    expect(trail[0].changes.outcome).toEqual({ from: null, to: 'blocked' });
    expect(trail[1]).toMatchObject({ actor: 'key:k1', changes: { outcome: { from: 'escalated', to: 'approved_after_review' } }, details: { approver_email: 'a@b.c' } });
  });
});
