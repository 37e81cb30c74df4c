/**
 * Approvals in Slack: an organisation's Slack connection (`/api/v1/integrations/slack`: a bot token and a signing
 * secret, write-only and stored sealed, and the channels approval requests are posted to, each with a filter) and the
 * interactivity callback (`/api/v1/integrations/slack/interactivity`) through which a click on Approve or Reject
 * decides the approval as the AGP person the Slack user is. Source: docs/notifications.md (Approvals in Slack).
 */
import { z } from 'zod';
import { WebhookFilterSchema } from './webhooks.js';

/** Most channels of one connection. */
export const SLACK_MAX_CHANNELS = 20;

/** One channel approval requests are posted to, and which of them (the webhook filter's agent, type and risk parts). */
export const SlackChannelSchema = z.strictObject({
  channel: z
    .string()
    .min(1)
    .max(80)
    .regex(/^[A-Za-z0-9_#-]+$/, 'a Slack channel id (C0123ABCD) or name')
    .describe('The Slack channel id (C0123ABCD) or name the bot posts to; the bot must be a member'),
  filter: WebhookFilterSchema.pick({ agent_ids: true, intervention_types: true, min_risk_level: true }).strict().optional().describe('Which approval requests go to this channel (agent_ids, intervention_types, min_risk_level; AND); absent: all'),
});
/** See {@link SlackChannelSchema}. */
export type SlackChannel = z.infer<typeof SlackChannelSchema>;

/** Body of `PUT /api/v1/integrations/slack`: replaces the connection whole. The token and secret are never answered. */
export const PutSlackConnectionSchema = z.strictObject({
  bot_token: z
    .string()
    .max(512)
    .regex(/^xoxb-[A-Za-z0-9-]+$/, 'a Slack bot token (xoxb-…)')
    .describe('The Slack app’s bot token (xoxb-…); needs chat:write and users:read.email'),
  signing_secret: z.string().min(16, 'at least 16 characters').max(256).regex(/^[A-Za-z0-9]+$/, 'the Slack app’s signing secret (letters and digits)').describe('The Slack app’s signing secret: verifies its interactivity requests'),
  channels: z.array(SlackChannelSchema).min(1).max(SLACK_MAX_CHANNELS).describe(`Where approval requests are posted, 1 to ${SLACK_MAX_CHANNELS} channels; a request goes to each channel whose filter it passes`),
});
/** See {@link PutSlackConnectionSchema}. */
export type PutSlackConnection = z.infer<typeof PutSlackConnectionSchema>;

/** The connection as every read answers it: never the token or the secret. Times ISO 8601 UTC. */
export const SlackConnectionSchema = z.object({
  channels: z.array(SlackChannelSchema).describe('Where approval requests are posted'),
  bot_token_hint: z.string().describe('The bot token’s last 4 characters, to tell which one is set'),
  created_at: z.string().describe('When it was first set'),
  updated_at: z.string().describe('When it was last replaced'),
});
/** See {@link SlackConnectionSchema}. */
export type SlackConnection = z.infer<typeof SlackConnectionSchema>;

/** Query of `GET /api/v1/integrations/slack` (none). */
export const SlackConnectionQuerySchema = z.strictObject({});

/**
 * Wire body of `integrations.slack-interactivity`: the callback exactly as Slack sent it (the form-encoded body, as
 * text, and its `X-Slack-Request-Timestamp` and `X-Slack-Signature` headers), for the policies service to verify.
 */
export const SlackInteractivityRequestSchema = z.object({
  raw: z.string().max(1_048_576).describe('The request body as received (application/x-www-form-urlencoded, `payload=<JSON>`)'),
  timestamp: z.string().nullable().describe('X-Slack-Request-Timestamp'),
  signature: z.string().nullable().describe('X-Slack-Signature'),
});
/** See {@link SlackInteractivityRequestSchema}. */
export type SlackInteractivityRequest = z.infer<typeof SlackInteractivityRequestSchema>;

/** What the callback did: `decided` (the approval was approved or rejected), `refused` (the Slack user may not decide; told so in Slack), `ignored` (not an AGP button). */
export const SlackInteractivityReplySchema = z.object({
  result: z.enum(['decided', 'refused', 'ignored']).describe('decided, refused (the person may not decide it; told in Slack) or ignored (not one of the platform’s buttons)'),
});
/** See {@link SlackInteractivityReplySchema}. */
export type SlackInteractivityReply = z.infer<typeof SlackInteractivityReplySchema>;

/** How old a signed Slack request may be, in seconds (Slack's documented five minutes). */
export const SLACK_SIGNATURE_MAX_AGE_S = 300;

/** The value of an approval message's buttons: the organisation, the approval and the decision (`approve`/`reject`). */
export const SlackButtonValueSchema = z.object({ o: z.string(), a: z.string(), d: z.enum(['approve', 'reject']) });

/** The parts of a Slack interactivity payload (`block_actions`) the platform reads. */
export interface SlackPayload {
  type?: string;
  user?: { id?: string };
  channel?: { id?: string };
  container?: { channel_id?: string; message_ts?: string };
  message?: { ts?: string; blocks?: unknown[] };
  actions?: Array<{ value?: string }>;
}

/** `s` parsed as JSON when it is a string that parses; else undefined. Pure. */
export function jsonOrUndefined(s: unknown): unknown {
  try {
    return typeof s === 'string' ? JSON.parse(s) : undefined;
  } catch {
    return undefined;
  }
}

/** The `payload` field of a form-encoded interactivity body, parsed; null when absent or not a JSON object. Pure. */
export function parseSlackPayload(raw: string): SlackPayload | null {
  const p = jsonOrUndefined(new URLSearchParams(raw).get('payload') ?? '');
  return p && typeof p === 'object' ? (p as SlackPayload) : null;
}

/**
 * The organisation a callback's first button names, or null. Unverified: it only picks whose signing secret the
 * policies service checks the request with, so a forged value finds no secret that verifies it. Pure.
 */
export function slackCallbackOrganization(raw: string): string | null {
  const v = SlackButtonValueSchema.safeParse(jsonOrUndefined(parseSlackPayload(raw)?.actions?.[0]?.value));
  return v.success ? v.data.o : null;
}
