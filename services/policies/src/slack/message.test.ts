import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { slackCallbackOrganization } from '@agp/contracts';
import { approvalRequestMessage, buttonValue, decidedMessage, maskedArguments, slackSignatureValid } from './message.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const sign = (body: string, ts: number, secret = SECRET) => `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;

describe('Slack request signatures (v0)', () => {
  const now = 1_764_000_000_000;
  const ts = now / 1000;
  const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
  it('accepts Slack’s signature of the body within five minutes', () => {
    expect(slackSignatureValid(SECRET, body, String(ts), sign(body, ts), now)).toBe(true);
    expect(slackSignatureValid(SECRET, body, String(ts - 299), sign(body, ts - 299), now)).toBe(true);
  });
  it('refuses a missing, wrong, other-secret, altered-body or stale signature', () => {
    expect(slackSignatureValid(SECRET, body, null, sign(body, ts), now)).toBe(false);
    expect(slackSignatureValid(SECRET, body, String(ts), null, now)).toBe(false);
    expect(slackSignatureValid(SECRET, body, String(ts), 'v0=00', now)).toBe(false);
    expect(slackSignatureValid(SECRET, body, String(ts), sign(body, ts, 'another-secret'), now)).toBe(false);
    expect(slackSignatureValid(SECRET, `${body}x`, String(ts), sign(body, ts), now)).toBe(false);
    expect(slackSignatureValid(SECRET, body, String(ts - 301), sign(body, ts - 301), now)).toBe(false);
    expect(slackSignatureValid(SECRET, body, 'abc', sign(body, ts), now)).toBe(false);
  });
});

describe('approval messages', () => {
  const facts = { organization_id: 'acme', approval_id: 'apr-1', agent_id: 'pay-bot', action_name: 'wire_transfer', reason: 'over <limit> & more', risk_level: 'high', estimated_cost_usd: 950, arguments: { to: 'jane.doe@example.com', amount: 950 }, expires_at: null };
  it('shows the request with the arguments masked, escaped text, and buttons naming the organisation and approval', () => {
    const m = approvalRequestMessage(facts);
    const text = JSON.stringify(m.blocks);
    expect(text).not.toContain('jane.doe@example.com');
    expect(text).toContain('950');
    expect(text).toContain('over &lt;limit&gt; &amp; more');
    const actions = m.blocks.find((b) => (b as { type: string }).type === 'actions') as { elements: Array<{ value: string }> };
    expect(actions.elements.map((e) => JSON.parse(e.value))).toEqual([{ o: 'acme', a: 'apr-1', d: 'approve' }, { o: 'acme', a: 'apr-1', d: 'reject' }]);
    expect(slackCallbackOrganization(new URLSearchParams({ payload: JSON.stringify({ actions: [{ value: buttonValue('acme', 'apr-1', 'approve') }] }) }).toString())).toBe('acme');
    expect(slackCallbackOrganization('payload=not-json')).toBeNull();
  });
  it('replaces the buttons by the outcome once decided; an expiry names no one', () => {
    const done = decidedMessage(approvalRequestMessage(facts), { status: 'rejected', decided_by: 'vera@example.com', at: '2026-11-29T10:00:00.000Z' });
    expect(JSON.stringify(done.blocks)).not.toContain('"actions"');
    expect(JSON.stringify(done.blocks)).toContain('wire_transfer'); // the request's facts stay
    expect(done.text).toBe('Rejected by vera@example.com');
    expect(JSON.stringify(done.blocks.at(-1))).toContain('2026-11-29T10:00:00.000Z');
    const expired = decidedMessage(approvalRequestMessage(facts), { status: 'expired', decided_by: 'system', at: '2026-11-29T11:00:00.000Z' });
    expect(expired.text).toBe('Expired');
    expect(JSON.stringify(expired.blocks)).not.toContain('system');
    expect(maskedArguments(undefined)).toBe('(none recorded)');
  });
});
