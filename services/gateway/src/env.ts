/**
 * The gateway's settings: what its process (distributed mode) validates at start, and the part the embedded platform
 * composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { DEFAULT_KEY_STALE_MS } from '@agp/auth';
import { GOVERNANCE_HEARTBEAT_MS, GOVERNANCE_MAX_STREAMS_PER_ORG } from '@agp/contracts';
import { answerCacheEnv, databaseEnv, eventStoreEnv, initKeysEnv, listenEnv, logEnv, natsEnv, outboundEnv } from '@agp/runtime';

/** How often the governance push channel reads the event log while a stream is open, when AGP_GOVERNANCE_POLL_MS is unset, in ms. */
export const DEFAULT_GOVERNANCE_POLL_MS = 100;

/**
 * How people sign in (docs/auth.md). `keys`: API keys only, `/auth/*` answers 404; `oidc` and `both`: people also
 * sign in through the OpenID provider and their session cookie authenticates API requests (API keys keep working for
 * agents, CI and scripts in every mode).
 */
export const AUTH_MODES = ['keys', 'oidc', 'both'] as const;

/** The sign-in settings (both modes); {@link oidcSettings} checks that `oidc` and `both` have what they need. */
export const authEnv = {
  /** `keys` (default), `oidc` or `both`: see {@link AUTH_MODES}. */
  AGP_AUTH_MODE: z.enum(AUTH_MODES).default('keys'),
  /** The URL people reach the platform at (`https://agp.example.com`): the default redirect URL's base and the origin cookie-authenticated writes must come from. Required by oidc and both. */
  AGP_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The OpenID provider's issuer URL (discovery at `<issuer>/.well-known/openid-configuration`). Required by oidc and both. */
  AGP_OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  /** The client id registered at the provider. Required by oidc and both. */
  AGP_OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** The client secret (confidential client, client_secret_basic); unset: a public client (PKCE alone). */
  AGP_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The redirect URL registered at the provider. @default `<AGP_PUBLIC_URL>/auth/callback` */
  AGP_OIDC_REDIRECT_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Comma-separated e-mail addresses that become admin of the initial organisation at their first sign-in. @default none */
  AGP_ADMIN_EMAILS: z.string().default(''),
  /**
   * Comma-separated audiences an OAuth access token may name besides the MCP endpoints' resource identifiers
   * (`<AGP_PUBLIC_URL>/api/v1/mcp`, `…/api/v1/mcp/proxy/<server>`), for providers that cannot issue tokens for a
   * resource URL (`api://agp`). @default none
   */
  AGP_OAUTH_AUDIENCES: z.string().default(''),
  /** A session ends after this many minutes without a request. @default 120 */
  AGP_SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).max(525_600).default(120),
  /** A session ends this many hours after sign-in, used or not. @default 12 */
  AGP_SESSION_MAX_HOURS: z.coerce.number().int().min(1).max(8_760).default(12),
};

/** The sign-in settings as the gateway takes them ({@link oidcSettings}). */
export interface OidcSettings {
  mode: 'oidc' | 'both';
  publicUrl: URL;
  issuer: URL;
  clientId: string;
  clientSecret?: string;
  redirectUrl: URL;
  adminEmails: string[];
  /** Audiences an access token may name besides the MCP endpoints' resource identifiers (AGP_OAUTH_AUDIENCES). */
  extraAudiences: string[];
  /** The organisation AGP_ADMIN_EMAILS become admin of: AGP_INIT_ORG, else the oldest organisation, else `default`. */
  initialOrg?: string;
  idleMs: number;
  maxMs: number;
}

/**
 * The sign-in settings of a parsed environment, or null when `AGP_AUTH_MODE` is `keys`.
 * @throws Error naming each variable oidc or both needs and lacks (AGP_PUBLIC_URL, AGP_OIDC_ISSUER, AGP_OIDC_CLIENT_ID),
 * or an issuer over plain http that is not loopback; the process does not start.
 */
export function oidcSettings(env: z.output<z.ZodObject<typeof authEnv>> & { AGP_INIT_ORG?: string }): OidcSettings | null {
  if (env.AGP_AUTH_MODE === 'keys') return null;
  const missing = (['AGP_PUBLIC_URL', 'AGP_OIDC_ISSUER', 'AGP_OIDC_CLIENT_ID'] as const).filter((k) => !env[k]);
  if (missing.length) throw new Error(`AGP_AUTH_MODE=${env.AGP_AUTH_MODE} needs ${missing.join(', ')} (docs/auth.md)`);
  const issuer = new URL(env.AGP_OIDC_ISSUER!);
  if (issuer.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname)) throw new Error(`AGP_OIDC_ISSUER must be https (plain http only on loopback): ${issuer.href}`);
  const publicUrl = new URL(env.AGP_PUBLIC_URL!);
  return {
    mode: env.AGP_AUTH_MODE,
    publicUrl,
    issuer,
    clientId: env.AGP_OIDC_CLIENT_ID!,
    clientSecret: env.AGP_OIDC_CLIENT_SECRET,
    redirectUrl: new URL(env.AGP_OIDC_REDIRECT_URL ?? new URL('/auth/callback', publicUrl).href),
    adminEmails: env.AGP_ADMIN_EMAILS.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean),
    extraAudiences: env.AGP_OAUTH_AUDIENCES.split(',').map((a) => a.trim()).filter(Boolean),
    initialOrg: env.AGP_INIT_ORG,
    idleMs: env.AGP_SESSION_IDLE_MINUTES * 60_000,
    maxMs: env.AGP_SESSION_MAX_HOURS * 3_600_000,
  };
}
export const gatewaySettings = {
  ...answerCacheEnv,
  // The hosted MCP proxy checks each upstream URL again when it connects (docs/mcp-proxy.md, The hosted proxy).
  ...outboundEnv,
  /**
   * How long the gateway keeps accepting an API key that resolved as valid while the key store (PostgreSQL) fails, in
   * ms; 0 turns serving stale off. Also the longest a revoked key keeps working during a store outage. @default 300000 (5 min)
   */
  AGP_KEY_STALE_MS: z.coerce.number().int().min(0).max(86_400_000).default(DEFAULT_KEY_STALE_MS),
  /** How often the governance push channel reads the event log while a stream is open, in ms. @default 100 */
  AGP_GOVERNANCE_POLL_MS: z.coerce.number().int().min(10).max(10_000).default(DEFAULT_GOVERNANCE_POLL_MS),
  /** Most governance push-channel streams (SSE) one gateway process serves one organisation. @default 100 */
  AGP_GOVERNANCE_MAX_STREAMS: z.coerce.number().int().min(1).max(100_000).default(GOVERNANCE_MAX_STREAMS_PER_ORG),
  /** Interval of the governance push channel's `: heartbeat` comment, in ms. @default 15000 */
  AGP_GOVERNANCE_HEARTBEAT_MS: z.coerce.number().int().min(50).max(300_000).default(GOVERNANCE_HEARTBEAT_MS),
  /**
   * Path of a JSON model price table (`{version, models: {<model>: {input_usd_per_1m, output_usd_per_1m}}}`) whose
   * entries win over the price database (@pydantic/genai-prices) for OTLP trace ingest's cost estimates; models it
   * lacks keep the database's price (docs/configuration.md; docs/ingest.md, OTLP trace ingest). Read at start; a file
   * it cannot read or that is not a price table stops the process. @default none: the price database alone
   */
  AGP_OTLP_PRICE_TABLE: z.string().min(1).optional(),
  ...authEnv,
};

/**
 * The gateway process of distributed mode: its own settings, the listener, NATS, PostgreSQL, the event store it tails
 * for the push channel, and headless initialisation of the key store.
 */
export const gatewayEnvSchema = z.object({ ...logEnv, ...listenEnv, ...natsEnv, ...databaseEnv, ...eventStoreEnv, ...initKeysEnv, ...gatewaySettings });
