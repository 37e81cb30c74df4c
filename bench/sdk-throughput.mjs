/**
 * The agent process of `pnpm bench sdk`'s throughput row (e), run with plain `node` (no TypeScript loader) on the built
 * SDK (packages/sdk/dist/index.js, what an agent installs), so the row measures the SDK as an agent runs it, in a
 * process with no loader thread. It connects as `agentId`, waits until the governance snapshot holds `policies`
 * policies, then makes exactly `count` sequential `run.act` calls (the event loop runs every `chunk` calls, as in the
 * bench's harness), then closes, delivering every report.
 * Usage: node bench/sdk-throughput.mjs <url> <key> <agentId> <policies> <count> <chunk> <json {action, args, estimatedCostUsd}>
 * On stdout: one JSON document `{n, actMs, allMs, pendingAtEnd, sent, pending}` (ms from the first act; `sent`: reports
 * acknowledged by the platform during the row).
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldLoop, setTimeout as sleep } from 'node:timers/promises';
import { Governor } from '../packages/sdk/dist/index.js';

const [url, key, agentId, policies, count, chunk, spec] = process.argv.slice(2);
const { action, args, estimatedCostUsd } = JSON.parse(spec);
const gov = await Governor.connect({ url, key, agentId, onReportError: () => undefined });
const deadline = Date.now() + 30_000;
while (!(gov.status().policies === Number(policies) && gov.status().channel.state === 'connected')) {
  if (Date.now() > deadline) throw new Error(`${agentId}: the snapshot never held ${policies} policies`);
  await sleep(20);
}
const run = gov.startRun();
const work = (a) => a.amount;
const total = Number(count);
const before = gov.status().reports.delivered;
const t0 = performance.now();
let n = 0;
while (n < total) {
  for (let k = 0; k < Number(chunk) && n < total; k++, n++) await run.act(action, args, work, { estimatedCostUsd });
  await yieldLoop();
}
const actMs = performance.now() - t0;
const pendingAtEnd = gov.status().reports.pending;
const { delivered, pending } = await gov.close({ timeoutMs: 600_000 });
console.log(JSON.stringify({ n, actMs, allMs: performance.now() - t0, pendingAtEnd, sent: delivered - before, pending }));
