import { afterAll, expect, it } from 'vitest';
import { Governor } from '@agp/sdk';
import { call, eventually, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { signInPerson } from '../support/oidc-people.js';

/**
 * Named approvers, separation of duties and `approvals_required`, with people signed in through a real OpenID provider
 * and the real SDK waiting on the approval, in both run modes: a policy needing two approvals under separation of
 * duties escalates a call; a key, the agent's owner and its last changer are refused (403, nothing appended); the first
 * person's approval keeps the approval pending and the SDK waiting; the same person again is a 409; a second person's
 * approval lets the call run. Each decision names the person on the approval and on the intervention's audit trail.
 * Source: docs/auth.md (Named approvers, separation of duties, approvals_required).
 */
const PUBLIC_URL = 'http://agp.test';
const PEOPLE = {
  alice: { email: 'alice@acme.test', name: 'Alice Admin' },
  owen: { email: 'owen@acme.test', name: 'Owen Owner' },
  cora: { email: 'cora@acme.test', name: 'Cora Changer' },
  april: { email: 'april@acme.test', name: 'April Approver' },
  sam: { email: 'sam@acme.test', name: 'Sam Second' },
};
type Person = keyof typeof PEOPLE;
const ROLES: Record<Exclude<Person, 'alice'>, string> = { owen: 'approver', cora: 'policy_admin', april: 'approver', sam: 'approver' };

let provider: TestProvider;

describeModes(
  'named approvers, separation of duties, two approvers',
  (platform, mode) => {
    const agentId = `treasury-${mode}`;
    const cookies = {} as Record<Person, string>;
    const ids = {} as Record<Person, string>;
    const as = (who: Person) => ({ headers: { cookie: cookies[who], origin: PUBLIC_URL } });

    it('signs the people in: an admin invites them, each signs in with a role', async () => {
      const p = platform();
      cookies.alice = await signInPerson(p.url, PUBLIC_URL, provider, 'alice');
      for (const [who, role] of Object.entries(ROLES) as Array<[Person, string]>) {
        const r = await call(p, 'POST', '/api/v1/members', { ...as('alice'), body: { email: PEOPLE[who].email, role } });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      for (const who of Object.keys(PEOPLE) as Person[]) {
        cookies[who] ??= await signInPerson(p.url, PUBLIC_URL, provider, who);
        ids[who] = (await call(p, 'GET', '/api/v1/auth/me', { headers: { cookie: cookies[who] } })).body.user.id;
      }
    });

    it('takes approvals_required and separation_of_duties on a policy, refusing bad values by name; the agent shows who last changed it', async () => {
      const p = platform();
      const before = (await call(p, 'GET', '/api/v1/policies', { key: p.readKey })).body.total;
      const bad = await call(p, 'POST', '/api/v1/policies', { ...as('cora'), body: { name: 'bad', approval_required_actions: ['wire_transfer'], approvals_required: 3, separation_of_duties: 'yes' } });
      expectProblem(bad, 422);
      expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.approvals_required', 'body.separation_of_duties']);
      expect(JSON.stringify(bad.body)).toMatch(/1 or 2/);
      expect((await call(p, 'GET', '/api/v1/policies', { key: p.readKey })).body.total).toBe(before);
      const policy = await call(p, 'POST', '/api/v1/policies', {
        ...as('cora'),
        body: { name: 'Treasury four eyes', agent_ids: [agentId], approval_required_actions: ['wire_transfer'], approvals_required: 2, separation_of_duties: true },
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      expect(policy.body).toMatchObject({ approvals_required: 2, separation_of_duties: true });
      const plain = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: 'plain', agent_ids: ['nobody'] } });
      expect(plain.body).toMatchObject({ approvals_required: 1, separation_of_duties: false });
      // Cora registers the agent, owned by Owen (the owner is compared case-insensitively).
      const reg = await call(p, 'POST', '/api/v1/agents', { ...as('cora'), body: { agent_id: agentId, name: 'Treasury', owner: 'Owen@ACME.test' } });
      expect(reg.status, JSON.stringify(reg.body)).toBe(201);
      const agent = await call(p, 'GET', `/api/v1/agents/${agentId}`, { key: p.readKey });
      expect(agent.body).toMatchObject({ owner: 'Owen@ACME.test', changed_by: `user:${ids.cora}`, changed_by_name: 'cora@acme.test' });
    });

    it('the SDK waits through the first approval and runs the call on the second; a key, the owner, the last changer and a repeat are refused', async () => {
      const p = platform();
      const gov = await Governor.connect({ url: p.url, key: p.writeKey, agentId, approvalPollMs: 100, onReportError: () => undefined });
      try {
        let approvalId: string | null = null;
        let ran = false;
        const acting = gov.startRun().act('wire_transfer', { amount: 900, to: 'DE00 1234' }, () => ((ran = true), 'sent'), {
          onEscalated: (e) => void (approvalId = e.approvalId),
        });
        let settled = false;
        void acting.finally(() => (settled = true)).catch(() => undefined);
        await eventually(async () => approvalId !== null && (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).status === 200, 30_000);
        const id = approvalId!;
        const url = `/api/v1/approvals/${id}`;
        const interventionId = id.slice('apr-'.length);
        const opened = await call(p, 'GET', url, { key: p.readKey });
        expect(opened.body).toMatchObject({ status: 'pending', approvals_required: 2, separation_of_duties: true, approvals: [], decided_by: null });

        // Refused, each with problem details, nothing appended: a key, the owner, the last changer.
        const byKey = await call(p, 'POST', `${url}/approve`, { key: p.writeKey, body: { approver_email: 'desk@acme.test' } });
        expectProblem(byKey, 403);
        expect(byKey.body.detail).toMatch(/separation of duties: an API key cannot decide it/);
        const byOwner = await call(p, 'POST', `${url}/approve`, { ...as('owen'), body: { approver_email: 'owen@acme.test' } });
        expectProblem(byOwner, 403);
        expect(byOwner.body.detail).toMatch(/owen@acme.test owns agent/);
        const byChanger = await call(p, 'POST', `${url}/reject`, { ...as('cora'), body: { approver_email: 'cora@acme.test' } });
        expectProblem(byChanger, 403);
        expect(byChanger.body.detail).toMatch(/last changed agent/);
        expect(await p.streamEventTypes(`intervention-${interventionId}`)).toEqual(['InterventionRecorded']);

        // April approves: still pending, the SDK keeps waiting.
        const first = await call(p, 'POST', `${url}/approve`, { ...as('april'), body: { approver_email: 'april@acme.test', notes: 'matches invoice 77' } });
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        const april = { type: 'user', id: ids.april, email: 'april@acme.test', name: 'April Approver' };
        expect(first.body).toMatchObject({ status: 'pending', decided_by: null, approvals: [{ by: april, at: expect.any(String), comment: 'matches invoice 77' }] });
        const again = await call(p, 'POST', `${url}/approve`, { ...as('april'), body: { approver_email: 'april@acme.test' } });
        expectProblem(again, 409);
        expect(again.body.detail).toMatch(/needs 2 approvals from different approvers; april@acme.test already approved it/);
        await new Promise((r) => setTimeout(r, 600));
        expect({ settled, ran }).toEqual({ settled: false, ran: false });

        // Sam approves: approved, the call runs.
        const second = await call(p, 'POST', `${url}/approve`, { ...as('sam'), body: { approver_email: 'sam@acme.test' } });
        expect(second.status, JSON.stringify(second.body)).toBe(200);
        const sam = { type: 'user', id: ids.sam, email: 'sam@acme.test', name: 'Sam Second' };
        expect(second.body).toMatchObject({ status: 'approved', decided_by: sam, actor: `user:${ids.sam}`, approver_email: 'sam@acme.test', approvals: [{ by: april }, { by: sam, comment: null }] });
        expect(await acting).toBe('sent');
        expect(ran).toBe(true);

        // The intervention's audit trail names both.
        const trail = (await call(p, 'GET', `/api/v1/interventions/${interventionId}`, { key: p.readKey })).body.audit_trail;
        expect(trail.slice(1)).toMatchObject([
          { event: 'InterventionApprovalGiven', actor: 'approver:april@acme.test', changes: {}, details: { by: april, notes: 'matches invoice 77', approvals_required: 2 } },
          { event: 'InterventionOutcomeChanged', actor: 'approver:sam@acme.test', changes: { outcome: { from: 'escalated', to: 'approved_after_review' } }, details: { by: sam } },
        ]);
      } finally {
        await gov.close();
      }
    });
  },
  async () => {
    await provider?.close().catch(() => undefined); // the other mode's
    provider = await startTestProvider(`${PUBLIC_URL}/auth/callback`, PEOPLE);
    return { env: { AGP_AUTH_MODE: 'both', AGP_PUBLIC_URL: PUBLIC_URL, AGP_OIDC_ISSUER: provider.issuer, AGP_OIDC_CLIENT_ID: provider.clientId, AGP_OIDC_CLIENT_SECRET: provider.clientSecret, AGP_ADMIN_EMAILS: 'alice@acme.test', AGP_INIT_ORG: 'acme' } };
  },
);

afterAll(async () => {
  await provider?.close().catch(() => undefined);
});
