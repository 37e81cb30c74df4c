/**
 * The floor of tracing on Node 20: what an enabled OpenTelemetry context manager costs every promise, with no span
 * at all (not a test; docs/performance.md, the cost of tracing). Each mode runs in its own child process (a context
 * manager, once enabled, stays enabled), alternating, `ROUNDS` times:
 *   - `none`: no context manager (tracing off: the API's no-op context);
 *   - `als`: `AsyncLocalStorageContextManager` (the Node SDK's default), each "request" run in `context.with`;
 *   - `hooks`: `AsyncHooksContextManager`, the same.
 * A "request" is `AWAITS` chained awaits of resolved promises plus one `setImmediate` hop (a stand-in for the
 * promises the gateway's HTTP, Nest and NATS code make per request). Prints CPU µs per request per mode.
 * Run: `node --import tsx bench/context-cost.ts` (knobs: CONTEXT_REQUESTS, CONTEXT_AWAITS, CONTEXT_ROUNDS).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { context, ROOT_CONTEXT, createContextKey } from '@opentelemetry/api';
import { AsyncHooksContextManager, AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

const REQUESTS = Number(process.env.CONTEXT_REQUESTS ?? 20_000);
const AWAITS = Number(process.env.CONTEXT_AWAITS ?? 200);
const ROUNDS = Number(process.env.CONTEXT_ROUNDS ?? 3);
const MODES = ['none', 'als', 'hooks'] as const;
const KEY = createContextKey('bench');

/** One stand-in request: `AWAITS` awaits and a macrotask hop; returns a number so nothing is optimised away. */
async function request(i: number): Promise<number> {
  let acc = i;
  for (let k = 0; k < AWAITS; k++) acc += await Promise.resolve(k);
  await new Promise((resolve) => setImmediate(resolve));
  return acc + (context.active().getValue(KEY) === undefined ? 0 : 1);
}

/** Run `REQUESTS` requests, 16 at a time, each under its own context value; CPU µs per request. */
async function child(mode: (typeof MODES)[number]): Promise<number> {
  if (mode !== 'none') context.setGlobalContextManager((mode === 'als' ? new AsyncLocalStorageContextManager() : new AsyncHooksContextManager()).enable());
  const one = (i: number) => context.with(ROOT_CONTEXT.setValue(KEY, i), () => request(i));
  let next = 0;
  const lane = async () => {
    while (next < REQUESTS) await one(next++);
  };
  for (let w = 0; w < 2_000; w++) await one(w); // warm up
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: 16 }, lane));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / REQUESTS;
}

const mode = process.argv[2] as (typeof MODES)[number] | undefined;
if (mode) {
  process.stdout.write(String(await child(mode)));
} else {
  const results = new Map<string, number[]>(MODES.map((m) => [m, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const m of MODES) {
      const out = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), m], { encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`context-cost ${m}: ${out.stderr}`);
      results.get(m)!.push(Number(out.stdout));
    }
  }
  console.log(`context manager cost: ${REQUESTS} requests of ${AWAITS} awaits + 1 setImmediate, node ${process.version}, ${ROUNDS} rounds`);
  console.log('| context manager | CPU µs per request (each round) | median | over none |');
  console.log('|---|---|---|---|');
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = med(results.get('none')!);
  for (const [m, xs] of results) console.log(`| ${m} | ${xs.map((x) => x.toFixed(1)).join(', ')} | ${med(xs).toFixed(1)} | +${(med(xs) - base).toFixed(1)} µs |`);
}
