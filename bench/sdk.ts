/**
 * `pnpm bench sdk`: the agent SDK benchmark (not a test). Starts the embedded platform as its own process
 * (`services/embedded/dist/main.js`, as `npm start` runs it, in-memory data), then measures the built SDK
 * (packages/sdk/dist/index.js, what an agent installs) against it, every figure beside baselines measured in the same
 * run on the same machine:
 *
 *   - a bare call of the action's function (`await fn(args)`);
 *   - `@microsoft/agent-governance-sdk` (AGT): `AgentMeshClient.executeWithGovernance(action, args)` on equivalent
 *     rules, then `fn(args)` when it allows;
 *   - `@cedar-policy/cedar-wasm` (nodejs build): `statefulIsAuthorized` against an equivalent policy set preparsed once
 *     with `preparsePolicySet`, then `fn(args)` when it allows.
 *     In a process of its own (./sdk-cedar.ts): with AGT in the same V8 isolate, Node 20.20 aborts.
 *
 * Rows:
 *   (a) the allow path of `run.act` with 1, 10 and 100 policies applying to the agent (no guardrails), in-memory
 *       reporting, then the same with the durable spool on (`spoolDir`): p50 and p99 µs;
 *   (b) the PII guardrail (every category) over a 2 KB argument object: clean (allowed), and holding three PII values
 *       (blocked, intervention recorded): p50 and p99 µs;
 *   (c) kill-switch propagation: `PUT /api/v1/kill-switches/agents/{id}` until the next `act` of a Governor in another
 *       process is blocked, p50 and p99 over BENCH_SDK_TRIALS trials; beside the PUT's own answer time;
 *   (d) approval round trip: `POST /api/v1/approvals/{id}/approve` until the escalated `act` waiting in that other
 *       process resumes; beside the POST's own answer time;
 *   (f) the Python SDK (sdks/python): `python3 -m agp.bench --json` against the same platform (its module docs say
 *       how it measures): the allow path with 1, 10, 100 policies, the durable spool, the PII guardrail over 2 KB and
 *       kill-switch propagation into a Python process; skipped with a line when python3 is not there;
 *   (e) throughput: guarded actions per second from one process (10 policies, reporting on: every ledger entry is sent
 *       to the platform), exactly BENCH_SDK_THROUGHPUT_ACTS sequential `await run.act(...)`, then until the platform
 *       acknowledged every report (end to end); the baselines make at least as many calls, and for at least 1 s. The
 *       agent is a plain `node` process on the built SDK (bench/sdk-throughput.mjs), not this tsx-loaded runner.
 *
 * Equivalent rules: AGP policy i (scoped to the agent) denies `drop_table_i` and `delete_records_i` and requires
 * approval for `wire_transfer_i`. AGT gets, per policy, two `deny` rules and a `review` rule, then `* → allow`
 * (first match wins, so an allowed action is checked against every rule). Cedar gets, per policy, a `forbid` of the
 * two actions for that principal and an `@approval` `forbid` of the third, then one `permit` of everything (AGP allows
 * what no policy stops). The action measured, `refund_payment`, is allowed by all three.
 *
 * Method: every row is warmed up, then BENCH_SDK_ROUNDS rounds interleave the rows (a noisy machine slows them alike);
 * in each round a row makes BENCH_SDK_SAMPLES calls, each timed with `process.hrtime.bigint()` (the timer's own cost,
 * printed, is included), in chunks of 100 after which the event loop runs (timers, I/O: the SDK's reporting and fsync
 * happen there, as between an agent's actions). Percentiles pool the rounds. Beside p50 / p99 each cell gives the mean
 * process CPU time per call (`process.cpuUsage()` over the timed calls: GC and JIT threads included, time the machine
 * gave to other processes excluded), the figure that a busy shared machine disturbs least.
 * The latency rows keep every report (in memory, or in the spool file) but defer sending it: they make hundreds of
 * thousands of actions a second, more than any platform ingests, and the platform ingesting them on the same machine
 * would slow the rows. Delivery is measured by row (e).
 *
 * Knobs: BENCH_SDK_SAMPLES (default 20000), BENCH_SDK_ROUNDS (default 3), BENCH_SDK_TRIALS (default 20),
 * BENCH_SDK_THROUGHPUT_ACTS (default 20000), BENCH_SDK_ACT_EVERY_MS (how often the agent acts in row c, default 10), BENCH_SDK_ONLY (comma list of allow, pii, kill, approval, throughput, python),
 * BENCH_SDK_URL (a running platform started with AGP_INIT_ORG=bench and the bench's keys, instead of starting one).
 * To profile: `node --cpu-prof --cpu-prof-dir=<dir> --import tsx bench/run.ts sdk` (with BENCH_SDK_ONLY=allow).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AgentMeshClient } from '@microsoft/agent-governance-sdk';
import { CHUNK, rate, sample, type Fn } from './sdk-harness.js';
import { READ_KEY, WRITE_KEY, startEmbeddedPlatform, type Platform } from './embedded-platform.js';
import { setTimeout as sleep } from 'node:timers/promises';

type Sdk = typeof import('@agp/sdk');
type Governor = import('@agp/sdk').Governor;

const SAMPLES = Number(process.env.BENCH_SDK_SAMPLES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_SDK_ROUNDS ?? 3);
const TRIALS = Number(process.env.BENCH_SDK_TRIALS ?? 20);
const THROUGHPUT_ACTS = Number(process.env.BENCH_SDK_THROUGHPUT_ACTS ?? 20_000);
/** A running platform to use instead of starting one (its keys must be the bench's: AGP_INIT_* as below). */
const EXTERNAL = process.env.BENCH_SDK_URL;
/**
 * How often the agent process acts while the kill-switch row waits for a blocked act, in ms (BENCH_SDK_ACT_EVERY_MS,
 * default 10): 100 reported actions a second, more than an agent whose actions follow model calls makes, and a 10 ms
 * resolution against a 300 ms target. At 1 ms one agent's reports alone reach the embedded platform's end-to-end
 * ingest rate (row e), and the kill switch's PUT then waits behind a growing backlog: that measures ingest, not
 * propagation.
 */
const ACT_EVERY_MS = Number(process.env.BENCH_SDK_ACT_EVERY_MS ?? 10);
const ONLY = new Set((process.env.BENCH_SDK_ONLY ?? 'allow,pii,kill,approval,throughput,python').split(','));
const COUNTS = [1, 10, 100];
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Suffix of this run's agent ids (a platform given by BENCH_SDK_URL may hold earlier runs' policies). */
const RUN = Date.now().toString(36);

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (ns: number) => (ns / 1000).toFixed(ns < 10_000 ? 2 : 1);
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const clock = () => performance.timeOrigin + performance.now();

/** The action measured, its arguments and its function (the same for every row). */
const ACTION = 'refund_payment';
const ARGS = { invoice: 'inv_1', amount: 120, currency: 'EUR', reason: 'duplicate charge' };
const work = (a: Record<string, unknown>) => a.amount as number;

/** A 2 KB argument object as a support agent sends it: a ticket with its thread. No PII. */
function ticket(pii: boolean): Record<string, unknown> {
  const say = (who: string, text: string) => ({ role: who, content: text });
  const t = {
    ticket_id: 'T-20817',
    priority: 'normal',
    customer: { tier: 'business', region: 'eu-west', account_age_days: 412, locale: 'en-GB' },
    subject: 'Refund for a duplicate charge on the March invoice',
    messages: [
      say('customer', 'Hello, I was charged twice for the March subscription and would like the second charge refunded. The invoice number is on the receipt attached to my earlier message.'),
      say('agent', 'Thank you for reaching out. I can see two charges on the same day for the business plan. I will check with billing whether the second one was captured or only authorised.'),
      say('customer', pii ? 'It was captured, my bank shows both. You can reach me at jane.doe@example.com or on +44 20 7946 0958 if you need anything else.' : 'It was captured, my bank shows both. Please let me know once the refund is on its way and how long it usually takes to arrive.'),
      say('agent', 'Billing confirmed the duplicate capture. I have opened a refund for the second charge; it usually arrives within five to seven working days depending on the bank.'),
      say('customer', pii ? 'Great. For the record the card used was 4111 1111 1111 1111, in case you need to match it.' : 'Great, thank you for sorting this out so quickly. I will keep an eye on my statement and come back if it does not show up.'),
    ],
    tags: ['billing', 'refund', 'duplicate-charge', 'business-plan'],
    metadata: { channel: 'email', first_response_minutes: 14, reopened: false, sentiment: 'neutral', product: 'workspace', plan_seats: 25 },
    notes: 'Customer has been with us for over a year; no earlier refund requests. Approve within the standard refund policy, no escalation needed unless the amount is above the usual threshold.',
  };
  const pad = 2048 - JSON.stringify(t).length;
  return { ...t, summary: 'Duplicate capture confirmed by billing, refund opened for the second charge. '.repeat(30).slice(0, Math.max(0, pad - 14)) };
}

interface Row {
  label: string;
  /** The call, in this thread; or `remote`, a whole sample of `n` calls taken elsewhere (the Cedar worker). */
  fn: Fn | null;
  remote?: (n: number) => Promise<{ samples: Float64Array; cpuUs: number }>;
  samples: Float64Array[];
  /** Process CPU time (user + system, µs) over the timed calls of each round. */
  cpuUs: number[];
}
const row = (label: string, fn: Fn): Row => ({ label, fn, samples: [], cpuUs: [] });
const take = (r: Row, n: number) => (r.remote ? r.remote(n) : sample(r.fn!, n));

const percentile = (sorted: Float64Array | number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function pooled(r: Row): { p50: number; p99: number; n: number; cpu: number } {
  const all = new Float64Array(r.samples.reduce((s, a) => s + a.length, 0));
  let o = 0;
  for (const a of r.samples) {
    all.set(a, o);
    o += a.length;
  }
  all.sort();
  return { p50: percentile(all, 50), p99: percentile(all, 99), n: all.length, cpu: (r.cpuUs.reduce((a, b) => a + b, 0) * 1000) / all.length };
}

/** Warm every row, then ROUNDS rounds interleaving them. */
async function measure(rows: Row[]): Promise<void> {
  for (const r of rows) await take(r, Math.min(SAMPLES, 5000));
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of rows) {
      const { samples, cpuUs } = await take(r, SAMPLES);
      r.samples.push(samples);
      r.cpuUs.push(cpuUs);
    }
  }
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Create `n` policies scoped to `agentId` (the equivalent rules of the module docs) plus `extra` fields on the first. */
async function createPolicies(p: Platform, agentId: string, n: number, extra: Record<string, unknown> = {}): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await p.call('POST', '/api/v1/policies', { name: `${agentId} policy ${i}`, agent_ids: [agentId], denied_actions: [`drop_table_${i}`, `delete_records_${i}`], approval_required_actions: [`wire_transfer_${i}`], ...(i === 0 ? extra : {}) });
    if (r.status !== 201) throw new Error(`POST /api/v1/policies answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
  await until(`${n} policies in ${agentId}'s governance snapshot`, async () => {
    const r = await p.call('GET', `/api/v1/agents/${agentId}/governance`);
    return r.status === 200 && r.body.policies.length === n;
  });
}

/**
 * A governor of the built SDK for `agentId`, once its snapshot holds `policies` policies and its push channel is live.
 * `deferDelivery`: reports are kept (memory or spool) but not sent while the rows run — the latency rows make far more
 * actions per second than any platform ingests, and the platform ingesting them on this machine would slow every row.
 */
async function connect(sdk: Sdk, p: Platform, agentId: string, policies: number, opts: { spoolDir?: string; deferDelivery?: boolean } = {}): Promise<Governor> {
  const gov = await sdk.Governor.connect({ url: p.url, key: WRITE_KEY, agentId, spoolDir: opts.spoolDir, onReportError: () => undefined, ...(opts.deferDelivery ? { flushIntervalMs: 24 * 3600_000 } : {}) });
  await until(`${agentId} connected`, async () => gov.status().policies === policies && gov.status().channel.state === 'connected');
  return gov;
}

/** What bench/sdk-throughput.mjs prints: acts made, ms acting and ms until every report was acknowledged, reports. */
interface ThroughputOut {
  n: number;
  actMs: number;
  allMs: number;
  pendingAtEnd: number;
  sent: number;
  pending: number;
}

/**
 * Row (e)'s agent: `count` sequential acts of agent `agentId` (its snapshot holding `policies` policies) in a plain
 * `node` process on the built SDK. @throws when the process exits non-zero or prints no result.
 */
async function throughputAgent(url: string, agentId: string, policies: number, count: number, spec: { action: string; args: Record<string, unknown>; estimatedCostUsd: number }): Promise<ThroughputOut> {
  const child = spawn(process.execPath, [join(ROOT, 'bench/sdk-throughput.mjs'), url, WRITE_KEY, agentId, String(policies), String(count), String(CHUNK), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT });
  let stdout = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c, signal) => r(c ?? (signal ? 128 : null))));
  const last = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !last.startsWith('{')) throw new Error(`the throughput agent exited with ${code}: ${stdout.slice(-500)}`);
  return JSON.parse(last) as ThroughputOut;
}

/** AGT's client with the equivalent rules of `n` policies. */
function agtClient(agt: typeof import('@microsoft/agent-governance-sdk'), agentId: string, n: number): AgentMeshClient {
  const rules = [];
  for (let i = 0; i < n; i++) rules.push({ action: `drop_table_${i}`, effect: 'deny' as const }, { action: `delete_records_${i}`, effect: 'deny' as const }, { action: `wire_transfer_${i}`, effect: 'review' as const });
  rules.push({ action: '*', effect: 'allow' as const });
  return agt.AgentMeshClient.create(agentId, { policyRules: rules });
}

/** The Cedar baseline, in a process of its own (./sdk-cedar.ts says why). */
class CedarWorker {
  private readonly child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/sdk-cedar.ts')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced', cwd: ROOT });
  private queue: Promise<unknown> = Promise.resolve();

  /** One request, answered in order. */
  ask<T>(m: Record<string, unknown>): Promise<T> {
    const next = this.queue.then(
      () =>
        new Promise<T>((resolve, reject) => {
          this.child.once('message', (a: { error?: string }) => (a.error ? reject(new Error(`Cedar process: ${a.error}`)) : resolve(a as T)));
          this.child.send(m);
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Preparse the equivalent policy set of `n` policies as `id`. */
  prepare(id: string, agentId: string, n: number): Promise<unknown> {
    return this.ask({ cmd: 'prepare', id, agentId, n });
  }

  /** A row whose samples the worker takes: authorize `action` with `context`, then the same function. */
  row(label: string, id: string, agentId: string, action: string, context: Record<string, unknown>): Row {
    return { label, fn: null, samples: [], cpuUs: [], remote: (n) => this.ask({ cmd: 'sample', id, agentId, action, context, n }) };
  }

  close(): void {
    this.child.kill('SIGTERM');
  }
}

const agtCall = (client: AgentMeshClient, action: string, args: Record<string, unknown>, fn: (a: Record<string, unknown>) => unknown) => async () => {
  const r = await client.executeWithGovernance(action, args);
  if (r.decision === 'allow') return fn(args);
  return null;
};

/** A printed row: figure, baselines, target, pass/fail. */
type Line = [string, string, string, string, string, string, string];
const lines: Line[] = [];
const checks: Array<{ what: string; ok: boolean }> = [];
const check = (what: string, ok: boolean) => {
  checks.push({ what, ok });
  return `${what} ${ok ? 'PASS' : 'FAIL'}`;
};
const pq = (x: { p50: number; p99: number; cpu: number }) => `${us(x.p50)} / ${us(x.p99)} · ${us(x.cpu)}`;

/** Run the benchmark and print its table. */
export async function sdkBench(): Promise<void> {
  const sdk = (await import(pathToFileURL(join(ROOT, 'packages/sdk/dist/index.js')).href)) as Sdk;
  const require = createRequire(import.meta.url);
  const agt = require('@microsoft/agent-governance-sdk') as typeof import('@microsoft/agent-governance-sdk');
  const cedar = new CedarWorker();
  const agtVersion = (require('@microsoft/agent-governance-sdk/package.json') as { version: string }).version;
  const cedarVersion = (await cedar.ask<{ ok: string }>({ cmd: 'version' })).ok;
  const timer = (await sample(() => 0, 20_000)).samples;
  timer.sort();
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  console.log(`AGP agent SDK benchmark: node ${process.version}, ${availableParallelism()} CPUs (${cpuModel}), ${new Date().toISOString()}; ${ROUNDS} rounds × ${fmt(SAMPLES)} timed calls per row; timer overhead p50 ${us(percentile(timer, 50))} µs (included)`);
  console.log(`load average at start: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log(`baselines: bare function call; @microsoft/agent-governance-sdk ${agtVersion} executeWithGovernance; @cedar-policy/cedar-wasm ${cedarVersion} statefulIsAuthorized (preparsed policy set)`);
  console.log('starting the embedded platform (its own process, in-memory data) ...');
  const p = await startEmbeddedPlatform(EXTERNAL);
  const dirs: string[] = [];
  const govs: Governor[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'agp-bench-spool-'));
    dirs.push(d);
    return d;
  };
  let agent: ChildProcess | null = null;
  try {
    if (ONLY.has('allow')) {
      const bare = row('bare call', async () => work(ARGS));
      const sets = [];
      for (const n of COUNTS) {
        const agentId = `bench-allow-${n}-${RUN}`;
        await createPolicies(p, agentId, n);
        const mem = await connect(sdk, p, agentId, n, { deferDelivery: true });
        const spoolGov = await connect(sdk, p, agentId, n, { spoolDir: tmp(), deferDelivery: true });
        govs.push(mem, spoolGov);
        const runMem = mem.startRun();
        const runSpool = spoolGov.startRun();
        const d = await runMem.act(ACTION, ARGS, work, { onBlocked: 'return' });
        if (d !== 120) throw new Error(`the allow path is not allowed: ${JSON.stringify(d)}`);
        await cedar.prepare(`allow-${n}`, agentId, n);
        const client = agtClient(agt, agentId, n);
        if ((await client.executeWithGovernance(ACTION, ARGS)).decision !== 'allow') throw new Error('AGT does not allow the action');
        sets.push({
          n,
          mem: row(`act, ${n} policies, memory`, () => runMem.act(ACTION, ARGS, work, { estimatedCostUsd: 0.02 })),
          spool: row(`act, ${n} policies, spool`, () => runSpool.act(ACTION, ARGS, work, { estimatedCostUsd: 0.02 })),
          agt: row(`AGT, ${n}`, agtCall(client, ACTION, ARGS, work)),
          cedar: cedar.row(`Cedar, ${n}`, `allow-${n}`, agentId, ACTION, ARGS),
        });
      }
      console.log('measuring the allow path ...');
      await measure([bare, ...sets.flatMap((s) => [s.mem, s.spool, s.agt, s.cedar])]);
      const b = pooled(bare);
      for (const s of sets) {
        const m = pooled(s.mem);
        const a = pooled(s.agt);
        const c = pooled(s.cedar);
        const target =
          s.n === 10
            ? [check('p50 ≤ 5 µs', m.p50 <= 5000), check('p99 ≤ 25 µs', m.p99 <= 25_000), check('≤ ½ AGT (p50, p99)', m.p50 <= a.p50 / 2 && m.p99 <= a.p99 / 2), check('< Cedar (p50, p99)', m.p50 < c.p50 && m.p99 < c.p99)].join('; ')
            : '';
        lines.push([`(a) allow path, ${s.n} ${s.n === 1 ? 'policy' : 'policies'}, in-memory reporting`, pq(m), pq(b), pq(a), pq(c), s.n === 10 ? 'p50 ≤ 5, p99 ≤ 25, ≤ ½ AGT, < Cedar' : '', target]);
      }
      for (const s of sets) {
        const m = pooled(s.spool);
        lines.push([`(a) allow path, ${s.n} ${s.n === 1 ? 'policy' : 'policies'}, durable spool`, pq(m), pq(b), pq(pooled(s.agt)), pq(pooled(s.cedar)), s.n === 10 ? 'p99 ≤ 100' : '', s.n === 10 ? check('p99 ≤ 100 µs', m.p99 <= 100_000) : '']);
      }
    }

    if (ONLY.has('pii')) {
      const agentId = `bench-pii-${RUN}`;
      await createPolicies(p, agentId, 1, { guardrails: { pii: { mode: 'block' } } });
      const gov = await connect(sdk, p, agentId, 1, { deferDelivery: true });
      govs.push(gov);
      const run = gov.startRun();
      const clean = ticket(false);
      const dirty = ticket(true);
      const size = (o: unknown) => Buffer.byteLength(JSON.stringify(o));
      const ok = await run.act('answer_ticket', clean, () => 1, { onBlocked: 'return' });
      if (ok !== 1) throw new Error(`the clean ticket is not allowed: ${JSON.stringify(ok)}`);
      const stopped = (await run.act('answer_ticket', dirty, () => 1, { onBlocked: 'return' })) as { blocked?: boolean; decision?: { decision: string; context?: { matches?: unknown[] } } };
      if (stopped.decision?.decision !== 'pii_blocked') throw new Error(`the ticket with PII is not blocked: ${JSON.stringify(stopped)}`);
      const client = agtClient(agt, agentId, 1);
      await cedar.prepare('pii', agentId, 1);
      const rows = {
        clean: row('pii clean', () => run.act('answer_ticket', clean, work)),
        dirty: row('pii dirty', () => run.act('answer_ticket', dirty, work, { onBlocked: 'return' })),
        bare: row('bare 2KB', async () => work(clean)),
        agt: row('AGT 2KB', agtCall(client, 'answer_ticket', clean, work)),
        cedar: cedar.row('Cedar 2KB', 'pii', agentId, 'answer_ticket', clean),
      };
      console.log(`measuring the PII guardrail (arguments of ${size(clean)} B clean, ${size(dirty)} B with ${stopped.decision.context?.matches?.length} matches) ...`);
      await measure(Object.values(rows));
      const c = pooled(rows.clean);
      const d = pooled(rows.dirty);
      const base = [pq(pooled(rows.bare)), pq(pooled(rows.agt)), pq(pooled(rows.cedar))] as const;
      lines.push([`(b) PII guardrail, ${size(clean)} B of arguments, none found (allowed)`, pq(c), ...base, 'p99 ≤ 150', check('p99 ≤ 150 µs', c.p99 <= 150_000)]);
      lines.push([`(b) PII guardrail, ${size(dirty)} B holding ${stopped.decision.context?.matches?.length} PII values (blocked, recorded)`, pq(d), ...base, 'p99 ≤ 150', check('p99 ≤ 150 µs', d.p99 <= 150_000)]);
    }

    if (ONLY.has('kill') || ONLY.has('approval')) {
      const agentId = `bench-agent-process-${RUN}`;
      await createPolicies(p, agentId, 1);
      agent = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/sdk-agent.ts')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], cwd: ROOT });
      const inbox: any[] = [];
      let wake: (() => void) | null = null;
      agent.on('message', (m) => {
        inbox.push(m);
        wake?.();
      });
      const next = async (): Promise<any> => {
        while (!inbox.length) {
          await new Promise<void>((r) => {
            wake = r;
            setTimeout(r, 30_000);
          });
          wake = null;
          if (!inbox.length && agent!.exitCode !== null) throw new Error('the agent process exited');
        }
        const m = inbox.shift();
        if (m.error) throw new Error(`agent process: ${m.error}`);
        return m;
      };
      await next(); // started
      agent.send({ cmd: 'connect', url: p.url, key: WRITE_KEY, agentId });
      await next();
      // The kill-switch route takes registered agents only (connect registered it with its actions).
      await until(`${agentId} registered`, async () => (await p.call('GET', `/api/v1/agents/${agentId}`)).status === 200);

      if (ONLY.has('kill')) {
        console.log(`measuring kill-switch propagation (${TRIALS} trials) ...`);
        const ks = (engaged: boolean) => p.call('PUT', `/api/v1/kill-switches/agents/${agentId}`, { engaged, reason: 'bench' });
        const times: number[] = [];
        const puts: number[] = [];
        for (let t = 0; t < TRIALS; t++) {
          agent.send({ cmd: 'until', blocked: true, action: 'send_email', everyMs: ACT_EVERY_MS });
          await next(); // watching
          await sleep(5 + Math.random() * 20);
          const t0 = clock();
          const r = await ks(true);
          if (r.status !== 200) throw new Error(`kill switch PUT answered ${r.status}`);
          puts.push(r.ms);
          times.push((await next()).at - t0);
          agent.send({ cmd: 'until', blocked: false, action: 'send_email', everyMs: ACT_EVERY_MS });
          await next();
          await ks(false);
          await next();
        }
        const s = [...times].sort((a, b) => a - b);
        const put = [...puts].sort((a, b) => a - b);
        const p99 = percentile(s, 99);
        lines.push([`(c) kill switch: PUT → next act in another process blocked (${TRIALS} trials, act every ~${ACT_EVERY_MS} ms)`, `${ms(percentile(s, 50))} / ${ms(p99)} ms`, `the PUT's own answer: ${ms(percentile(put, 50))} / ${ms(percentile(put, 99))} ms`, 'in-process kill switch only', 'none', 'p99 ≤ 300 ms', check('p99 ≤ 300 ms', p99 <= 300)]);
      }

      if (ONLY.has('approval')) {
        console.log(`measuring the approval round trip (${TRIALS} trials) ...`);
        const times: number[] = [];
        const posts: number[] = [];
        for (let t = 0; t < TRIALS; t++) {
          agent.send({ cmd: 'escalate', action: 'wire_transfer_0', n: t });
          const approval = await until('the approval', async () => {
            const r = await p.call('GET', `/api/v1/approvals?status=pending&agent_id=${agentId}`);
            return (r.body.approvals as Array<{ id: string; original_inputs: { n: number } }>).find((a) => a.original_inputs?.n === t);
          });
          await sleep(5 + Math.random() * 20);
          const t0 = clock();
          const r = await p.call('POST', `/api/v1/approvals/${approval.id}/approve`, { approver_email: 'bench@example.com' });
          if (r.status !== 200) throw new Error(`approve answered ${r.status}: ${JSON.stringify(r.body)}`);
          posts.push(r.ms);
          times.push((await next()).resumedAt - t0);
        }
        const s = [...times].sort((a, b) => a - b);
        const post = [...posts].sort((a, b) => a - b);
        const p99 = percentile(s, 99);
        lines.push([`(d) approval: POST approve → escalated act in another process resumes (${TRIALS} trials)`, `${ms(percentile(s, 50))} / ${ms(p99)} ms`, `the POST's own answer: ${ms(percentile(post, 50))} / ${ms(percentile(post, 99))} ms`, 'no approval wait', 'none', 'p99 ≤ 300 ms', check('p99 ≤ 300 ms', p99 <= 300)]);
      }
      agent.send({ cmd: 'close' });
      await new Promise((r) => agent!.once('exit', r));
      agent = null;
    }

    if (ONLY.has('throughput')) {
      const agentId = `bench-throughput-${RUN}`;
      await createPolicies(p, agentId, 10);
      const client = agtClient(agt, agentId, 10);
      await cedar.prepare('throughput', agentId, 10);
      console.log(`measuring throughput (${fmt(THROUGHPUT_ACTS)} actions, then until every report is acknowledged) ...`);
      const perSecond = (r: { n: number; ms: number }) => ({ n: r.n, perSecond: (r.n * 1000) / r.ms });
      const bare = perSecond(await rate(async () => work(ARGS), THROUGHPUT_ACTS));
      const a = perSecond(await rate(agtCall(client, ACTION, ARGS, work), THROUGHPUT_ACTS));
      const c = perSecond(await cedar.ask<{ n: number; ms: number }>({ cmd: 'rate', id: 'throughput', agentId, action: ACTION, context: ARGS, count: THROUGHPUT_ACTS }));
      // Exactly THROUGHPUT_ACTS acts (no minimum time): each leaves a report to deliver, and acting on "for at least
      // 1 s" at 100k+ acts/s would pile up reports to the spool's bound. In a plain `node` process on the built SDK
      // (bench/sdk-throughput.mjs): the SDK as an agent runs it, with no TypeScript loader in the process.
      const out = await throughputAgent(p.url, agentId, 10, THROUGHPUT_ACTS, { action: ACTION, args: ARGS, estimatedCostUsd: 0.02 });
      const g = perSecond({ n: out.n, ms: out.actMs });
      const { pendingAtEnd, sent, pending, allMs } = out;
      if (pending > 0 || sent < g.n) throw new Error(`throughput: ${sent} of ${g.n} reports delivered, ${pending} pending`);
      lines.push([
        `(e) throughput, 10 policies, reporting on (${fmt(g.n)} sequential acts, one process)`,
        `${fmt(g.perSecond)} acts/s (${fmt(pendingAtEnd)} reports not yet acknowledged when the last act returned); all ${fmt(sent)} acknowledged by the platform after ${(allMs / 1000).toFixed(1)} s: ${fmt((sent * 1000) / allMs)} acts/s end to end`,
        `${fmt(bare.perSecond)} calls/s`,
        `${fmt(a.perSecond)} calls/s`,
        `${fmt(c.perSecond)} calls/s`,
        '',
        '',
      ]);
    }
    if (ONLY.has('python')) {
      console.log('measuring the Python SDK (python3 -m agp.bench) ...');
      const py = spawnSync('python3', ['-m', 'agp.bench', '--json', '--url', p.url, '--key', WRITE_KEY, '--samples', String(Math.min(SAMPLES, 10_000)), '--rounds', String(ROUNDS), '--trials', String(TRIALS)], {
        cwd: ROOT,
        env: { ...process.env, PYTHONPATH: join(ROOT, 'sdks/python') },
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      });
      if (py.error || py.status !== 0) {
        console.log(`(f) Python SDK: skipped (${py.error?.message ?? py.stderr.trim().split('\n').pop()})`);
      } else {
        const out = JSON.parse(py.stdout) as { machine: { python: string }; rows: Array<{ row: string; p50_us: number; p99_us: number; cpu_us: number }>; kill_switch: { row: string; p50_ms: number; p99_ms: number; put_p50_ms: number; put_p99_ms: number } | null };
        const cell = (r: { p50_us: number; p99_us: number; cpu_us: number }) => `${r.p50_us.toFixed(2)} / ${r.p99_us.toFixed(1)} · ${r.cpu_us.toFixed(2)}`;
        const bare = out.rows[0];
        const targets: Record<string, [string, boolean]> = {
          'allow, 1 policy, in-memory reporting': ['p50 ≤ 11', out.rows[1].p50_us <= 11],
          'allow, 10 policies, in-memory reporting': ['p99 ≤ 100', out.rows[2].p99_us <= 100],
          'allow, 100 policies, in-memory reporting': ['p50 ≤ 30', out.rows[3].p50_us <= 30],
        };
        for (const r of out.rows.slice(1)) {
          const t = targets[r.row];
          const agt = /allow, 1 policy,/.test(r.row) ? 'AGT Python: p50 11 published, not measured' : /allow, 100 policies,/.test(r.row) ? 'AGT Python: p50 30 published, not measured' : '';
          lines.push([`(f) Python SDK (${out.machine.python}): ${r.row}`, cell(r), cell(bare), agt, '', t ? t[0] : '', t ? check(`Python ${t[0]} µs`, t[1]) : '']);
        }
        const k = out.kill_switch;
        if (k) lines.push([`(f) Python SDK: ${k.row}`, `${k.p50_ms.toFixed(1)} / ${k.p99_ms.toFixed(1)} ms`, `the PUT's own answer: ${k.put_p50_ms.toFixed(1)} / ${k.put_p99_ms.toFixed(1)} ms`, '', '', 'p99 ≤ 300 ms', check('Python kill switch p99 ≤ 300 ms', k.p99_ms <= 300)]);
      }
    }
  } finally {
    // The latency rows' reports are not delivered (see connect): closed at once, their reports dropped with the run.
    for (const g of govs) await g.close({ timeoutMs: 0 }).catch(() => undefined);
    agent?.kill('SIGKILL');
    cedar.close();
    const child = p.child;
    if (child) {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }

  console.log(`\nload average at end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('cells: p50 / p99 µs of single calls · mean process CPU µs per call (ms where marked); the AGT and Cedar columns run the same action through their own check, then the same function.\n');
  console.log('| row | AGP @agp/sdk | bare function call | AGT executeWithGovernance | Cedar statefulIsAuthorized | target | result |');
  console.log('|---|---|---|---|---|---|---|');
  for (const l of lines) console.log(`| ${l.join(' | ')} |`);
  const failed = checks.filter((c) => !c.ok);
  console.log(`\ntargets: ${checks.length - failed.length} of ${checks.length} met${failed.length ? `; missed: ${failed.map((c) => c.what).join(', ')}` : ''}`);
}
