/**
 * Approvals in Slack, the pure parts: the Block Kit message of an approval request (agent, action, reason, risk, the
 * arguments masked by the PII guardrail's masking, Approve / Reject buttons) and of its outcome, and the check of
 * Slack's request signature (v0: HMAC-SHA256 of `v0:<timestamp>:<body>` with the app's signing secret, the timestamp
 * within five minutes). Source: docs/notifications.md (Approvals in Slack); Slack's "Verifying requests from Slack".
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PII_CATEGORIES, SLACK_SIGNATURE_MAX_AGE_S, type PiiCategory } from '@agp/contracts';
import { redactPii } from '@agp/policy-engine';

/** Most characters of the arguments shown in a message (Slack's section text holds 3000). */
export const SLACK_ARGUMENTS_MAX = 2000;

/** An approval request as the message shows it. */
export interface ApprovalMessageFacts {
  organization_id: string;
  approval_id: string;
  agent_id: string;
  action_name: string;
  reason: string | null;
  risk_level: string | null;
  estimated_cost_usd: number | null;
  arguments: unknown;
  expires_at: string | null;
}

const ALL_PII = new Set<PiiCategory>(PII_CATEGORIES);

/** The arguments as JSON text with every personal-data match masked (the PII guardrail's masking), at most {@link SLACK_ARGUMENTS_MAX} characters. */
export function maskedArguments(args: unknown): string {
  if (args === undefined || args === null) return '(none recorded)';
  const text = redactPii(JSON.stringify(args, null, 1), ALL_PII);
  return text.length > SLACK_ARGUMENTS_MAX ? `${text.slice(0, SLACK_ARGUMENTS_MAX)}…` : text;
}

/** Slack's mrkdwn with `&`, `<` and `>` escaped (Slack's documented escaping). */
const esc = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The button value of an approval message: the organisation, the approval and the decision, JSON. */
export const buttonValue = (org: string, approvalId: string, d: 'approve' | 'reject') => JSON.stringify({ o: org, a: approvalId, d });

/** The `text` (notification fallback) and `blocks` of an approval request's message. */
export function approvalRequestMessage(f: ApprovalMessageFacts): { text: string; blocks: unknown[] } {
  const text = `Approval needed: ${f.agent_id} wants to run ${f.action_name}`;
  const fields = [
    `*Agent*\n${esc(f.agent_id)}`,
    `*Action*\n${esc(f.action_name)}`,
    `*Risk*\n${esc(f.risk_level ?? 'not given')}`,
    `*Estimated cost*\n${f.estimated_cost_usd === null ? 'not given' : `$${f.estimated_cost_usd.toFixed(2)}`}`,
  ];
  return {
    text,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Approval needed' } },
      { type: 'section', fields: fields.map((t) => ({ type: 'mrkdwn', text: t })) },
      { type: 'section', text: { type: 'mrkdwn', text: `*Reason*\n${esc(f.reason ?? 'not given')}` } },
      { type: 'section', text: { type: 'mrkdwn', text: `*Arguments* (personal data masked)\n\`\`\`${esc(maskedArguments(f.arguments))}\`\`\`` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${f.approval_id}${f.expires_at ? ` · expires ${f.expires_at}` : ''}` }] },
      {
        type: 'actions',
        block_id: 'agp_approval',
        elements: [
          { type: 'button', action_id: 'agp_approve', style: 'primary', text: { type: 'plain_text', text: 'Approve' }, value: buttonValue(f.organization_id, f.approval_id, 'approve') },
          { type: 'button', action_id: 'agp_reject', style: 'danger', text: { type: 'plain_text', text: 'Reject' }, value: buttonValue(f.organization_id, f.approval_id, 'reject') },
        ],
      },
    ],
  };
}

/**
 * How an approval ended, as its message shows it: `status` (`approved`, `rejected`, `expired`), `decided_by` (the
 * decision's actor: the approver's e-mail, a key's name, `system` for an expiry) and `at` (ISO 8601 UTC), as the
 * `approval.decided` event carries them (docs/notifications.md, Event kinds and payloads).
 */
export interface SlackDecision {
  status: 'approved' | 'rejected' | 'expired';
  decided_by: string;
  at: string;
}

const OUTCOME = { approved: ['Approved', '✅ Approved'], rejected: ['Rejected', '❌ Rejected'], expired: ['Expired', '⌛ Expired'] } as const;

/**
 * The message an approval request becomes once decided: the request's blocks without the buttons, and the outcome
 * with who decided and when (an expiry names no one).
 */
export function decidedMessage(original: { blocks?: unknown[] } | undefined, d: SlackDecision): { text: string; blocks: unknown[] } {
  const kept = (original?.blocks ?? []).filter((b) => (b as { type?: string }).type !== 'actions');
  const [word, mark] = OUTCOME[d.status];
  const by = d.status === 'expired' ? '' : ` by ${d.decided_by}`;
  const text = `${word}${by}`;
  return { text, blocks: [...kept, { type: 'section', text: { type: 'mrkdwn', text: `*${mark}*${d.status === 'expired' ? '' : ` by ${esc(d.decided_by)}`} at ${d.at}` } }] };
}

/**
 * Whether a request is Slack's: `signature` is `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<raw>` with
 * `secret`, and `timestamp` (seconds since the epoch) is within {@link SLACK_SIGNATURE_MAX_AGE_S} of `nowMs`.
 */
export function slackSignatureValid(secret: string, raw: string, timestamp: string | null, signature: string | null, nowMs: number): boolean {
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_MAX_AGE_S) return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
