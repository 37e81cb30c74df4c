/**
 * An agent process for the fleet-wide quota tests (test/e2e/fleet-quotas.test.ts) and `pnpm bench quotas`
 * (bench/quotas.ts): plain `node` on `@agp/sdk` as an agent installs it (the tests copy this file into a folder where
 * the packed SDK is installed; the bench runs it in place, on the workspace's built package).
 *
 * Usage: node quota-agent.mjs '<settings as JSON>'
 * Settings:
 * - `url`, `key`, `agentId`: the platform, a write key and the agent this process governs as;
 * - `sessionId`, `runId`: the session the run names, and the run's id (both optional);
 * - `action` (default `charge`), `costUsd`: the action and its `estimatedCostUsd` (USD; 0 or absent: none);
 * - `policies`: act only once the governor's snapshot holds at least this many applicable policies (default 1);
 * - `waitForGo`: after `ready`, wait for a line `go` on stdin before acting (so many processes start together);
 * - `intervalMs`: pause between two actions (default 0: as fast as it can, the event loop turning between two actions);
 *   `refusedPauseMs`: pause after an action that
 *   was not admitted (default 20, so a process past its limit does not flood the ledger with refusals);
 * - `stopAfterAdmitted`: stop acting after this many admitted actions and idle (holding its leases) until signalled;
 * - `quotaWaitMs`, `failMode`: the governor's options of those names;
 * - `printEveryMs`: how often a `counts` line is written while the counts change (default 100);
 * - `mode`: `sdk` (default: `run.act`, deciding locally against leases) or `evaluate` (no SDK decision: every action is
 *   decided by `POST /api/v1/policies/evaluate` with `reserve: true`, a central check per action; the latency of each
 *   is kept).
 *
 * Writes JSON lines on stdout:
 * - `{"event":"ready", runId, pid}` once connected with the policies loaded;
 * - `{"event":"counts", t, admitted, budget_exceeded, rate_limited, blocked, leaseCalls, leases}` while acting
 *   (`t`: ms since the epoch; `blocked`: every other refusal, e.g. failing closed; `leaseCalls`: requests the process
 *   sent to `POST /api/v1/quotas/leases`; `leases`: `gov.status().leases`);
 * - `{"event":"holding", ...counts}` when `stopAfterAdmitted` was reached;
 * - `{"event":"final", ...counts, admittedAt, reasons, closed, latenciesMs}` after SIGTERM or SIGINT: `admittedAt`, the
 *   time (ms since the epoch) each admitted action was asked for; `reasons`, one reason per refusal kind; `closed`,
 *   what `gov.close()` answered (every report delivered); `latenciesMs`, how long each admitted action took (decision and function).
 * Then it exits 0. An error exits 1 with the message on stderr.
 */
import { Governor } from '@agp/sdk';
import { createInterface } from 'node:readline';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';

const s = JSON.parse(process.argv[2] ?? '{}');
const action = s.action ?? 'charge';
const costUsd = s.costUsd ?? 0;
const refusedPauseMs = s.refusedPauseMs ?? 20;
const printEveryMs = s.printEveryMs ?? 100;

const counts = { admitted: 0, budget_exceeded: 0, rate_limited: 0, blocked: 0, leaseCalls: 0 };
const admittedAt = [];
const latenciesMs = [];
const reasons = {};
let stopping = false;
let wake = () => {};
const stopped = new Promise((r) => (wake = r));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => ((stopping = true), wake()));

/** fetch that counts the lease requests it sends. */
const countingFetch = (input, init) => {
  if (String(input instanceof Request ? input.url : input).includes('/api/v1/quotas/leases')) counts.leaseCalls++;
  return fetch(input, init);
};

const gov = await Governor.connect({
  url: s.url,
  key: s.key,
  agentId: s.agentId,
  onBlocked: 'return',
  onReportError: () => undefined,
  fetch: countingFetch,
  ...(s.quotaWaitMs !== undefined ? { quotaWaitMs: s.quotaWaitMs } : {}),
  ...(s.failMode ? { failMode: s.failMode } : {}),
});
while (gov.status().policies < (s.policies ?? 1) && !stopping) await sleep(20);
const run = gov.startRun({ ...(s.runId ? { runId: s.runId } : {}), ...(s.sessionId ? { sessionId: s.sessionId } : {}) });
const line = (event, extra = {}) => process.stdout.write(JSON.stringify({ event, t: Date.now(), ...counts, leases: gov.status().leases ?? null, ...extra }) + '\n');
line('ready', { runId: run.runId, pid: process.pid });
if (s.waitForGo) {
  const rl = createInterface({ input: process.stdin });
  await new Promise((r) => rl.on('line', (l) => l.trim() === 'go' && r()));
  rl.close();
}

/** One action decided by the SDK: 'admitted' or the refusal's kind. */
async function viaSdk() {
  const r = await run.act(action, { n: counts.admitted }, () => true, costUsd > 0 ? { estimatedCostUsd: costUsd } : {});
  if (r === true) return 'admitted';
  return r.decision.decision === 'budget_exceeded' || r.decision.decision === 'rate_limited' ? [r.decision.decision, r.decision.reason] : ['blocked', r.decision.reason];
}

/** One action decided by the decision API with `reserve: true` (a central check per action). */
async function viaEvaluate() {
  const body = { agent_id: s.agentId, action_name: action, reserve: true, ...(s.runId ? { run_id: s.runId } : {}), ...(s.sessionId ? { session_id: s.sessionId } : {}), ...(costUsd > 0 ? { estimated_cost_usd: costUsd } : {}) };
  const res = await fetch(`${s.url}/api/v1/policies/evaluate`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const d = await res.json();
  if (res.status !== 200) return ['blocked', `HTTP ${res.status}: ${d?.detail ?? ''}`];
  if (['allow', 'warn', 'downgrade'].includes(d.decision)) return 'admitted';
  return d.decision === 'budget_exceeded' || d.decision === 'rate_limited' ? [d.decision, d.reason] : ['blocked', d.reason];
}

let printed = '';
const printer = setInterval(() => {
  const now = JSON.stringify(counts);
  if (now !== printed) line('counts');
  printed = now;
}, printEveryMs);

try {
  while (!stopping) {
    if (s.stopAfterAdmitted !== undefined && counts.admitted >= s.stopAfterAdmitted) {
      line('holding');
      await stopped;
      break;
    }
    const asked = Date.now();
    const t0 = performance.now();
    const out = s.mode === 'evaluate' ? await viaEvaluate() : await viaSdk();
    if (out === 'admitted') {
      latenciesMs.push(performance.now() - t0);
      counts.admitted++;
      admittedAt.push(asked);
      // The event loop turns between two actions (as between an agent's model calls), so the SDK's timers (reports,
      // lease renewals) run even while every action is decided locally.
      await (s.intervalMs ? sleep(s.intervalMs) : setImmediate());
    } else {
      counts[out[0]]++;
      reasons[out[0]] ??= out[1];
      await sleep(refusedPauseMs);
    }
  }
  clearInterval(printer);
  await run.end({ status: 'completed' });
  const closed = await gov.close({ timeoutMs: 60_000 });
  line('final', { admittedAt, reasons, closed, latenciesMs });
  process.exit(0);
} catch (err) {
  process.stderr.write(`quota-agent: ${err?.stack ?? err}\n`);
  process.exit(1);
}
