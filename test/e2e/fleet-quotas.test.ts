/**
 * Fleet-wide quotas with real agent processes: test/support/quota-agent.mjs run with plain `node` on the packed SDK
 * (`npm pack`, installed alone in an empty folder), many processes of one agent against one platform, in both modes
 * (embedded; distributed on NATS and PostgreSQL with two replicas of the policies service, the granting service).
 * Each process decides locally against its leases and acts as fast as it can; afterwards the admitted actions are
 * counted twice, from the processes' own output and from the ledger through `GET /api/v1/runs/{id}`:
 * - 8 processes sharing a 1 USD session budget with 0.01 USD actions admit exactly 100 actions;
 * - 8 processes under an agent-scoped `max_calls: 50` admit exactly 50 in the window;
 * - a SIGKILLed holder's lease comes back: what it did not spend is granted to another process once the lease
 *   expires (the platform runs with a short `AGP_QUOTA_LEASE_TTL_MS`), and the two admit exactly the limit;
 * - a governor in this process whose lease renewal is answered late (after the lease lapsed in the governor): the
 *   lease is not taken up again, and the counter counts every admitted action once;
 * - the platform out of reach for 10 s (the processes reach it through a TCP proxy that refuses connections for that
 *   long, as a stopped platform does): each process admits at most what it held, ≤ 5 % of the limit (or one action's
 *   need), then fails closed naming the quota; the fleet's total passes the limit by at most that bound per process.
 * Source: docs/sdk.md (Fleet-wide limits); docs/api.md (Quotas); docs/decisions.md (Leases, not a check per action).
 */
import { copyFileSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QUOTA_SLICE_FRACTION } from '@agp/contracts';
import { Governor } from '@agp/sdk';
import { rateWindow } from '@agp/policy-engine';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { runSuffix } from '../support/infra.js';
import { describeModes } from '../support/modes.js';
import { actionsOf, admittedOf, startFleet, until, QuotaAgent, type QuotaAgentLine, type QuotaAgentSettings } from '../support/quota-fleet.js';
import { packSdk } from '../support/sdk-pack.js';

/**
 * The lease TTL the platform runs with here (ms): short, so a killed holder's lease expires within the test, yet long
 * enough that a process on a busy 2-core machine renews its leases in time (a lease that lapses before its last
 * actions were reported lets them be granted again: the documented cost of a holder cut off, not of a connected one).
 */
const LEASE_TTL_MS = 5000;
const PROCESSES = 8;
const AGENT_SCRIPT = 'quota-agent.mjs';
/** Slack when comparing sums of USD amounts. */
const USD_EPSILON = 1e-9;

let dir = '';
beforeAll(() => {
  dir = packSdk();
  copyFileSync(resolve(import.meta.dirname, '../support/quota-agent.mjs'), join(dir, AGENT_SCRIPT));
}, 180_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Create a policy; @returns its id. */
async function policy(p: BootedPlatform, body: Record<string, unknown>): Promise<string> {
  const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

/** The counters of policy `policyId` (GET /api/v1/quotas). */
async function counters(p: BootedPlatform, policyId: string): Promise<any[]> {
  const r = await call(p, 'GET', `/api/v1/quotas?policy_id=${policyId}`, { key: p.readKey });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.counters;
}

/**
 * The ledger's count of actions that ran (status `success`) over runs `runs`, read through `GET /api/v1/runs/{id}`
 * once each run holds `actions` ledger entries (every action its process decided, admitted or not).
 * @throws Error when a run does not hold them within 60 s.
 */
async function ledgerSuccesses(p: { url: string; readKey: string }, runs: Array<{ runId: string; actions: number }>): Promise<number> {
  let n = 0;
  for (const r of runs) {
    const run = await eventually(
      async () => {
        const x = await call(p, 'GET', `/api/v1/runs/${r.runId}?actions_limit=1`, { key: p.readKey });
        return x.status === 200 && x.body.action_count === r.actions ? x.body : null;
      },
      60_000,
      200,
    );
    for (let skip = 0; skip < run.action_count; skip += 1000) {
      const page = await call(p, 'GET', `/api/v1/runs/${r.runId}?actions_skip=${skip}&actions_limit=1000`, { key: p.readKey });
      n += (page.body.actions as Array<{ status: string }>).filter((a) => a.status === 'success').length;
    }
  }
  return n;
}

/** Stop every process (SIGTERM: reports delivered, leases released); @returns their final lines. */
const stopAll = (agents: QuotaAgent[]) => Promise.all(agents.map((a) => a.stop()));

/** Admitted actions counted by the ledger over the processes' runs. */
const ledgerOf = (p: BootedPlatform, agents: QuotaAgent[], finals: QuotaAgentLine[]) => ledgerSuccesses(p, agents.map((a, i) => ({ runId: a.runId, actions: actionsOf(finals[i]) })));

/** A window length (s) for a rate limit whose current fixed window ({@link rateWindow}) has at least 5 minutes left. */
function roomyWindowSeconds(): number {
  const now = Date.now();
  return [3600, 7200, 14_400, 86_400].find((s) => rateWindow(s, now).end - now > 300_000)!;
}

/**
 * A TCP proxy on loopback to `target`: `cut()` closes its listener and every connection through it (new connections
 * are refused, as by a stopped platform); `restore()` listens again on the same port.
 */
async function tcpProxy(target: URL): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  await listen(0);
  const port = (server.address() as { port: number }).port;
  const cut = async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return { url: `http://127.0.0.1:${port}`, cut, restore: () => listen(port), close: () => (server.listening ? cut() : Promise.resolve()) };
}

describeModes(
  'fleet-wide quotas with real agent processes',
  (platform, mode) => {
    const suffix = runSuffix();
    const script = () => join(dir, AGENT_SCRIPT);
    const base = (agentId: string): Pick<QuotaAgentSettings, 'url' | 'key' | 'agentId'> => ({ url: platform().url, key: platform().writeKey, agentId });

    it(`${PROCESSES} processes sharing a 1 USD session budget with 0.01 USD actions admit exactly 100`, async () => {
      const p = platform();
      const agentId = `fq-session-${suffix}`;
      const sessionId = `${agentId}-session`;
      const policyId = await policy(p, { name: agentId, agent_ids: [agentId], session_budget: 1 });
      const agents = await startFleet(script(), dir, PROCESSES, (i) => ({ ...base(agentId), sessionId, runId: `${agentId}-run-${i}`, costUsd: 0.01 }));
      try {
        await until(agents, (as) => admittedOf(as) >= 100, 30_000);
        // Anything past the limit would be admitted in this second too.
        await sleep(1000);
      } finally {
        await Promise.allSettled(agents.map((a) => a.stop()));
      }
      const finals = await stopAll(agents);

      const [c] = await counters(p, policyId);
      expect(finals.reduce((n, f) => n + f.admitted, 0), `the counter: ${JSON.stringify(c)}`).toBe(100);
      expect(finals.reduce((n, f) => n + f.budget_exceeded, 0)).toBeGreaterThan(0);
      expect(finals.map((f) => f.blocked)).toEqual(finals.map(() => 0));
      expect(finals.find((f) => f.reasons?.budget_exceeded)?.reasons?.budget_exceeded).toMatch(/session/i);
      expect(await ledgerOf(p, agents, finals)).toBe(100);
      // The counter: the whole budget spent, nothing past it, no lease left once every process closed.
      expect(c).toMatchObject({ limit: 'session_budget', scope_key: sessionId, limit_value: 1, overshoot: 0, holders: 0 });
      expect(c.spent).toBeCloseTo(1, 9);
      expect(c.committed).toBeCloseTo(1, 9);
    }, 90_000);

    it(`${PROCESSES} processes under an agent-scoped max_calls: 50 admit exactly 50 in the window`, async () => {
      const p = platform();
      const agentId = `fq-rate-${suffix}`;
      const window_seconds = roomyWindowSeconds();
      const policyId = await policy(p, { name: agentId, agent_ids: [agentId], rate_limits: { send_email: { max_calls: 50, window_seconds, scope: 'agent' } } });
      const agents = await startFleet(script(), dir, PROCESSES, (i) => ({ ...base(agentId), runId: `${agentId}-run-${i}`, action: 'send_email' }));
      try {
        await until(agents, (as) => admittedOf(as) >= 50, 30_000);
        await sleep(1000);
      } finally {
        await Promise.allSettled(agents.map((a) => a.stop()));
      }
      const finals = await stopAll(agents);
      expect(finals.reduce((n, f) => n + f.admitted, 0), `the counters: ${JSON.stringify(await counters(p, policyId))}`).toBe(50);
      expect(finals.reduce((n, f) => n + f.rate_limited, 0)).toBeGreaterThan(0);
      expect(finals.map((f) => f.blocked)).toEqual(finals.map(() => 0));
      expect(await ledgerOf(p, agents, finals)).toBe(50);
      const [c] = await counters(p, policyId);
      expect(c).toMatchObject({ limit: 'rate_limit:send_email', unit: 'calls', scope_key: agentId, limit_value: 50, spent: 50, committed: 50, overshoot: 0 });
      expect(Date.parse(c.window_end) - Date.parse(c.window_start)).toBe(window_seconds * 1000);
    }, 90_000);

    it("a SIGKILLed holder's unspent lease returns at expiry: another process spends it, and the two admit exactly the limit", async () => {
      const p = platform();
      const agentId = `fq-kill-${suffix}`;
      const sessionId = `${agentId}-session`;
      const policyId = await policy(p, { name: agentId, agent_ids: [agentId], session_budget: 1 });
      const settings = (name: string): QuotaAgentSettings => ({ ...base(agentId), sessionId, runId: `${agentId}-${name}`, costUsd: 0.01 });
      // The holder acts once: it holds a lease of more than that action (a slice), reports what it spent, then idles.
      const holder = new QuotaAgent(script(), dir, { ...settings('holder'), stopAfterAdmitted: 1 });
      let other: QuotaAgent | undefined;
      try {
        await holder.ready;
        await until([holder], ([h]) => h.lines.some((l) => l.event === 'holding'), 15_000);
        const held = holder.lines.find((l) => l.event === 'holding')!;
        expect(held).toMatchObject({ event: 'holding', admitted: 1 });
        // gov.status().leases shows the lease: the session budget, held more than spent.
        expect(held.leases).toEqual([expect.objectContaining({ policy_id: policyId, limit: 'session_budget', scope_key: sessionId, spent: 0.01, expires_at: expect.any(String) })]);
        expect(held.leases![0].held).toBeGreaterThan(0.01);
        // Its report (0.01 spent) reached the counter, and its ledger entry the ledger, before it is killed.
        await eventually(async () => (await counters(p, policyId)).find((c) => c.spent >= 0.01 - USD_EPSILON && c.holders === 1), 10_000, 100);
        await eventually(async () => (await call(p, 'GET', `/api/v1/runs/${holder.runId}`, { key: p.readKey })).body?.action_count === 1, 10_000, 100);
        await holder.kill();
        expect(holder.child.signalCode).toBe('SIGKILL');
        // Another process spends everything else: at once what nobody holds, the killed holder's rest once its lease expired.
        other = new QuotaAgent(script(), dir, settings('other'));
        await other.ready;
        const expiry = Math.max(...held.leases!.map((l) => Date.parse(l.expires_at)));
        await until([other], ([o]) => o.latest.admitted >= 99, Math.max(0, expiry - Date.now()) + LEASE_TTL_MS + 20_000);
        await sleep(500);
      } finally {
        await holder.kill();
        await other?.stop().catch(() => undefined);
      }
      const final = await other!.stop();
      expect(final.admitted).toBe(99);
      // It was refused while the dead holder's lease still counted.
      expect(final.budget_exceeded).toBeGreaterThan(0);
      expect(await ledgerSuccesses(p, [{ runId: holder.runId, actions: 1 }, { runId: other!.runId, actions: actionsOf(final) }])).toBe(100);
      const [c] = await counters(p, policyId);
      expect(c.spent).toBeCloseTo(1, 9);
      expect(c.committed).toBeCloseTo(1, 9);
      expect(c.overshoot).toBe(0);
    }, 90_000);

    it("a renewal answered after the holder's lease lapsed is not taken up again: every admitted action is counted once", async () => {
      const p = platform();
      const agentId = `fq-late-${suffix}`;
      const sessionId = `${agentId}-session`;
      const policyId = await policy(p, { name: agentId, agent_ids: [agentId], session_budget: 100 });
      // The lease route's answers can be held back on their way to the agent (the platform has applied the request).
      let answerDelayMs = 0;
      const slowFetch: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        if (answerDelayMs > 0 && String(input instanceof Request ? input.url : input).includes('/quotas/leases')) {
          const body = await res.arrayBuffer();
          await sleep(answerDelayMs);
          return new Response(body, { status: res.status, headers: res.headers });
        }
        return res;
      };
      const gov = await Governor.connect({ url: p.url, key: p.writeKey, agentId, fetch: slowFetch, onReportError: () => undefined });
      let admittedUsd = 0;
      try {
        const run = gov.startRun({ sessionId });
        const act = async (cost: number) => {
          if ((await run.act('call', {}, () => 'ran', { estimatedCostUsd: cost, onBlocked: 'return' })) === 'ran') admittedUsd += cost;
        };
        for (let i = 0; i < 3; i++) await act(0.1);
        // Reported: nothing is owed on the lease when it lapses here.
        await eventually(async () => Math.abs(((await counters(p, policyId))[0]?.spent ?? 0) - admittedUsd) < USD_EPSILON, 10_000, 100);
        const expiresAt = Date.parse(gov.status().leases[0].expires_at);
        // The renewal (asked a third of the TTL before expiry) is applied by the platform but answered after the lease
        // lapsed here (250 ms before its expiry).
        // The renewal is asked 1,417 to 1,667 ms before expiry (the timer ticks every 250 ms), so held back 1,600 ms its
        // answer arrives after the lapse; the lease it renews lives on the platform for 3 s more.
        answerDelayMs = 1600;
        await sleep(Math.max(0, expiresAt - Date.now()) + 500);
        answerDelayMs = 0;
        for (let i = 0; i < 5; i++) {
          await act(0.1);
          await sleep(300);
        }
      } finally {
        answerDelayMs = 0;
        await gov.close({ timeoutMs: 10_000 });
      }
      const [c] = await counters(p, policyId);
      expect(admittedUsd).toBeCloseTo(0.8, 9);
      expect(c.spent, JSON.stringify(c)).toBeCloseTo(admittedUsd, 9);
      expect(c.committed, JSON.stringify(c)).toBeCloseTo(c.spent, 9);
      expect(c.holders).toBe(0);
    }, 60_000);

    it('the platform out of reach for 10 s: each process spends at most what it held, then fails closed; the total passes the limit by at most that bound per process', async () => {
      const p = platform();
      const agentId = `fq-partition-${suffix}`;
      const sessionId = `${agentId}-session`;
      const LIMIT = 4;
      const COST = 0.01;
      /** The documented bound on what one process spends cut off from the platform (USD). */
      const bound = Math.max(QUOTA_SLICE_FRACTION * LIMIT, COST);
      const policyId = await policy(p, { name: agentId, agent_ids: [agentId], session_budget: LIMIT });
      const proxy = await tcpProxy(new URL(p.url));
      // 8 processes, 25 actions a second each (the limit lasts 2 s with the platform in reach).
      const agents = await startFleet(script(), dir, PROCESSES, (i) => ({ ...base(agentId), url: proxy.url, sessionId, runId: `${agentId}-run-${i}`, costUsd: COST, intervalMs: 40 }));
      let cutAt = 0;
      let restoredAt = 0;
      try {
        expect(await until(agents, (as) => admittedOf(as) >= 40, 20_000)).toBe(true);
        cutAt = Date.now();
        await proxy.cut();
        await sleep(10_000);
        await proxy.restore();
        restoredAt = Date.now();
        // Back in reach: the rest of the limit is spent (leases lost in the cut return at their expiry).
        await until(agents, (as) => admittedOf(as) * COST >= LIMIT - USD_EPSILON, LEASE_TTL_MS + 10_000);
        await sleep(1000);
      } finally {
        await Promise.allSettled(agents.map((a) => a.stop()));
        await proxy.close();
      }
      const finals = await stopAll(agents);
      for (const [i, f] of finals.entries()) {
        // Out of reach, it spent at most what it held ...
        const during = f.admittedAt!.filter((t) => t >= cutAt && t < restoredAt).length;
        expect(during * COST, `process ${i} admitted ${during} actions out of reach`).toBeLessThanOrEqual(bound + USD_EPSILON);
        // ... then failed closed (blocked, naming the quota), until the platform was back.
        const refusedOut = agents[i].at(restoredAt).blocked - agents[i].at(cutAt).blocked;
        expect(refusedOut, `process ${i}: actions failed closed out of reach`).toBeGreaterThan(0);
        expect(f.reasons?.blocked).toMatch(/session[ _]budget|quota/i);
      }
      const admitted = await ledgerOf(p, agents, finals);
      expect(admitted).toBe(finals.reduce((n, f) => n + f.admitted, 0));
      // Past the limit by at most the bound per process.
      expect(admitted * COST).toBeLessThanOrEqual(LIMIT + PROCESSES * bound + USD_EPSILON);
      // Every admitted action is counted (what a process spent on a lease that lapsed out of reach is reported on its
      // next one: an overshoot, recorded), and with every process closed nothing stays held: nothing lost for good.
      // The counter may count more than was admitted (a report applied while its answer was lost in the cut is sent
      // again on the next lease), never less.
      // A process whose release at close did not get through in time (a loaded machine) still holds its lease until it
      // expires: then, past the grace, the counter reads it as returned (committed back to spent).
      let c = (await counters(p, policyId))[0];
      const settleBy = Date.now() + LEASE_TTL_MS * 2 + 10_000;
      while (Math.abs(c.committed - c.spent) > 1e-9 && Date.now() < settleBy) {
        await sleep(250);
        c = (await counters(p, policyId))[0];
      }
      expect(c.holders, JSON.stringify(c)).toBe(0);
      expect(c.spent, JSON.stringify(c)).toBeGreaterThanOrEqual(admitted * COST - USD_EPSILON);
      expect(c.committed, JSON.stringify(c)).toBeCloseTo(c.spent, 9);
      // What passed the limit is in the counter's overshoot (spent past a grant), never hidden.
      expect(c.overshoot, JSON.stringify(c)).toBeGreaterThanOrEqual(admitted * COST - LIMIT - USD_EPSILON);
      console.log(`[agp tests] ${mode}: platform out of reach 10 s: ${admitted} actions of ${LIMIT / COST} admitted (bound ${LIMIT / COST + (PROCESSES * bound) / COST}), the counter counts ${c.spent} USD spent; out of reach per process: ${finals.map((f) => f.admittedAt!.filter((t) => t >= cutAt && t < restoredAt).length).join(', ')}`);
    }, 120_000);
  },
  { env: { AGP_QUOTA_LEASE_TTL_MS: String(LEASE_TTL_MS) }, replicas: { policies: 2 } },
);
