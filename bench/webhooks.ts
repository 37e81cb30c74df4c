/**
 * `pnpm bench webhooks` (docs/performance.md, `pnpm bench webhooks`): webhook delivery on the embedded platform
 * (in-memory data), to a loopback receiver in this process that verifies nothing (the cost measured is the platform's),
 * everything in one run:
 *
 *   (a) ingest throughput with no subscription: BENCH_WEBHOOK_EVENTS intervention.create events (default 20000) over
 *       HTTP in batches of 100, 8 requests in flight, accepted durably (207)            -> baseline of (b)
 *   (b) the same with 10 subscriptions to `intervention.created` active                   vs (a)
 *       and the deliveries per second of (b): 10 × the events, from the first event sent to the last delivery received
 *   (c) event → delivery at 100 events/s (10 events every 100 ms) for BENCH_WEBHOOK_SECONDS (default 20) to one
 *       subscription: from sending the event to the receiver getting its delivery, p50/p99, beside the same events'
 *       ingest answer time (until the event is durable: the part of (c) that is not webhooks)
 *
 * Targets (docs/notifications.md): (c) p99 ≤ 1 s at 100 events/s; (b) within 5 % of (a).
 * Needs the built platform (`node scripts/build.mjs`, which `pnpm bench` runs first).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedPlatform, WRITE_KEY } from './embedded-platform.js';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 20);
const ADMIN_KEY = 'agp_bench_admin_key_000000000001';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Events of one ingest batch: intervention.create, action names `<tag>-<n>` so a delivery names its event. */
function batch(tag: string, from: number, n: number) {
  const now = new Date().toISOString();
  const pad = randomBytes(150).toString('hex');
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${from + i}`,
    type: 'intervention.create',
    timestamp: now,
    body: { type: 'hard_block', outcome: 'blocked', action_name: `${tag}-${from + i}`, agent_id: `agent-${(from + i) % 23}`, risk_level: 'medium', reason: 'benchmark event', original_inputs: { pad } },
  }));
}

/** The webhooks benchmark; prints one table. */
export async function webhooksBench(): Promise<void> {
  // The receiver: each delivery's action name, and when it arrived.
  const got = new Map<string, number[]>();
  let lastAt = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      lastAt = at;
      try {
        const name = JSON.parse(Buffer.concat(chunks).toString('utf8')).data?.intervention?.action_name as string | undefined;
        if (name) (got.get(name) ?? got.set(name, []).get(name)!).push(at);
      } catch {
        /* not ours */
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const receiver = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const platform = await startEmbeddedPlatform(undefined, { AGP_INIT_ADMIN_KEY: ADMIN_KEY, AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', AGP_WEBHOOK_POLL_MS: '50' });
  const post = async (path: string, body: unknown, key = WRITE_KEY) => {
    const res = await fetch(platform.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const ingest = async (tag: string): Promise<number> => {
    let next = 0;
    const t0 = performance.now();
    const lane = async () => {
      while (next < EVENTS) {
        const from = next;
        next += 100;
        await post('/api/v1/ingest/', { batch: batch(tag, from, Math.min(100, EVENTS - from)) });
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    return EVENTS / ((performance.now() - t0) / 1000);
  };
  const subscriptions: string[] = [];
  const subscribe = async (path: string) => subscriptions.push((await post('/api/v1/webhooks', { url: `${receiver}${path}`, events: ['intervention.created'] }, ADMIN_KEY)).id);
  const disableAll = async () => {
    for (const id of subscriptions.splice(0)) await fetch(`${platform.url}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  };

  try {
    // Warm up: the first requests compile and fill caches.
    await post('/api/v1/ingest/', { batch: batch('warm', 0, 100) });
    await sleep(1000);

    const base = await ingest('a');
    await sleep(2000); // the projections of (a) catch up before (b) starts

    for (let i = 0; i < 10; i++) await subscribe(`/b${i}`);
    const sentB = performance.now();
    const withSubs = await ingest('b');
    const expected = EVENTS * 10;
    const deadline = Date.now() + 600_000;
    while ([...got.entries()].filter(([k]) => k.startsWith('b-')).reduce((n, [, v]) => n + v.length, 0) < expected && Date.now() < deadline) await sleep(200);
    const deliveredB = [...got.entries()].filter(([k]) => k.startsWith('b-')).reduce((n, [, v]) => n + v.length, 0);
    const perSecond = deliveredB / ((lastAt - sentB) / 1000);
    await disableAll();
    await sleep(2000);

    // (c) 100 events/s (a request of 10 events every 100 ms), to one subscription.
    await subscribe('/c');
    const sent = new Map<string, number>();
    const acked: number[] = [];
    const inFlight: Array<Promise<void>> = [];
    const total = SECONDS * 100;
    const t0 = performance.now();
    for (let n = 0; n < total; n += 10) {
      const wait = t0 + n * 10 - performance.now();
      if (wait > 0) await sleep(wait);
      const start = performance.now();
      for (let i = n; i < n + 10; i++) sent.set(`c-${i}`, start);
      inFlight.push(post('/api/v1/ingest/', { batch: batch('c', n, 10) }).then(() => void acked.push(performance.now() - start)));
    }
    await Promise.all(inFlight);
    const rate = total / ((performance.now() - t0) / 1000);
    const end = Date.now() + 60_000;
    while ([...sent.keys()].some((k) => !got.has(k)) && Date.now() < end) await sleep(100);
    const lat = [...sent].flatMap(([k, t]) => (got.has(k) ? [got.get(k)![0] - t] : []));
    const lost = total - lat.length;

    console.log(`\npnpm bench webhooks — ${new Date().toISOString()} — ${EVENTS} events for (a)/(b), ${total} for (c)\n`);
    console.log('| Measure | AGP | Baseline | Ratio |');
    console.log('|---|---|---|---|');
    console.log(`| (b) ingest, 10 subscriptions active, events/s vs (a) none | ${fmt(withSubs)} | ${fmt(base)} | ${(withSubs / base).toFixed(3)}× (target ≥ 0.95) |`);
    console.log(`| (b) deliveries/s to the loopback receiver (${fmt(deliveredB)} of ${fmt(expected)}) | ${fmt(perSecond)} | — | — |`);
    console.log(`| (c) event → delivery at ${rate.toFixed(0)} events/s, p50 ms vs the event's ingest answer | ${pct(lat, 50).toFixed(1)} | ${pct(acked, 50).toFixed(1)} | — |`);
    console.log(`| (c) event → delivery, p99 ms (target ≤ 1000) vs the event's ingest answer | ${pct(lat, 99).toFixed(1)} | ${pct(acked, 99).toFixed(1)} | — |`);
    console.log(`| (c) deliveries missing after 60 s | ${lost} | — | — |`);
  } finally {
    platform.child?.kill('SIGTERM');
    server.closeAllConnections();
    server.close();
  }
}
