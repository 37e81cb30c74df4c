/**
 * The agent process of `pnpm bench sdk` (./sdk.ts): a second process running a `Governor` of the built SDK
 * (packages/sdk/dist/index.js, as an agent installs it), driven by its parent over the IPC channel, so that the kill
 * switch and approval figures cross a process boundary as they do for a real agent.
 *
 * Messages from the parent:
 * - `{cmd: 'connect', url, key, agentId}`: connect (memory reporting; registers the agent with its two actions), wait
 *   until the push channel is live; → `{ok: 'connected'}`.
 * - `{cmd: 'until', blocked, action}`: act `action` every `everyMs` ms (the parent sends 10) (`onBlocked: 'return'`) until an act is
 *   (`blocked: true`) or is not stopped; → `{at}` once it is watching (`watching`), then `{at}` of that act's end.
 * - `{cmd: 'escalate', action, n}`: act `action` with `{n}` (it waits for a human); → `{resumedAt}` when the approved
 *   function starts, or `{error}`.
 * - `{cmd: 'close'}`: close the governor (delivering every report) and exit.
 * Times are `performance.timeOrigin + performance.now()` (ms on the machine's clock, comparable across processes).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

type Sdk = typeof import('@agp/sdk');
const sdk = (await import(pathToFileURL(fileURLToPath(new URL('../packages/sdk/dist/index.js', import.meta.url))).href)) as Sdk;

const clock = () => performance.timeOrigin + performance.now();
const send = (m: unknown) => process.send!(m);

let gov: import('@agp/sdk').Governor | null = null;
let run: import('@agp/sdk').Run | null = null;

process.on('message', async (m: { cmd: string; [k: string]: any }) => {
  try {
    if (m.cmd === 'connect') {
      gov = await sdk.Governor.connect({
        url: m.url,
        key: m.key,
        agentId: m.agentId,
        actions: ['send_email', 'wire_transfer_0'].map((name) => ({ name, description: `bench action ${name}`, parameters: { type: 'object' } })),
        onReportError: () => undefined,
        approvalTimeoutMs: 30_000,
      });
      for (let i = 0; gov.status().channel.state !== 'connected'; i++) {
        if (i > 500) throw new Error(`push channel not connected: ${JSON.stringify(gov.status().channel)}`);
        await sleep(10);
      }
      run = gov.startRun();
      send({ ok: 'connected' });
    } else if (m.cmd === 'until') {
      send({ watching: clock() });
      for (;;) {
        const res = await run!.act(m.action, { to: 'ops' }, () => 1, { onBlocked: 'return' });
        if ((typeof res === 'object') === m.blocked) return send({ at: clock() });
        await sleep(m.everyMs ?? 1);
      }
    } else if (m.cmd === 'escalate') {
      let resumedAt = 0;
      await run!.act(m.action, { n: m.n }, () => {
        resumedAt = clock();
        return 'done';
      });
      send({ resumedAt });
    } else if (m.cmd === 'close') {
      await gov?.close({ timeoutMs: 30_000 });
      process.exit(0);
    }
  } catch (err) {
    send({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
});
send({ ok: 'started' });
