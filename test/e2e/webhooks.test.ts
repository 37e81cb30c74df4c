import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, eventually, expectProblem, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { Receiver, type Received } from '../support/webhook-receiver.js';

const uniq = () => Math.random().toString(36).slice(2, 10);
const BASE = '/api/v1/webhooks';

const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

/**
 * Signed webhooks over real HTTP, in both run modes: subscriptions (admin only, secret shown once, 422 for URLs the
 * platform does not call, another organisation's is a 404), deliveries signed per Standard Webhooks and verified with
 * the stock library, retries with the same webhook-id, 410 disabling a subscription and `delivery.disabled` to the
 * others, a slow receiver not delaying another, secret rotation with an overlap, and (distributed) a restart of the
 * delivering process mid-retry. Source: docs/notifications.md.
 */
describeModes(
  'signed webhooks',
  (platform, mode) => {
    /** Create a subscription for `path` on the receiver; its secret is registered with the receiver. */
    const subscribe = async (p: BootedPlatform, path: string, events: string[], extra: Record<string, unknown> = {}) => {
      const r = await call(p, 'POST', BASE, { key: p.adminKey, body: { url: `${receiver.url}${path}`, events, ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.secret).toMatch(/^whsec_/);
      receiver.secrets.set(path, [r.body.secret]);
      return r.body as { id: string; secret: string };
    };
    const escalate = async (p: BootedPlatform, agent: string) => {
      const r = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: agent, risk_level: 'high', estimated_cost_usd: 950, reason: 'above the threshold', original_inputs: { amount: 950 } },
      });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const parsed = (g: Received) => JSON.parse(g.body) as { type: string; data: any; organization_id: string };

    it('refuses non-admin keys (403) and URLs the platform does not call (422 naming body.url), writing nothing', async () => {
      const p = platform();
      const before = (await call(p, 'GET', BASE, { key: p.adminKey })).body.total;
      const good = { url: `${receiver.url}/x`, events: ['approval.requested'] };
      expectProblem(await call(p, 'POST', BASE, { key: p.writeKey, body: good }), 403);
      expectProblem(await call(p, 'GET', BASE, { key: p.readKey }), 403);
      for (const url of ['http://user:pw@127.0.0.1/x', 'ftp://127.0.0.1/x', `http://127.0.0.1/${'a'.repeat(2100)}`, 'http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://[::1]:8080/x']) {
        expectProblem(await call(p, 'POST', BASE, { key: p.adminKey, body: { ...good, url } }), 422, ['body.url']);
      }
      const badKind = await call(p, 'POST', BASE, { key: p.adminKey, body: { ...good, events: ['nope'] } });
      expectProblem(badKind, 422, ['body.events']);
      expect(JSON.stringify(badKind.body)).toContain('approval.requested'); // names the allowed values
      expect((await call(p, 'GET', BASE, { key: p.adminKey })).body.total).toBe(before);
    });

    it('sends approval.requested, intervention.created and approval.decided signed; the secret is shown once; other organisations see nothing', async () => {
      const p = platform();
      const path = `/approvals-${uniq()}`;
      const agent = `wh-agent-${uniq()}`;
      const hook = await subscribe(p, path, ['approval.requested', 'approval.decided', 'intervention.created'], { filter: { agent_ids: [agent] }, description: 'ops' });
      const got = await call(p, 'GET', `${BASE}/${hook.id}`, { key: p.adminKey });
      expect(got.body).toMatchObject({ id: hook.id, enabled: true, description: 'ops', filter: { agent_ids: [agent] }, consecutive_failures: 0 });
      expect(JSON.stringify(got.body)).not.toContain(hook.secret);
      expect(JSON.stringify((await call(p, 'GET', BASE, { key: p.adminKey })).body)).not.toContain(hook.secret);

      // Another organisation: not listed, 404 on every route.
      expect((await call(p, 'GET', BASE, { key: p.otherOrgAdminKey })).body.webhooks.map((w: { id: string }) => w.id)).not.toContain(hook.id);
      expectProblem(await call(p, 'GET', `${BASE}/${hook.id}`, { key: p.otherOrgAdminKey }), 404);
      expectProblem(await call(p, 'PATCH', `${BASE}/${hook.id}`, { key: p.otherOrgAdminKey, body: { enabled: false } }), 404);
      expectProblem(await call(p, 'DELETE', `${BASE}/${hook.id}`, { key: p.otherOrgAdminKey }), 404);
      expectProblem(await call(p, 'GET', `${BASE}/${hook.id}/deliveries`, { key: p.otherOrgAdminKey }), 404);

      await escalate(p, `other-${uniq()}`); // filtered out: another agent
      const id = await escalate(p, agent);
      await eventually(async () => receiver.at(path).length >= 2 || null, 15_000);
      const decided = await call(p, 'POST', `/api/v1/approvals/apr-${id}/approve`, { key: p.writeKey, body: { approver_email: 'ops@example.com', notes: 'ok' } });
      expect(decided.status).toBe(200);
      await eventually(async () => receiver.at(path).length >= 3 || null, 15_000);
      const all = receiver.at(path);
      expect(all.map((g) => parsed(g).type).sort()).toEqual(['approval.decided', 'approval.requested', 'intervention.created']);
      for (const g of all) {
        expect(g.verifiedWith).toEqual([hook.secret]);
        expect(parsed(g).data).toBeDefined();
        expect(JSON.stringify(parsed(g).data)).toContain(agent);
      }
      const requested = parsed(all.find((g) => parsed(g).type === 'approval.requested')!);
      expect(requested.data).toMatchObject({ approval_id: `apr-${id}`, intervention: { id, agent_id: agent, risk_level: 'high', outcome: 'escalated' } });
      expect(parsed(all.find((g) => parsed(g).type === 'approval.decided')!).data).toMatchObject({ approval_id: `apr-${id}`, status: 'approved', agent_id: agent });

      // The receiver answered before the platform recorded the answer: wait until the log has all three delivered.
      const log = await eventually(async () => {
        const r = await call(p, 'GET', `${BASE}/${hook.id}/deliveries`, { key: p.adminKey });
        return r.body.deliveries.every((d: { status: string }) => d.status === 'delivered') ? r : null;
      });
      expect(log.body.total).toBe(3);
      for (const d of log.body.deliveries) expect(d).toMatchObject({ status: 'delivered', attempts: 1, response_status: 204, latency_ms: expect.any(Number), next_attempt_at: null });
    });

    it('retries a failing receiver with the same webhook-id until it answers 2xx; redeliver sends it again', async () => {
      const p = platform();
      const path = `/flaky-${uniq()}`;
      receiver.behaviour.set(path, (n) => (n < 3 ? { status: 500 } : n === 3 ? { status: 302, location: 'http://169.254.169.254/' } : { status: 200 }));
      const hook = await subscribe(p, path, ['kill_switch.changed']);
      const agent = `ks-${uniq()}`;
      expect((await call(p, 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p.writeKey, body: { engaged: true, reason: 'test' } })).status).toBe(200);
      await eventually(async () => receiver.at(path).length >= 5 || null, 20_000);
      const ids = new Set(receiver.at(path).map((g) => g.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const g of receiver.at(path)) expect(g.verifiedWith).toEqual([hook.secret]);
      expect(parsed(receiver.at(path)[0]).data).toMatchObject({ scope: 'agent', agent_id: agent, engaged: true });
      const delivery = await eventually(async () => {
        const d = (await call(p, 'GET', `${BASE}/${hook.id}/deliveries`, { key: p.adminKey })).body.deliveries[0];
        return d?.status === 'delivered' ? d : null;
      });
      expect(delivery).toMatchObject({ id: [...ids][0], attempts: 5, response_status: 200 });
      // Redeliver: the same id again.
      const again = await call(p, 'POST', `${BASE}/${hook.id}/deliveries/${delivery.id}/redeliver`, { key: p.adminKey });
      expect(again.status).toBe(200);
      await eventually(async () => receiver.at(path).length >= 6 || null);
      expect(receiver.at(path)[5].headers['webhook-id']).toBe(delivery.id);
      expect((await call(p, 'GET', `${BASE}/${hook.id}`, { key: p.adminKey })).body.consecutive_failures).toBe(0);
    });

    it('410 disables the subscription and tells the other subscriptions (delivery.disabled); a slow receiver delays no other', async () => {
      const p = platform();
      const gone = `/gone-${uniq()}`;
      const slow = `/slow-${uniq()}`;
      const watcher = `/watch-${uniq()}`;
      receiver.behaviour.set(gone, () => ({ status: 410 }));
      receiver.behaviour.set(slow, () => ({ status: 200, delayMs: 4_000 }));
      const goneHook = await subscribe(p, gone, ['policy.changed']);
      await subscribe(p, slow, ['policy.changed']);
      await subscribe(p, watcher, ['policy.changed', 'delivery.disabled']);
      const created = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `wh-${uniq()}`, denied_actions: ['drop_table'] } });
      expect(created.status).toBe(201);
      await eventually(async () => receiver.at(watcher).some((g) => parsed(g).type === 'delivery.disabled') || null, 15_000);
      // The watcher got the policy change and the notice while the slow receiver still held its first request.
      const watcherGot = () => receiver.at(watcher);
      let watched = watcherGot();
      await eventually(async () => (watched = watcherGot()).length >= 2 || null);
      const byType = (t: string) => watched.find((g) => parsed(g).type === t)!;
      expect(watched.map((g) => parsed(g).type).sort()).toEqual(['delivery.disabled', 'policy.changed']);
      expect(parsed(byType('policy.changed')).data).toMatchObject({ policy_id: created.body.id, change: 'created' });
      expect(parsed(byType('delivery.disabled')).data).toMatchObject({ webhook_id: goneHook.id, reason: 'gone', last_response_status: 410 });
      const slowFirst = await eventually(async () => receiver.at(slow)[0]);
      expect(byType('policy.changed').at - slowFirst.at).toBeLessThan(4_000);
      expect(receiver.at(gone)).toHaveLength(1);
      expect((await call(p, 'GET', `${BASE}/${goneHook.id}`, { key: p.adminKey })).body).toMatchObject({ enabled: false, disabled_reason: 'gone' });
      expectProblem(await call(p, 'POST', `${BASE}/${goneHook.id}/deliveries/x/redeliver`, { key: p.adminKey }), 409);
    });

    it('signs with both secrets during a rotation overlap, and with the new one only after it', async () => {
      const p = platform();
      const path = `/rotate-${uniq()}`;
      const hook = await subscribe(p, path, ['kill_switch.changed']);
      const rotated = await call(p, 'POST', `${BASE}/${hook.id}/rotate-secret`, { key: p.adminKey, body: { overlap_seconds: 3600 } });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.body.secret).not.toBe(hook.secret);
      expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));
      receiver.secrets.set(path, [hook.secret, rotated.body.secret]);
      await call(p, 'PUT', `/api/v1/kill-switches/agents/rot-${uniq()}`, { key: p.writeKey, body: { engaged: true } });
      await eventually(async () => receiver.at(path).length >= 1 || null);
      expect(receiver.at(path)[0].verifiedWith).toEqual([hook.secret, rotated.body.secret]);
      const noOverlap = await call(p, 'POST', `${BASE}/${hook.id}/rotate-secret`, { key: p.adminKey, body: { overlap_seconds: 0 } });
      receiver.secrets.set(path, [hook.secret, rotated.body.secret, noOverlap.body.secret]);
      await call(p, 'PUT', `/api/v1/kill-switches/agents/rot-${uniq()}`, { key: p.writeKey, body: { engaged: true } });
      await eventually(async () => receiver.at(path).length >= 2 || null);
      expect(receiver.at(path)[1].verifiedWith).toEqual([noOverlap.body.secret]);
      // The same subscription through the platform's MCP tools: admin keys only, never a secret in a read.
      const tool = (tool_name: string, args: Record<string, unknown>, key = p.adminKey) => call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name, arguments: args } });
      expect((await tool('list_webhooks', {}, p.writeKey)).body).toMatchObject({ success: false, error: { code: 'forbidden' } });
      expect((await tool('create_webhook', { url: `${receiver.url}/t`, events: ['policy.changed'] }, p.writeKey)).body).toMatchObject({ success: false, error: { code: 'forbidden' } });
      const listed = await tool('list_webhooks', { limit: 200 });
      expect(listed.body.data.webhooks.map((w: { id: string }) => w.id)).toContain(hook.id);
      expect(JSON.stringify(listed.body)).not.toContain(noOverlap.body.secret);
      const viaTool = await tool('rotate_webhook_secret', { id: hook.id });
      expect(viaTool.body).toMatchObject({ success: true, data: { id: hook.id, secret: expect.stringMatching(/^whsec_/) } });
      await eventually(async () => (await tool('list_webhook_deliveries', { id: hook.id, status: 'delivered' })).body.data.total === 2 || null);
      expect((await call(p, 'DELETE', `${BASE}/${hook.id}`, { key: p.adminKey })).status).toBe(204);
      expectProblem(await call(p, 'GET', `${BASE}/${hook.id}`, { key: p.adminKey }), 404);
    });

    it('sends eval.regression for a submitted eval run that fails scenarios its suite\'s baseline passed, and nothing for one that does not', async () => {
      const p = platform();
      const path = `/evals-${uniq()}`;
      const hook = await subscribe(p, path, ['eval.regression']);
      const suite = `suite-${uniq()}`;
      const run = (id: string, branch: string, status: 'blocked' | 'failed') =>
        call(p, 'POST', '/api/v1/evals', { key: p.writeKey, body: { id, suite, agent_id: 'eval-agent', branch, commit_sha: 'abc1234', scenarios: [{ name: 'inject-1', category: 'prompt_injection', status }, { name: 'inject-2', category: 'prompt_injection', status: 'blocked' }] } });
      const base = `base-${uniq()}`;
      expect((await run(base, 'main', 'blocked')).status).toBe(201);
      expect((await run(`same-${uniq()}`, 'feature', 'blocked')).status).toBe(201);
      const regressed = `reg-${uniq()}`;
      expect((await run(regressed, 'feature', 'failed')).status).toBe(201);
      await eventually(async () => receiver.at(path).length >= 1 || null, 15_000);
      await eventually(async () => (await call(p, 'GET', `${BASE}/${hook.id}/deliveries`, { key: p.adminKey })).body.deliveries[0]?.status === 'delivered' || null);
      expect(receiver.at(path)).toHaveLength(1);
      const got = receiver.at(path)[0];
      expect(got.verifiedWith).toEqual([hook.secret]);
      expect(parsed(got)).toMatchObject({ type: 'eval.regression', data: { eval_run_id: regressed, baseline_id: base, suite, agent_id: 'eval-agent', branch: 'feature', regressions: 1, ci_status: 'fail' } });
    });

    it.runIf(mode === 'distributed')('delivers everything after the delivering process is killed mid-retry and restarted', async () => {
      const p = platform();
      const path = `/restart-${uniq()}`;
      let healthy = false;
      receiver.behaviour.set(path, () => ({ status: healthy ? 200 : 503 }));
      await subscribe(p, path, ['kill_switch.changed']);
      const agents = [`r1-${uniq()}`, `r2-${uniq()}`];
      for (const a of agents) await call(p, 'PUT', `/api/v1/kill-switches/agents/${a}`, { key: p.writeKey, body: { engaged: true } });
      await eventually(async () => new Set(receiver.at(path).map((g) => g.headers['webhook-id'])).size >= 2 || null, 15_000);
      await p.killAndRestart!('policies');
      healthy = true;
      // Both deliveries arrive, each under its one webhook-id, and the log says delivered.
      await eventually(async () => new Set(receiver.at(path).filter((g) => g.status === 200).map((g) => g.headers['webhook-id'])).size === 2 || null, 30_000);
      expect(new Set(receiver.at(path).map((g) => g.headers['webhook-id'])).size).toBe(2);
      expect(new Set(receiver.at(path).filter((g) => g.status === 200).map((g) => parsed(g).data.agent_id))).toEqual(new Set(agents));
      for (const g of receiver.at(path)) expect(g.verifiedWith).toHaveLength(1);
    }, 60_000);
  },
  {
    env: {
      AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      AGP_SECRETS_KEY: randomBytes(32).toString('base64'),
      AGP_WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300,300,500,1000,2000,4000,8000,15000',
      AGP_WEBHOOK_POLL_MS: '50',
      AGP_WEBHOOK_TIMEOUT_MS: '6000',
    },
  },
);
