import 'reflect-metadata';
import { KeyStore, PeopleStore } from '@agp/auth';
import { PrefixedNatsClient } from '@agp/bus';
import { closeEventStoreAndDb, createPgSql, openEventStore } from '@agp/eventstore';
import { createLogger, exitOnFatal, exitOnSignals, loadEnv, orderedShutdown, parseOutboundAllowList } from '@agp/runtime';
import { gatewayEnvSchema, oidcSettings } from './env.js';
import { createGateway } from './gateway.js';
import { loadPriceTable } from './otlp/prices.js';

/**
 * Distributed mode: the gateway as its own process (NATS + PostgreSQL). Serves /healthz, /readyz (503 while
 * PostgreSQL or NATS is down), /metrics itself. Its NATS connection reconnects for ever; one that closes for good
 * exits the process with code 1 so that it is restarted.
 */
const env = loadEnv(gatewayEnvSchema);
const logger = createLogger('gateway', env.LOG_LEVEL);
const steps: Array<{ name: string; run: () => unknown }> = [];
const shutdown = orderedShutdown(steps, logger);
const fatal = exitOnFatal(shutdown, logger);
const sql = createPgSql(env.DATABASE_URL, { applicationName: 'agp-gateway', logger });
const oidc = oidcSettings(env);
// The event store the governance push channel tails (AGP_EVENT_STORE), where key and member changes are recorded as
// events (in their transaction); migrated here too, so a key made at start (AGP_INIT_*) finds its table.
const store = await openEventStore(sql, env);
await store.migrate();
const keys = new KeyStore(sql, store);
const people = new PeopleStore(sql, store);
await keys.migrate();
await people.migrate();
if (env.AGP_INIT_ORG) await keys.ensureInit({ org: env.AGP_INIT_ORG, writeKey: env.AGP_INIT_WRITE_KEY, readKey: env.AGP_INIT_READ_KEY, adminKey: env.AGP_INIT_ADMIN_KEY });
const bus = new PrefixedNatsClient({
  servers: env.NATS_URL,
  prefix: env.AGP_SUBJECT_PREFIX,
  name: 'agp-gateway',
  logger,
  onClosed: (err) => fatal('NATS bus client connection closed for good', err),
});
await bus.connect();
const gateway = await createGateway({
  bus,
  keys,
  people,
  oidc,
  sql,
  store,
  logger,
  listCacheEntries: env.AGP_ANSWER_CACHE_ENTRIES,
  keyStaleMs: env.AGP_KEY_STALE_MS,
  governancePollMs: env.AGP_GOVERNANCE_POLL_MS,
  governanceMaxStreams: env.AGP_GOVERNANCE_MAX_STREAMS,
  governanceHeartbeatMs: env.AGP_GOVERNANCE_HEARTBEAT_MS,
  readiness: [{ name: 'nats', check: () => bus.health.check() }],
  otlpPrices: loadPriceTable(env.AGP_OTLP_PRICE_TABLE),
  outbound: parseOutboundAllowList(env.AGP_OUTBOUND_ALLOWED_HOSTS),
});
const port = await gateway.listen(env.PORT, env.HOST);
logger.info({ port, host: env.HOST }, 'gateway listening');

steps.push(
  { name: 'http server', run: () => gateway.close() },
  { name: 'nats client', run: () => bus.close() },
  { name: 'event store and postgres', run: () => closeEventStoreAndDb(store, sql) },
);
exitOnSignals(shutdown, logger);
