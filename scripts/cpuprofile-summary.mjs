#!/usr/bin/env node
/**
 * Summarise a V8 `.cpuprofile` (from `node --cpu-prof`, e.g. `BENCH_PROFILE=<dir>` of `pnpm bench ingest`): self time
 * by function and by file/package, and the share of garbage collection, over the busy samples only (idle excluded).
 * Usage: `node scripts/cpuprofile-summary.mjs <file.cpuprofile> [top=40] [--from=<ms> --to=<ms>] [--per=<n>]` (times
 * relative to the profile's start; `--per` also prints each stage in µs per unit, e.g. per event). Prints ms and % of
 * busy time, and the busy time by stage of the accepting path: each sample goes to the deepest frame on its stack that
 * is one of {@link STAGES}' functions, else to the package of its own frame. Source: docs/performance.md (`pnpm bench ingest`).
 */
import { readFileSync } from 'node:fs';

const [file, topArg, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile-summary.mjs <file.cpuprofile> [top] [--from=ms --to=ms]');
const top = Number(topArg ?? 40);
const opt = Object.fromEntries(rest.map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, Number(v)]));
const prof = JSON.parse(readFileSync(file, 'utf8'));
/** Stage of a function of the accepting path (gateway and ingest), by its name. */
const STAGES = {
  authenticate: 'auth (key cache, scope)',
  requestIdAndMetrics: 'request id, metrics',
  jsonBody: 'body read (express.raw)',
  serialize: 'bus message encode',
  deserialize: 'bus message decode',
  acceptRaw: 'ingest: decode bytes, other',
  accept: 'ingest: answer, other',
  parseJsonBody: 'JSON.parse of the body',
  safeParse: 'validate (zod)',
  jsonInputErrors: 'validate (NUL, surrogates, depth)',
  runContradictions: 'validate (run contradictions)',
  storedIds: 'stored-ids lookup (PostgreSQL)',
  messageId: 'ids (message id, event ids)',
  newId: 'ids (message id, event ids)',
  deterministicId: 'ids (message id, event ids)',
  publish: 'publish (envelope JSON, JetStream ack)',
  wireEndpoint: 'bus endpoint (span, metrics)',
};
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
let t = 0;
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i] ?? 0;
  const ms = t / 1000;
  if (opt.from !== undefined && ms < opt.from) continue;
  if (opt.to !== undefined && ms > opt.to) continue;
  const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
}
const where = (url) => {
  if (!url) return '(native)';
  const m = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/);
  if (m) return `pkg:${m[1]}`;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\/.*?\/(services|packages)\//, '$1/');
};
const stages = new Map();
const stageOf = (id) => {
  let found;
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur).callFrame;
    if (!found && Object.hasOwn(STAGES, f.functionName) && !/node_modules/.test(f.url)) found = STAGES[f.functionName];
    else if (!found && f.functionName === 'safeParse') found = STAGES.safeParse;
  }
  return found;
};
const fn = new Map();
const files = new Map();
let busy = 0;
let idle = 0;
for (const [id, ms] of self) {
  const n = byId.get(id);
  const name = n.callFrame.functionName || '(anonymous)';
  if (name === '(idle)') { idle += ms; continue; }
  busy += ms;
  const w = where(n.callFrame.url);
  const key = `${name}  ${w}:${n.callFrame.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + ms);
  files.set(w, (files.get(w) ?? 0) + ms);
  const stage = name === '(garbage collector)' ? 'GC' : stageOf(id) ?? `other: ${/^pkg:@nestjs|^pkg:rxjs|^pkg:express|^pkg:router|^pkg:body-parser|^pkg:raw-body/.test(w) ? 'Nest/Express' : /^pkg:@nats-io/.test(w) ? 'NATS client' : w.startsWith('node:') || w === '(native)' ? 'Node (sockets, HTTP, timers), native' : w}`;
  stages.set(stage, (stages.get(stage) ?? 0) + ms);
}
const show = (title, m, k) => {
  console.log(`\n${title}`);
  for (const [key, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, k)) console.log(`${ms.toFixed(1).padStart(9)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)} %  ${key}`);
};
console.log(`${file}: busy ${busy.toFixed(0)} ms, idle ${idle.toFixed(0)} ms; GC ${(((fn.get('(garbage collector)  (native):0') ?? 0) / busy) * 100).toFixed(1)} % of busy`);
show('busy time by stage', stages, 30);
if (opt.per) for (const [k, ms] of [...stages].sort((a, b) => b[1] - a[1])) console.log(`${((ms * 1000) / opt.per).toFixed(1).padStart(8)} µs per unit  ${k}`);
show('self time by file/package', files, 25);
show('self time by function', fn, top);
