import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createDatabase, runSuffix } from './db.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Lines of each process's output kept for the error message when it dies or does not become ready. */
const TAIL_LINES = 40;

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** One process of a distributed run as a fault test sees it. */
export interface ServiceInfo {
  /** `interventions`, `gateway`, or `stats#2` when a service has replicas. */
  label: string;
  pid: number;
  /** URL of its readiness probe: the ops port's `/readyz`, or the gateway's own `/readyz`. */
  readyUrl: string;
  /** How it ended (`code 1`, `SIGKILL`), or null while it runs. */
  exit: string | null;
  /** Its last lines of output, indented (for a failure message). */
  lastLines(): string;
}

/** Processes of a distributed platform started for one test run, in their own database, subjects and stream. */
export interface DistributedRun {
  url: string;
  /** pid of each service process, by service name (the process started last, after a {@link restart}). */
  pids: Record<string, number>;
  databaseUrl: string;
  env: Record<string, string>;
  /** The current process of each label (the newest one after a {@link restart}), in start order. */
  services(): ServiceInfo[];
  /** Send `signal` to the current process of `label` and wait until it has exited. */
  kill(label: string, signal: NodeJS.Signals): Promise<void>;
  /**
   * Start `label` again (same settings and ops port) after its process exited, and wait until it answers `/readyz`.
   * @throws Error when the old process still runs, or the new one dies or is not ready in time (with its last lines).
   */
  restart(label: string): Promise<void>;
  stop(): Promise<void>;
}

/** Services started before the gateway, in this order (`replicas` may start more than one of each). */
export const BACKEND_SERVICES = ['interventions', 'policies', 'stats', 'ingest', 'mcp-gateway', 'evals', 'replay'] as const;

/**
 * One service process with the last {@link TAIL_LINES} lines of its output (which is also passed through to this
 * process's stderr), so a failure can name the service and show what it said before it died.
 */
class ServiceProcess {
  readonly child: ChildProcess;
  private readonly tail: string[] = [];
  private partial = '';
  /** Settles when the process exits, with its code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly label: string,
    readonly env: Record<string, string>,
    readonly nodeArgs: string[] = [],
    /** Pass the process's output through to this process's stderr (else it is only kept for {@link lastLines}). */
    echo = true,
  ) {
    const name = label.replace(/#\d+$/, '');
    this.child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, `services/${name}/dist/main.js`], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer) => {
      if (echo) process.stderr.write(chunk);
      const lines = (this.partial + chunk.toString('utf8')).split('\n');
      this.partial = lines.pop() ?? '';
      this.tail.push(...lines);
      if (this.tail.length > TAIL_LINES) this.tail.splice(0, this.tail.length - TAIL_LINES);
    };
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
    this.exited = new Promise((r) => this.child.once('exit', (code, signal) => r({ code, signal })));
  }

  /** The last lines the process wrote, indented, or a note that it wrote nothing. */
  lastLines(): string {
    const lines = [...this.tail, ...(this.partial ? [this.partial] : [])];
    return lines.length ? lines.map((l) => `    ${l}`).join('\n') : '    (no output)';
  }

  /** How the process ended (`code 1`, `SIGKILL`), or null while it runs. */
  exit(): string | null {
    const c = this.child;
    return c.exitCode !== null ? `code ${c.exitCode}` : c.signalCode ? c.signalCode : null;
  }

  /** Describe the process for an error message: label, pid, and how it ended if it has. */
  describe(): string {
    const c = this.child;
    const how = c.exitCode !== null ? `exited with code ${c.exitCode}` : c.signalCode ? `was killed by ${c.signalCode}` : 'is still running';
    return `service "${this.label}" (pid ${c.pid}) ${how}`;
  }

  /**
   * Poll `url` until it answers 2xx. Fails at once, naming the service and showing its last lines, when the process
   * exits first; fails the same way after `timeoutMs`.
   */
  async ready(url: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let died = false;
    void this.exited.then(() => (died = true));
    while (!died && Date.now() < deadline) {
      try {
        if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).ok) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // Let the exit event and the last output arrive before describing the process.
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, died ? 200 : 0))]);
    const why = died ? 'before it was ready' : `and was not ready (${url}) after ${timeoutMs} ms`;
    throw new Error(`${this.describe()} ${why}; its last lines:\n${this.lastLines()}`);
  }

  /** SIGTERM, then SIGKILL after 5 s; resolves when the process has exited. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    kill.unref();
    this.child.kill('SIGTERM');
    await this.exited;
    clearTimeout(kill);
  }
}

/** A distributed start that failed; everything it had started was stopped and dropped before this was thrown. */
export class DistributedStartError extends Error {
  constructor(
    message: string,
    /** What the failed start had created (all of it gone by now): process ids, the database and the JetStream stream. */
    readonly started: { pids: number[]; databaseUrl: string; stream: string },
  ) {
    super(message);
    this.name = 'DistributedStartError';
  }
}

/**
 * Build the service bundles and start each service as its own process (gateway, ingest, interventions, policies, stats;
 * `replicas` starts more than one of a service) against the real NATS and PostgreSQL, with a fresh database, subject
 * prefix and JetStream stream. `pids` holds the last process of each service.
 *
 * If any process exits before it is ready, or is not ready within `readyTimeoutMs` (default 60 s), every process
 * already started is stopped, the stream and the database are dropped, and the error names the service and shows the
 * last lines of its output.
 */
export async function startDistributed(opts: {
  adminDatabaseUrl: string;
  natsUrl: string;
  env: Record<string, string>;
  dbPrefix?: string;
  build?: boolean;
  /** Processes per service (default 1 each), e.g. `{interventions: 2, stats: 2}`. */
  replicas?: Partial<Record<(typeof BACKEND_SERVICES)[number], number>>;
  /** How long each process may take to answer `/readyz` (ms, default 60000). */
  readyTimeoutMs?: number;
  /** Settings for one service's processes only, applied last (e.g. to make one of them fail in a test). */
  serviceEnv?: Partial<Record<(typeof BACKEND_SERVICES)[number] | 'gateway', Record<string, string>>>;
  /** Extra node options for one service's processes (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow). */
  serviceNodeArgs?: Partial<Record<(typeof BACKEND_SERVICES)[number] | 'gateway', string[]>>;
  /** Pass each process's output through to stderr (default true); when false only the last lines are kept. */
  echo?: boolean;
}): Promise<DistributedRun> {
  if (opts.build !== false) execFileSync(process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: ROOT, stdio: 'inherit' });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const db = await createDatabase(opts.adminDatabaseUrl, opts.dbPrefix ?? 'agp_e2e');
  const suffix = runSuffix();
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NATS_URL: opts.natsUrl,
    DATABASE_URL: db.url,
    PORT: String(port),
    AGP_SUBJECT_PREFIX: `t${suffix}`,
    AGP_INGEST_STREAM: `INGEST_T${suffix}`,
    LOG_LEVEL: process.env.AGP_TEST_LOG_LEVEL ?? 'warn',
    ...opts.env,
  };
  const processes: ServiceProcess[] = [];
  const pids: Record<string, number> = {};
  /** The current process and readiness URL of each label. */
  const current = new Map<string, { p: ServiceProcess; readyUrl: string }>();
  const start = (name: string, label: string, extra: Record<string, string> = {}) => {
    const key = name as keyof NonNullable<typeof opts.serviceEnv>;
    const p = new ServiceProcess(label, { ...env, ...extra, ...opts.serviceEnv?.[key] }, opts.serviceNodeArgs?.[key], opts.echo !== false);
    processes.push(p);
    pids[name] = p.child.pid!;
    const ops = extra.OPS_PORT;
    current.set(label, { p, readyUrl: ops ? `http://127.0.0.1:${ops}/readyz` : `http://127.0.0.1:${port}/readyz` });
    return p;
  };
  const stopAll = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    const errors: unknown[] = [];
    try {
      const nc = await connect({ servers: opts.natsUrl });
      try {
        const jsm = await jetstreamManager(nc);
        await jsm.streams.delete(env.AGP_INGEST_STREAM).catch((err: Error) => {
          if (!/not found/i.test(err.message)) errors.push(err);
        });
      } finally {
        await nc.close();
      }
    } catch (err) {
      errors.push(err);
    }
    await db.drop().catch((err) => errors.push(err));
    if (errors.length) throw new AggregateError(errors, `cleaning up the distributed run (stream ${env.AGP_INGEST_STREAM}, database ${db.url})`);
  };
  try {
    // Every service's processes start together (as replicas would): schema migrations take an advisory lock.
    const readiness: Array<Promise<void>> = [];
    for (const name of BACKEND_SERVICES) {
      const count = opts.replicas?.[name] ?? 1;
      for (let i = 0; i < count; i++) {
        const ops = await freePort();
        const p = start(name, count > 1 ? `${name}#${i + 1}` : name, { OPS_PORT: String(ops) });
        readiness.push(p.ready(`http://127.0.0.1:${ops}/readyz`, readyTimeoutMs));
      }
    }
    // Fail on the first process that dies (not after the slowest one's timeout); settle the rest quietly.
    readiness.forEach((r) => r.catch(() => undefined));
    await Promise.all(readiness);
    await start('gateway', 'gateway').ready(`http://127.0.0.1:${port}/readyz`, readyTimeoutMs);
  } catch (err) {
    await stopAll().catch((cleanup) => console.error('[agp tests] cleanup after a failed start also failed:', cleanup));
    throw new DistributedStartError((err as Error).message, { pids: processes.map((p) => p.child.pid!), databaseUrl: db.url, stream: env.AGP_INGEST_STREAM });
  }
  const entry = (label: string) => {
    const e = current.get(label);
    if (!e) throw new Error(`no service "${label}" in this run (have ${[...current.keys()].join(', ')})`);
    return e;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    pids,
    databaseUrl: db.url,
    env,
    services: () => [...current.entries()].map(([label, { p, readyUrl }]) => ({ label, pid: p.child.pid!, readyUrl, exit: p.exit(), lastLines: () => p.lastLines() })),
    async kill(label, signal) {
      const { p } = entry(label);
      if (p.exit() === null) p.child.kill(signal);
      await p.exited;
    },
    async restart(label) {
      const { p: old, readyUrl } = entry(label);
      if (old.exit() === null) throw new Error(`${old.describe()}: stop it before restarting it`);
      const name = label.replace(/#\d+$/, '');
      const p = new ServiceProcess(label, old.env, old.nodeArgs, opts.echo !== false);
      processes.push(p);
      pids[name] = p.child.pid!;
      current.set(label, { p, readyUrl });
      await p.ready(readyUrl, readyTimeoutMs);
    },
    stop: stopAll,
  };
}
