import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/distributed.js';
import { createTestDatabase, infra, runSuffix, skipIntegration } from '../support/infra.js';

/**
 * A service process with `AGP_EVENT_STORE=kurrentdb` whose KurrentDB does not answer (KURRENTDB_URL at a loopback port
 * nothing listens on): it starts (its projections retry), and its `/readyz` answers 503 problem+json naming
 * `kurrentdb`, while PostgreSQL and NATS are up. The built stats service (`services/stats/dist/main.js`) is the process.
 * Source: docs/operations.md (Readiness).
 */
const ROOT = resolve(import.meta.dirname, '../..');

describe.skipIf(skipIntegration())('a service with KurrentDB down', () => {
  let child: ChildProcess | undefined;
  let output = '';
  let database: { url: string; drop: () => Promise<void> };
  let kurrentPort: number;
  let opsPort: number;
  let stream: string | undefined;
  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'stats', '--quiet'], { cwd: ROOT });
    database = await createTestDatabase('agp_kdb_ready');
    // KURRENTDB_URL at a loopback port nothing listens on (a free port: bound, then released).
    kurrentPort = await freePort();
    opsPort = await freePort();
    const suffix = runSuffix();
    stream = `KDBREADY_${suffix}`;
    child = spawn(process.execPath, [join(ROOT, 'services/stats/dist/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        NATS_URL: infra().natsUrl,
        AGP_SUBJECT_PREFIX: `kdbready${suffix}`,
        AGP_INGEST_STREAM: stream,
        AGP_EVENT_STORE: 'kurrentdb',
        KURRENTDB_URL: `kurrentdb://127.0.0.1:${kurrentPort}?tls=false`,
        OPS_PORT: String(opsPort),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    await database?.drop();
    // The ingest log's JetStream stream the process created.
    if (stream) {
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const { connect } = await import('@nats-io/transport-node');
      const nc = await connect({ servers: infra().natsUrl });
      try {
        await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
      } finally {
        await nc.close();
      }
    }
  });

  it('answers /readyz 503 naming kurrentdb (and neither postgres nor nats)', async () => {
    // The ops server listens once the process has connected to NATS and PostgreSQL; wait for its first answer.
    let res: Response | undefined;
    for (let i = 0; i < 300 && !res; i++) {
      if (child!.exitCode !== null) throw new Error(`the stats process exited with ${child!.exitCode}:\n${output.slice(-2000)}`);
      res = await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined);
      if (!res) await new Promise((done) => setTimeout(done, 100));
    }
    expect(res, output.slice(-2000)).toBeDefined();
    expect(res!.status).toBe(503);
    expect(res!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res!.json()) as { detail: string };
    expect(body.detail).toMatch(new RegExp(`^not ready: kurrentdb: KurrentDB at 127\\.0\\.0\\.1:${kurrentPort} did not answer a read of \\$all`));
    expect(body.detail).not.toMatch(/postgres|nats|no answer within/);
  });
});
