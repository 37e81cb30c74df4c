/**
 * Fleet-wide quotas over real HTTP on the embedded platform (docs/api.md, Quotas): a holder acquires, reports on and
 * releases leases through `POST /api/v1/quotas/leases`; `GET /api/v1/quotas` lists the counters with filters and
 * pages; bad amounts are 422s naming the field, another organisation's policy a 404, a read key a 403. The decision
 * API reads the same counters: without `reserve` it changes nothing and, once the fleet used a shared budget up,
 * answers budget_exceeded; with `reserve: true` it draws the action's needs (`reservations`), which a release returns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootEmbedded } from '../support/modes.js';
import { call, type BootedPlatform } from '../support/http.js';

type Res = { status: number; headers: Headers; body: any };
const expectProblem = (r: Res, status: number, paths: string[] = []) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  if (paths.length) expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([...paths].sort());
};

const AGENT = 'quota-agent';
const RESERVING_AGENT = 'quota-http-agent';

describe('fleet-wide quotas over HTTP (embedded)', () => {
  let p: BootedPlatform;
  beforeAll(async () => {
    p = await bootEmbedded();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
  });

  const leases = (body: unknown, key = p.writeKey) => call(p, 'POST', '/api/v1/quotas/leases', { key, body });
  const ok = async (r: Promise<Res>) => {
    const res = await r;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const counters = async (query: string, key = p.readKey) => ok(call(p, 'GET', `/api/v1/quotas?${query}`, { key }));
  const createPolicy = async (body: Record<string, unknown>) => {
    const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  };
  const evaluate = (body: Record<string, unknown>, key = p.writeKey) => call(p, 'POST', '/api/v1/policies/evaluate', { key, body });

  let budget: string;
  const session = (need: number, extra: Record<string, unknown> = {}) => ({ policy_id: budget, limit: 'session_budget', agent_id: AGENT, session_id: 'sess-1', need, ...extra });

  it('acquires, reports on and releases a lease; the counter follows', async () => {
    budget = await createPolicy({ name: 'Fleet budget', agent_ids: [AGENT], session_budget: 1, rate_limits: { send_email: { max_calls: 40, window_seconds: 3600, scope: 'agent' } } });
    const a = await ok(leases({ holder: 'proc-1', acquire: [session(0.01), { policy_id: budget, limit: 'rate_limit:send_email', agent_id: AGENT, need: 1 }] }));
    expect(a.holder).toBe('proc-1');
    expect(a.leases).toHaveLength(2);
    // Session budget 1 USD: 5 % = 0.05 USD. Rate limit 40 calls: 5 % = 2 calls.
    expect(a.leases[0]).toMatchObject({ limit: 'session_budget', unit: 'usd', scope_key: 'sess-1', granted: 0.05, held: 0.05, spent: 0, status: 'active', remaining: 0.95, holders: 1, window_start: null });
    expect(a.leases[1]).toMatchObject({ limit: 'rate_limit:send_email', unit: 'calls', scope_key: AGENT, granted: 2, remaining: 38 });
    const leaseId = a.leases[0].lease_id;

    const r = await ok(leases({ holder: 'proc-1', report: [{ lease_id: leaseId, seq: 1, spent: 0.03 }] }));
    expect(r.leases[0]).toMatchObject({ lease_id: leaseId, spent: 0.03, held: 0.05 });
    const page = await counters(`policy_id=${budget}&limit_name=session_budget`);
    expect(page).toMatchObject({ total: 1, skip: 0, limit: 50 });
    expect(page.counters[0]).toMatchObject({ policy_id: budget, limit: 'session_budget', scope_key: 'sess-1', limit_value: 1, committed: 0.05, spent: 0.03, overshoot: 0, remaining: 0.95, holders: 1, window_start: null, window_end: null });

    const rel = await ok(leases({ holder: 'proc-1', report: [{ lease_id: leaseId, seq: 2, spent: 0.03, release: true }] }));
    expect(rel).toEqual({ holder: 'proc-1', leases: [], released: [leaseId] });
    expect((await counters(`policy_id=${budget}&limit_name=session_budget`)).counters[0]).toMatchObject({ committed: 0.03, remaining: 0.97, holders: 0 });
  });

  it('lists counters with filters and pages, most recently changed first', async () => {
    const all = await counters(`policy_id=${budget}`);
    expect(all.total).toBe(2);
    expect(all.counters.map((c: { limit: string }) => c.limit)).toEqual(['session_budget', 'rate_limit:send_email']);
    const first = await counters(`policy_id=${budget}&limit=1`);
    const second = await counters(`policy_id=${budget}&limit=1&skip=1`);
    expect([first.counters[0].limit, second.counters[0].limit]).toEqual(['session_budget', 'rate_limit:send_email']);
    expect(first).toMatchObject({ total: 2, limit: 1, skip: 0 });
    expect((await counters(`scope_key=${AGENT}`)).counters.map((c: { limit: string }) => c.limit)).toEqual(['rate_limit:send_email']);
    expect((await counters('scope_key=nobody')).total).toBe(0);
    expect((await counters('', p.otherOrgReadKey)).total).toBe(0);
    expectProblem(await call(p, 'GET', '/api/v1/quotas?limit_name=weekly', { key: p.readKey }), 422, ['query.limit_name']);
  });

  it('refuses bad amounts (422 naming the field), another organisation’s policy (404), a read key (403); nothing is granted', async () => {
    const before = await counters(`policy_id=${budget}`);
    expectProblem(await leases({ holder: 'proc-2', acquire: [session(-1)] }), 422, ['body.acquire.0.need']);
    expectProblem(await leases({ holder: 'proc-2', acquire: [session(0.01), session(1e12)] }), 422, ['body.acquire.1.need']);
    expectProblem(await leases({ holder: 'proc-2', acquire: [session('NaN' as unknown as number)] }), 422, ['body.acquire.0.need']);
    const infinite = await call(p, 'POST', '/api/v1/quotas/leases', { key: p.writeKey, rawBody: `{"holder":"proc-2","acquire":[{"policy_id":"${budget}","limit":"session_budget","agent_id":"${AGENT}","session_id":"s","need":1e400}]}` });
    expectProblem(infinite, 422, ['body.acquire.0.need']);
    expectProblem(await leases({ holder: 'proc-2', report: [{ lease_id: 'x', seq: 1, spent: -0.5 }] }), 422, ['body.report.0.spent']);
    expectProblem(await leases({ holder: 'proc-2', acquire: [{ ...session(0.01), session_id: undefined }] }), 422, ['body.acquire.0.session_id']);
    const foreign = await leases({ holder: 'globex-1', acquire: [session(0.01)] }, p.otherOrgWriteKey);
    expectProblem(foreign, 404);
    expect(foreign.body.detail).toContain('body.acquire.0.policy_id');
    expectProblem(await leases({ holder: 'proc-2', report: [{ lease_id: '0190d2a4-0000-7000-8000-000000000000', seq: 1, spent: 0 }] }), 404);
    expectProblem(await leases({ holder: 'proc-2', acquire: [session(0.01)] }, p.readKey), 403);
    expect(await counters(`policy_id=${budget}`)).toEqual(before);
  });

  it('the decision API reads the counters and changes nothing; once the fleet spent the budget it answers budget_exceeded', async () => {
    const before = await counters(`policy_id=${budget}`);
    const d = await evaluate({ agent_id: AGENT, session_id: 'sess-1', action_name: 'send_email', estimated_cost_usd: 0.5 });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body).toMatchObject({ decision: 'allow', reservations: [] });
    expect(d.body.context.quotas).toEqual([
      { policy_id: budget, limit: 'session_budget', scope_key: 'sess-1', limit_value: 1, remaining: 0.97 },
      { policy_id: budget, limit: 'rate_limit:send_email', scope_key: AGENT, limit_value: 40, remaining: 38 },
    ]);
    expect(await counters(`policy_id=${budget}`)).toEqual(before);

    // Another process of the fleet takes and spends the rest of the session's budget.
    const rest = await ok(leases({ holder: 'proc-3', acquire: [session(0.97)] }));
    expect(rest.leases[0]).toMatchObject({ granted: 0.97, remaining: 0 });
    await ok(leases({ holder: 'proc-3', report: [{ lease_id: rest.leases[0].lease_id, seq: 1, spent: 0.97 }] }));
    const stopped = await evaluate({ agent_id: AGENT, session_id: 'sess-1', action_name: 'send_email', estimated_cost_usd: 0.01 });
    expect(stopped.body).toMatchObject({ decision: 'budget_exceeded', rule: 'session_budget', policy_id: budget, cost_prevented_usd: 0.01, reservations: [] });
    expect(stopped.body.context.quotas[0]).toMatchObject({ limit: 'session_budget', remaining: 0 });
    // Another session of the same policy has its own budget.
    expect((await evaluate({ agent_id: AGENT, session_id: 'sess-2', action_name: 'send_email', estimated_cost_usd: 0.01 })).body.decision).toBe('allow');
  });

  it('reserve: true draws the action’s needs, answers the leases, and a release returns them; a read key may not reserve', async () => {
    const id = await createPolicy({ name: 'HTTP agent', agent_ids: [RESERVING_AGENT], session_budget: 2, rate_limits: { '*': { max_calls: 10, window_seconds: 60, scope: 'agent' } } });
    const body = { agent_id: RESERVING_AGENT, session_id: 'sess-h', action_name: 'search', estimated_cost_usd: 0.4, reserve: true };
    expectProblem(await evaluate(body, p.readKey), 403);
    expect((await counters(`policy_id=${id}`)).total).toBe(0);

    const d = await evaluate(body);
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body.decision).toBe('allow');
    expect(d.body.reservations).toEqual([
      { lease_id: expect.any(String), policy_id: id, limit: 'session_budget', scope_key: 'sess-h', amount: 0.4 },
      { lease_id: expect.any(String), policy_id: id, limit: 'rate_limit:*', scope_key: RESERVING_AGENT, amount: 1 },
    ]);
    const drawn = await counters(`policy_id=${id}`);
    expect(drawn.counters.map((c: { limit: string; committed: number; spent: number }) => [c.limit, c.committed, c.spent]).sort()).toEqual([
      ['rate_limit:*', 1, 1],
      ['session_budget', 0.4, 0.4],
    ]);
    // A second reserving decision sees the first one's draw.
    const second = await evaluate({ ...body, estimated_cost_usd: 1.5 });
    expect(second.body.context.quotas[0]).toMatchObject({ limit: 'session_budget', remaining: 1.6 });
    expect(second.body.reservations).toHaveLength(2);
    const third = await evaluate({ ...body, estimated_cost_usd: 0.2 });
    expect(third.body).toMatchObject({ decision: 'budget_exceeded', rule: 'session_budget', reservations: [] });

    // The caller did not act: it releases what the first decision reserved, under its key's holder.
    const me = await ok(call(p, 'GET', '/api/v1/auth/key', { key: p.writeKey }));
    const rel = await ok(leases({ holder: `decision-api:${me.id}`, report: d.body.reservations.map((r: { lease_id: string }) => ({ lease_id: r.lease_id, seq: 1, spent: 0, release: true })) }));
    expect(rel.released.sort()).toEqual(d.body.reservations.map((r: { lease_id: string }) => r.lease_id).sort());
    const after = await counters(`policy_id=${id}&limit_name=session_budget`);
    expect(after.counters[0]).toMatchObject({ committed: 1.5, spent: 1.5 });
    // Another key's holder cannot release them.
    expectProblem(await leases({ holder: 'decision-api:someone', report: [{ lease_id: second.body.reservations[0].lease_id, seq: 1, spent: 0, release: true }] }), 409);
  });

  it('reserving decisions racing on one budget admit exactly what it holds', async () => {
    const id = await createPolicy({ name: 'Raced over HTTP', agent_ids: ['quota-race-agent'], session_budget: 1 });
    const answers = await Promise.all(
      Array.from({ length: 14 }, () => evaluate({ agent_id: 'quota-race-agent', session_id: 'race', action_name: 'search', estimated_cost_usd: 0.1, reserve: true })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const allowed = answers.filter((a) => a.body.decision === 'allow');
    expect(allowed).toHaveLength(10);
    expect(allowed.every((a) => a.body.reservations.length === 1)).toBe(true);
    expect(answers.filter((a) => a.body.decision === 'budget_exceeded').every((a) => a.body.reservations.length === 0 && a.body.rule === 'session_budget')).toBe(true);
    expect((await counters(`policy_id=${id}`)).counters[0]).toMatchObject({ committed: 1, remaining: 0 });
  });
});
