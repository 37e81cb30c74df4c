/**
 * Embedded-mode memory (docs/performance.md (Embedded memory), target (f)): starts `services/embedded/dist/main.js` with a fresh
 * AGP_DATA_DIR RUNS times (default 5), reads the child's RSS after readiness and 5 s idle, then after
 * `agp simulate --agents 8 --rate 200 --duration 10` and 5 s idle, and prints min / median / max of each.
 *
 *   node scripts/build.mjs && node --import tsx bench/embedded-memory.ts
 *
 * Environment: RUNS (default 5); NODE_ARGS (extra node flags for the child, space separated, e.g.
 * `--max-semi-space-size=2`); CHILD_ENV (extra environment for the child, `A=1 B=2`); SMAPS=1 also prints the
 * child's largest memory mappings at idle; NO_SIMULATE=1 skips the simulate step; PERF=1 also measures the cost of
 * the memory settings: start-up time to /readyz, and after the idle reading a heavier simulate (4,000 events/s for
 * 8 s) with the time until every sent intervention is listed by GET /api/v1/interventions (ingest -> queryable).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Resident set size of a process in MB, from /proc/<pid>/status. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The largest resident mappings of a process (MB), grouped by their name (anonymous ones by size class). */
export function smapsOf(pid: number): Array<[string, number]> {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const groups = new Map<string, number>();
  let name = '';
  let size = 0;
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      name = head[1] || '[anon]';
      continue;
    }
    const sz = /^Size:\s+(\d+) kB/.exec(line);
    if (sz) size = Number(sz[1]);
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      const key = name === '[anon]' ? `[anon ${size >= 1 << 20 ? '>=1GB' : size >= 65536 ? '64MB-1GB' : size >= 1024 ? '1-64MB' : '<1MB'}]` : name.replace(/.*\/node_modules\//, '');
      groups.set(key, (groups.get(key) ?? 0) + Number(rss[1]) / 1024);
    }
  }
  return [...groups].sort((a, b) => b[1] - a[1]).slice(0, 12);
}

/** One start of the embedded platform: idle RSS and RSS after a simulate run (MB). */
async function once(nodeArgs: string[], childEnv: Record<string, string>, simulate: boolean): Promise<{ idle: number; afterSimulate: number; readyMs: number; drainMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'agp-mem-'));
  const port = 18000 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, [...nodeArgs, 'services/embedded/dist/main.js'], {
    env: { ...process.env, PORT: String(port), AGP_DATA_DIR: dir, DATABASE_URL: '', NATS_URL: '', LOG_LEVEL: 'warn', ...childEnv },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const started = Date.now();
  let readyMs = NaN;
  let drainMs = NaN;
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) {
          readyMs = Date.now() - started;
          break;
        }
      } catch {
        /* starting */
      }
      await sleep(200);
    }
    await sleep(5000);
    const idle = rssOf(child.pid!);
    if (process.env.SMAPS) for (const [k, v] of smapsOf(child.pid!)) console.log(`    ${v.toFixed(1).padStart(7)} MB  ${k}`);
    let afterSimulate = NaN;
    const keys = JSON.parse(readFileSync(join(dir, 'first-run-keys.json'), 'utf8')) as { write: string; read: string };
    if (process.env.PERF) {
      const t0 = Date.now();
      const r = spawnSync(process.execPath, ['packages/cli/dist/cli.js', 'simulate', '--url', `http://127.0.0.1:${port}`, '--key', keys.write, '--rate', '4000', '--duration', '8', '--json'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`simulate failed: ${r.stderr}`);
      const want = (JSON.parse(r.stdout) as { by_event_type: Record<string, number> }).by_event_type['intervention.create'];
      for (;;) {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/interventions?limit=1`, { headers: { authorization: `Bearer ${keys.read}` } });
        if (((await res.json()) as { total: number }).total >= want) break;
        await sleep(100);
      }
      drainMs = Date.now() - t0;
    }
    if (simulate) {
      const r = spawnSync(process.execPath, ['packages/cli/dist/cli.js', 'simulate', '--url', `http://127.0.0.1:${port}`, '--key', keys.write, '--agents', '8', '--rate', '200', '--duration', '10', '--quiet'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`simulate failed: ${r.stderr}`);
      await sleep(5000);
      afterSimulate = rssOf(child.pid!);
      if (process.env.SMAPS) for (const [k, v] of smapsOf(child.pid!)) console.log(`    ${v.toFixed(1).padStart(7)} MB  ${k}`);
    }
    return { idle, afterSimulate, readyMs, drainMs };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary(xs: number[], unit = 'MB'): string {
  const s = [...xs].filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (!s.length) return 'n/a';
  return `min ${s[0].toFixed(0)} / median ${s[Math.floor(s.length / 2)].toFixed(0)} / max ${s[s.length - 1].toFixed(0)} ${unit}  [${xs.map((x) => x.toFixed(0)).join(', ')}]`;
}

const runs = Number(process.env.RUNS ?? 5);
const nodeArgs = (process.env.NODE_ARGS ?? '').split(' ').filter(Boolean);
const childEnv = Object.fromEntries((process.env.CHILD_ENV ?? '').split(' ').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
const idle: number[] = [];
const after: number[] = [];
const ready: number[] = [];
const drain: number[] = [];
for (let i = 0; i < runs; i++) {
  const r = await once(nodeArgs, childEnv, !process.env.NO_SIMULATE);
  idle.push(r.idle);
  after.push(r.afterSimulate);
  ready.push(r.readyMs);
  drain.push(r.drainMs);
  console.log(`  run ${i + 1}: idle ${r.idle.toFixed(0)} MB, after simulate ${r.afterSimulate.toFixed(0)} MB, ready in ${r.readyMs} ms${process.env.PERF ? `, 32k events queryable in ${r.drainMs} ms` : ''}`);
}
console.log(`node args [${nodeArgs.join(' ')}] env [${process.env.CHILD_ENV ?? ''}]`);
console.log(`  idle RSS:           ${summary(idle)}`);
console.log(`  RSS after simulate: ${summary(after)}`);
console.log(`  ready after:        ${summary(ready, 'ms')}`);
if (process.env.PERF) console.log(`  32k events queryable after: ${summary(drain, 'ms')}`);
