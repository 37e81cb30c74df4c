import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, eventually, expectProblem, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { SlackStandIn, blockActionBody, slackSignature } from '../support/slack-standin.js';

const uniq = () => Math.random().toString(36).slice(2, 10);
const BASE = '/api/v1/integrations/slack';
const TOKEN = 'xoxb-1111-2222-standin';
const SECRET = 'abcdef0123456789abcdef0123456789';

const slack = new SlackStandIn();
slack.token = TOKEN;
beforeAll(() => slack.start());
afterAll(() => slack.stop());

/** POST an interactivity callback as Slack would (form-encoded), with `headers` (the signature, or not). */
async function callback(p: BootedPlatform, body: string, headers: Record<string, string>) {
  const res = await fetch(`${p.url}${BASE}/interactivity`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/**
 * Approvals in Slack, in both run modes, against a loopback stand-in of Slack's Web API driven through the real
 * `@slack/web-api` client: the connection (admin, write-only secrets, 422 naming bad fields), an escalation posted to
 * each channel whose filter it passes with the arguments masked and Approve / Reject buttons, callbacks refused unsigned,
 * wrongly signed or stale (401, nothing changes), a member whose role may not decide refused in Slack (ephemeral), and
 * an approver's click deciding the approval as that person and updating the message in place.
 * Source: docs/notifications.md (Approvals in Slack).
 */
describeModes(
  'approvals in Slack',
  (platform) => {
    const approver = { slack: `U${uniq().toUpperCase()}`, email: `vera-${uniq()}@example.com` };
    const viewer = { slack: `U${uniq().toUpperCase()}`, email: `val-${uniq()}@example.com` };

    /** A member of the write key's organisation with `role`, linked to a person (as after their first sign-in). */
    const member = async (p: BootedPlatform, org: string, email: string, role: string) => {
      const user = `u-${uniq()}`;
      await p.queryRows('INSERT INTO agp_users (id, issuer, subject, email, name) VALUES ($1, $2, $3, $4, $5)', [user, 'https://idp.example.com', user, email, email.split('@')[0]]);
      await p.queryRows('INSERT INTO agp_memberships (id, organization_id, email, user_id, role) VALUES ($1, $2, $3, $4, $5)', [`m-${uniq()}`, org, email, user, role]);
    };

    it('keeps the connection write-only for admins and refuses bad fields with 422 naming each', async () => {
      const p = platform();
      const body = { bot_token: TOKEN, signing_secret: SECRET, channels: [{ channel: 'C0RISKY', filter: { min_risk_level: 'high' } }, { channel: 'C0ALL' }] };
      expectProblem(await call(p, 'PUT', BASE, { key: p.writeKey, body }), 403);
      expectProblem(await call(p, 'GET', BASE, { key: p.adminKey }), 404);
      const bad = await call(p, 'PUT', BASE, { key: p.adminKey, body: { bot_token: 'not-a-token', signing_secret: 'short', channels: [] } });
      expectProblem(bad, 422, ['body.bot_token', 'body.signing_secret', 'body.channels']);
      const put = await call(p, 'PUT', BASE, { key: p.adminKey, body });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      expect(put.body).toMatchObject({ channels: body.channels, bot_token_hint: TOKEN.slice(-4) });
      const got = await call(p, 'GET', BASE, { key: p.adminKey });
      expect(got.body).toEqual(put.body);
      expect(JSON.stringify(got.body)).not.toContain(SECRET);
      expect(JSON.stringify(got.body)).not.toContain(TOKEN);
      expectProblem(await call(p, 'GET', BASE, { key: p.otherOrgAdminKey }), 404);

      // The same connection through the platform's MCP tools: admin keys only, the token and the secret never returned.
      const tool = (tool_name: string, args: Record<string, unknown>, key = p.adminKey) => call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name, arguments: args } });
      expect((await tool('get_slack_connection', {}, p.writeKey)).body).toMatchObject({ success: false, error: { code: 'forbidden' } });
      expect((await tool('put_slack_connection', body, p.writeKey)).body).toMatchObject({ success: false, error: { code: 'forbidden' } });
      const viaTool = await tool('put_slack_connection', { ...body, channels: [{ channel: 'C0ALL' }] });
      expect(viaTool.body).toMatchObject({ success: true, data: { channels: [{ channel: 'C0ALL' }], bot_token_hint: TOKEN.slice(-4) } });
      const read = await tool('get_slack_connection', {});
      expect(read.body).toMatchObject({ success: true, data: { channels: [{ channel: 'C0ALL' }] } });
      expect(JSON.stringify(read.body)).not.toContain(SECRET);
      expect(JSON.stringify(read.body)).not.toContain(TOKEN);
      expect((await tool('put_slack_connection', { ...body, bot_token: 'nope' })).body).toMatchObject({ success: false });
      expect((await tool('delete_slack_connection', {})).body).toMatchObject({ success: true, data: { deleted: true } });
      expect((await tool('get_slack_connection', {})).body).toMatchObject({ success: false, error: { code: 'not_found' } });
      expectProblem(await call(p, 'GET', BASE, { key: p.adminKey }), 404);
      expect((await call(p, 'PUT', BASE, { key: p.adminKey, body })).status).toBe(200); // as the next test expects it
    });

    it('posts an escalation to each channel whose filter it passes, masked, with buttons; an approver’s signed click decides it and updates the message', async () => {
      const p = platform();
      const agent = `slack-agent-${uniq()}`;
      const posted = slack.of('chat.postMessage').length;
      const r = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: agent, risk_level: 'medium', estimated_cost_usd: 950, reason: 'above the threshold', original_inputs: { amount: 950, notify: 'jane.doe@example.com' } },
      });
      expect(r.status).toBe(201);
      const approvalId = `apr-${r.body.id}`;
      // risk medium: only the unfiltered channel.
      const post = await eventually(async () => slack.of('chat.postMessage').slice(posted).find((c) => JSON.stringify(c.args.blocks).includes(approvalId)) ?? null, 15_000);
      await new Promise((res) => setTimeout(res, 300));
      expect(slack.of('chat.postMessage').slice(posted).filter((c) => JSON.stringify(c.args.blocks).includes(approvalId)).map((c) => c.args.channel)).toEqual(['C0ALL']);
      expect(post.token).toBe(TOKEN);
      const blocks = JSON.stringify(post.args.blocks);
      expect(blocks).toContain(agent);
      expect(blocks).toContain('wire_transfer');
      expect(blocks).toContain('above the threshold');
      expect(blocks).not.toContain('jane.doe@example.com'); // masked
      const buttons = post.args.blocks.find((b: { type: string }) => b.type === 'actions').elements as Array<{ action_id: string; value: string }>;
      expect(buttons.map((b) => b.action_id)).toEqual(['agp_approve', 'agp_reject']);
      const org = JSON.parse(buttons[0].value).o as string;
      await member(p, org, approver.email, 'approver');
      await member(p, org, viewer.email, 'viewer');
      slack.users.set(approver.slack, { id: approver.slack, email: approver.email });
      slack.users.set(viewer.slack, { id: viewer.slack, email: viewer.email });
      const ts = post.ts!; // the message the click is on, as Slack answered its post
      const approve = (user: string) => blockActionBody(user, 'C0ALL', ts, buttons[0].value, post.args.blocks);
      const pending = async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status;

      // Unsigned, wrongly signed, stale, or signed with another secret: 401, nothing changes.
      const body = approve(approver.slack);
      expectProblem(await callback(p, body, {}), 401);
      expectProblem(await callback(p, body, { ...slackSignature(SECRET, body), 'x-slack-signature': 'v0=00' }), 401);
      expectProblem(await callback(p, body, slackSignature(SECRET, body, Math.floor(Date.now() / 1000) - 600)), 401);
      expectProblem(await callback(p, body, slackSignature('another-secret-0123456789', body)), 401);
      expectProblem(await callback(p, 'payload=%7B%7D', slackSignature(SECRET, 'payload=%7B%7D')), 401); // names no organisation
      expect(await pending()).toBe('pending');

      // A viewer: refused in Slack (ephemeral), nothing changes.
      const ephemeral = slack.of('chat.postEphemeral').length;
      const byViewer = approve(viewer.slack);
      const refused = await callback(p, byViewer, slackSignature(SECRET, byViewer));
      expect(refused.status, JSON.stringify(refused.body)).toBe(200);
      expect(refused.body).toEqual({ result: 'refused' });
      expect(slack.of('chat.postEphemeral').slice(ephemeral)).toEqual([expect.objectContaining({ args: expect.objectContaining({ channel: 'C0ALL', user: viewer.slack, text: expect.stringContaining('viewer') }) })]);
      expect(await pending()).toBe('pending');

      // The approver: decided as that person; the message is updated in place.
      const decided = await callback(p, body, slackSignature(SECRET, body));
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      expect(decided.body).toEqual({ result: 'decided' });
      const approval = (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body;
      expect(approval).toMatchObject({ status: 'approved' });
      expect(JSON.stringify(approval)).toContain(approver.email);
      // Updated in place once the decision is in the event log, once.
      const update = await eventually(async () => slack.of('chat.update').find((c) => c.args.ts === ts) ?? null, 15_000);
      expect(update.args).toMatchObject({ channel: 'C0ALL', ts });
      expect(update.args.text).toContain(approver.email);
      expect(update.args.text).toContain('Approved');
      expect(JSON.stringify(update.args.blocks)).not.toContain('agp_approve'); // the buttons are gone
      expect(JSON.stringify(update.args.blocks)).toContain('wire_transfer'); // the request's facts stay
      // A second click: already decided, told in Slack, nothing changes.
      const again = await callback(p, body, slackSignature(SECRET, body));
      expect(again.body).toEqual({ result: 'refused' });
      expect((await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body.status).toBe('approved');
      await new Promise((res) => setTimeout(res, 500));
      expect(slack.of('chat.update').filter((c) => c.args.ts === ts)).toHaveLength(1); // never twice for one decision
      expect((await call(p, 'DELETE', BASE, { key: p.adminKey })).status).toBe(204);
      expectProblem(await call(p, 'GET', BASE, { key: p.adminKey }), 404);
    });

    it('updates every posted message in place when the approval is decided elsewhere (REST API), once per message', async () => {
      const p = platform();
      const put = await call(p, 'PUT', BASE, { key: p.adminKey, body: { bot_token: TOKEN, signing_secret: SECRET, channels: [{ channel: 'C0RISKY', filter: { min_risk_level: 'high' } }, { channel: 'C0ALL' }] } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const agent = `slack-agent-${uniq()}`;
      const r = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'delete_records', agent_id: agent, risk_level: 'critical', reason: 'bulk delete', original_inputs: { table: 'customers' } },
      });
      expect(r.status).toBe(201);
      const approvalId = `apr-${r.body.id}`;
      // risk critical: both channels.
      const mine = () => slack.of('chat.postMessage').filter((c) => JSON.stringify(c.args.blocks).includes(approvalId));
      const posts = await eventually(async () => (mine().length === 2 ? mine() : null), 15_000);
      expect(posts.map((c) => c.args.channel).sort()).toEqual(['C0ALL', 'C0RISKY']);
      const decidedBefore = slack.of('chat.update').length;

      const rejected = await call(p, 'POST', `/api/v1/approvals/${approvalId}/reject`, { key: p.writeKey, body: { approver_email: 'lead@example.com', notes: 'not today' } });
      expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
      const updates = await eventually(async () => {
        const u = slack.of('chat.update').slice(decidedBefore);
        return u.length >= 2 ? u : null;
      }, 15_000);
      for (const post of posts) {
        const u = updates.find((c) => c.args.channel === post.args.channel && c.args.ts === post.ts);
        expect(u, `chat.update of ${post.args.channel} ${post.ts}`).toBeDefined();
        expect(u!.token).toBe(TOKEN);
        expect(u!.args.text).toMatch(/^Rejected by \S+/);
        expect(JSON.stringify(u!.args.blocks)).toContain('Rejected');
        expect(JSON.stringify(u!.args.blocks)).toContain('delete_records');
        expect(JSON.stringify(u!.args.blocks)).not.toContain('agp_approve');
      }
      const decidedBy = (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).body;
      expect(decidedBy.status).toBe('rejected');
      // Never twice for one decision: a later poll of the worker sends nothing more.
      await new Promise((res) => setTimeout(res, 600));
      expect(slack.of('chat.update').slice(decidedBefore)).toHaveLength(2);
      expect((await call(p, 'DELETE', BASE, { key: p.adminKey })).status).toBe(204);
    });
  },
  () => ({
    env: {
      AGP_SECRETS_KEY: randomBytes(32).toString('base64'),
      AGP_SLACK_API_URL: slack.url,
      AGP_WEBHOOK_POLL_MS: '50',
      AGP_WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300',
    },
  }),
);
