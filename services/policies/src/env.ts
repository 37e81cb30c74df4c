/**
 * The policies service's settings: what its process (distributed mode) validates at start, and the part the embedded
 * platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { DEFAULT_QUOTA_LEASE_TTL_MS } from '@agp/contracts';
import { serviceProcessEnv } from '@agp/bus';
import { outboundEnv, secretsEnv, type EnvOf } from '@agp/runtime';
import { DEFAULT_DISABLE_RULE, parseRetrySchedule } from './webhooks/schedule.js';

/**
 * The policies service's own settings (both modes): the fleet-wide quotas' lease TTL; the outbound address check's
 * allow list and the secrets keys, read where registered MCP servers are checked and their headers sealed.
 */
export const policiesSettings = {
  ...outboundEnv,
  ...secretsEnv,
  /**
   * How long a quota lease lasts without renewal, in ms: a holder that stops renewing (crashed, partitioned) gives its
   * unspent quota back this long after its last renewal; a lease never outlives its window. @default 15000
   */
  /**
   * Delays before each retry of a webhook delivery, in ms, comma-separated (e.g. `200,400,800` in tests). Unset: 5 s,
   * 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 6 h, 6 h (under 24 h in all), each with ±20 % jitter.
   */
  AGP_WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        parseRetrySchedule(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  /** How long one webhook delivery attempt may take, in ms, before it counts as failed. @default 10000 */
  AGP_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** A subscription is disabled after this many consecutive failed attempts… @default 10 */
  AGP_WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_DISABLE_RULE.failures),
  /** …when the first of them is at least this old, in ms. @default 3600000 (1 h) */
  AGP_WEBHOOK_DISABLE_AFTER_MS: z.coerce.number().int().min(0).max(7 * 86_400_000).default(DEFAULT_DISABLE_RULE.windowMs),
  /** How often the webhook worker looks for due deliveries when idle, in ms. @default 500 */
  AGP_WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /**
   * The Slack Web API's base URL, ending in `/api/` (Slack approvals post and update messages there). Tests point it
   * at a loopback stand-in. @default https://slack.com/api/
   */
  AGP_SLACK_API_URL: z.url({ protocol: /^https?$/ }).default('https://slack.com/api/'),
  AGP_QUOTA_LEASE_TTL_MS: z.coerce.number().int().min(100).max(3_600_000).default(DEFAULT_QUOTA_LEASE_TTL_MS),
};

/** The policies service's settings, parsed. */
export type PoliciesSettings = EnvOf<typeof policiesSettings>;

/** The policies process of distributed mode (ops port 9463). */
export const policiesEnvSchema = z.object({ ...serviceProcessEnv(9463), ...policiesSettings });
