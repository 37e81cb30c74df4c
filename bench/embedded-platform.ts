/**
 * The embedded platform a benchmark runs against: its own process (`services/embedded/dist/main.js`, in-memory data,
 * organisation `bench` with the bench's keys), or a running platform named by a URL. Used by `pnpm bench sdk` and
 * `pnpm bench mcp-proxy`. Needs the built platform (`node scripts/build.mjs`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { EMBEDDED_NODE_FLAGS } from '../services/embedded/src/memory.js';

/** The bench organisation's write key (`AGP_INIT_WRITE_KEY` of the platform it starts). */
export const WRITE_KEY = 'agp_bench_write_key_000000000001';
/** The bench organisation's read key. */
export const READ_KEY = 'agp_bench_read_key_0000000000001';
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The platform: the embedded process, its URL, and a JSON request helper (GET with the read key, else the write key). */
export interface Platform {
  url: string;
  /** null when `external` named a running platform. */
  child: ChildProcess | null;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }>;
}

/**
 * Start the embedded platform on a random port and wait for `/readyz` (up to 60 s), or use `external`. `env`: more
 * settings of the platform process (e.g. AGP_OUTBOUND_ALLOWED_HOSTS for a loopback upstream); `nodeArgs`: more node
 * options of it (e.g. `--cpu-prof`).
 * @throws Error when it does not become ready.
 */
export async function startEmbeddedPlatform(external?: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Platform> {
  const call = (url: string) => async (method: string, path: string, body?: unknown) => {
    const t0 = performance.now();
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${method === 'GET' ? READ_KEY : WRITE_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const text = await res.text();
    const took = performance.now() - t0;
    return { status: res.status, body: text ? JSON.parse(text) : null, ms: took };
  };
  if (external) return { url: external, child: null, call: call(external) };
  const port = 18000 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, [...EMBEDDED_NODE_FLAGS, ...nodeArgs, join(ROOT, 'services/embedded/dist/main.js')], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', AGP_DATA_DIR: 'memory', DATABASE_URL: '', NATS_URL: '', LOG_LEVEL: 'warn', AGP_INIT_ORG: 'bench', AGP_INIT_WRITE_KEY: WRITE_KEY, AGP_INIT_READ_KEY: READ_KEY, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      /* starting */
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the embedded platform did not become ready');
    await sleep(200);
  }
  return { url, child, call: call(url) };
}
