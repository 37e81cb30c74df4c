/**
 * `pnpm bench quotas`: fleet-wide limits (not a test; docs/performance.md (`pnpm bench quotas`)). Starts the platform in
 * distributed mode (each service its own process, on the local NATS and PostgreSQL; one policies process, the granting
 * service), then, in one run, each figure beside a baseline measured in the same run:
 *
 *   (1) the allow path of `run.act` (the built SDK, in this process) with 10 policies applying to the agent, and on the
 *       first of them three leased limits (a session budget, an agent day budget, an agent-scoped `*` rate limit),
 *       p50 / p99 µs and process CPU µs per call; beside the same 10 policies with today's per-process counting (a
 *       `process`-scoped `*` rate limit, counted from the run's calls), and with no limit at all. Target: leased
 *       within 1.5× of the per-process row; no network on the allow path while the leases last (the lease requests
 *       the governor sent during the timed calls are printed).
 *   (2) BENCH_QUOTAS_PROCESSES (8) agent processes (test/support/quota-agent.mjs, plain node on the built SDK) acting
 *       as fast as they can against one shared session budget of BENCH_QUOTAS_ACTIONS (10,000) actions of 0.01 USD:
 *       admitted vs the limit (target: overshoot 0), lease round trips per 1,000 admitted actions (every request the
 *       processes sent to POST /api/v1/quotas/leases up to their last admitted action; target ≤ 20), the slowest
 *       process's admitted actions as a share of a fair 1/N, p50 / p99 ms per admitted action, and the granting
 *       service's load (requests/s, CPU per action).
 *   (3) grants per second of the granting service, driving POST /api/v1/quotas/leases (`http`: gateway and granting
 *       service) and the granting service's own wire row, `quotas.leases` over NATS as the gateway sends it (`bus`:
 *       the granting service alone), from this process with
 *       BENCH_QUOTAS_CONCURRENCY requests in flight (a row per figure, default 32 and 128) for BENCH_QUOTAS_SECONDS
 *       (10 s), 256 holders: (a) each
 *       request a grant on a counter of its own (a new session each time: many agents and sessions), (b) every grant on
 *       one counter (the holders release their lease and ask again, so the counter never runs out; the counter's row
 *       lock serialises them; the service coalesces the requests that wait into one transaction). Target ≥ 2,000
 *       grants/s, judged at the highest concurrency (the service's capacity: an organisation's batches are applied
 *       one after another, so with few requests in flight the rate is bound by a batch's round trips, not by CPU). CPU µs per grant of the policies process, the gateway and
 *       PostgreSQL (the backends of the platform's database).
 *   (4) the anchor, Envoy's pattern: the workload of (2) with every action decided by the platform's decision API,
 *       POST /api/v1/policies/evaluate with `reserve: true` (a central counter asked on every action): admitted vs
 *       the limit, p50 / p99 ms per action, and the counter's load (requests/s, CPU per action).
 *
 * Knobs: BENCH_QUOTAS_SAMPLES (timed calls per row and round in (1), default 20000), BENCH_QUOTAS_ROUNDS (default 3),
 * BENCH_QUOTAS_PROCESSES (default 8), BENCH_QUOTAS_ACTIONS (the shared limit in actions, default 10000),
 * BENCH_QUOTAS_SECONDS (per grant row, default 10), BENCH_QUOTAS_CONCURRENCY (comma list, default 32,128), BENCH_QUOTAS_ONLY (comma
 * list of allow, fleet, grants, anchor), BENCH_QUOTAS_VIA (comma list of http, bus; default both), BENCH_PROFILE=<dir> (`--cpu-prof` of the gateway and the policies process). Needs DATABASE_URL and NATS_URL (defaults: the local ones) and the built
 * services (`node scripts/build.mjs`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { call, createBusClient } from '@agp/bus';
import type { LeaseRequest } from '@agp/contracts';
import { startDistributed, type DistributedRun } from '../test/support/distributed.js';
import { admittedOf, startFleet, until, type QuotaAgentLine } from '../test/support/quota-fleet.js';
import { cpuMsOf, postgresBackendsOf } from './proc.js';
import { sample } from './sdk-harness.js';

type Sdk = typeof import('@agp/sdk');
type Governor = import('@agp/sdk').Governor;

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SAMPLES = Number(process.env.BENCH_QUOTAS_SAMPLES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_QUOTAS_ROUNDS ?? 3);
const PROCESSES = Number(process.env.BENCH_QUOTAS_PROCESSES ?? 8);
const SHARED_ACTIONS = Number(process.env.BENCH_QUOTAS_ACTIONS ?? 10_000);
const GRANT_SECONDS = Number(process.env.BENCH_QUOTAS_SECONDS ?? 10);
/** Requests in flight of the grant rows (3): a row per figure; the target is judged at the highest. */
const CONCURRENCIES = (process.env.BENCH_QUOTAS_CONCURRENCY ?? '32,128').split(',').map(Number);
const GRANT_VIA = (process.env.BENCH_QUOTAS_VIA ?? 'http,bus').split(',') as GrantVia[];
const ONLY = new Set((process.env.BENCH_QUOTAS_ONLY ?? 'allow,fleet,grants,anchor').split(','));
const HOLDERS = 256;
/** The cost of one action of the shared-limit rows, USD. */
const COST = 0.01;
const WRITE_KEY = 'agp_bench_write_key_000000000001';
const READ_KEY = 'agp_bench_read_key_0000000000001';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AGENT_SCRIPT = join(ROOT, 'test/support/quota-agent.mjs');
const RUN = Date.now().toString(36);

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (ns: number) => (ns / 1000).toFixed(ns < 10_000 ? 2 : 1);
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const percentile = (sorted: ArrayLike<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const pool = new Agent({ keepAlive: true, maxSockets: 256 });

/** One JSON request to the platform over keep-alive sockets: status, parsed body, ms. */
function api(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, url);
    const data = body === undefined ? undefined : JSON.stringify(body);
    const t0 = performance.now();
    const req = request(
      { agent: pool, hostname: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: { authorization: `Bearer ${method === 'GET' ? READ_KEY : WRITE_KEY}`, ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, ms: performance.now() - t0 });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** Create a policy; @returns the policy as answered. @throws Error unless the platform answers 201. */
async function createPolicy(url: string, body: Record<string, unknown>): Promise<{ id: string; organization_id: string }> {
  const r = await api(url, 'POST', '/api/v1/policies', body);
  if (r.status !== 201) throw new Error(`POST /api/v1/policies answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Create a policy; @returns its id. @throws Error unless the platform answers 201. */
async function policy(url: string, body: Record<string, unknown>): Promise<string> {
  return (await createPolicy(url, body)).id;
}

/** `n` policies scoped to `agentId` (denied and approval-required actions, as `pnpm bench sdk` has), `extra` on the first. */
async function policies(url: string, agentId: string, n: number, extra: Record<string, unknown>): Promise<void> {
  for (let i = 0; i < n; i++) await policy(url, { name: `${agentId} policy ${i}`, agent_ids: [agentId], denied_actions: [`drop_table_${i}`, `delete_records_${i}`], approval_required_actions: [`wire_transfer_${i}`], ...(i === 0 ? extra : {}) });
}

/** The counter of `policyId` (GET /api/v1/quotas), or undefined. */
async function counterOf(url: string, policyId: string): Promise<any> {
  return (await api(url, 'GET', `/api/v1/quotas?policy_id=${policyId}`)).body?.counters?.[0];
}

/**
 * CPU ms per process group while `work` runs: the policies processes, the gateway, ingest, stats, PostgreSQL (the
 * backends of the platform's database), `others` (e.g. the agent processes) and this process.
 */
async function withCpu<T>(p: DistributedRun, others: () => number[], work: () => Promise<T>): Promise<{ result: T; wallMs: number; cpuMs: Record<string, number> }> {
  const db = new URL(p.databaseUrl).pathname.slice(1);
  const of = (label: string) => p.services().filter((s) => s.label.replace(/#\d+$/, '') === label).map((s) => s.pid);
  const groups = (): Record<string, number[]> => ({ policies: of('policies'), gateway: of('gateway'), ingest: of('ingest'), stats: of('stats'), postgres: postgresBackendsOf(db), agents: others(), bench: [process.pid] });
  const t0 = new Map(Object.values(groups()).flat().map((pid) => [pid, cpuMsOf(pid)]));
  const started = performance.now();
  const result = await work();
  const wallMs = performance.now() - started;
  const cpuMs = Object.fromEntries(Object.entries(groups()).map(([k, pids]) => [k, pids.reduce((sum, pid) => sum + cpuMsOf(pid) - (t0.get(pid) ?? 0), 0)]));
  return { result, wallMs, cpuMs };
}

/** `cpu` (ms per group) as µs per unit of `n`, the groups that used any. */
const perUnit = (cpu: Record<string, number>, n: number) =>
  Object.entries(cpu)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${fmt((v * 1000) / n)}`)
    .join(', ');

type Line = [string, string, string, string, string, string];
const lines: Line[] = [];
const checks: Array<{ what: string; ok: boolean }> = [];
const check = (what: string, ok: boolean) => {
  checks.push({ what, ok });
  return `${what} ${ok ? 'PASS' : 'FAIL'}`;
};

/** (1) The allow path: leased limits, per-process counting, no limit. */
async function allowPath(url: string): Promise<void> {
  const sdk = (await import(pathToFileURL(join(ROOT, 'packages/sdk/dist/index.js')).href)) as Sdk;
  const variants = {
    none: {},
    process: { rate_limits: { '*': { max_calls: 1_000_000, window_seconds: 60, scope: 'process' } } },
    leased: { session_budget: 1_000_000, period_budgets: [{ scope: 'agent', period: 'day', max_usd: 1_000_000 }], rate_limits: { '*': { max_calls: 1_000_000_000, window_seconds: 3600, scope: 'agent' } } },
  };
  const govs: Governor[] = [];
  const leaseCalls: Record<string, number> = { none: 0, process: 0, leased: 0 };
  const rows: Record<string, { fn: () => unknown; samples: Float64Array[]; cpuUs: number[] }> = {};
  try {
    for (const [name, extra] of Object.entries(variants)) {
      const agentId = `bench-q-allow-${name}-${RUN}`;
      await policies(url, agentId, 10, extra);
      const countingFetch: typeof fetch = (input, init) => {
        if (String(input instanceof Request ? input.url : input).includes('/api/v1/quotas/leases')) leaseCalls[name]++;
        return fetch(input, init);
      };
      // Reports are kept, not sent, while the rows run (as in `pnpm bench sdk`): the rows act far faster than any platform ingests.
      const gov = await sdk.Governor.connect({ url, key: WRITE_KEY, agentId, onReportError: () => undefined, flushIntervalMs: 24 * 3600_000, fetch: countingFetch });
      govs.push(gov);
      for (let i = 0; gov.status().policies < 10 || gov.status().channel.state !== 'connected'; i++) {
        if (i > 1000) throw new Error(`${agentId}: the 10 policies did not load`);
        await sleep(20);
      }
      const run = gov.startRun({ sessionId: `${agentId}-session` });
      const act = () => run.act('refund_payment', { amount: 120 }, () => 120, { estimatedCostUsd: 0.02 });
      if ((await run.act('refund_payment', { amount: 120 }, () => 120, { estimatedCostUsd: 0.02, onBlocked: 'return' })) !== 120) throw new Error(`${name}: the allow path is not allowed`);
      rows[name] = { fn: act, samples: [], cpuUs: [] };
    }
    for (const r of Object.values(rows)) await sample(r.fn, Math.min(SAMPLES, 5000));
    const before = { ...leaseCalls };
    for (let round = 0; round < ROUNDS; round++) {
      for (const r of Object.values(rows)) {
        const { samples, cpuUs } = await sample(r.fn, SAMPLES);
        r.samples.push(samples);
        r.cpuUs.push(cpuUs);
      }
    }
    const leasedStatus = govs[2].status() as unknown as { leases?: unknown[] };
    const stat = (r: (typeof rows)[string]) => {
      const all = Float64Array.from(r.samples.flatMap((a) => Array.from(a))).sort();
      return { p50: percentile(all, 50), p99: percentile(all, 99), cpu: (r.cpuUs.reduce((a, b) => a + b, 0) * 1000) / all.length, n: all.length };
    };
    const [none, proc, leased] = [stat(rows.none), stat(rows.process), stat(rows.leased)];
    const cell = (x: ReturnType<typeof stat>) => `${us(x.p50)} / ${us(x.p99)} · ${us(x.cpu)}`;
    const during = leaseCalls.leased - before.leased;
    lines.push([
      `(1) allow path, 10 policies, 3 leased limits (session, agent day, agent \`*\` rate), ${fmt(leased.n)} timed acts (p50 / p99 µs · CPU µs per call)`,
      `${cell(leased)}; ${during} lease requests sent meanwhile (off the allow path), ${leasedStatus.leases?.length ?? 0} leases held`,
      `per-process \`*\` rate limit (today): ${cell(proc)}`,
      `no limit: ${cell(none)}`,
      'p50 and p99 within 1.5× of today',
      `${check('p50 ≤ 1.5× today', leased.p50 <= 1.5 * proc.p50)}; ${check('p99 ≤ 1.5× today', leased.p99 <= 1.5 * proc.p99)}`,
    ]);
  } finally {
    for (const g of govs) await g.close({ timeoutMs: 0 }).catch(() => undefined);
  }
}

/** What a fleet run measured. */
interface FleetResult {
  admitted: number;
  limitActions: number;
  finals: QuotaAgentLine[];
  /** Lease requests of each process up to its last admitted action. */
  leaseCalls: number;
  wallMs: number;
  cpuMs: Record<string, number>;
  latencies: Float64Array;
  counter: any;
}

/** (2) and (4): PROCESSES agent processes against one shared session budget of SHARED_ACTIONS actions. */
async function fleet(p: DistributedRun, mode: 'sdk' | 'evaluate'): Promise<FleetResult> {
  const agentId = `bench-q-fleet-${mode}-${RUN}`;
  const sessionId = `${agentId}-session`;
  const limitUsd = SHARED_ACTIONS * COST;
  const policyId = await policy(p.url, { name: agentId, agent_ids: [agentId], session_budget: limitUsd });
  // Started and connected first; timed (and CPU counted) from the moment they all act to the limit's end.
  const agents = await startFleet(AGENT_SCRIPT, ROOT, PROCESSES, (i) => ({ url: p.url, key: WRITE_KEY, agentId, sessionId, runId: `${agentId}-run-${i}`, costUsd: COST, mode, printEveryMs: 50 }), false);
  const { wallMs, cpuMs } = await withCpu(
    p,
    () => agents.map((a) => a.child.pid!),
    async () => {
      for (const a of agents) a.go();
      await until(agents, (as) => admittedOf(as) >= SHARED_ACTIONS, 180_000);
    },
  );
  await sleep(1000);
  const finals = await Promise.all(agents.map((a) => a.stop()));
  const leaseCalls = agents.reduce((n, a, i) => n + (a.lines.find((l) => l.admitted >= finals[i].admitted)?.leaseCalls ?? finals[i].leaseCalls), 0);
  const latencies = Float64Array.from(finals.flatMap((f) => f.latenciesMs ?? [])).sort();
  return { admitted: finals.reduce((n, f) => n + f.admitted, 0), limitActions: SHARED_ACTIONS, finals, leaseCalls, wallMs, cpuMs, latencies, counter: await counterOf(p.url, policyId) };
}

/** How (3) sends a lease request: through the gateway (HTTP) or straight to the granting service's wire row (NATS). */
type GrantVia = 'http' | 'bus';

/** The granting service's `quotas.leases` row over NATS, as the gateway calls it (the bench organisation's context). */
interface BusLeases {
  /** The reply (`ok`), or the problem it was refused with. */
  send(body: LeaseRequest): Promise<{ ok: boolean; body: any }>;
  close(): Promise<void>;
}

/** Connect to the platform's NATS subjects and call `quotas.leases` for organisation `org` with a write key's context. */
async function busLeases(p: DistributedRun, org: string): Promise<BusLeases> {
  const bus = createBusClient('nats', { servers: NATS_URL, prefix: p.env.AGP_SUBJECT_PREFIX, name: 'bench-quotas' });
  await bus.connect();
  let n = 0;
  return {
    async send(body) {
      const ctx = { organization_id: org, scope: 'write' as const, key_id: 'bench', correlation_id: `bench-${RUN}-${n++}` };
      try {
        return { ok: true, body: await call(bus, 'quotas.leases', ctx, { body }) };
      } catch (err) {
        return { ok: false, body: err };
      }
    },
    close: () => bus.close(),
  };
}

/** Grant rows measured so far (their agents and holders are each row's own). */
let grantRows = 0;

/**
 * (3) grants from this process: POST /api/v1/quotas/leases through the gateway, or the granting service's own wire
 * row (`quotas.leases` over NATS, what the gateway sends): grants/s, latency, CPU per grant per process.
 */
async function grants(p: DistributedRun, shared: boolean, via: GrantVia, CONCURRENCY: number): Promise<void> {
  const judged = CONCURRENCY === Math.max(...CONCURRENCIES);
  const row = ++grantRows;
  const agentId = `bench-q-grants-${shared ? 'one' : 'many'}-${via}-r${row}-${RUN}`;
  const created = await createPolicy(p.url, { name: agentId, agent_ids: [agentId], session_budget: shared ? 1_000_000 : 1 });
  const policyId = created.id;
  const bus = via === 'bus' ? await busLeases(p, created.organization_id) : undefined;
  const holders = Array.from({ length: HOLDERS }, (_, i) => ({ holder: `bench-holder-${via}-r${row}-${i}-${RUN}`, lease: null as string | null, seq: 0 }));
  let n = 0;
  let granted = 0;
  let refused = 0;
  const latencies: number[] = [];
  const one = async (h: (typeof holders)[number]) => {
    const i = n++;
    const body = {
      holder: h.holder,
      acquire: [{ policy_id: policyId, limit: 'session_budget', agent_id: agentId, session_id: shared ? `${agentId}-shared` : `${agentId}-s${i}`, need: COST }],
      report: shared && h.lease ? [{ lease_id: h.lease, seq: ++h.seq, spent: 0, release: true }] : [],
    };
    const t0 = performance.now();
    const r = bus ? await bus.send(body) : await api(p.url, 'POST', '/api/v1/quotas/leases', body).then((x) => ({ ok: x.status === 200, body: x.body }));
    latencies.push(performance.now() - t0);
    const lease = r.ok ? r.body?.leases?.[0] : undefined;
    if (lease?.granted > 0) granted++;
    else refused++;
    if (shared && lease) {
      h.lease = lease.lease_id;
      h.seq = 0;
    }
  };
  // Each lane drives its own holders (one request in flight per holder).
  const lane = async (k: number, until: number) => {
    for (let j = 0; performance.now() < until; j++) await one(holders[(k + j * CONCURRENCY) % HOLDERS]);
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => lane(k, performance.now() + 1000)));
    [n, granted, refused] = [0, 0, 0];
    latencies.length = 0;
    const { wallMs, cpuMs } = await withCpu(p, () => [], async () => {
      const end = performance.now() + GRANT_SECONDS * 1000;
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => lane(k, end)));
    });
    latencies.sort((a, b) => a - b);
    const rate = (granted * 1000) / wallMs;
    const id = `(3${shared ? 'b' : 'a'}, ${via})`;
    lines.push([
      `${id} grants, ${via === 'http' ? 'POST /api/v1/quotas/leases (gateway + granting service)' : 'the `quotas.leases` wire row over NATS (the granting service alone)'}, ${CONCURRENCY} in flight, ${HOLDERS} holders, ${shared ? 'one counter (each request releases the holder’s lease and asks again)' : 'a counter per request (a new session each)'}`,
      `${fmt(rate)} grants/s (${fmt(granted)} in ${(wallMs / 1000).toFixed(1)} s${refused ? `, ${fmt(refused)} not granted` : ''}); request p50 / p99 ${ms(percentile(latencies, 50))} / ${ms(percentile(latencies, 99))} ms`,
      `CPU µs per grant: ${perUnit(cpuMs, granted)}`,
      '',
      judged ? '≥ 2,000 grants/s' : '(judged at the highest concurrency)',
      judged ? check(`${id} ≥ 2,000/s at ${CONCURRENCY} in flight`, rate >= 2000) : '',
    ]);
  } finally {
    await bus?.close();
  }
}

/** Run the benchmark and print its table. */
export async function quotasBench(): Promise<void> {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  console.log(`AGP fleet-wide quota benchmark: node ${process.version}, ${availableParallelism()} CPUs (${cpuModel}), ${new Date().toISOString()}, commit ${commit}`);
  console.log(`load average at start: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('starting the distributed platform (one process per service, one policies process) ...');
  const profile = process.env.BENCH_PROFILE;
  const prof = (name: string): string[] => (profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  const p = await startDistributed({
    adminDatabaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    dbPrefix: 'agp_bench',
    build: false,
    echo: false,
    env: { AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, LOG_LEVEL: 'warn' },
    serviceNodeArgs: { gateway: prof('gateway'), policies: prof('policies') },
  });
  try {
    if (ONLY.has('allow')) {
      console.log('(1) the allow path ...');
      await allowPath(p.url);
    }
    let leased: FleetResult | undefined;
    if (ONLY.has('fleet')) {
      console.log(`(2) ${PROCESSES} processes × one shared limit of ${fmt(SHARED_ACTIONS)} actions, leases ...`);
      const f = (leased = await fleet(p, 'sdk'));
      const overshoot = Math.max(0, f.admitted - f.limitActions);
      const perThousand = (f.leaseCalls * 1000) / f.admitted;
      const slowest = Math.min(...f.finals.map((x) => x.admitted));
      const share = slowest / (f.admitted / PROCESSES);
      lines.push([
        `(2) ${PROCESSES} processes × one session budget of ${fmt(SHARED_ACTIONS)} actions (${COST} USD each), leases, as fast as they can`,
        `admitted ${fmt(f.admitted)} of ${fmt(f.limitActions)} (overshoot ${overshoot}; counter: spent ${f.counter?.spent} USD, overshoot ${f.counter?.overshoot}); ${ms(perThousand)} lease round trips per 1,000 actions; slowest process ${fmt(slowest)} = ${(share * 100).toFixed(0)} % of a fair share; ${fmt((f.admitted * 1000) / f.wallMs)} actions/s in all; per admitted action p50 / p99 ${ms(percentile(f.latencies, 50))} / ${ms(percentile(f.latencies, 99))} ms`,
        `granting service: ${fmt((f.leaseCalls * 1000) / f.wallMs)} lease requests/s; CPU µs per action: ${perUnit(f.cpuMs, f.admitted)}`,
        '',
        'overshoot 0; ≤ 20 round trips per 1,000',
        `${check('overshoot 0', overshoot === 0)}; ${check('≤ 20 per 1,000', perThousand <= 20)}`,
      ]);
    }
    if (ONLY.has('grants')) {
      console.log(`(3) grants per second (${GRANT_SECONDS} s per row) ...`);
      for (const via of GRANT_VIA) {
        for (const c of CONCURRENCIES) {
          await grants(p, false, via, c);
          await grants(p, true, via, c);
        }
      }
    }
    if (ONLY.has('anchor')) {
      console.log(`(4) the anchor: the same workload, every action decided by POST /api/v1/policies/evaluate with reserve: true ...`);
      const f = await fleet(p, 'evaluate');
      const overshoot = Math.max(0, f.admitted - f.limitActions);
      const vs = leased ? `; leases: ${ms(percentile(leased.latencies, 50))} / ${ms(percentile(leased.latencies, 99))} ms` : '';
      lines.push([
        `(4) anchor: the workload of (2), each action POST /api/v1/policies/evaluate with reserve: true (a central counter per action)`,
        `admitted ${fmt(f.admitted)} of ${fmt(f.limitActions)} (overshoot ${overshoot}); ${fmt((f.admitted * 1000) / f.wallMs)} actions/s in all; per admitted action p50 / p99 ${ms(percentile(f.latencies, 50))} / ${ms(percentile(f.latencies, 99))} ms${vs}`,
        `the counter's load: ${fmt((f.finals.reduce((n, x) => n + (x.latenciesMs?.length ?? 0), 0) * 1000) / f.wallMs)} requests/s; CPU µs per action: ${perUnit(f.cpuMs, f.admitted)}`,
        '',
        '',
        '',
      ]);
    }
  } finally {
    await p.stop();
    pool.destroy();
  }
  console.log(`\nload average at end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
  console.log('| row | AGP | beside it | baseline | target | result |');
  console.log('|---|---|---|---|---|---|');
  for (const l of lines) console.log(`| ${l.join(' | ')} |`);
  const failed = checks.filter((c) => !c.ok);
  console.log(`\ntargets: ${checks.length - failed.length} of ${checks.length} met${failed.length ? `; missed: ${failed.map((c) => c.what).join(', ')}` : ''}`);
}
