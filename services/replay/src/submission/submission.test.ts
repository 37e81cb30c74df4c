import { describe, expect, it } from 'vitest';
import { SubmitReplaySchema, ReplayEvents } from '@agp/contracts';
import { decideSubmit, foldSubmission } from './submission.js';

const body = {
  actions_replayed: 4,
  divergences: 1,
  cost_savings: 0.25,
  status: 'partial',
  started_at: '2026-01-01T01:00:00+01:00',
  completed_at: '2026-01-01T00:00:02.500Z',
  client_version: 'agp/0.1.0',
  divergence_details: [{ step: 2, action_name: 'search', expected: { n: 1 }, actual: { n: 2 } }],
};
const meta = { id: 's1', run_id: 'r1', now: '2026-01-02T00:00:00.000Z' };

describe('decideSubmit', () => {
  it('stores the submission with UTC times and the duration defaulted from them', () => {
    const { type, data } = decideSubmit(SubmitReplaySchema.parse(body), meta);
    expect(type).toBe(ReplayEvents.Submitted);
    expect(data).toMatchObject({ id: 's1', run_id: 'r1', started_at: '2026-01-01T00:00:00.000Z', completed_at: '2026-01-01T00:00:02.500Z', duration_ms: 2500, submitted_at: meta.now, divergence_details_count: 1 });
  });
  it('keeps a duration the client measured', () => {
    expect(decideSubmit(SubmitReplaySchema.parse({ ...body, duration_ms: 7 }), meta).data.duration_ms).toBe(7);
  });
  it('folds a stream back to the submission, and an empty stream to null', () => {
    const event = decideSubmit(SubmitReplaySchema.parse(body), meta);
    expect(foldSubmission([event])).toEqual(event.data);
    expect(foldSubmission([])).toBeNull();
  });
});

describe('SubmitReplaySchema', () => {
  const issuePaths = (b: unknown) => {
    const r = SubmitReplaySchema.safeParse(b);
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };
  it.each([
    ['divergences above actions_replayed', { ...body, divergences: 5 }, 'divergences'],
    ['completed_at before started_at', { ...body, completed_at: '2025-12-31T00:00:00Z' }, 'completed_at'],
    ['more details than divergences', { ...body, divergence_details: [body.divergence_details[0], body.divergence_details[0]] }, 'divergence_details'],
    ['completed with a divergence', { ...body, status: 'completed' }, 'status'],
    ['diverged without a divergence', { ...body, status: 'diverged', divergences: 0, divergence_details: [] }, 'status'],
  ])('rejects %s, naming the field', (_name, b, field) => {
    expect(issuePaths(b)).toContain(field);
  });
});
