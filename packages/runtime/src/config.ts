import { z } from 'zod';

/**
 * A listen address: an IPv4 or IPv6 address (`127.0.0.1`, `0.0.0.0`, `::1`, `::`) or a host name (`localhost`).
 * Source: docs/decisions.md (listen addresses).
 */
export const ListenHostSchema = z.union([
  z.ipv4(),
  z.ipv6(),
  z.string().regex(/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/),
], { error: 'a listen address: an IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::) or a host name (localhost)' });

/** Where a process listens when HOST / OPS_HOST are unset, in both run modes: loopback only. */
export const DEFAULT_LISTEN_HOST = '127.0.0.1';

/**
 * Environment settings shared by every AGP process, validated with zod at start.
 * Each service may extend this schema with its own settings.
 */
export const baseEnvSchema = z.object({
  /** NATS server URL. Set (with DATABASE_URL) to run distributed; unset means embedded mode. */
  NATS_URL: z.string().optional(),
  /** PostgreSQL connection string for the event store and read models (distributed mode). */
  DATABASE_URL: z.string().optional(),
  /**
   * Which event store holds the events: `postgres` (PostgreSQL in distributed mode, PGlite embedded: the same database
   * as the read models) or `kurrentdb` (KurrentDB at KURRENTDB_URL; checkpoints stay with the read models). @default postgres
   */
  AGP_EVENT_STORE: z.enum(['postgres', 'kurrentdb']).default('postgres'),
  /** KurrentDB connection string when AGP_EVENT_STORE=kurrentdb, e.g. `kurrentdb://kurrentdb:2113?tls=false`. */
  KURRENTDB_URL: z.string().min(1).optional(),
  /** The former name of KURRENTDB_URL (EventStoreDB), read when KURRENTDB_URL is unset. */
  EVENTSTORE_URL: z.string().min(1).optional(),
  /** Gateway HTTP port. @default 8080 */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * Address the gateway listens on (embedded and distributed mode). Loopback unless set: a container, or any host
   * whose clients are elsewhere, sets `0.0.0.0` (or `::`) explicitly. @default 127.0.0.1
   */
  HOST: ListenHostSchema.default(DEFAULT_LISTEN_HOST),
  /**
   * Address each service process's ops port (OPS_PORT: /healthz, /readyz, unauthenticated /metrics) listens on.
   * Loopback unless set; set `0.0.0.0` where probes or Prometheus reach the process from outside. @default 127.0.0.1
   */
  OPS_HOST: ListenHostSchema.default(DEFAULT_LISTEN_HOST),
  /** Embedded mode: folder for PGlite data. @default ./.agp/data */
  AGP_DATA_DIR: z.string().default('./.agp/data'),
  /** Prefix of every NATS subject; lets test runs share one NATS server without crosstalk. @default agp */
  AGP_SUBJECT_PREFIX: z.string().regex(/^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$/).default('agp'),
  /** Name of the JetStream stream that holds accepted ingest batches. @default INGEST */
  AGP_INGEST_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/).default('INGEST'),
  /** Headless initialisation: organisation to create at start when absent. */
  AGP_INIT_ORG: z.string().min(1).max(256).optional(),
  /** Headless initialisation: exact write key to create for AGP_INIT_ORG when absent. */
  AGP_INIT_WRITE_KEY: z.string().min(16).optional(),
  /** Headless initialisation: exact read key to create for AGP_INIT_ORG when absent. */
  AGP_INIT_READ_KEY: z.string().min(16).optional(),
  /** Headless initialisation: exact admin key (manages API keys over HTTP) to create for AGP_INIT_ORG when absent. */
  AGP_INIT_ADMIN_KEY: z.string().min(16).optional(),
  /**
   * How long the gateway keeps accepting an API key that resolved as valid while the key store (PostgreSQL) fails, in
   * ms; 0 turns serving stale off. Also the longest a revoked key keeps working during a store outage. @default 300000 (5 min)
   */
  AGP_KEY_STALE_MS: z.coerce.number().int().min(0).max(86_400_000).default(300_000),
  /** OpenAI-compatible chat-completions API key. Without it enrichment (and the semantic scenario pass) is skipped. */
  AGP_LLM_API_KEY: z.string().min(1).optional(),
  /** Base URL of the chat-completions endpoint, e.g. `https://api.openai.com/v1`. @default the openai package's default */
  AGP_LLM_BASE_URL: z.string().url().optional(),
  /** Model name sent to the provider. @default gpt-4o-mini */
  AGP_LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** Most enrichment calls in flight at once, per interventions process. @default 4 */
  AGP_ENRICHMENT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Attempts per intervention before it is marked `enrichment_status: failed`. @default 5 */
  AGP_ENRICHMENT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  /** Provider request timeout, in ms (100 to 600000). @default 30000 */
  AGP_LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** How long an approval stays pending before it expires to rejected_after_review (reason `expired`), in seconds. @default 86400 (24 h) */
  AGP_APPROVAL_TTL_SECONDS: z.coerce.number().int().min(1).default(86_400),
  /** How often the interventions service looks for pending approvals past their expiry, in ms. @default 1000 */
  AGP_APPROVAL_SWEEP_MS: z.coerce.number().int().min(10).max(3_600_000).default(1000),
  /**
   * Most read-model answers (list pages, stats) each gateway / interventions / stats process keeps, tagged with the
   * projection position they were read at and served only while it has not moved (the gateway's and the interventions
   * service's list pages check the committed checkpoint); 0 turns the cache off. @default 256
   */
  AGP_ANSWER_CACHE_ENTRIES: z.coerce.number().int().min(0).max(100_000).default(256),
  /** How often the gateway's governance push channel reads the event log while a stream is open, in ms. @default 100 */
  AGP_GOVERNANCE_POLL_MS: z.coerce.number().int().min(10).max(10_000).default(100),
  /** Most governance push-channel streams (SSE) one gateway process serves one organisation. @default 100 */
  AGP_GOVERNANCE_MAX_STREAMS: z.coerce.number().int().min(1).max(100_000).default(100),
  /** Interval of the governance push channel's `: heartbeat` comment, in ms. @default 15000 */
  AGP_GOVERNANCE_HEARTBEAT_MS: z.coerce.number().int().min(50).max(300_000).default(15_000),
  /**
   * Test-only: the mcp service also serves the MCP conformance suite's fixture tools, resources and prompts
   * (`test_simple_text`, `test://static-text`, …) beside the platform's. `1` or `true` turns it on. @default off
   */
  AGP_MCP_CONFORMANCE_FIXTURES: z.enum(['0', '1', 'true', 'false']).default('0').transform((v) => v === '1' || v === 'true'),
  /**
   * Origins (comma-separated, e.g. `https://console.example.com`) allowed to call the MCP endpoint from a browser, on
   * top of the gateway's own host; a request with any other `Origin` is refused (DNS rebinding protection). @default none
   */
  AGP_MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  /**
   * Host names (comma-separated, e.g. `agp.example.com`) the MCP endpoint answers to, besides localhost-class ones; a
   * request with another `Host` is refused (DNS rebinding protection). Unset: Host is not checked. @default unset
   */
  AGP_MCP_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  /**
   * Path of a JSON model price table (`{version, models: {<model>: {input_usd_per_1m, output_usd_per_1m}}}`) whose
   * entries win over the price database (@pydantic/genai-prices) for OTLP trace ingest's cost estimates; models it
   * lacks keep the database's price (docs/configuration.md; docs/ingest.md, OTLP trace ingest). Read by the gateway at
   * start; a file it cannot read or that is not a price table stops it. @default none: the price database alone
   */
  AGP_OTLP_PRICE_TABLE: z.string().min(1).optional(),
  /** pino log level. @default info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type BaseEnv = z.infer<typeof baseEnvSchema>;

/**
 * Parse `env` against `schema`; on failure throw an Error listing every bad variable. Empty values count as unset.
 * @throws Error when a variable is invalid (the process should exit).
 */
export function loadEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  // An empty variable (`AGP_LLM_API_KEY=` in a compose file) means "not set", so its default applies.
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid environment:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
