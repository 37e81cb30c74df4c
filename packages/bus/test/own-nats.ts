/**
 * A nats-server of a test's own, on a free port, that the test may stop (SIGTERM: a clean shutdown; SIGKILL) and start
 * again on the same port and store directory, as a restarted server. Used by the JetStream fault tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sleep } from './ingest-log-contract.js';

/** The nats-server binary: `NATS_SERVER_BIN`, else /usr/sbin/nats-server. */
export const NATS_BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** Why the own-server tests skip ('' when the binary is there); printed once by the caller. */
export const missingNatsServer = existsSync(NATS_BIN) ? '' : `[agp tests] own nats-server tests skipped: no nats-server binary at ${NATS_BIN} (set NATS_SERVER_BIN)`;

/** A free TCP port on 127.0.0.1 (re-exported for the tests that start their own server). */
export { freePort } from '../../../test/support/distributed.js';

/** A nats-server with JetStream on `port`, storing under `dir`. */
export class OwnNats {
  private proc: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
  /** Start it; resolves once JetStream answers (within 10 s), else throws the last connection error. */
  async start(): Promise<void> {
    this.proc = spawn(NATS_BIN, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        const nc = await connect({ servers: this.url, reconnect: false });
        await jetstreamManager(nc, { timeout: 2000 }).then((m) => m.getAccountInfo());
        await nc.close();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(100);
      }
    }
  }
  /** Stop it with `signal` (default SIGTERM, a clean shutdown) and wait for the process to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
  }
}
