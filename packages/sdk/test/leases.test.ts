/**
 * Fleet-wide limits in the SDK with no platform: governors sharing one in-memory platform (./memory-platform.ts, whose
 * lease route applies the engine's slice rule to in-memory counters) admit no more than a shared session budget or an
 * agent-scoped rate limit; a process-scoped limit still counts per process; an action waits at most `quotaWaitMs`;
 * the fail modes when the lease route is down; a policy the platform no longer has; close releases what was not
 * spent; `status().leases`; an actual cost above its estimate is reported as spent past the lease.
 * Source: docs/sdk.md §Fleet-wide limits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Governor, type GovernorOptions, type Run } from '../src/index.js';
import { MemoryPlatform, policyRecord, until } from './memory-platform.js';

const govs: Governor[] = [];
afterEach(async () => {
  for (const g of govs.splice(0)) await g.close({ timeoutMs: 200 }).catch(() => undefined);
});

/** A governor of `p`'s agent connected to `p`. */
async function governor(p: MemoryPlatform, over: Partial<GovernorOptions> = {}): Promise<Governor> {
  const gov = await Governor.connect({ url: 'http://agp.test', key: 'agp_test', agentId: p.agentId, fetch: p.fetch, flushIntervalMs: 5, onReportError: () => undefined, ...over });
  govs.push(gov);
  return gov;
}

/** Act `n` times at once on `run` (`cost` USD each); resolves with how many ran. */
async function burst(run: Run, n: number, cost: number, name = 'call'): Promise<number> {
  const out = await Promise.all(Array.from({ length: n }, (_, i) => run.act(name, { i }, () => 'ran', { estimatedCostUsd: cost, onBlocked: 'return' })));
  return out.filter((r) => r === 'ran').length;
}

/** Act on `run` until it is stopped; resolves with how many ran. */
async function untilStopped(run: Run, cost: number, name = 'call'): Promise<number> {
  let n = 0;
  while ((await run.act(name, {}, () => 'ran', { estimatedCostUsd: cost, onBlocked: 'return' })) === 'ran') n++;
  return n;
}

describe('fleet-wide limits', () => {
  it('two governors sharing one session budget admit exactly what it holds, never more', async () => {
    const budget = 1;
    const cost = 0.05;
    const p = new MemoryPlatform();
    const pol = policyRecord({ session_budget: budget });
    p.policies = [pol];
    const [a, b] = [await governor(p), await governor(p)];
    const [ra, rb] = [a.startRun({ sessionId: 's-1' }), b.startRun({ sessionId: 's-1' })];
    // Concurrent bursts on both, then each until it is stopped (what one still holds it spends itself).
    let admitted = (await Promise.all([burst(ra, 15, cost), burst(rb, 15, cost)])).reduce((x, y) => x + y, 0);
    admitted += (await untilStopped(ra, cost)) + (await untilStopped(rb, cost)) + (await untilStopped(ra, cost));
    expect(admitted).toBe(Math.round(budget / cost));
    const last = await ra.act('call', {}, () => 'ran', { estimatedCostUsd: cost, onBlocked: 'return' });
    expect(last).toMatchObject({ blocked: true, decision: { decision: 'budget_exceeded', rule: 'session_budget', reason: expect.stringMatching(/left for the fleet/) } });
    await Promise.all([a.close(), b.close()]);
    const counter = p.counter(pol.id as string, 'session_budget');
    expect(counter?.spent).toBeCloseTo(admitted * cost, 9);
    expect(counter!.committed).toBeLessThanOrEqual(budget + 1e-9);
    // One batched request per need that was missing: far fewer requests than actions.
    expect(p.requests.filter((r) => r.path === '/api/v1/quotas/leases').length).toBeLessThan(admitted * 2);
  });

  it('an agent-scoped rate limit shared by two governors admits exactly max_calls in its window', async () => {
    const p = new MemoryPlatform();
    const maxCalls = 7;
    // A window of about 115 days: it does not turn during the test.
    p.policies = [policyRecord({ rate_limits: { search: { max_calls: maxCalls, window_seconds: 10_000_000, scope: 'agent' } } })];
    const [a, b] = [await governor(p), await governor(p)];
    const ran = await Promise.all([burst(a.startRun(), 6, 0, 'search'), burst(b.startRun(), 6, 0, 'search')]);
    expect(ran[0] + ran[1]).toBe(maxCalls);
    expect(await a.startRun().act('search', {}, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'rate_limited', reason: expect.stringMatching(/agent agent-1's calls of search reach the limit of 7/) } });
  });

  it('a process-scoped rate limit still counts per process, with no lease asked', async () => {
    const p = new MemoryPlatform();
    p.policies = [policyRecord({ rate_limits: { search: { max_calls: 3, window_seconds: 60, scope: 'process' } } })];
    const [a, b] = [await governor(p), await governor(p)];
    expect(await burst(a.startRun(), 5, 0, 'search')).toBe(3);
    expect(await burst(b.startRun(), 5, 0, 'search')).toBe(3);
    expect(p.requests.filter((r) => r.path === '/api/v1/quotas/leases')).toHaveLength(0);
    expect(a.status().leases).toEqual([]);
  });

  it("a policy from a platform older than scopes and period budgets: its rate limit counts per process, no lease asked", async () => {
    const p = new MemoryPlatform();
    const record = policyRecord({ rate_limits: { search: { max_calls: 3, window_seconds: 60 } } });
    // As an older platform answers it: no period_budgets field, no scope on the limit.
    delete record.period_budgets;
    (record.rate_limits as Record<string, Record<string, unknown>>).search = { max_calls: 3, window_seconds: 60 };
    p.policies = [record];
    const gov = await governor(p);
    await until(() => gov.status().policies === 1);
    expect(await burst(gov.startRun(), 5, 0, 'search')).toBe(3);
    expect(p.requests.filter((r) => r.path === '/api/v1/quotas/leases')).toHaveLength(0);
  });

  it('quotaWaitMs is checked like the other durations', async () => {
    const p = new MemoryPlatform();
    for (const bad of [-1, Number.NaN, '2000']) {
      await expect(governor(p, { quotaWaitMs: bad as number })).rejects.toThrow(/quotaWaitMs must be a number ≥ 0 \(ms\)/);
    }
  });

  it('an action waits at most quotaWaitMs for a grant, then is budget_exceeded', async () => {
    const p = new MemoryPlatform();
    p.policies = [policyRecord({ session_budget: 1 })];
    p.leaseDelayMs = 600;
    const gov = await governor(p, { quotaWaitMs: 100 });
    const t0 = Date.now();
    const r = await gov.startRun({ sessionId: 's-1' }).act('call', {}, () => 'ran', { estimatedCostUsd: 0.1, onBlocked: 'return' });
    const waited = Date.now() - t0;
    expect(r).toMatchObject({ blocked: true, decision: { decision: 'budget_exceeded', rule: 'session_budget' } });
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(500);
  });

  it('the lease route down: failMode closed blocks naming the limit and the error; open counts in the process', async () => {
    const p = new MemoryPlatform();
    p.policies = [policyRecord({ rate_limits: { search: { max_calls: 2, window_seconds: 60, scope: 'agent' } } })];
    p.quotasStatus = 503;
    const closed = await governor(p, { failMode: 'closed' });
    expect(await closed.startRun().act('search', {}, () => 'ran', { onBlocked: 'return' })).toMatchObject({
      blocked: true,
      decision: { decision: 'block', rule: null, reason: expect.stringMatching(/fleet-wide limit rate_limit:search of policy .* could not be leased: 503 .*failMode is closed/) },
    });
    const open = await governor(p, { failMode: 'open' });
    const run = open.startRun();
    expect(await burst(run, 1, 0, 'search')).toBe(1);
    expect(await burst(run, 1, 0, 'search')).toBe(1);
    // The process counts alone: the third call in its sliding window is rate limited.
    expect(await run.act('search', {}, () => 'ran', { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'rate_limited', reason: expect.stringMatching(/2 calls of search in the last 60 s/) } });
  });

  it('cut off from the platform, a governor spends only what its lease holds, then applies failMode closed', async () => {
    const p = new MemoryPlatform();
    p.policies = [policyRecord({ session_budget: 10 })];
    const gov = await governor(p);
    const run = gov.startRun({ sessionId: 's-1' });
    expect(await burst(run, 1, 0.1)).toBe(1);
    const held = gov.status().leases[0].held;
    p.quotasStatus = 503;
    // The rest of the lease (5 % of the limit: 0.5 USD, 0.1 spent) is spent locally, then the fail mode applies.
    const ran = 1 + (await untilStopped(run, 0.1));
    expect(ran).toBe(Math.round(held / 0.1));
    expect(await run.act('call', {}, () => 'ran', { estimatedCostUsd: 0.1, onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'block', reason: expect.stringMatching(/session_budget .*could not be leased/) } });
  });

  it('a policy the platform no longer has (404) is counted in the process until the next snapshot', async () => {
    const p = new MemoryPlatform();
    const pol = policyRecord({ rate_limits: { search: { max_calls: 2, window_seconds: 60, scope: 'agent' } } });
    p.policies = [pol];
    const gov = await governor(p);
    // The platform forgets the policy without a new snapshot: the lease route answers 404 for it.
    p.policies = [];
    const run = gov.startRun();
    expect(await burst(run, 1, 0, 'search')).toBe(1);
    expect(await burst(run, 1, 0, 'search')).toBe(1);
    expect(await run.act('search', {}, () => 'ran', { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'rate_limited' } });
    expect(p.requests.filter((r) => r.path === '/api/v1/quotas/leases')).toHaveLength(1);
  });

  it('status shows each lease; an actual cost above the estimate is reported as spent past the lease; close releases the rest', async () => {
    const p = new MemoryPlatform();
    const pol = policyRecord({ session_budget: 10 });
    p.policies = [pol];
    const gov = await governor(p);
    const run = gov.startRun({ sessionId: 's-1' });
    await run.act('call', {}, () => 'ran', { estimatedCostUsd: 0.1 });
    const [lease] = gov.status().leases;
    // The slice rule: 5 % of the limit (0.5 USD), at least the need.
    expect(lease).toMatchObject({ policy_id: pol.id, limit: 'session_budget', scope_key: 's-1', held: 0.5, spent: 0.1 });
    expect(Date.parse(lease.expires_at)).toBeGreaterThan(Date.now());
    await run.act('call', {}, (_a, ctx) => ctx.reportCost(0.7), { estimatedCostUsd: 0.1 });
    expect(gov.status().leases[0].spent).toBeCloseTo(0.8, 9);
    const [held] = p.leases.values();
    await until(() => Math.abs(held.spent - 0.8) < 1e-9);
    // Reported past what the lease held (0.5 USD): the overshoot is recorded on the counter and counted.
    const counter = p.counter(pol.id as string, 'session_budget')!;
    expect(counter.overshoot).toBeCloseTo(0.3, 9);
    expect(counter.committed).toBeGreaterThanOrEqual(0.8 - 1e-9);
    expect(await run.act('call', {}, () => 'ran', { estimatedCostUsd: 0.1 })).toBe('ran');
    await gov.close();
    expect(held.status).toBe('released');
    expect(counter.committed).toBeCloseTo(counter.spent, 9);
    expect(counter.spent).toBeCloseTo(0.9, 9);
  });

  it('a policy edit that changes the limit releases the old lease; the next action leases under the new value', async () => {
    const p = new MemoryPlatform();
    const pol = policyRecord({ session_budget: 10 });
    p.policies = [pol];
    const gov = await governor(p);
    await until(() => p.streams.length === 1);
    p.stream.send('ready', { agent_id: p.agentId, position: '1' }, '1');
    await until(() => gov.status().channel.state === 'connected');
    const run = gov.startRun({ sessionId: 's-1' });
    await run.act('call', {}, () => 'ran', { estimatedCostUsd: 0.1 });
    const [old] = p.leases.values();
    p.policies = [{ ...pol, session_budget: 4, version: 2 }];
    p.changed();
    p.stream.send('policy.changed', { policy_id: pol.id, version: 2, change: 'updated', fields: ['session_budget'], agent_ids: [], actor: 'a', at: new Date().toISOString() }, '2');
    await until(() => old.status === 'released');
    await run.act('call', {}, () => 'ran', { estimatedCostUsd: 0.1 });
    expect(gov.status().leases).toMatchObject([{ held: 0.2, spent: 0.1 }]);
  });

  it('escalated and approved: the action is leased again when decided after the approval, and its spend counted', async () => {
    const p = new MemoryPlatform();
    const pol = policyRecord({ session_budget: 1, approval_required_actions: ['refund'] });
    p.policies = [pol];
    p.leaseTtlMs = 300;
    const gov = await governor(p, { approvalPollMs: 20 });
    let leasesWhenRun: unknown = null;
    const refund = () => ((leasesWhenRun = gov.status().leases), 'refunded');
    const pending = gov.startRun({ sessionId: 's-1' }).act('refund', {}, refund, { estimatedCostUsd: 0.2 });
    await until(() => p.approvals.size === 1);
    // Unused while the human decides, its lease lapses (the platform takes the 0.2 USD back).
    await until(() => gov.status().leases.length === 0 && [...p.leases.values()].every((l) => l.expires_at <= Date.now()));
    [...p.approvals.values()][0].status = 'approved';
    expect(await pending).toBe('refunded');
    // Leased again before it ran, its need consumed from the new lease.
    expect(leasesWhenRun).toMatchObject([{ limit: 'session_budget', scope_key: 's-1', held: 0.2, spent: 0.2 }]);
    const counter = p.counter(pol.id as string, 'session_budget')!;
    await until(() => Math.abs(counter.spent - 0.2) < 1e-9);
  });
});
