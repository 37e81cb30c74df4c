import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { infra, skipIntegration } from '../support/infra.js';
import { DistributedStartError, startDistributed } from '../support/distributed.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// A distributed start that fails names the service, shows its last lines, and leaves nothing behind.
describe.skipIf(skipIntegration())('startDistributed when a service dies at start', () => {
  it('names the service, shows its output, and stops every process, the stream and the database', async () => {
    const err = await startDistributed({
      adminDatabaseUrl: infra().databaseUrl,
      natsUrl: infra().natsUrl,
      env: { AGP_INIT_ORG: 'acme', AGP_INIT_WRITE_KEY: 'agp_harness_write_key_01', AGP_INIT_READ_KEY: 'agp_harness_read_key_001' },
      serviceEnv: { stats: { OPS_PORT: 'not-a-port' } },
      readyTimeoutMs: 60_000,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DistributedStartError);
    const e = err as DistributedStartError;
    expect(e.message).toMatch(/service "stats" \(pid \d+\) exited with code 1 before it was ready/);
    expect(e.message).toContain('OPS_PORT'); // the process's own last lines
    expect(e.started.pids.length).toBeGreaterThanOrEqual(4);
    for (const pid of e.started.pids) expect(alive(pid), `pid ${pid}`).toBe(false);

    const dbName = new URL(e.started.databaseUrl).pathname.slice(1);
    const c = new pg.Client({ connectionString: infra().databaseUrl });
    await c.connect();
    try {
      const { rows } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
      expect(rows).toHaveLength(0);
    } finally {
      await c.end();
    }
    const nc = await connect({ servers: infra().natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      await expect(jsm.streams.info(e.started.stream)).rejects.toThrow(/not found/i);
    } finally {
      await nc.close();
    }
  }, 120_000);
});
