/**
 * The gateway's settings: what its process (distributed mode) validates at start, and the part the embedded platform
 * composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { DEFAULT_KEY_STALE_MS } from '@agp/auth';
import { GOVERNANCE_HEARTBEAT_MS, GOVERNANCE_MAX_STREAMS_PER_ORG } from '@agp/contracts';
import { answerCacheEnv, databaseEnv, eventStoreEnv, initKeysEnv, listenEnv, logEnv, natsEnv } from '@agp/runtime';

/** How often the governance push channel reads the event log while a stream is open, when AGP_GOVERNANCE_POLL_MS is unset, in ms. */
export const DEFAULT_GOVERNANCE_POLL_MS = 100;

/** The gateway's own settings (both modes). */
export const gatewaySettings = {
  ...answerCacheEnv,
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
};

/**
 * The gateway process of distributed mode: its own settings, the listener, NATS, PostgreSQL, the event store it tails
 * for the push channel, and headless initialisation of the key store.
 */
export const gatewayEnvSchema = z.object({ ...logEnv, ...listenEnv, ...natsEnv, ...databaseEnv, ...eventStoreEnv, ...initKeysEnv, ...gatewaySettings });
