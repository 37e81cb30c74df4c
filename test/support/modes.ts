import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { startEmbedded } from '@agp/embedded';
import { createPgSql } from '@agp/eventstore';
import { startDistributed } from './distributed.js';
import { databaseHandles, type BootedPlatform } from './http.js';
import { infra, skipIntegration } from './infra.js';

/** Options of a booted platform for a scenario file. */
export interface BootOptions {
  /** Extra settings for every process (e.g. AGP_LLM_BASE_URL, AGP_APPROVAL_TTL_SECONDS). */
  env?: Record<string, string>;
  /** Distributed mode only: processes per service (default 1 each). */
  replicas?: Partial<Record<'interventions' | 'policies' | 'stats' | 'ingest' | 'mcp-gateway' | 'evals' | 'replay', number>>;
}

/** Boot the embedded platform (PGlite in memory, in-process bus) with the test keys of organisation `acme`. */
export async function bootEmbedded(opts: BootOptions = {}): Promise<BootedPlatform> {
  const p = await startEmbedded({ port: 0, host: '127.0.0.1', dataDir: 'memory', initOrg: 'acme', initWriteKey: 'agp_test_write_key_0001', initReadKey: 'agp_test_read_key_0001', env: opts.env });
  return { url: p.url, writeKey: 'agp_test_write_key_0001', readKey: 'agp_test_read_key_0001', ...(await databaseHandles(p.sql)), stop: () => p.stop() };
}

/** Boot distributed mode: each service as its own process on the real NATS and PostgreSQL, fresh database and subjects. */
export async function bootDistributed(opts: BootOptions = {}): Promise<BootedPlatform> {
  const run = await startDistributed({
    adminDatabaseUrl: infra().databaseUrl,
    natsUrl: infra().natsUrl,
    env: { AGP_INIT_ORG: 'acme', AGP_INIT_WRITE_KEY: 'agp_dist_write_key_001', AGP_INIT_READ_KEY: 'agp_dist_read_key_0001', ...opts.env },
    replicas: opts.replicas,
  });
  const sql = createPgSql(run.databaseUrl);
  return {
    url: run.url,
    writeKey: 'agp_dist_write_key_001',
    readKey: 'agp_dist_read_key_0001',
    pids: run.pids,
    deadServices: () => run.services().filter((s) => s.exit !== null).map((s) => `${s.label} (pid ${s.pid}) ended: ${s.exit}\n${s.lastLines()}`),
    async killAndRestart(service) {
      await run.kill(service, 'SIGKILL');
      await run.restart(service);
    },
    ...(await databaseHandles(sql)),
    async stop() {
      await sql.close();
      await run.stop();
    },
  };
}

/**
 * Run `scenarios` against both run modes: embedded (always) and distributed on real NATS and PostgreSQL
 * (skipped, with the reason printed, when neither DATABASE_URL/NATS_URL nor Docker is available).
 * `platform()` returns the booted platform inside tests and hooks. `options` may be a function, evaluated in
 * `beforeAll` (e.g. after a loopback fake server has started and knows its port).
 */
export function describeModes(
  name: string,
  scenarios: (platform: () => BootedPlatform, mode: 'embedded' | 'distributed') => void,
  options: BootOptions | (() => BootOptions | Promise<BootOptions>) = {},
): void {
  for (const mode of ['embedded', 'distributed'] as const) {
    describe.skipIf(mode === 'distributed' && skipIntegration())(`${name} (${mode})`, () => {
      let p: BootedPlatform | undefined;
      beforeAll(async () => {
        const opts = typeof options === 'function' ? await options() : options;
        p = mode === 'embedded' ? await bootEmbedded(opts) : await bootDistributed(opts);
      }, 120_000);
      // A service process that died mid-file fails the test it died in by name, with its last lines, instead of
      // every later test failing with 503 "no responders".
      afterEach(() => {
        const dead = p?.deadServices?.() ?? [];
        if (dead.length) throw new Error(`a service of the distributed platform ended during the test:\n${dead.join('\n')}`);
      });
      afterAll(async () => {
        await p?.stop();
      });
      scenarios(() => {
        if (!p) throw new Error('platform not booted');
        return p;
      }, mode);
    });
  }
}
