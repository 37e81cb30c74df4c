import { describe, expect, it } from 'vitest';
import { CreateInterventionSchema, InterventionEvents, type IngestEnvelope } from '@agp/contracts';
import { ConflictError, ForbiddenError, NotFoundError } from '@agp/runtime';
import { decideRecord } from '../intervention/decide.js';
import { auditTrail } from '../intervention/intervention.js';
import { foldApproval } from './approval.js';
import { decideApproval, decideExpiry } from './decide.js';
import { parseIngestedIntervention } from './ingest.js';

const NOW = '2026-11-22T10:00:00.000Z';
const ID = '01900000-0000-7000-8000-000000000001';
const TTL = 3600;
const escalated = CreateInterventionSchema.parse({ type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: 'a1', estimated_cost_usd: 900, reason: 'over threshold' });
const ev = (type: string, data: unknown, v: number, actor = 'key:k1') => ({
  type, data: data as Record<string, unknown>, stream_version: v, stream_id: `intervention-${ID}`, event_id: `e${v}`, global_position: BigInt(v), recorded_at: NOW,
  metadata: { organization_id: 'acme', actor, schema_version: 1 },
});
const recorded = (body = escalated, ttl: number | null = TTL) =>
  ev(InterventionEvents.Recorded, decideRecord(body, { now: NOW, id: ID, organization_id: 'acme', ...(ttl === null ? {} : { approval_ttl_seconds: ttl }) }, 'api'), 1);
const cmd = (over: Partial<Parameters<typeof decideApproval>[1]> = {}) => ({
  approval_id: `apr-${ID}`, decision: 'approve' as const, approver_email: 'jane@acme.test', notes: 'ticket 42', organization_id: 'acme', key_id: 'k1', now: '2026-11-22T10:30:00.000Z', ...over,
});

describe('foldApproval', () => {
  it('opens a pending approval apr-<id> for an escalated record, expiring at record time + the TTL', () => {
    const { approval, version } = foldApproval([recorded()], 86_400);
    expect(version).toBe(1);
    expect(approval).toMatchObject({ id: `apr-${ID}`, intervention_id: ID, status: 'pending', requested_at: NOW, expires_at: '2026-11-22T11:00:00.000Z', estimated_cost_usd: 900, reason: 'over threshold', decided_at: null });
  });
  it('falls back to created_at + the configured TTL for records without approval_expires_at', () => {
    expect(foldApproval([recorded(escalated, null)], 60).approval?.expires_at).toBe('2026-11-22T10:01:00.000Z');
  });
  it('opens no approval for a record that never was escalated', () => {
    expect(foldApproval([recorded({ ...escalated, outcome: 'approved_after_review' })], TTL).approval).toBeNull();
  });
});

describe('decideApproval', () => {
  it('approves: escalated → approved_after_review with approver, notes and key id, actor approver:<email>', () => {
    const r = decideApproval(foldApproval([recorded()], TTL), cmd());
    expect(r).toEqual({
      kind: 'decided',
      event: { type: InterventionEvents.OutcomeChanged, actor: 'approver:jane@acme.test', data: { id: ID, from: 'escalated', to: 'approved_after_review', approver_email: 'jane@acme.test', notes: 'ticket 42', key_id: 'k1' } },
    });
  });
  it('rejects: escalated → rejected_after_review, and leaves notes out when none were given', () => {
    const r = decideApproval(foldApproval([recorded()], TTL), cmd({ decision: 'reject', notes: undefined }));
    expect(r.event.data).toEqual({ id: ID, from: 'escalated', to: 'rejected_after_review', approver_email: 'jane@acme.test', key_id: 'k1' });
  });
  it('is a 404 for an unknown stream, a deleted record, another organisation and a record never escalated', () => {
    expect(() => decideApproval(foldApproval([], TTL), cmd())).toThrow(NotFoundError);
    expect(() => decideApproval(foldApproval([recorded(), ev(InterventionEvents.Deleted, { id: ID }, 2)], TTL), cmd())).toThrow(NotFoundError);
    expect(() => decideApproval(foldApproval([recorded()], TTL), cmd({ organization_id: 'globex' }))).toThrow(NotFoundError);
    expect(() => decideApproval(foldApproval([recorded({ ...escalated, outcome: 'blocked' })], TTL), cmd())).toThrow(NotFoundError);
  });
  it('keeps the deciding key’s name in the event, and the approval shows it beside the key as its actor', () => {
    const r = decideApproval(foldApproval([recorded()], TTL), cmd({ key_name: 'review desk' }));
    expect(r.event.data).toMatchObject({ key_id: 'k1', key_name: 'review desk' });
    expect(foldApproval([recorded()], TTL).approval).toMatchObject({ actor: null, actor_name: null });
    const after = foldApproval([recorded(), ev(r.event.type, r.event.data, 2, r.event.actor)], TTL);
    expect(after.approval).toMatchObject({ status: 'approved', actor: 'key:k1', actor_name: 'review desk' });
  });
  it('is a 403 for a key bound to another agent than the approval’s, and decides for a key bound to its agent', () => {
    const state = foldApproval([recorded()], TTL);
    expect(() => decideApproval(state, cmd({ bound_agent_id: 'a2' }))).toThrow(ForbiddenError);
    expect(() => decideApproval(state, cmd({ bound_agent_id: 'a2' }))).toThrow('this key is bound to agent a2');
    expect(decideApproval(state, cmd({ bound_agent_id: 'a1' })).kind).toBe('decided');
    expect(decideApproval(state, cmd({ bound_agent_id: null })).kind).toBe('decided');
  });

  it('is a 409 naming the status for a second decision', () => {
    const first = decideApproval(foldApproval([recorded()], TTL), cmd());
    const state = foldApproval([recorded(), ev(first.event.type, first.event.data, 2, first.event.actor)], TTL);
    expect(state.approval).toMatchObject({ status: 'approved', approver_email: 'jane@acme.test', notes: 'ticket 42', decided_at: NOW, actor: 'key:k1', actor_name: null });
    expect(() => decideApproval(state, cmd({ decision: 'reject' }))).toThrow(ConflictError);
    expect(() => decideApproval(state, cmd({ decision: 'reject' }))).toThrow(/already approved by jane@acme.test/);
  });
  it('expires instead of deciding once past expires_at', () => {
    const r = decideApproval(foldApproval([recorded()], TTL), cmd({ now: '2026-11-22T11:00:00.000Z' }));
    expect(r).toEqual({ kind: 'expired', event: { type: InterventionEvents.OutcomeChanged, actor: 'system', data: { id: ID, from: 'escalated', to: 'rejected_after_review', reason: 'expired' } } });
  });
});

describe('named approvers, separation of duties and approvals_required', () => {
  const strict = { ...escalated, approvals_required: 2, separation_of_duties: true } as typeof escalated;
  const person = (id: string, email: string, over: Partial<Parameters<typeof decideApproval>[1]> = {}) =>
    cmd({ key_id: `sess-${id}`, key_name: email, user_id: id, user_email: email, user_name: `Name ${id}`, approver_email: email, stewards: { agent_id: 'a1', owner: 'Owner@Acme.test', changed_by: 'user:u-changer' }, ...over });
  const after = (events: ReturnType<typeof ev>[], r: ReturnType<typeof decideApproval>, v: number) => [...events, ev(r.event.type, r.event.data, v, r.event.actor)];

  it('records who decided: a person with id, e-mail and name, a key with its id, approver_email and name', () => {
    const byPerson = decideApproval(foldApproval([recorded()], TTL), person('u1', 'vera@acme.test', { stewards: undefined }));
    const approved = foldApproval(after([recorded()], byPerson, 2), TTL).approval!;
    const vera = { type: 'user', id: 'u1', email: 'vera@acme.test', name: 'Name u1' };
    expect(approved).toMatchObject({ status: 'approved', approvals_required: 1, separation_of_duties: false, decided_by: vera, actor: 'user:u1', notes: 'ticket 42' });
    expect(approved.approvals).toEqual([{ by: vera, at: NOW, comment: 'ticket 42' }]);
    const byKey = decideApproval(foldApproval([recorded()], TTL), cmd({ decision: 'reject', key_name: 'review desk' }));
    expect(foldApproval(after([recorded()], byKey, 2), TTL).approval).toMatchObject({ status: 'rejected', approvals: [], decided_by: { type: 'key', id: 'k1', email: 'jane@acme.test', name: 'review desk' } });
  });

  it('takes the policy rule from the record, and keeps a two-approval approval pending until a second, different person approves', () => {
    const first = decideApproval(foldApproval([recorded(strict)], TTL), person('u1', 'vera@acme.test'));
    expect(first.event.type).toBe(InterventionEvents.ApprovalGiven);
    expect(first.event.data).toMatchObject({ approvals_required: 2, user_id: 'u1', user_email: 'vera@acme.test', notes: 'ticket 42' });
    const one = after([recorded(strict)], first, 2);
    const pending = foldApproval(one, TTL).approval!;
    expect(pending).toMatchObject({ status: 'pending', approvals_required: 2, separation_of_duties: true, decided_by: null, decided_at: null });
    expect(pending.approvals.map((g) => g.by.id)).toEqual(['u1']);
    // The same person again (another session, same user id), or the same e-mail: 409, nothing appended.
    expect(() => decideApproval(foldApproval(one, TTL), person('u1', 'vera@acme.test', { key_id: 'sess-other' }))).toThrow(ConflictError);
    expect(() => decideApproval(foldApproval(one, TTL), person('u9', 'VERA@acme.test'))).toThrow(/needs 2 approvals from different approvers; VERA@acme.test already approved it/);
    const second = decideApproval(foldApproval(one, TTL), person('u2', 'sam@acme.test', { notes: undefined }));
    expect(second.event).toMatchObject({ type: InterventionEvents.OutcomeChanged, data: { to: 'approved_after_review', user_id: 'u2' } });
    const done = foldApproval(after(one, second, 3), TTL).approval!;
    expect(done).toMatchObject({ status: 'approved', decided_by: { id: 'u2' }, approver_email: 'sam@acme.test' });
    expect(done.approvals.map((g) => [g.by.email, g.comment])).toEqual([['vera@acme.test', 'ticket 42'], ['sam@acme.test', null]]);
  });

  it('rejects at once when any approver rejects, the first approver included', () => {
    const one = after([recorded(strict)], decideApproval(foldApproval([recorded(strict)], TTL), person('u1', 'vera@acme.test')), 2);
    const r = decideApproval(foldApproval(one, TTL), person('u1', 'vera@acme.test', { decision: 'reject', notes: 'changed my mind' }));
    expect(foldApproval(after(one, r, 3), TTL).approval).toMatchObject({ status: 'rejected', decided_by: { id: 'u1' }, notes: 'changed my mind' });
  });

  it('under separation of duties, refuses a key, the agent’s owner (e-mail any case, or user id) and its last changer with 403', () => {
    const state = foldApproval([recorded(strict)], TTL);
    expect(() => decideApproval(state, cmd())).toThrow(ForbiddenError);
    expect(() => decideApproval(state, cmd())).toThrow(/an API key cannot decide it/);
    expect(() => decideApproval(state, person('u5', 'owner@acme.test'))).toThrow(/owner@acme.test owns agent a1/);
    expect(() => decideApproval(state, person('owner@acme.test', 'other@acme.test'))).toThrow(ForbiddenError);
    expect(() => decideApproval(state, person('u-changer', 'chris@acme.test'))).toThrow(/chris@acme.test last changed agent a1's registration/);
    expect(() => decideApproval(state, person('u-changer', 'chris@acme.test', { decision: 'reject' }))).toThrow(ForbiddenError);
    expect(decideApproval(state, person('u1', 'vera@acme.test')).kind).toBe('decided');
    // An unregistered agent has no owner or changer: any person may decide.
    expect(decideApproval(state, person('u5', 'owner@acme.test', { stewards: null })).kind).toBe('decided');
    // Without separation of duties, a key and the owner decide as before.
    expect(decideApproval(foldApproval([recorded()], TTL), person('u5', 'owner@acme.test')).kind).toBe('decided');
  });

  it('lists the approval given and the decider on the intervention’s audit trail', () => {
    const first = decideApproval(foldApproval([recorded(strict)], TTL), person('u1', 'vera@acme.test'));
    const one = after([recorded(strict)], first, 2);
    const second = decideApproval(foldApproval(one, TTL), person('u2', 'sam@acme.test'));
    const trail = auditTrail(after(one, second, 3) as never);
    expect(trail[1]).toMatchObject({ event: 'InterventionApprovalGiven', actor: 'approver:vera@acme.test', changes: {}, details: { approvals_required: 2, by: { type: 'user', id: 'u1', email: 'vera@acme.test', name: 'Name u1' }, notes: 'ticket 42' } });
    expect(trail[2]).toMatchObject({ event: 'InterventionOutcomeChanged', changes: { outcome: { from: 'escalated', to: 'approved_after_review' } }, details: { by: { id: 'u2', email: 'sam@acme.test' } } });
  });
});

describe('decideExpiry', () => {
  it('expires a due pending approval, which then folds to status expired', () => {
    const state = foldApproval([recorded()], TTL);
    expect(decideExpiry(state, '2026-11-22T10:59:59.999Z')).toBeNull();
    const e = decideExpiry(state, '2026-11-22T11:00:00.000Z')!;
    const after = foldApproval([recorded(), ev(e.type, e.data, 2, e.actor)], TTL);
    expect(after.approval).toMatchObject({ status: 'expired', decision_reason: 'expired', approver_email: null, actor: 'system', actor_name: null });
    expect(decideExpiry(after, '2026-11-23T00:00:00.000Z')).toBeNull();
    expect(() => decideApproval(after, cmd())).toThrow(/already expired/);
  });
});

describe('parseIngestedIntervention', () => {
  const base = { id: 'c1', timestamp: NOW, assigned_id: ID };
  it('records an approval.request as an escalated approval_required intervention with its own expiry', () => {
    const r = parseIngestedIntervention({ ...base, type: 'approval.request', body: { agent_id: 'a1', action_name: 'deploy', expires_in_seconds: 5 } } as IngestEnvelope['events'][number], 86_400);
    expect(r).toEqual({ success: true, approval_ttl_seconds: 5, data: { agent_id: 'a1', action_name: 'deploy', type: 'approval_required', outcome: 'escalated' } });
  });
  it('parses intervention.create bodies with the default expiry and refuses other types', () => {
    const r = parseIngestedIntervention({ ...base, type: 'intervention.create', body: { type: 'warning', outcome: 'warned', action_name: 'x', agent_id: 'a1' } } as IngestEnvelope['events'][number], 100);
    expect(r).toMatchObject({ success: true, approval_ttl_seconds: 100, data: { type: 'warning' } });
    expect(parseIngestedIntervention({ ...base, type: 'run.start', body: {} } as IngestEnvelope['events'][number]).success).toBe(false);
  });
});
