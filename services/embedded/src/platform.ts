import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DynamicModule, INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InProcessBroker, InProcessClient, InProcessServer, SqlIngestLog } from '@agp/bus';
import { KeyStore, PeopleStore } from '@agp/auth';
import { closeEventStoreAndDb, createPgliteSql, openEventStore, type Sql } from '@agp/eventstore';
import { createGateway, loadPriceTable, oidcSettings } from '@agp/gateway';
import { IngestModule, IngestService, storeIngestedIds } from '@agp/ingest';
import { InterventionsModule, InterventionsService } from '@agp/interventions';
import { PoliciesModule, PoliciesService } from '@agp/policies';
import { StatsModule, StatsService } from '@agp/stats';
import { EvalsModule, EvalsService } from '@agp/evals';
import { ReplayModule, ReplayService } from '@agp/replay';
import { McpModule, McpService } from '@agp/mcp-gateway';
import { createLogger, loadEnv, orderedShutdown, parseOutboundAllowList, type Logger } from '@agp/runtime';
import { SECRETS_KEY_BYTES, SecretBox, acquireDataDirLock, loadSecretBox } from '@agp/runtime';
import { randomBytes } from 'node:crypto';
import { embeddedEnvSchema } from './env.js';

/**
 * With AGP_DEBUG_MEMORY=1, log `process.memoryUsage()` (MB) after a start-up step, to see which component holds
 * the embedded process's memory. Source: docs/performance.md (Embedded memory).
 * @param step name of the component that just started
 */
export function logMemory(step: string): void {
  if (!process.env.AGP_DEBUG_MEMORY) return;
  const mb = (n: number) => Math.round(n / 1048576);
  const m = process.memoryUsage();
  process.stderr.write(`memory after ${step}: rss ${mb(m.rss)} heapTotal ${mb(m.heapTotal)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} MB\n`);
}

/** Options of {@link startEmbedded}; each defaults from the environment (PORT, AGP_DATA_DIR, AGP_INIT_*). */
export interface EmbeddedOptions {
  /** Gateway port; 0 picks a free one. @default env PORT or 8080 */
  port?: number;
  /** Gateway listen address. @default env HOST or 127.0.0.1 (loopback; a container sets HOST=0.0.0.0) */
  host?: string;
  /** PGlite data folder; `memory` keeps everything in memory (tests). @default env AGP_DATA_DIR or ./.agp/data */
  dataDir?: string;
  initOrg?: string;
  initWriteKey?: string;
  initReadKey?: string;
  initAdminKey?: string;
  logger?: Logger;
  /** Create a `default` organisation with a fresh write, read and admin key when the key store is empty. @default true */
  bootstrapFirstRun?: boolean;
  /** Settings that override `process.env` (e.g. AGP_LLM_BASE_URL in tests); read with the same schema. */
  env?: Record<string, string>;
}

/** A running embedded platform. */
export interface EmbeddedPlatform {
  url: string;
  port: number;
  /** The address the gateway listens on (HOST): `127.0.0.1` unless set. */
  host: string;
  sql: Sql;
  /** Keys created at this start (first run or headless init); the plaintext is shown only now. */
  createdKeys: { organization_id: string; write?: string; read?: string; admin?: string } | null;
  /**
   * Absolute path of `first-run-keys.json` in the data folder (`<AGP_DATA_DIR resolved>/first-run-keys.json`), where
   * the first start saves its keys (mode 0600); null in memory. It may not exist (keys made with `AGP_INIT_*`).
   * Source: README (Quickstart).
   */
  keysFile: string | null;
  /** Stop every service, the bus, the ingest log and the store, in order, once. @throws Error when a step failed (each is logged). */
  stop(): Promise<void>;
}

/**
 * Idle poll interval (ms) of the embedded platform's projections and ingest-log consumers. Appends and publishes in the
 * process wake them at once, so the poll only bounds a missed wake-up; at 200 and 100 ms an idle platform spent ~13% of
 * a core reading nothing.
 */
export const EMBEDDED_IDLE_POLL_MS = 1000;

/**
 * Start every service in one process: the in-process bus instead of NATS, PGlite instead of PostgreSQL,
 * and an SQL-backed ingest log instead of JetStream. The service code is the same as in distributed mode.
 * Source: architecture §2 (Embedded).
 * @throws Error when another process holds the data folder's lock.
 */
export async function startEmbedded(opts: EmbeddedOptions = {}): Promise<EmbeddedPlatform> {
  logMemory('modules loaded');
  const env = loadEnv(embeddedEnvSchema, { ...process.env, ...opts.env });
  const logger = opts.logger ?? createLogger('agp');
  const dataDir = opts.dataDir ?? env.AGP_DATA_DIR;
  const inMemory = dataDir === 'memory';
  const keysFile = inMemory ? null : join(resolve(dataDir), 'first-run-keys.json');
  const release = inMemory ? () => {} : acquireDataDirLock(resolve(dataDir));
  const sql = await createPgliteSql(inMemory ? undefined : join(resolve(dataDir), 'pg'));
  logMemory('pglite open');
  // One process owns the database: every append and publish wakes its readers, so the idle polls are a safety net.
  const store = await openEventStore(sql, env, { idlePollMs: EMBEDDED_IDLE_POLL_MS });
  await store.migrate();
  logMemory('event store migrations');

  // Key and member changes are recorded as events in the transaction of the change (the audit log projects them).
  const keys = new KeyStore(sql, store);
  await keys.migrate();
  const people = new PeopleStore(sql, store);
  await people.migrate();
  logMemory('key store migrations');
  let createdKeys: EmbeddedPlatform['createdKeys'] = null;
  const initOrg = opts.initOrg ?? env.AGP_INIT_ORG;
  if (initOrg) {
    await keys.ensureInit({ org: initOrg, writeKey: opts.initWriteKey ?? env.AGP_INIT_WRITE_KEY, readKey: opts.initReadKey ?? env.AGP_INIT_READ_KEY, adminKey: opts.initAdminKey ?? env.AGP_INIT_ADMIN_KEY });
  } else if ((opts.bootstrapFirstRun ?? true) && !(await keys.hasAnyKey())) {
    await keys.createOrganization('default', 'Default organisation');
    const write = await keys.createKey({ organizationId: 'default', scope: 'write', name: 'first-run write key' });
    const read = await keys.createKey({ organizationId: 'default', scope: 'read', name: 'first-run read key' });
    const admin = await keys.createKey({ organizationId: 'default', scope: 'admin', name: 'first-run admin key' });
    createdKeys = { organization_id: 'default', write: write.key, read: read.key, admin: admin.key };
    if (keysFile) writeFileSync(keysFile, JSON.stringify(createdKeys, null, 2) + '\n', { mode: 0o600 });
  }

  const broker = new InProcessBroker();
  /** Start a service's Nest app on this platform's in-process bus, in its queue group, listening. */
  const serveInProcess = async (module: DynamicModule, queue: string): Promise<INestMicroservice> => {
    const app = await NestFactory.createMicroservice(module, { strategy: new InProcessServer({ broker, queue }), logger: false });
    await app.listen();
    return app;
  };
  const ingestLog = await SqlIngestLog.create(sql, { pollMs: EMBEDDED_IDLE_POLL_MS, logger: logger.child({ service: 'ingest-log' }) });
  logMemory('ingest log');

  const interventions = new InterventionsService({ store, db: sql, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus: new InProcessClient({ broker }), logger: logger.child({ service: 'interventions' }), env });
  await interventions.start();
  const interventionsApp = await serveInProcess(InterventionsModule.register(interventions, logger.child({ service: 'interventions' })), 'interventions');
  logMemory('interventions');

  // Registered MCP servers' headers are sealed with AGP_SECRETS_KEY, else a key kept in the data folder (one per process when in memory).
  const secrets = env.AGP_SECRETS_KEY || !inMemory ? await loadSecretBox(env, resolve(dataDir)) : new SecretBox(randomBytes(SECRETS_KEY_BYTES), []);
  const policies = new PoliciesService({ store, db: sql, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus: new InProcessClient({ broker }), logger: logger.child({ service: 'policies' }), env, secrets });
  await policies.start();
  const policiesApp = await serveInProcess(PoliciesModule.register(policies, logger.child({ service: 'policies' })), 'policies');
  logMemory('policies');

  const stats = new StatsService({ store, db: sql, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus: new InProcessClient({ broker }), logger: logger.child({ service: 'stats' }), env });
  await stats.start();
  const statsApp = await serveInProcess(StatsModule.register(stats, logger.child({ service: 'stats' })), 'stats');
  logMemory('stats');

  const evals = new EvalsService({ store, db: sql, bus: new InProcessClient({ broker }), logger: logger.child({ service: 'evals' }), env });
  await evals.start();
  const evalsApp = await serveInProcess(EvalsModule.register(evals, logger.child({ service: 'evals' })), 'evals');
  logMemory('evals');

  const replay = new ReplayService({ store, db: sql, bus: new InProcessClient({ broker }), logger: logger.child({ service: 'replay' }) });
  await replay.start();
  const replayApp = await serveInProcess(ReplayModule.register(replay, logger.child({ service: 'replay' })), 'replay');
  logMemory('replay');

  const mcp = new McpService({ bus: new InProcessClient({ broker }), logger: logger.child({ service: 'mcp' }), conformanceFixtures: env.AGP_MCP_CONFORMANCE_FIXTURES, allowedOrigins: env.AGP_MCP_ALLOWED_ORIGINS, allowedHosts: env.AGP_MCP_ALLOWED_HOSTS });
  const mcpApp = await serveInProcess(McpModule.register(mcp, logger.child({ service: 'mcp' })), 'mcp');
  logMemory('mcp');

  const ingest = new IngestService({ log: ingestLog, ingested: storeIngestedIds(store), subjectPrefix: env.AGP_SUBJECT_PREFIX, logger: logger.child({ service: 'ingest' }) });
  const ingestApp = await serveInProcess(IngestModule.register(ingest, logger.child({ service: 'ingest' })), 'ingest');
  logMemory('ingest');

  const gateway = await createGateway({ bus: new InProcessClient({ broker }), keys, people, oidc: oidcSettings(env), sql, store, logger: logger.child({ service: 'gateway' }), listCacheEntries: env.AGP_ANSWER_CACHE_ENTRIES, keyStaleMs: env.AGP_KEY_STALE_MS, governancePollMs: env.AGP_GOVERNANCE_POLL_MS, governanceMaxStreams: env.AGP_GOVERNANCE_MAX_STREAMS, governanceHeartbeatMs: env.AGP_GOVERNANCE_HEARTBEAT_MS, otlpPrices: loadPriceTable(env.AGP_OTLP_PRICE_TABLE), outbound: parseOutboundAllowList(env.AGP_OUTBOUND_ALLOWED_HOSTS) });
  const port = await gateway.listen(opts.port ?? env.PORT, opts.host ?? env.HOST);
  logMemory('gateway');
  const url = `http://127.0.0.1:${port}`;
  const stop = orderedShutdown(
    [
      { name: 'gateway', run: () => gateway.close() },
      { name: 'ingest', run: () => ingestApp.close() },
      { name: 'interventions', run: () => interventions.stop() },
      { name: 'interventions rpc', run: () => interventionsApp.close() },
      { name: 'policies', run: () => policies.stop() },
      { name: 'policies rpc', run: () => policiesApp.close() },
      { name: 'stats', run: () => stats.stop() },
      { name: 'stats rpc', run: () => statsApp.close() },
      { name: 'evals', run: () => evals.stop() },
      { name: 'evals rpc', run: () => evalsApp.close() },
      { name: 'replay', run: () => replay.stop() },
      { name: 'replay rpc', run: () => replayApp.close() },
      { name: 'mcp', run: () => mcp.stop() },
      { name: 'mcp rpc', run: () => mcpApp.close() },
      { name: 'ingest log', run: () => ingestLog.close() },
      { name: 'event store', run: () => closeEventStoreAndDb(store, sql) },
      { name: 'data folder lock', run: () => release() },
    ],
    logger,
  );

  return {
    url,
    port,
    host: gateway.address()?.address ?? opts.host ?? env.HOST,
    sql,
    createdKeys,
    keysFile,
    stop: async () => {
      if (!(await stop())) throw new Error('the embedded platform did not stop cleanly; see the log');
    },
  };
}
