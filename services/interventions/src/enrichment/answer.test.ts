import { describe, expect, it } from 'vitest';
import type { InterventionRecord } from '@agp/contracts';
import { decideEnrichment, parseAnswer } from './answer.js';

const record = (over: Partial<InterventionRecord> = {}): InterventionRecord => ({
  id: 'i-1',
  type: 'hard_block',
  outcome: 'blocked',
  action_name: 'delete_records',
  description: null,
  agent_id: 'agent-a',
  run_id: null,
  policy_id: 'pol-1',
  policy_name: 'No deletes',
  risk_level: 'critical',
  estimated_cost_usd: 10,
  actual_cost_usd: null,
  cost_prevented_usd: 10,
  blast_radius: null,
  reason: 'DENY delete_records',
  agent_intent: 'cleanup',
  original_inputs: {},
  modified_inputs: null,
  timestamp: '2026-01-01T00:00:00.000Z',
  organization_id: 'acme',
  created_at: '2026-01-01T00:00:00.000Z',
  remediation_payload: { suggested_rewrite: 'use soft delete' },
  purpose: 'production',
  ...over,
});

const good = { reason: 'Deleting records is not allowed.', agent_intent: 'Clean up old rows.', risk_level: 'high', suggested_rewrite: 'Archive the rows instead.' };

describe('parseAnswer', () => {
  it('accepts a JSON object with the four fields', () => {
    expect(parseAnswer(JSON.stringify(good))).toEqual({ ok: true, answer: good });
  });

  it('accepts the JSON inside a ```json fence', () => {
    expect(parseAnswer('```json\n' + JSON.stringify(good) + '\n```')).toMatchObject({ ok: true });
  });

  it('refuses text that is not JSON', () => {
    expect(parseAnswer('Sure! The reason is...')).toMatchObject({ ok: false, error: expect.stringMatching(/not JSON/) });
  });

  it('refuses an empty or missing content', () => {
    expect(parseAnswer('')).toMatchObject({ ok: false, error: 'empty answer' });
    expect(parseAnswer(null)).toMatchObject({ ok: false });
  });

  it('refuses JSON that is not an object of the schema, naming the bad fields', () => {
    const r = parseAnswer(JSON.stringify({ reason: '', agent_intent: 3, risk_level: 'low' }));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/reason/);
    expect(!r.ok && r.error).toMatch(/agent_intent/);
    expect(parseAnswer('[1,2]')).toMatchObject({ ok: false });
  });

  it('ignores keys it did not ask for', () => {
    expect(parseAnswer(JSON.stringify({ ...good, extra: 1 }))).toEqual({ ok: true, answer: good });
  });
});

describe('decideEnrichment', () => {
  it('changes each differing field from the current value to the new one', () => {
    expect(decideEnrichment(record(), good)).toEqual({
      changes: {
        reason: { from: 'DENY delete_records', to: good.reason },
        agent_intent: { from: 'cleanup', to: good.agent_intent },
        risk_level: { from: 'critical', to: 'high' },
        suggested_rewrite: { from: 'use soft delete', to: good.suggested_rewrite },
      },
    });
  });

  it('rejects a risk level outside the five values and keeps the original', () => {
    const d = decideEnrichment(record(), { ...good, risk_level: 'catastrophic' });
    expect(d.changes.risk_level).toBeUndefined();
    expect(d.changes.reason).toBeDefined();
    expect(d.rejected).toEqual([{ field: 'risk_level', value: 'catastrophic', reason: expect.stringMatching(/critical, high, medium, low, minimal/) }]);
  });

  it('rejects a missing or non-string risk level', () => {
    expect(decideEnrichment(record(), { ...good, risk_level: undefined }).rejected?.[0]).toMatchObject({ field: 'risk_level', value: null });
    expect(decideEnrichment(record(), { ...good, risk_level: 4 }).rejected?.[0]).toMatchObject({ field: 'risk_level', value: 4 });
  });

  it('reads a risk level case-insensitively', () => {
    expect(decideEnrichment(record(), { ...good, risk_level: ' Medium ' }).changes.risk_level).toEqual({ from: 'critical', to: 'medium' });
  });

  it('keeps the current suggested rewrite when the model gives none', () => {
    expect(decideEnrichment(record(), { ...good, suggested_rewrite: null }).changes.suggested_rewrite).toBeUndefined();
  });

  it('records no change for a field the model left as it was', () => {
    const d = decideEnrichment(record({ risk_level: 'high', reason: good.reason }), good);
    expect(d.changes.risk_level).toBeUndefined();
    expect(d.changes.reason).toBeUndefined();
    expect(d.rejected).toBeUndefined();
  });

  it('fills a field that was null', () => {
    expect(decideEnrichment(record({ risk_level: null, reason: null }), good).changes).toMatchObject({ risk_level: { from: null, to: 'high' }, reason: { from: null, to: good.reason } });
  });
});
