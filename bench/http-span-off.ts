/**
 * What AGP's server span (`httpServerSpan` in `@agp/runtime`) costs a request when tracing is off (no SDK started:
 * the API's no-op propagator, tracer and context manager), in isolation: the middleware called `CALLS` times on one
 * request and response object, against calling the handler directly, alternating, `ROUNDS` times. Not a test
 * (docs/performance.md, the cost of tracing). Prints ns per call.
 * Run: `node --import tsx bench/http-span-off.ts` (knobs: SPAN_OFF_CALLS, SPAN_OFF_ROUNDS).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpServerSpan } from '../packages/runtime/src/http-span.js';

const CALLS = Number(process.env.SPAN_OFF_CALLS ?? 2_000_000);
const ROUNDS = Number(process.env.SPAN_OFF_ROUNDS ?? 5);
const req = { url: '/api/v1/ingest/', method: 'POST', headers: { host: '127.0.0.1:8080', 'content-type': 'application/json', 'content-length': '81234', authorization: 'Bearer agp_bench' } } as unknown as IncomingMessage;
const res = {} as ServerResponse;
let handled = 0;
const handler = () => void handled++;
const span = httpServerSpan();

/** ns per call of `fn` over CALLS calls (CPU time of this process). */
function time(fn: () => void): number {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) fn();
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / CALLS;
}

const direct: number[] = [];
const wrapped: number[] = [];
time(handler);
time(() => span(req, res, handler)); // warm up
for (let r = 0; r < ROUNDS; r++) {
  direct.push(time(handler));
  wrapped.push(time(() => span(req, res, handler)));
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`httpServerSpan with tracing off: ${CALLS} calls, ${ROUNDS} rounds, node ${process.version} (${handled} handled)`);
console.log(`| handler called | ns per call (each round) | median |`);
console.log(`|---|---|---|`);
console.log(`| directly | ${direct.map((x) => x.toFixed(1)).join(', ')} | ${med(direct).toFixed(1)} |`);
console.log(`| through httpServerSpan | ${wrapped.map((x) => x.toFixed(1)).join(', ')} | ${med(wrapped).toFixed(1)} |`);
