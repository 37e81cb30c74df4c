/**
 * An agent process for test/e2e/sdk-soak.test.ts, run with plain `node` on the built SDK (packages/sdk/dist/index.js,
 * what an agent installs): one run acts as fast as it can for `ms` milliseconds with a durable spool bounded by
 * `maxSpoolBytes`, so the spool fills and `act` waits for the platform's acknowledgements (backpressure). A refused act
 * throws (ActionBlockedError) and the process exits non-zero. Then it ends the run and closes (every report delivered).
 * On stdout: one JSON document `{acts, refused, waited, delivered, pending, bytesPerReport}` (`bytesPerReport`: the
 * spool's pending bytes per pending report, the first time reports were pending).
 * Usage: node sdk-soak-agent.mjs <url> <key> <agentId> <runId> <spoolDir> <ms> <maxSpoolBytes>
 */
import { Governor } from '../../packages/sdk/dist/index.js';

const [url, key, agentId, runId, spoolDir, ms, maxSpoolBytes] = process.argv.slice(2);
const gov = await Governor.connect({ url, key, agentId, spoolDir, maxSpoolBytes: Number(maxSpoolBytes), onReportError: () => undefined });
const run = gov.startRun({ runId });
const end = Date.now() + Number(ms);
let acts = 0;
let bytesPerReport = null;
while (Date.now() < end) {
  for (let k = 0; k < 100; k++) await run.act('lookup', { i: acts }, () => acts++);
  if (bytesPerReport === null) {
    const s = gov.status();
    if (s.reports.pending > 0) bytesPerReport = Math.round(s.spool.pendingBytes / s.reports.pending);
  }
}
await run.end();
const { waited } = gov.status().reports;
const refused = gov.status().refusedSpoolFull;
const { delivered, pending } = await gov.close({ timeoutMs: 120_000 });
console.log(JSON.stringify({ acts, refused, waited, delivered, pending, bytesPerReport }));
