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

/** Most read-model answers (list pages, stats) a process keeps when AGP_ANSWER_CACHE_ENTRIES is unset. */
export const DEFAULT_ANSWER_CACHE_ENTRIES = 256;
/** The chat-completions model when AGP_LLM_MODEL is unset. */
export const DEFAULT_LLM_MODEL = 'gpt-4o-mini';
/** One provider request's timeout when AGP_LLM_TIMEOUT_MS is unset, in ms. */
export const DEFAULT_LLM_TIMEOUT_MS = 30_000;

/*
 * The settings several processes share, each a zod shape. A process's own schema spreads in the shapes it reads
 * (`z.object({ ...logEnv, ...listenEnv, ... })`) beside its own settings: each service's `src/env.ts`, and the
 * embedded platform's, which composes every service's. A process so validates exactly what it reads, and each
 * default has one home. Source: docs/configuration.md.
 */

/** LOG_LEVEL: every process. */
export const logEnv = {
  /** pino log level. @default info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/** PORT and HOST: the gateway's HTTP listener (embedded and distributed). */
export const listenEnv = {
  /** Gateway HTTP port. @default 8080 */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * Address the gateway listens on (embedded and distributed mode). Loopback unless set: a container, or any host
   * whose clients are elsewhere, sets `0.0.0.0` (or `::`) explicitly. @default 127.0.0.1
   */
  HOST: ListenHostSchema.default(DEFAULT_LISTEN_HOST),
};

/** OPS_HOST and OPS_PORT: a service process's ops port (/healthz, /readyz, /metrics). @param defaultPort its OPS_PORT when unset */
export function opsEnv(defaultPort: number) {
  return {
    /**
     * Address the ops port listens on. Loopback unless set; set `0.0.0.0` where probes or Prometheus reach the
     * process from outside. @default 127.0.0.1
     */
    OPS_HOST: ListenHostSchema.default(DEFAULT_LISTEN_HOST),
    /** Port of this process's /healthz, /readyz and /metrics. */
    OPS_PORT: z.coerce.number().int().min(0).max(65535).default(defaultPort),
  };
}

/** AGP_SUBJECT_PREFIX: every process that names a bus subject (both modes). */
export const subjectPrefixEnv = {
  /** Prefix of every NATS subject; lets test runs share one NATS server without crosstalk. @default agp */
  AGP_SUBJECT_PREFIX: z.string().regex(/^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$/).default('agp'),
};

/** NATS_URL (required) and AGP_SUBJECT_PREFIX: a process of distributed mode. */
export const natsEnv = {
  /** NATS server URL. Set (with DATABASE_URL) to run distributed; unset means embedded mode. */
  NATS_URL: z.string().min(1),
  ...subjectPrefixEnv,
};

/** AGP_INGEST_STREAM: a distributed process that publishes to or consumes the ingest log. */
export const ingestStreamEnv = {
  /** Name of the JetStream stream that holds accepted ingest batches. @default INGEST */
  AGP_INGEST_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/).default('INGEST'),
};

/** DATABASE_URL (required): a process of distributed mode. */
export const databaseEnv = {
  /** PostgreSQL connection string for the event store and read models (distributed mode). */
  DATABASE_URL: z.string().min(1),
};

/** AGP_EVENT_STORE and its KurrentDB URL: every process that opens the event store. */
export const eventStoreEnv = {
  /**
   * Which event store holds the events: `postgres` (PostgreSQL in distributed mode, PGlite embedded: the same database
   * as the read models) or `kurrentdb` (KurrentDB at KURRENTDB_URL; checkpoints stay with the read models). @default postgres
   */
  AGP_EVENT_STORE: z.enum(['postgres', 'kurrentdb']).default('postgres'),
  /** KurrentDB connection string when AGP_EVENT_STORE=kurrentdb, e.g. `kurrentdb://kurrentdb:2113?tls=false`. */
  KURRENTDB_URL: z.string().min(1).optional(),
  /** The EventStoreDB name of KURRENTDB_URL, read when KURRENTDB_URL is unset. */
  EVENTSTORE_URL: z.string().min(1).optional(),
};

/** AGP_INIT_*: headless initialisation, by the process that owns the key store (the gateway; embedded). */
export const initKeysEnv = {
  /** Headless initialisation: organisation to create at start when absent. */
  AGP_INIT_ORG: z.string().min(1).max(256).optional(),
  /** Headless initialisation: exact write key to create for AGP_INIT_ORG when absent. */
  AGP_INIT_WRITE_KEY: z.string().min(16).optional(),
  /** Headless initialisation: exact read key to create for AGP_INIT_ORG when absent. */
  AGP_INIT_READ_KEY: z.string().min(16).optional(),
  /** Headless initialisation: exact admin key (manages API keys over HTTP) to create for AGP_INIT_ORG when absent. */
  AGP_INIT_ADMIN_KEY: z.string().min(16).optional(),
};

/** AGP_DATA_DIR: embedded mode and the CLI. */
export const dataDirEnv = {
  /** Embedded mode: folder for PGlite data. @default ./.agp/data */
  AGP_DATA_DIR: z.string().default('./.agp/data'),
};

/** AGP_LLM_*: the language model (enrichment in interventions, the semantic scenario pass in evals). */
export const llmEnv = {
  /** OpenAI-compatible chat-completions API key. Without it enrichment (and the semantic scenario pass) is skipped. */
  AGP_LLM_API_KEY: z.string().min(1).optional(),
  /** Base URL of the chat-completions endpoint, e.g. `https://api.openai.com/v1`. @default the openai package's default */
  AGP_LLM_BASE_URL: z.string().url().optional(),
  /** Model name sent to the provider. @default {@link DEFAULT_LLM_MODEL} */
  AGP_LLM_MODEL: z.string().min(1).default(DEFAULT_LLM_MODEL),
  /** Provider request timeout, in ms (100 to 600000). @default {@link DEFAULT_LLM_TIMEOUT_MS} */
  AGP_LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_LLM_TIMEOUT_MS),
};

/** AGP_ANSWER_CACHE_ENTRIES: the gateway, interventions and stats. */
export const answerCacheEnv = {
  /**
   * Most read-model answers (list pages, stats) each gateway / interventions / stats process keeps, tagged with the
   * projection position they were read at and served only while it has not moved (the gateway's and the interventions
   * service's list pages check the committed checkpoint); 0 turns the cache off. @default {@link DEFAULT_ANSWER_CACHE_ENTRIES}
   */
  AGP_ANSWER_CACHE_ENTRIES: z.coerce.number().int().min(0).max(100_000).default(DEFAULT_ANSWER_CACHE_ENTRIES),
};

/** The parsed type of a settings shape (e.g. `EnvOf<typeof llmEnv>`). */
export type EnvOf<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>>;

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
