/**
 * The policies service's settings: what its process (distributed mode) validates at start, and the part the embedded
 * platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { DEFAULT_QUOTA_LEASE_TTL_MS } from '@agp/contracts';
import { serviceProcessEnv } from '@agp/bus';
import { outboundEnv, secretsEnv, type EnvOf } from '@agp/runtime';
import { DEFAULT_DISABLE_RULE, parseRetrySchedule } from './webhooks/schedule.js';
import { QUOTA_VACUUM_EVERY_ITEMS } from './quotas/leases.js';

/** The default name of the audit trail's signing key and origin prefix (AGP_AUDIT_LOG_NAME). */
export const DEFAULT_AUDIT_LOG_NAME = 'agp-audit';
/** The default interval of the audit trail's checkpoints, ms (AGP_AUDIT_CHECKPOINT_INTERVAL_MS). */
export const DEFAULT_AUDIT_CHECKPOINT_INTERVAL_MS = 60_000;
/** The default interval of the audit retention run, ms (AGP_AUDIT_RETENTION_INTERVAL_MS): one hour. */
export const DEFAULT_AUDIT_RETENTION_INTERVAL_MS = 3_600_000;

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
   * The audit trail's signing key: base64 of a 32-byte Ed25519 private key. Unset: a key generated at first start and
   * kept in the database sealed with the secrets key. Configuring another key retires the current one (docs/audit.md).
   */
  AGP_AUDIT_SIGNING_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || (/^[A-Za-z0-9+/]+={0,2}$/.test(v.trim()) && Buffer.from(v.trim(), 'base64').length === 32), 'expected base64 of a 32-byte Ed25519 private key'),
  /** The name of the audit trail's signing key and the prefix of each organisation's log origin (`<name>/<org>`): no spaces, no `+`. @default agp-audit */
  AGP_AUDIT_LOG_NAME: z.string().regex(/^[\x21-\x2a\x2c-\x7e]{1,100}$/, 'expected 1 to 100 printable characters, no spaces and no "+"').default(DEFAULT_AUDIT_LOG_NAME),
  /**
   * Whether the audit trail's projection appends governance records (`on`), or is paused (`off`: nothing is appended
   * while off; proofs and checkpoints still answer for what is stored). Turned on again, it appends every record stored
   * meanwhile, in order, from where it stopped. For measuring its cost (`pnpm bench ingest`). @default on
   */
  AGP_AUDIT_TRAIL: z.enum(['on', 'off'], { message: 'expected on or off' }).default('on'),
  /** How often checkpoints are signed for the logs that grew, in ms; 0 signs only on request. @default 60000 */
  AGP_AUDIT_CHECKPOINT_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(DEFAULT_AUDIT_CHECKPOINT_INTERVAL_MS),
  /** How often the organisations' audit retention is applied, in ms; 0 applies it only when it is changed. @default 3600000 */
  AGP_AUDIT_RETENTION_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(DEFAULT_AUDIT_RETENTION_INTERVAL_MS),
  /**
   * The Slack Web API's base URL, ending in `/api/` (Slack approvals post and update messages there). Tests point it
   * at a loopback stand-in. @default https://slack.com/api/
   */
  AGP_SLACK_API_URL: z.url({ protocol: /^https?$/ }).default('https://slack.com/api/'),
  AGP_QUOTA_LEASE_TTL_MS: z.coerce.number().int().min(100).max(3_600_000).default(DEFAULT_QUOTA_LEASE_TTL_MS),
  /** Lease items (acquire and report items) after which the granter vacuums the quota tables; 0 never does. @default 20000 */
  AGP_QUOTA_VACUUM_EVERY_ITEMS: z.coerce.number().int().min(0).max(100_000_000).default(QUOTA_VACUUM_EVERY_ITEMS),
};

/** The policies service's settings, parsed. */
export type PoliciesSettings = EnvOf<typeof policiesSettings>;

/** The policies process of distributed mode (ops port 9463). */
export const policiesEnvSchema = z.object({ ...serviceProcessEnv(9463), ...policiesSettings });

