/**
 * `pnpm bench policy`: the policy engine benchmark (not a test; docs/performance.md (`pnpm bench policy`)). Times the pure
 * `decide(policies, killSwitches, action, context)` of packages/policy-engine in this process — no I/O, no service —
 * with 1, 100 and 1,000 policies, each beside a baseline measured in the same run:
 *
 *   decide, 0 policies     the fixed cost of any decision (kill switches, the answer object), no policy to visit
 *   filter only, N         a loop that only counts the policies applying to the agent (`enabled` and `appliesTo`), the
 *                          least work any decision over N policies must do -> baseline of decide with N
 *   decide, N policies     N = 1, 100, 1,000
 *
 * The inputs are generated from a fixed seed, so every run decides the same things:
 * - policies: ~7% apply to every agent, ~8% list the agent among others, the rest list only other agents (so ~15% of
 *   them apply); ~90% enabled; denied actions (0–3), an allow-list on ~5%, approval-required actions (0–2), a session
 *   budget (5–100 USD) and a run budget (1–50 USD) on about half each, a `*` rate limit on ~60% and 1–2 named ones on
 *   ~50%. Policy 0 of every set is a fixed organisation-wide one: budgets of 50 USD a session and 20 a run, two denied
 *   and two approval-required actions, at most 30 calls a minute and 10 `search` calls a minute.
 * - BENCH_POLICY_INPUTS actions (default 64), cycled: one agent, 20 action names, costs 0–2 USD, each with its own
 *   context: spend so far in the session (0–30 USD) and the run, and 50 recent calls over the last 5 minutes, denser
 *   near `now` and skewed to a few actions.
 * The decisions these inputs get are printed under the table, with how many policies triggered per decision (every
 * triggered policy's reason is built, so that count drives the cost as much as the number of policies).
 *
 * The engine measured is packages/policy-engine bundled by esbuild the way scripts/build.mjs bundles it into the
 * services (ESM, node20, no keepNames), not the source through tsx: tsx keeps function names (esbuild's keepNames),
 * which wraps each closure created during a call in an `Object.defineProperty`, a cost the services do not pay.
 *
 * Figures: ops/s from a tight loop (median over the rounds), then p50 and p99 µs of single calls, each timed with
 * `process.hrtime.bigint()` (pooled over the rounds; the timer's own cost, printed in the header, is included).
 * Every function is warmed up before it is measured, and the rounds interleave the rows so that a noisy machine
 * slows them alike. Ratio: decide's ops/s over its baseline's.
 * Knobs: BENCH_POLICY_SECONDS (per figure per round, default 1), BENCH_POLICY_ROUNDS (default 3),
 * BENCH_POLICY_WARMUP (seconds per function, default 0.5), BENCH_POLICY_INPUTS (default 64),
 * BENCH_POLICY_COUNTS (default `1,100,1000`), BENCH_POLICY_ENGINE (the path of another copy of the engine's entry, e.g.
 * a saved decide.ts kept where `@agp/contracts` and zod resolve, such as node_modules/.cache/, to measure instead of
 * packages/policy-engine/src/index.ts: a before/after of a change).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { DecisionContext, EnginePolicy, EngineRateLimit, PolicyAction, RecentCall } from '@agp/policy-engine';
import { POLICY_DECISIONS, type PolicyDecisionKind } from '@agp/contracts';

const SECONDS = Number(process.env.BENCH_POLICY_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_POLICY_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_POLICY_WARMUP ?? 0.5);
const INPUTS = Number(process.env.BENCH_POLICY_INPUTS ?? 64);
const COUNTS = (process.env.BENCH_POLICY_COUNTS ?? '1,100,1000').split(',').map(Number);
/** Another copy of the engine to bundle and measure instead (a saved decide.ts, to compare a change); default: ours. */
const ENGINE = process.env.BENCH_POLICY_ENGINE || undefined;
/** Most single-call samples kept per row per round. */
const MAX_SAMPLES = 2_000_000;

const AGENT = 'agent-7';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const ACTIONS = [
  'search', 'read_file', 'write_file', 'send_email', 'http_get', 'http_post', 'run_sql', 'delete_record', 'deploy', 'refund_payment',
  'create_ticket', 'summarize', 'translate', 'call_llm', 'transfer_funds', 'drop_table', 'update_crm', 'post_slack', 'charge_card', 'export_data',
];
const DANGEROUS = ['delete_record', 'drop_table', 'transfer_funds', 'deploy', 'export_data', 'charge_card'];
const SENSITIVE = ['send_email', 'refund_payment', 'http_post', 'deploy', 'charge_card', 'update_crm'];

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (ns: number) => (ns / 1000).toFixed(ns < 10_000 ? 2 : 1);

/** mulberry32: a small seeded PRNG, so the inputs are the same in every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `k` distinct items of `xs`. */
function pick<T>(rnd: () => number, xs: readonly T[], k: number): T[] {
  const pool = [...xs];
  const out: T[] = [];
  while (out.length < k && pool.length) out.push(pool.splice(Math.floor(rnd() * pool.length), 1)[0]);
  return out;
}
const int = (rnd: () => number, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

/** The first policy of every set: an organisation-wide one, as a first policy typically is. */
const FIRST: Omit<EnginePolicy, 'id' | 'name' | 'created_at'> = {
  enabled: true,
  session_budget: 50,
  run_budget: 20,
  denied_actions: ['drop_table', 'transfer_funds'],
  allowed_actions: null,
  approval_required_actions: ['deploy', 'refund_payment'],
  rate_limits: { '*': { max_calls: 30, window_seconds: 60 }, search: { max_calls: 10, window_seconds: 60 } },
  agent_ids: [],
};

/** N policies as an organisation might have them: {@link FIRST}, then the random mix in the module docs. */
function makePolicies(n: number, seed: number): EnginePolicy[] {
  const rnd = prng(seed);
  const others = Array.from({ length: 50 }, (_, i) => `agent-${i}`).filter((a) => a !== AGENT);
  const out: EnginePolicy[] = [];
  for (let i = 0; i < n; i++) {
    const hex = (0x1000_0000_0000 + i * 7919).toString(16);
    // Creation times out of order, so that ties across policies sort for real.
    const head = { id: `0193a1b2-c3d4-7e5f-8a6b-${hex.padStart(12, '0')}`, name: `policy ${i}`, created_at: new Date(NOW - int(rnd, 1, 90 * 24 * 3600) * 1000).toISOString() };
    if (i === 0) {
      out.push({ ...head, ...FIRST });
      continue;
    }
    const scope = rnd();
    const agent_ids = scope < 0.07 ? [] : scope < 0.15 ? [...pick(rnd, others, int(rnd, 1, 3)), AGENT] : pick(rnd, others, int(rnd, 1, 3));
    const rate_limits: Record<string, EngineRateLimit> = {};
    if (rnd() < 0.6) rate_limits['*'] = { max_calls: int(rnd, 20, 120), window_seconds: 60 };
    if (rnd() < 0.5) for (const a of pick(rnd, ACTIONS, int(rnd, 1, 2))) rate_limits[a] = { max_calls: int(rnd, 2, 20), window_seconds: [10, 60, 300, 3600][int(rnd, 0, 3)] };
    out.push({
      ...head,
      enabled: rnd() < 0.9,
      session_budget: rnd() < 0.5 ? int(rnd, 5, 100) : null,
      run_budget: rnd() < 0.5 ? int(rnd, 1, 50) : null,
      denied_actions: pick(rnd, DANGEROUS, int(rnd, 0, 3)),
      allowed_actions: rnd() < 0.05 ? pick(rnd, ACTIONS, int(rnd, 16, 19)) : null,
      approval_required_actions: pick(rnd, SENSITIVE, int(rnd, 0, 2)),
      rate_limits,
      agent_ids,
    });
  }
  // As the services hold them, parsed from stored JSON: objects of one shape (hidden class) per key order. Objects
  // built by spreading (`{ ...head, ... }`) would each get a shape of their own and slow every property read.
  return JSON.parse(JSON.stringify(out)) as EnginePolicy[];
}

/** The actions decided, cycled, each with its own context (50 recent calls over the last 5 minutes). */
function makeInputs(n: number, seed: number): Array<{ action: PolicyAction; context: DecisionContext }> {
  const rnd = prng(seed);
  return Array.from({ length: n }, () => {
    const recent_calls: RecentCall[] = Array.from({ length: 50 }, () => ({ action_name: ACTIONS[Math.floor(rnd() ** 2 * ACTIONS.length)], at: NOW - Math.floor(rnd() ** 2 * 300_000) }));
    const session = Math.round(rnd() * 30 * 100) / 100;
    return {
      action: { agent_id: AGENT, action_name: ACTIONS[int(rnd, 0, ACTIONS.length - 1)], estimated_cost_usd: Math.round(rnd() * 200) / 100, arguments: { q: 'x' } },
      context: { now: NOW, session_spend_usd: session, run_spend_usd: Math.round(session * rnd() * 100) / 100, recent_calls },
    };
  });
}

/** A row's measured function: one call on input `i` of the cycle; returns a number so the work cannot be dropped. */
type Fn = (i: number) => number;

interface Row {
  label: string;
  fn: Fn;
  opsPerRound: number[];
  samples: Float64Array[];
}

let sink = 0;

function warm(fn: Fn): void {
  const end = performance.now() + WARMUP * 1000;
  let i = 0;
  while (performance.now() < end) for (let k = 0; k < 100; k++) sink += fn(i++ % INPUTS);
}

/** Calls per second over SECONDS, in chunks of 100 calls between clock reads. */
function tight(fn: Fn): number {
  const start = performance.now();
  const end = start + SECONDS * 1000;
  let calls = 0;
  let i = 0;
  let t = start;
  while (t < end) {
    for (let k = 0; k < 100; k++) {
      sink += fn(i);
      i = i + 1 === INPUTS ? 0 : i + 1;
    }
    calls += 100;
    t = performance.now();
  }
  return (calls * 1000) / (t - start);
}

/** Single calls, each timed, over SECONDS: their durations in ns. */
function perCall(fn: Fn): Float64Array {
  const out = new Float64Array(MAX_SAMPLES);
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  let i = 0;
  while (n < MAX_SAMPLES) {
    for (let k = 0; k < 100 && n < MAX_SAMPLES; k++) {
      const t0 = process.hrtime.bigint();
      sink += fn(i);
      const t1 = process.hrtime.bigint();
      out[n++] = Number(t1 - t0);
      i = i + 1 === INPUTS ? 0 : i + 1;
    }
    if (performance.now() >= end) break;
  }
  return out.subarray(0, n);
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function pooled(row: Row): { p50: number; p99: number; n: number } {
  const all = new Float64Array(row.samples.reduce((s, a) => s + a.length, 0));
  let o = 0;
  for (const a of row.samples) {
    all.set(a, o);
    o += a.length;
  }
  all.sort();
  return { p50: percentile(all, 50), p99: percentile(all, 99), n: all.length };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

type Engine = typeof import('@agp/policy-engine');

/** packages/policy-engine as the services run it: bundled by esbuild like scripts/build.mjs (zod and contracts in). */
async function loadEngine(): Promise<Engine> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const out = await build({
    entryPoints: [ENGINE ?? join(root, 'packages/policy-engine/src/index.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'warning',
    tsconfig: join(root, 'tsconfig.json'),
  });
  const dir = mkdtempSync(join(tmpdir(), 'agp-bench-policy-'));
  try {
    const file = join(dir, 'policy-engine.mjs');
    writeFileSync(file, out.outputFiles[0].text);
    return (await import(pathToFileURL(file).href)) as Engine;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Run the benchmark and print its table. */
export async function policyBench(): Promise<void> {
  const { appliesTo, decide, NO_KILL_SWITCHES } = await loadEngine();
  const inputs = makeInputs(INPUTS, 14);
  const sets = new Map<number, EnginePolicy[]>([[0, []], ...COUNTS.map((n) => [n, makePolicies(n, 1400 + n)] as [number, EnginePolicy[]])]);

  const decideRow = (n: number): Fn => {
    const ps = sets.get(n)!;
    return (i) => {
      const d = decide(ps, NO_KILL_SWITCHES, inputs[i].action, inputs[i].context);
      return d.policies_evaluated + d.triggered.length;
    };
  };
  const filterRow = (n: number): Fn => {
    const ps = sets.get(n)!;
    return (i) => {
      const agent = inputs[i].action.agent_id;
      let k = 0;
      for (const p of ps) if (p.enabled && appliesTo(p, agent)) k++;
      return k;
    };
  };
  const row = (label: string, fn: Fn): Row => ({ label, fn, opsPerRound: [], samples: [] });
  const fixed = row('decide, 0 policies', decideRow(0));
  const pairs = COUNTS.map((n) => ({ n, base: row(`filter only, ${fmt(n)}`, filterRow(n)), dec: row(`decide, ${fmt(n)} ${n === 1 ? 'policy' : 'policies'}`, decideRow(n)) }));
  const rows = [fixed, ...pairs.flatMap((p) => [p.base, p.dec])];

  // What the inputs decide, and a check that the baseline counts what decide evaluates.
  const mix = new Map<number, Map<PolicyDecisionKind, number>>();
  const triggeredPer = new Map<number, number>();
  const applying = new Map<number, number>();
  for (const [n, ps] of sets) {
    const m = new Map<PolicyDecisionKind, number>();
    let evaluated = 0;
    let triggered = 0;
    for (const { action, context } of inputs) {
      const d = decide(ps, NO_KILL_SWITCHES, action, context);
      m.set(d.decision, (m.get(d.decision) ?? 0) + 1);
      triggered += d.triggered.length;
      const k = ps.filter((p) => p.enabled && appliesTo(p, action.agent_id)).length;
      if (d.policies_evaluated !== k) throw new Error(`decide evaluated ${d.policies_evaluated} of ${n} policies, the filter counts ${k}`);
      evaluated = k;
    }
    mix.set(n, m);
    triggeredPer.set(n, triggered / inputs.length);
    applying.set(n, evaluated);
  }

  // The timer's own cost: an empty call timed the same way.
  const timer = perCall(() => 0).sort();

  for (const r of rows) warm(r.fn);
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of rows) {
      r.opsPerRound.push(tight(r.fn));
      r.samples.push(perCall(r.fn));
    }
  }

  console.log(
    `\nPolicy engine${ENGINE ? ` (${ENGINE})` : ''}, decide() in-process, node ${process.version}, ${new Date().toISOString()}; ${ROUNDS} rounds of ${SECONDS} s per figure, ${INPUTS} inputs cycled (50 recent calls each); timer overhead p50 ${us(percentile(timer, 50))} µs (included in p50/p99)\n`,
  );
  console.log('| decide with | policies applying | decisions/s | p50 µs | p99 µs | baseline | baseline ops/s | baseline p99 µs | ratio |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const f = pooled(fixed);
  console.log(`| 0 policies | 0 | ${fmt(median(fixed.opsPerRound))} | ${us(f.p50)} | ${us(f.p99)} | (the fixed cost of a decision) | | | |`);
  for (const { n, base, dec } of pairs) {
    const d = pooled(dec);
    const b = pooled(base);
    const ops = median(dec.opsPerRound);
    const bops = median(base.opsPerRound);
    console.log(`| ${fmt(n)} ${n === 1 ? 'policy' : 'policies'} | ${applying.get(n)} | ${fmt(ops)} | ${us(d.p50)} | ${us(d.p99)} | ${base.label} | ${fmt(bops)} | ${us(b.p99)} | ${(ops / bops).toFixed(2)}x |`);
  }
  console.log(`\ndecisions of the ${INPUTS} inputs (policies that triggered per decision, on average):`);
  for (const [n, m] of mix) console.log(`  ${fmt(n)} ${n === 1 ? 'policy' : 'policies'}: ${POLICY_DECISIONS.filter((k) => m.has(k)).map((k) => `${k} ${m.get(k)}`).join(', ')} (${triggeredPer.get(n)!.toFixed(1)} triggered)`);
  if (sink === 42) console.log(''); // keeps the results alive
}
