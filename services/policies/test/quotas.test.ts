import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessBroker, InProcessClient, SqlIngestLog } from '@agp/bus';
import type { LeaseAcquire, LeaseAnswer, LeaseReport, QuotaCounter } from '@agp/contracts';
import { createEventStore, createPgSql, createPgliteSql, type EventStore, type Sql } from '@agp/eventstore';
import { leaseSlice } from '@agp/policy-engine';
import { AgpError, createLogger, type RequestContext } from '@agp/runtime';
import { createTestDatabase, skipIntegration } from '../../../test/support/infra.js';
import { PoliciesService } from '../src/index.js';

/**
 * Fleet-wide quota leases (docs/api.md, Quotas) through the policies service on real databases, PGlite and
 * PostgreSQL: the slice rule, two replicas racing on one counter, reports (replays ignored), release, overshoot,
 * expiry reclaimed at the next grant, forged and foreign leases, another organisation's policy, a limit lowered
 * below what is committed, and refused calls writing nothing. The clock is the service's injected one: leases expire
 * by moving it, never by sleeping.
 */
const TTL_MS = 1000;
/** The granter vacuums its tables after this many lease items (the default is 20,000): often, in these tests. */
const VACUUM_EVERY = 40;
const AGENT = 'billing-bot';
const logger = createLogger('quotas-test', 'silent');
const ctx = (org = 'acme'): RequestContext => ({ organization_id: org, scope: 'write', key_id: 'k1', correlation_id: 'c1' });

interface Platform {
  sql: Sql;
  store: EventStore;
  log: SqlIngestLog;
  service: PoliciesService;
  /** A second replica of the service, on its own connections to the same database (PostgreSQL), else the same. */
  replica: PoliciesService;
  stop(): Promise<void>;
}

/** The service's clock, ms; moved by the tests. */
let clock = Date.parse('2026-03-02T12:00:30.000Z');
const now = () => new Date(clock);

async function boot(sql: Sql, replicaSql: Sql | null, drop?: () => Promise<void>): Promise<Platform> {
  const store = createEventStore(sql);
  const log = await SqlIngestLog.create(sql);
  const deps = (db: Sql, s: EventStore) => ({ store: s, db, ingestLog: log, subjectPrefix: 'qt', bus: new InProcessClient({ broker: new InProcessBroker() }), logger, now, env: { AGP_QUOTA_LEASE_TTL_MS: TTL_MS, AGP_QUOTA_VACUUM_EVERY_ITEMS: VACUUM_EVERY } });
  const service = new PoliciesService(deps(sql, store));
  await service.start();
  const replicaStore = replicaSql ? createEventStore(replicaSql) : store;
  const replica = replicaSql ? new PoliciesService(deps(replicaSql, replicaStore)) : service;
  return {
    sql,
    store,
    log,
    service,
    replica,
    async stop() {
      await service.stop();
      await log.close();
      if (replicaSql) await replicaStore.close();
      await store.close();
      await drop?.();
    },
  };
}

/** The status and detail a refused call throws. */
async function refused(p: Promise<unknown>): Promise<{ status: number; message: string; paths: string[] }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AgpError) return { status: err.status, message: err.message, paths: 'errors' in err ? (err.errors as Array<{ path: string }>).map((e) => e.path) : [] };
    throw err;
  }
  throw new Error('expected the call to be refused');
}

function scenarios(platform: () => Platform) {
  const svc = () => platform().service;
  const policy = async (body: Record<string, unknown>, org = 'acme') => (await svc().createPolicy(ctx(org), { enabled: true, ...body } as never)).id;
  const lease = (holder: string, acquire: Array<Partial<LeaseAcquire>>, report: Array<Partial<LeaseReport>> = [], s = svc(), org = 'acme'): Promise<LeaseAnswer> =>
    s.leaseQuotas(ctx(org), {
      holder,
      acquire: acquire.map((a) => ({ agent_id: AGENT, need: 0, ...a }) as LeaseAcquire),
      report: report.map((r) => ({ release: false, ...r }) as LeaseReport),
    });
  const counters = async (policyId: string): Promise<QuotaCounter[]> => (await svc().listQuotas(ctx(), { policy_id: policyId, skip: 0, limit: 1000 })).counters;
  const counter = async (policyId: string) => {
    const all = await counters(policyId);
    expect(all).toHaveLength(1);
    return all[0];
  };
  const leaseRows = async (policyId: string) =>
    (await platform().sql.query<{ holder: string; held: string; spent: string; status: string }>('SELECT holder, held::text, spent::text, status FROM agp_quota_leases WHERE organization_id = $1 AND policy_id = $2 ORDER BY created_at, lease_id', ['acme', policyId])).rows;

  it('grants slices by the rule: 5 % of the limit, a fair share of what is left, at least the need; calls whole', async () => {
    const id = await policy({ name: 'Slices', session_budget: 10, rate_limits: { send_email: { max_calls: 50, window_seconds: 60, scope: 'agent' } } });
    const a = await lease('holder-a', [{ policy_id: id, limit: 'session_budget', session_id: 's1', need: 0.1 }]);
    // 5 % of 10 USD = 0.5, below half of what is left (10 / 2): 0.5.
    expect(a.leases[0]).toMatchObject({ granted: 0.5, held: 0.5, spent: 0, exhausted: false, status: 'active', unit: 'usd', scope_key: 's1', limit_value: 10, remaining: 9.5, holders: 1, window_start: null, window_end: null });
    expect(a.leases[0].granted).toBe(leaseSlice({ limit_value: 10, committed: 0, need: 0.1, others: 0, unit: 'usd' }));
    expect(Date.parse(a.leases[0].expires_at)).toBe(clock + TTL_MS);
    const b = await lease('holder-b', [{ policy_id: id, limit: 'session_budget', session_id: 's1' }]);
    expect(b.leases[0]).toMatchObject({ granted: 0.5, remaining: 9, holders: 2 });
    // One action needing more than a slice gets its need, whole.
    const c = await lease('holder-c', [{ policy_id: id, limit: 'session_budget', session_id: 's1', need: 2 }]);
    expect(c.leases[0]).toMatchObject({ granted: 2, held: 2, remaining: 7, holders: 3 });
    // A holder's live lease is topped up, never duplicated.
    const a2 = await lease('holder-a', [{ policy_id: id, limit: 'session_budget', session_id: 's1', need: 0.2 }]);
    expect(a2.leases[0]).toMatchObject({ lease_id: a.leases[0].lease_id, granted: 0.5, held: 1 });
    expect((await counter(id)).committed).toBe(3.5);
    // A rate limit of scope agent: floor(min(5 % × 50, 50 / 2)) = 2 calls, counted per agent in the fixed minute.
    const r = await lease('holder-a', [{ policy_id: id, limit: 'rate_limit:send_email', need: 1 }]);
    const minute = Math.floor(clock / 60_000) * 60_000;
    expect(r.leases[0]).toMatchObject({ unit: 'calls', granted: 2, scope_key: AGENT, window_start: new Date(minute).toISOString(), window_end: new Date(minute + 60_000).toISOString() });
    expect(Date.parse(r.leases[0].expires_at)).toBeLessThanOrEqual(minute + 60_000);
  });

  it('the granter vacuums its own tables every so many lease items, off the grant path (autovacuum may be off)', async () => {
    const vacuums = async () =>
      Number((await platform().sql.query<{ n: string }>("SELECT vacuum_count::text AS n FROM pg_stat_user_tables WHERE relname = 'agp_quota_leases'")).rows[0]?.n ?? 0);
    const id = await policy({ name: 'Churn', session_budget: 100 });
    const before = await vacuums();
    // Each call releases the holder's lease and acquires a new one: two lease items, and a dead row version each time.
    let held = (await lease('churner', [{ policy_id: id, limit: 'session_budget', session_id: 'churn', need: 0.01 }])).leases[0];
    for (let i = 0; i < VACUUM_EVERY; i++) {
      const answer = await lease('churner', [{ policy_id: id, limit: 'session_budget', session_id: 'churn', need: 0.01 }], [{ lease_id: held.lease_id, seq: 1, spent: 0, release: true }]);
      expect(answer.released).toEqual([held.lease_id]);
      held = answer.leases[0];
    }
    // PostgreSQL's statistics are flushed by the backend about once a second: wait for the count to move.
    const deadline = Date.now() + 10_000;
    while ((await vacuums()) <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await vacuums()).toBeGreaterThan(before);
    // The churn left one active lease and the counter holding only it.
    expect((await leaseRows(id)).filter((l) => l.status === 'active')).toHaveLength(1);
    expect((await counter(id)).committed).toBe(held.held);
  });

  it('two replicas racing 200 acquire calls on one counter never commit past the limit', async () => {
    const id = await policy({ name: 'Race', session_budget: 1 });
    const { replica } = platform();
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => lease(`racer-${i}`, [{ policy_id: id, limit: 'session_budget', session_id: 'race', need: 0.01 }], [], i % 2 ? replica : svc())),
    );
    const ms = performance.now() - started;
    const granted = answers.reduce((s, a) => s + a.leases[0].granted, 0);
    const c = await counter(id);
    expect(c.committed).toBeLessThanOrEqual(1);
    expect(Number(granted.toFixed(10))).toBe(c.committed);
    expect(answers.filter((a) => a.leases[0].granted > 0).every((a) => a.leases[0].granted >= 0.01)).toBe(true);
    // Every grant the counter holds is in a lease row.
    const held = (await leaseRows(id)).reduce((s, l) => s + Number(l.held), 0);
    expect(Number(held.toFixed(10))).toBe(c.committed);
    // The last callers find it used up.
    expect(answers.some((a) => a.leases[0].exhausted)).toBe(true);
    console.info(`[quotas] ${platform().sql.kind}: 200 acquire calls on one counter over ${platform().replica === svc() ? 'one service' : 'two replicas'} in ${ms.toFixed(0)} ms (${((200 / ms) * 1000).toFixed(0)} calls/s)`);
  });

  it('grants on distinct counters in parallel over both replicas, each by the rule', async () => {
    const id = await policy({ name: 'Many sessions', session_budget: 2 });
    const { replica } = platform();
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => lease(`p-${i}`, [{ policy_id: id, limit: 'session_budget', session_id: `s-${i}`, need: 0.01 }], [], i % 2 ? replica : svc())));
    const ms = performance.now() - started;
    // Each session has its own counter: every first grant is 5 % of 2 USD.
    expect(answers.map((a) => a.leases[0].granted)).toEqual(Array(200).fill(0.1));
    expect((await counters(id)).length).toBe(200);
    console.info(`[quotas] ${platform().sql.kind}: 200 acquire calls on 200 counters in ${ms.toFixed(0)} ms (${((200 / ms) * 1000).toFixed(0)} calls/s)`);
  });

  it('reports: spent moves committed, a replayed seq is ignored, release returns held − spent, overshoot is counted', async () => {
    const id = await policy({ name: 'Reports', session_budget: 100 });
    const a = await lease('rep', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 1 }]);
    const l = a.leases[0];
    expect(l.held).toBe(5);
    const r1 = await lease('rep', [], [{ lease_id: l.lease_id, seq: 1, spent: 2 }]);
    expect(r1.leases[0]).toMatchObject({ lease_id: l.lease_id, spent: 2, held: 5 });
    const beforeReplay = await counter(id);
    expect(beforeReplay).toMatchObject({ committed: 5, spent: 2, overshoot: 0 });
    clock += 1;
    const replay = await lease('rep', [], [{ lease_id: l.lease_id, seq: 1, spent: 4 }]);
    expect(replay.leases[0]).toMatchObject({ spent: 2 });
    expect(await counter(id)).toEqual(beforeReplay);
    // Spent past held (an actual cost above its estimate): committed follows spent, the overshoot is recorded.
    await lease('rep', [], [{ lease_id: l.lease_id, seq: 2, spent: 6.5 }]);
    expect(await counter(id)).toMatchObject({ committed: 6.5, spent: 6.5, overshoot: 1.5, remaining: 93.5 });
    // Settled back below held: the overshoot goes, committed is held again.
    await lease('rep', [], [{ lease_id: l.lease_id, seq: 3, spent: 3 }]);
    expect(await counter(id)).toMatchObject({ committed: 5, spent: 3, overshoot: 0 });
    const rel = await lease('rep', [], [{ lease_id: l.lease_id, seq: 4, spent: 3.25, release: true }]);
    expect(rel).toEqual({ holder: 'rep', leases: [], released: [l.lease_id] });
    expect(await counter(id)).toMatchObject({ committed: 3.25, spent: 3.25, holders: 0 });
    // A replayed release returns nothing more; a new report on the released lease is a conflict.
    const again = await lease('rep', [], [{ lease_id: l.lease_id, seq: 4, spent: 0, release: true }]);
    expect(again.released).toEqual([]);
    expect(again.leases[0]).toMatchObject({ status: 'released', spent: 3.25 });
    expect((await refused(lease('rep', [], [{ lease_id: l.lease_id, seq: 5, spent: 0 }]))).status).toBe(409);
    expect((await counter(id)).committed).toBe(3.25);
  });

  it('a report that arrives after its lease expired, within the grace, is counted with no overshoot, even after another holder was granted', async () => {
    const id = await policy({ name: 'Grace', session_budget: 20 });
    const a = await lease('slow', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.5 }]);
    clock += TTL_MS + 1; // past the expiry, within the grace (half a TTL)
    expect(await counter(id)).toMatchObject({ committed: 1, holders: 0 });
    const b = await lease('other', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }]);
    expect(b.leases[0]).toMatchObject({ granted: 1, remaining: 18 });
    expect((await leaseRows(id)).map((l) => [l.holder, l.status])).toEqual([
      ['slow', 'active'],
      ['other', 'active'],
    ]);
    const late = await lease('slow', [], [{ lease_id: a.leases[0].lease_id, seq: 1, spent: 1, release: true }]);
    expect(late.released).toEqual([a.leases[0].lease_id]);
    expect(await counter(id)).toMatchObject({ committed: 2, spent: 1, overshoot: 0 });
  });

  it('an unrenewed lease expires: past the grace it lists as returned, and is reclaimed at the next grant; its holder\'s later report is counted as overshoot', async () => {
    const id = await policy({ name: 'Expiry', session_budget: 20 });
    const a = await lease('crashed', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.5 }]);
    await lease('crashed', [], [{ lease_id: a.leases[0].lease_id, seq: 1, spent: 0.25 }]);
    expect(await counter(id)).toMatchObject({ committed: 1, holders: 1 });
    clock += TTL_MS + 1;
    // Past the expiry, within the grace: still reserved (the holder no longer counts as live).
    expect(await counter(id)).toMatchObject({ committed: 1, holders: 0, spent: 0.25 });
    clock += TTL_MS / 2;
    // Past the grace, read before any grant: the unspent 0.75 already counts as returned, the holder as gone.
    expect(await counter(id)).toMatchObject({ committed: 0.25, holders: 0, spent: 0.25 });
    const b = await lease('survivor', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }]);
    expect(b.leases[0]).toMatchObject({ granted: 1, holders: 1, remaining: 18.75 });
    expect((await leaseRows(id)).map((l) => [l.holder, l.status])).toEqual([
      ['crashed', 'expired'],
      ['survivor', 'active'],
    ]);
    expect(await counter(id)).toMatchObject({ committed: 1.25 });
    // Its holder's late report (what it admitted before the lease lapsed) is still counted, as overshoot; the lease
    // stays expired, and a replay of the report changes nothing.
    const late = await lease('crashed', [], [{ lease_id: a.leases[0].lease_id, seq: 2, spent: 0.5, release: true }]);
    expect(late.released).toEqual([a.leases[0].lease_id]);
    expect(await counter(id)).toMatchObject({ committed: 1.5, spent: 0.5, overshoot: 0.25 });
    await lease('crashed', [], [{ lease_id: a.leases[0].lease_id, seq: 2, spent: 0.5, release: true }]);
    expect(await counter(id)).toMatchObject({ committed: 1.5, spent: 0.5, overshoot: 0.25 });
    expect((await leaseRows(id)).map((l) => [l.holder, l.status, l.spent])).toEqual([
      ['crashed', 'expired', '0.5'],
      ['survivor', 'active', '0'],
    ]);
  });

  it('refuses forged and foreign leases, another organisation’s policy, missing ids: 404 / 409 / 422, nothing written', async () => {
    const id = await policy({ name: 'Guarded', session_budget: 10, run_budget: 3 });
    const mine = await lease('owner', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }]);
    const before = await counter(id);
    const rows = await leaseRows(id);
    const forged = await refused(lease('owner', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }], [{ lease_id: '0190d2a4-0000-7000-8000-000000000000', seq: 1, spent: 0, release: true }]));
    expect(forged).toMatchObject({ status: 404 });
    expect(forged.message).toContain('body.report.0.lease_id');
    const theirs = await refused(lease('thief', [], [{ lease_id: mine.leases[0].lease_id, seq: 9, spent: 0, release: true }]));
    expect(theirs.status).toBe(409);
    expect(theirs.message).toContain('body.report.0.lease_id');
    const foreign = await refused(lease('globex-holder', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }], [], svc(), 'globex'));
    expect(foreign.status).toBe(404);
    expect(foreign.message).toContain('body.acquire.0.policy_id');
    const noLimit = await refused(lease('owner', [{ policy_id: id, limit: 'rate_limit:send_email', need: 1 }]));
    expect(noLimit.status).toBe(404);
    expect(noLimit.message).toContain('body.acquire.0.limit');
    const otherAgent = await policy({ name: 'Someone else', agent_ids: ['other-agent'], session_budget: 5 });
    expect((await refused(lease('owner', [{ policy_id: otherAgent, limit: 'session_budget', session_id: 's' }]))).status).toBe(404);
    const ids = await refused(lease('owner', [{ policy_id: id, limit: 'run_budget' }, { policy_id: id, limit: 'session_budget', need: 1 }]));
    expect(ids).toMatchObject({ status: 422, paths: ['body.acquire.0.run_id', 'body.acquire.1.session_id'] });
    expect(await counter(id)).toEqual(before);
    expect(await leaseRows(id)).toEqual(rows);
    expect((await svc().listQuotas(ctx('globex'), { skip: 0, limit: 1000 })).counters).toEqual([]);
  });

  it('calls arriving together are applied in one batch, each as if alone: one refused under the lock (409) writes nothing, the others proceed', async () => {
    const id = await policy({ name: 'Batched', session_budget: 10 });
    const l = (await lease('rep', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 1 }])).leases[0];
    expect(l.held).toBe(1);
    // The first call starts a batch at once; the three after it, sent in the same tick, wait and form the next batch.
    // Both of rep's reports find the lease active when validated; under the lock the release comes first, so the
    // second report finds it released and is refused alone.
    const [warm, release, late, other] = await Promise.allSettled([
      lease('warm', [{ policy_id: id, limit: 'session_budget', session_id: 'w', need: 0.1 }]),
      lease('rep', [], [{ lease_id: l.lease_id, seq: 1, spent: 0.25, release: true }]),
      lease('rep', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 3 }], [{ lease_id: l.lease_id, seq: 2, spent: 0.5 }]),
      lease('other', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }]),
    ]);
    expect(warm.status).toBe('fulfilled');
    expect(release).toMatchObject({ status: 'fulfilled', value: { released: [l.lease_id] } });
    expect(late.status).toBe('rejected');
    const conflict = await refused(Promise.reject((late as PromiseRejectedResult).reason));
    expect(conflict.status).toBe(409);
    expect(conflict.message).toContain('body.report.0.lease_id');
    // The refused call's grant of 3 was undone; the call after it was decided as if it had never come.
    expect(other).toMatchObject({ status: 'fulfilled', value: { leases: [{ granted: 0.5, remaining: 9.25, holders: 1 }] } });
    const s = (await counters(id)).find((c) => c.scope_key === 's')!;
    expect(s).toMatchObject({ committed: 0.75, spent: 0.25, holders: 1 });
    expect((await leaseRows(id)).filter((r) => r.holder === 'rep')).toEqual([{ holder: 'rep', held: '1', spent: '0.25', status: 'released' }]);
  });

  it('a limit lowered below what is committed: the next grant is refused (exhausted), nothing new is admitted', async () => {
    const id = await policy({ name: 'Lowered', session_budget: 10 });
    const a = await lease('h1', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }]);
    await lease('h2', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.1 }]);
    expect((await counter(id)).committed).toBe(1);
    await svc().updatePolicy(ctx(), id, null, { session_budget: 0.6 });
    const next = await lease('h3', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.01 }]);
    expect(next.leases[0]).toMatchObject({ granted: 0, held: 0, exhausted: true, limit_value: 0.6, remaining: -0.4 });
    const renewal = await lease('h1', [{ policy_id: id, limit: 'session_budget', session_id: 's' }]);
    expect(renewal.leases[0]).toMatchObject({ lease_id: a.leases[0].lease_id, granted: 0, held: 0.5, exhausted: true });
    expect(await counter(id)).toMatchObject({ committed: 1, limit_value: 0.6, remaining: -0.4 });
    // Disabled: the holder's renewal releases its lease (limit 0), what it did not spend returns.
    await svc().updatePolicy(ctx(), id, null, { enabled: false });
    const gone = await lease('h1', [{ policy_id: id, limit: 'session_budget', session_id: 's', need: 0.01 }]);
    expect(gone.released).toEqual([a.leases[0].lease_id]);
    expect(gone.leases[0]).toMatchObject({ status: 'released', limit_value: 0, exhausted: true });
    expect((await counter(id)).committed).toBe(0.5);
  });
}

describe('fleet-wide quota leases (PGlite)', () => {
  let p: Platform | undefined;
  beforeAll(async () => {
    p = await boot(await createPgliteSql(), null);
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
  });
  scenarios(() => p!);
});

describe.skipIf(skipIntegration('postgres'))('fleet-wide quota leases (PostgreSQL, two replicas)', () => {
  let p: Platform | undefined;
  beforeAll(async () => {
    const db = await createTestDatabase('agp_quotas');
    p = await boot(createPgSql(db.url), createPgSql(db.url, { applicationName: 'agp-policies-replica' }), db.drop);
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
  });
  scenarios(() => p!);
});
