/**
 * Fleets of agent processes running test/support/quota-agent.mjs, for the fleet-wide quota tests
 * (test/e2e/fleet-quotas.test.ts) and `pnpm bench quotas` (bench/quotas.ts): start them together, read their JSON
 * lines, stop them (SIGTERM: reports delivered, leases released) or kill them (SIGKILL). No test framework here, so the
 * bench imports it too. Source: docs/sdk.md (Fleet-wide limits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** What test/support/quota-agent.mjs is given (its module docs describe each setting). */
export interface QuotaAgentSettings {
  url: string;
  key: string;
  agentId: string;
  sessionId?: string;
  runId?: string;
  action?: string;
  /** `estimatedCostUsd` of each action, USD. */
  costUsd?: number;
  policies?: number;
  waitForGo?: boolean;
  /** ms between two admitted actions. */
  intervalMs?: number;
  /** ms after a refused action. */
  refusedPauseMs?: number;
  stopAfterAdmitted?: number;
  quotaWaitMs?: number;
  failMode?: 'closed' | 'open';
  printEveryMs?: number;
  mode?: 'sdk' | 'evaluate';
}

/** One JSON line of a quota agent: its counts so far (cumulative) and what it holds. */
export interface QuotaAgentLine {
  event: 'ready' | 'counts' | 'holding' | 'final';
  /** When it was written, ms since the epoch. */
  t: number;
  admitted: number;
  budget_exceeded: number;
  rate_limited: number;
  /** Refusals other than budget_exceeded and rate_limited (failing closed, a policy block). */
  blocked: number;
  /** Requests sent to `POST /api/v1/quotas/leases`. */
  leaseCalls: number;
  /** `gov.status().leases`, null when the SDK has none. */
  leases: Array<{ policy_id: string; limit: string; scope_key: string; held: number; spent: number; expires_at: string }> | null;
  runId?: string;
  /** final: when each admitted action was asked for, ms since the epoch. */
  admittedAt?: number[];
  /** final: one reason per refusal kind. */
  reasons?: Record<string, string>;
  /** final: what `gov.close()` answered. */
  closed?: { delivered: number; pending: number };
  /** final: how long each admitted action took, ms (in `evaluate` mode the decision API's round trip included). */
  latenciesMs?: number[];
}

/** Every action a line counts: admitted and refused. */
export const actionsOf = (l: QuotaAgentLine) => l.admitted + l.budget_exceeded + l.rate_limited + l.blocked;

/**
 * One agent process running test/support/quota-agent.mjs (`script`) with `settings`, in `cwd` (a folder where
 * `@agp/sdk` resolves: the packed SDK's install folder, or the repository for its built package). Keeps every JSON
 * line it writes; `latest` is the last one.
 */
export class QuotaAgent {
  readonly child: ChildProcess;
  readonly lines: QuotaAgentLine[] = [];
  private partial = '';
  private err = '';
  /** Settles with the `ready` line; rejects when the process exits first. */
  readonly ready: Promise<QuotaAgentLine>;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(script: string, cwd: string, readonly settings: QuotaAgentSettings) {
    this.child = spawn(process.execPath, [script, JSON.stringify(settings)], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr!.on('data', (d: Buffer) => (this.err += d.toString()));
    this.exited = new Promise((r) => this.child.once('exit', (code, signal) => r({ code, signal })));
    this.ready = new Promise((ok, fail) => {
      this.child.stdout!.on('data', (d: Buffer) => {
        const parts = (this.partial + d.toString()).split('\n');
        this.partial = parts.pop() ?? '';
        for (const p of parts) {
          if (!p.trim()) continue;
          const line = JSON.parse(p) as QuotaAgentLine;
          this.lines.push(line);
          if (line.event === 'ready') ok(line);
        }
      });
      void this.exited.then(({ code, signal }) => fail(new Error(`quota agent ${settings.agentId} exited (${code ?? signal}) before it was ready: ${this.err}`)));
    });
  }

  /** The last line written (counts zero before the first). */
  get latest(): QuotaAgentLine {
    return this.lines.at(-1) ?? { event: 'ready', t: 0, admitted: 0, budget_exceeded: 0, rate_limited: 0, blocked: 0, leaseCalls: 0, leases: null };
  }

  /** The last line written at or before `t` (ms since the epoch). */
  at(t: number): QuotaAgentLine {
    return this.lines.filter((l) => l.t <= t).at(-1) ?? { ...this.latest, t: 0, admitted: 0, budget_exceeded: 0, rate_limited: 0, blocked: 0, leaseCalls: 0 };
  }

  /** The run id the process acts in (from its `ready` line). */
  get runId(): string {
    return this.lines.find((l) => l.event === 'ready')!.runId!;
  }

  /** Let a process started with `waitForGo` act. */
  go(): void {
    this.child.stdin!.write('go\n');
  }

  /**
   * SIGTERM: the process ends its run, closes its governor (its reports delivered, its leases released) and writes
   * its `final` line. @returns that line. @throws Error when it exits without one, or not with code 0.
   */
  async stop(): Promise<QuotaAgentLine> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const { code, signal } = await this.exited;
    const final = this.lines.find((l) => l.event === 'final');
    if (!final || code !== 0) throw new Error(`quota agent ${this.settings.agentId} ended with ${code ?? signal} and ${final ? 'a' : 'no'} final line: ${this.err}`);
    return final;
  }

  /** SIGKILL, and wait until it has exited. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/**
 * Start `n` agent processes (`settings(i)` each, `waitForGo` set), wait until every one is ready, then (unless `go` is
 * false: the caller calls {@link QuotaAgent.go}) let them all act at once. @returns the processes.
 */
export async function startFleet(script: string, cwd: string, n: number, settings: (i: number) => QuotaAgentSettings, go = true): Promise<QuotaAgent[]> {
  const agents = Array.from({ length: n }, (_, i) => new QuotaAgent(script, cwd, { ...settings(i), waitForGo: true }));
  try {
    await Promise.all(agents.map((a) => a.ready));
  } catch (err) {
    await Promise.all(agents.map((a) => a.kill()));
    throw err;
  }
  if (go) for (const a of agents) a.go();
  return agents;
}

/** Poll (every 25 ms) until `done(agents)` or `timeoutMs` passes. @returns whether `done` came true. */
export async function until(agents: QuotaAgent[], done: (agents: QuotaAgent[]) => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (done(agents)) return true;
    if (agents.some((a) => a.child.exitCode !== null)) return done(agents);
    await sleep(25);
  }
  return done(agents);
}

/** Admitted actions over every process, from their latest lines. */
export const admittedOf = (agents: QuotaAgent[]) => agents.reduce((n, a) => n + a.latest.admitted, 0);
