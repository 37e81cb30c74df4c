import { expect, it, describe } from 'vitest';
import { APPROVAL_STATUSES } from '@agp/contracts';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

const uniq = () => Math.random().toString(36).slice(2, 10);

const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
};

/**
 * The approval inbox over real HTTP, in both run modes: escalated interventions and `approval.request` ingest
 * events open approvals; approve / reject move the intervention's outcome; a second decision is a 409; an
 * approval nobody decides expires. Source: architecture §4 (Approvals).
 * The sweeper runs every 200 ms here so expiry shows within a second or two.
 */
describeModes(
  'approvals',
  (platform) => {
    /** POST an escalated intervention and wait until its approval is listed; returns both ids. */
    const escalate = async (p: BootedPlatform, over: Record<string, unknown> = {}) => {
      const agent = `apr-agent-${uniq()}`;
      const r = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: agent, run_id: 'run-7', policy_id: 'pol-big', policy_name: 'Big transfers', risk_level: 'high', estimated_cost_usd: 950, reason: 'above the auto-approval threshold', original_inputs: { amount: 950 }, ...over },
      });
      expect(r.status).toBe(201);
      const approvalId = `apr-${r.body.id}`;
      await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).status === 200);
      return { agent, interventionId: r.body.id as string, approvalId };
    };
    const decide = (p: BootedPlatform, id: string, verb: 'approve' | 'reject', body: unknown, key = p.writeKey) =>
      call(p, 'POST', `/api/v1/approvals/${id}/${verb}`, { key, body });
    const stats = async (p: BootedPlatform) => (await call(p, 'GET', '/api/v1/interventions/stats', { key: p.readKey })).body.by_outcome as Record<string, number>;

    describe('opening approvals', () => {
      it('an escalated POST /api/v1/interventions opens a pending approval apr-<id>', async () => {
        const p = platform();
        const { agent, interventionId, approvalId } = await escalate(p);
        const got = await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey });
        expect(got.body).toMatchObject({
          id: approvalId, intervention_id: interventionId, status: 'pending', agent_id: agent, run_id: 'run-7', action_name: 'wire_transfer',
          policy_id: 'pol-big', policy_name: 'Big transfers', risk_level: 'high', reason: 'above the auto-approval threshold', estimated_cost_usd: 950,
          original_inputs: { amount: 950 }, decided_at: null, approver_email: null, notes: null, decision_reason: null,
        });
        const ttlMs = Date.parse(got.body.expires_at) - Date.parse(got.body.requested_at);
        expect(ttlMs).toBe(86_400_000);
        const list = await call(p, 'GET', `/api/v1/approvals?status=pending&agent_id=${agent}`, { key: p.readKey });
        expect(list.status).toBe(200);
        expect(list.body).toMatchObject({ total: 1, skip: 0, limit: 50 });
        expect(list.body.approvals.map((a: any) => a.id)).toEqual([approvalId]);
      });

      it('an intervention with any other outcome opens no approval', async () => {
        const p = platform();
        const agent = `apr-agent-${uniq()}`;
        const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', agent_id: agent } });
        expect(r.status).toBe(201);
        // A later escalated record of the same agent is listed, so the projection has passed the blocked one.
        const { approvalId } = await escalate(p, { agent_id: agent });
        const list = await call(p, 'GET', `/api/v1/approvals?agent_id=${agent}`, { key: p.readKey });
        expect(list.body.approvals.map((a: any) => a.id)).toEqual([approvalId]);
        expectProblem(await call(p, 'GET', `/api/v1/approvals/apr-${r.body.id}`, { key: p.readKey }), 404);
      });

      it('an approval.request through POST /api/v1/ingest/ opens one, recorded as an escalated approval_required intervention', async () => {
        const p = platform();
        const agent = `apr-agent-${uniq()}`;
        const ing = await call(p, 'POST', '/api/v1/ingest/', {
          key: p.writeKey,
          body: { batch: [{ id: `req-${uniq()}`, type: 'approval.request', timestamp: '2026-11-20T12:00:00Z', body: { agent_id: agent, action_name: 'deploy_prod', run_id: 'run-9', risk_level: 'critical', reason: 'production deploy', agent_intent: 'ship release 4.2', estimated_cost_usd: 12, original_inputs: { service: 'api' } } }] },
        });
        expect(ing.status).toBe(207);
        expect(ing.body.successes).toHaveLength(1);
        const list = await eventually(async () => {
          const r = await call(p, 'GET', `/api/v1/approvals?status=pending&agent_id=${agent}`, { key: p.readKey });
          return r.body.total === 1 ? r.body : null;
        });
        const approval = list.approvals[0];
        expect(approval).toMatchObject({ status: 'pending', action_name: 'deploy_prod', run_id: 'run-9', risk_level: 'critical', agent_intent: 'ship release 4.2', original_inputs: { service: 'api' } });
        expect(approval.id).toBe(`apr-${approval.intervention_id}`);
        const intervention = await call(p, 'GET', `/api/v1/interventions/${approval.intervention_id}`, { key: p.readKey });
        expect(intervention.body).toMatchObject({ type: 'approval_required', outcome: 'escalated', agent_id: agent, timestamp: '2026-11-20T12:00:00.000Z' });
      });
    });

    describe('POST /api/v1/approvals/{id}/approve and /reject', () => {
      it('approving answers 200 with the approval, moves the outcome to approved_after_review, audits approver and notes, leaves the pending list and moves the stats', async () => {
        const p = platform();
        const { agent, interventionId, approvalId } = await escalate(p);
        const before = await stats(p);
        const r = await decide(p, approvalId, 'approve', { approver_email: 'jane@acme.test', notes: 'ticket OPS-42' });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ id: approvalId, status: 'approved', approver_email: 'jane@acme.test', notes: 'ticket OPS-42', decision_reason: null, decided_at: expect.any(String) });
        const got = await call(p, 'GET', `/api/v1/interventions/${interventionId}`, { key: p.readKey });
        expect(got.body.outcome).toBe('approved_after_review');
        expect(got.body.audit_trail.at(-1)).toMatchObject({
          event: 'InterventionOutcomeChanged', actor: 'approver:jane@acme.test',
          changes: { outcome: { from: 'escalated', to: 'approved_after_review' } },
          details: { approver_email: 'jane@acme.test', notes: 'ticket OPS-42' },
        });
        expect((await call(p, 'GET', `/api/v1/approvals?status=pending&agent_id=${agent}`, { key: p.readKey })).body.total).toBe(0);
        const approved = await call(p, 'GET', `/api/v1/approvals?status=approved,rejected&agent_id=${agent}`, { key: p.readKey });
        expect(approved.body.approvals.map((a: any) => a.id)).toEqual([approvalId]);
        expect((await call(p, 'GET', `/api/v1/interventions?outcome=approved_after_review&agent_id=${agent}`, { key: p.readKey })).body.total).toBe(1);
        const after = await stats(p);
        expect(after.escalated).toBe(before.escalated - 1);
        expect(after.approved_after_review).toBe(before.approved_after_review + 1);
      });

      it('rejecting moves the outcome to rejected_after_review with the approver recorded, notes optional', async () => {
        const p = platform();
        const { agent, interventionId, approvalId } = await escalate(p);
        const before = await stats(p);
        const r = await decide(p, approvalId, 'reject', { approver_email: 'bob@acme.test' });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ id: approvalId, status: 'rejected', approver_email: 'bob@acme.test', notes: null });
        const got = await call(p, 'GET', `/api/v1/interventions/${interventionId}`, { key: p.readKey });
        expect(got.body.outcome).toBe('rejected_after_review');
        // The rejected action did not run: its estimate now counts as prevented (it was 0 while escalated).
        expect(got.body.cost_prevented_usd).toBe(950);
        expect(got.body.audit_trail.at(-1)).toMatchObject({ actor: 'approver:bob@acme.test', changes: { outcome: { from: 'escalated', to: 'rejected_after_review' } }, details: { approver_email: 'bob@acme.test' } });
        expect((await call(p, 'GET', `/api/v1/approvals?status=rejected&agent_id=${agent}`, { key: p.readKey })).body.total).toBe(1);
        const after = await stats(p);
        expect(after.escalated).toBe(before.escalated - 1);
        expect(after.rejected_after_review).toBe(before.rejected_after_review + 1);
        expect(await p.streamEventTypes(`intervention-${interventionId}`)).toEqual(['InterventionRecorded', 'InterventionOutcomeChanged']);
      });

      it('answers a second decision with 409 naming the status, and changes nothing', async () => {
        const p = platform();
        const { interventionId, approvalId } = await escalate(p);
        expect((await decide(p, approvalId, 'approve', { approver_email: 'jane@acme.test' })).status).toBe(200);
        const again = await decide(p, approvalId, 'reject', { approver_email: 'bob@acme.test' });
        expectProblem(again, 409);
        expect(again.body.detail).toMatch(/already approved/);
        expectProblem(await decide(p, approvalId, 'approve', { approver_email: 'jane@acme.test' }), 409);
        expect((await call(p, 'GET', `/api/v1/interventions/${interventionId}`, { key: p.readKey })).body.outcome).toBe('approved_after_review');
        expect(await p.streamEventTypes(`intervention-${interventionId}`)).toEqual(['InterventionRecorded', 'InterventionOutcomeChanged']);
      });
    });

    describe('expiry', () => {
      it('expires an undecided approval to rejected_after_review with reason expired; deciding it then is a 409', async () => {
        const p = platform();
        const agent = `apr-agent-${uniq()}`;
        const ing = await call(p, 'POST', '/api/v1/ingest/', {
          key: p.writeKey,
          body: { batch: [{ id: `req-${uniq()}`, type: 'approval.request', timestamp: new Date().toISOString(), body: { agent_id: agent, action_name: 'rotate_keys', expires_in_seconds: 1 } }] },
        });
        expect(ing.status).toBe(207);
        const expired = await eventually(async () => {
          const r = await call(p, 'GET', `/api/v1/approvals?status=expired&agent_id=${agent}`, { key: p.readKey });
          return r.body.total === 1 ? r.body.approvals[0] : null;
        }, 15_000);
        expect(expired).toMatchObject({ status: 'expired', decision_reason: 'expired', approver_email: null, decided_at: expect.any(String) });
        expect(Date.parse(expired.expires_at) - Date.parse(expired.requested_at)).toBe(1000);
        const got = await eventually(async () => {
          const r = await call(p, 'GET', `/api/v1/interventions/${expired.intervention_id}`, { key: p.readKey });
          return r.body.outcome === 'rejected_after_review' ? r.body : null;
        });
        expect(got.audit_trail.at(-1)).toMatchObject({ actor: 'system', changes: { outcome: { from: 'escalated', to: 'rejected_after_review' } }, details: { reason: 'expired' } });
        const late = await decide(p, expired.id, 'approve', { approver_email: 'jane@acme.test' });
        expectProblem(late, 409);
        expect(late.body.detail).toMatch(/expired/);
      });
    });

    describe('bad input', () => {
      it('answers 404 for unknown approval ids, on get, approve and reject', async () => {
        const p = platform();
        for (const id of ['apr-01900000-0000-7000-8000-00000000dead', 'no-such-approval', 'apr-']) {
          expectProblem(await call(p, 'GET', `/api/v1/approvals/${id}`, { key: p.readKey }), 404);
          expectProblem(await decide(p, id, 'approve', { approver_email: 'jane@acme.test' }), 404);
          expectProblem(await decide(p, id, 'reject', { approver_email: 'jane@acme.test' }), 404);
        }
      });

      it("answers 404 for another organisation's approval and leaves it pending", async () => {
        const p = platform();
        const { interventionId, approvalId } = await escalate(p);
        expectProblem(await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.otherOrgWriteKey }), 404);
        expectProblem(await decide(p, approvalId, 'approve', { approver_email: 'mallory@globex.test' }, p.otherOrgWriteKey), 404);
        expectProblem(await decide(p, approvalId, 'reject', { approver_email: 'mallory@globex.test' }, p.otherOrgWriteKey), 404);
        const other = await call(p, 'GET', '/api/v1/approvals', { key: p.otherOrgWriteKey });
        expect(other.body.approvals.map((a: any) => a.id)).not.toContain(approvalId);
        expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status).toBe('pending');
        expect(await p.streamEventTypes(`intervention-${interventionId}`)).toEqual(['InterventionRecorded']);
      });

      it('answers 403 to a read key approving or rejecting, and nothing changes', async () => {
        const p = platform();
        const { interventionId, approvalId } = await escalate(p);
        expectProblem(await decide(p, approvalId, 'approve', { approver_email: 'jane@acme.test' }, p.readKey), 403);
        expectProblem(await decide(p, approvalId, 'reject', { approver_email: 'jane@acme.test' }, p.readKey), 403);
        expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status).toBe('pending');
        expect((await call(p, 'GET', `/api/v1/interventions/${interventionId}`, { key: p.readKey })).body.outcome).toBe('escalated');
        expect(await p.streamEventTypes(`intervention-${interventionId}`)).toEqual(['InterventionRecorded']);
      });

      it('answers 422 naming body.approver_email when it is missing, and nothing changes', async () => {
        const p = platform();
        const { approvalId } = await escalate(p);
        const r = await decide(p, approvalId, 'approve', { notes: 'looks fine' });
        expectProblem(r, 422);
        expect(r.body.errors.map((e: any) => e.path)).toEqual(['body.approver_email']);
        expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status).toBe('pending');
      });

      it('answers 422 naming body.approver_email when it is not an email address', async () => {
        const p = platform();
        const { approvalId } = await escalate(p);
        const r = await decide(p, approvalId, 'reject', { approver_email: 'jane at acme' });
        expectProblem(r, 422);
        expect(r.body.errors.map((e: any) => e.path)).toEqual(['body.approver_email']);
        expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status).toBe('pending');
      });

      it('answers 422 for unknown body fields and notes over 10 000 characters', async () => {
        const p = platform();
        const { approvalId } = await escalate(p);
        const r = await decide(p, approvalId, 'approve', { approver_email: 'jane@acme.test', notes: 'x'.repeat(10_001), approved: true });
        expectProblem(r, 422);
        expect(r.body.errors.map((e: any) => e.path).sort()).toEqual(['body.approved', 'body.notes']);
        expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status).toBe('pending');
      });

      it('answers 422 listing the allowed values for a bad status filter', async () => {
        const p = platform();
        const r = await call(p, 'GET', '/api/v1/approvals?status=pending,maybe', { key: p.readKey });
        expectProblem(r, 422);
        expect(r.body.errors[0]).toMatchObject({ path: 'query.status', allowed: [...APPROVAL_STATUSES] });
      });

      it.each([
        ['limit=1001', 'query.limit'],
        ['skip=-1', 'query.skip'],
        ['colour=red', 'query.colour'],
      ])('answers 422 for %s naming %s', async (query, path) => {
        const p = platform();
        const r = await call(p, 'GET', `/api/v1/approvals?${query}`, { key: p.readKey });
        expectProblem(r, 422);
        expect(r.body.errors.map((e: any) => e.path)).toContain(path);
      });

      it('removes the approval of a deleted intervention (404 afterwards)', async () => {
        const p = platform();
        const { interventionId, approvalId } = await escalate(p);
        expect((await call(p, 'DELETE', `/api/v1/interventions/${interventionId}`, { key: p.writeKey })).status).toBe(204);
        await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).status === 404);
        expectProblem(await decide(p, approvalId, 'approve', { approver_email: 'jane@acme.test' }), 404);
      });
    });
  },
  { env: { AGP_APPROVAL_SWEEP_MS: '200' } },
);
