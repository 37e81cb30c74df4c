/**
 * Fleet-wide quotas, the granting side (`quotas.leases`, `POST /api/v1/quotas/leases`): the platform keeps one counter
 * per (organisation, policy, limit, scope key, window) and hands out leases, slices of what a limit has left, that
 * governing processes spend locally and report on. Every call runs in ONE transaction that locks the counters it
 * touches (`SELECT … FOR UPDATE`, in key order, so two calls never deadlock): two replicas of this service, or two
 * calls of one, never grant the same quota twice. Source: docs/api.md (Quotas); docs/decisions.md (Leases, not a check
 * per action).
 */
import {
  LEASE_STATUSES,
  RUN_BUDGET_LIMIT,
  SESSION_BUDGET_LIMIT,
  quotaLeaseGraceMs,
  quotaUnitOf,
  type Lease,
  type LeaseAcquire,
  type LeaseAnswer,
  type LeaseRequest,
  type Policy,
  type QuotaUnit,
} from '@agp/contracts';
import type { Sql, SqlExecutor } from '@agp/eventstore';
import { leaseSlice, quotaLimitOf, quotaWindow } from '@agp/policy-engine';
import { ConflictError, NotFoundError, ValidationError, newId, type FieldError } from '@agp/runtime';

/** A counter's identity within an organisation: policy, limit name, scope key and window start (ms; 0 = no window). */
export interface CounterKey {
  policy_id: string;
  limit: string;
  scope_key: string;
  window_start: number;
}

/** Where a lease stands ({@link LEASE_STATUSES}). */
type LeaseStatus = (typeof LEASE_STATUSES)[number];

/** A USD counter whose `spent` a call moved up: the counter, its limit and window end, and `spent` before and after. */
export interface SpendChange {
  key: CounterKey;
  window_end: number | null;
  limit_value: number;
  from: number;
  to: number;
}

/**
 * Called inside a call's transaction, after its counters are written, with the USD counters whose spend rose (the
 * `budget.threshold` alerts, ../alerts/budget.ts); what it writes commits or rolls back with the call. `at`: ms.
 */
export type SpendHook = (tx: SqlExecutor, org: string, changes: SpendChange[], at: number) => Promise<void>;

/** What the quota functions are built with: the policies service's database and the lease TTL (ms). */
export interface QuotaDeps {
  db: Sql;
  /** How long a lease lasts without renewal, ms (`AGP_QUOTA_LEASE_TTL_MS`). */
  ttlMs: number;
  /** Lease items between two vacuums of the quota tables (`AGP_QUOTA_VACUUM_EVERY_ITEMS`; 0 never). @default {@link QUOTA_VACUUM_EVERY_ITEMS} */
  vacuumEveryItems?: number;
  /** Told of every rise of a USD counter's spend, in the same transaction ({@link SpendHook}); none: nobody. */
  onSpend?: SpendHook;
}

/** One grant to make: the counter, its window end (ms, null = none), unit, the policy's current value, the need. */
export interface GrantTarget {
  key: CounterKey;
  window_end: number | null;
  unit: QuotaUnit;
  limit_value: number;
  need: number;
}

/** A counter as locked in a call, with its state changing in memory until written back. */
interface CounterState {
  /** The locked row's `ctid`: it stays the row's until this batch writes it (nobody else can while it is locked). */
  row_id: string;
  key: CounterKey;
  window_end: number | null;
  unit: QuotaUnit;
  limit_value: number;
  committed: number;
  spent: number;
  overshoot: number;
}

/** A lease as read in a call; `dirty` ones are written back. */
interface LeaseState {
  lease_id: string;
  holder: string;
  key: CounterKey;
  /** {@link counterId} of `key`. */
  cid: string;
  held: number;
  spent: number;
  seq: number;
  status: LeaseStatus;
  expires_ms: number;
  dirty: boolean;
}

/** Each statement of a grant is prepared once per connection (its text never changes). */
const PREPARED = { prepare: true };
/** Slack when comparing USD amounts (float sums land a few 1e-17 off), the engine's tolerance. */
const TOLERANCE = 1e-9;
/** An amount without float noise: 10 decimals (well below a micro-dollar), so sums of cents stay exact. */
const clean = (x: number) => Number(x.toFixed(10));
/** A counter key as one string (map key, sort key). */
export const counterId = (k: CounterKey) => JSON.stringify([k.policy_id, k.limit, k.scope_key, k.window_start]);
const byKey = (a: CounterKey, b: CounterKey) =>
  a.policy_id < b.policy_id ? -1 : a.policy_id > b.policy_id ? 1 : a.limit < b.limit ? -1 : a.limit > b.limit ? 1 : a.scope_key < b.scope_key ? -1 : a.scope_key > b.scope_key ? 1 : a.window_start - b.window_start;
/** Counter keys as the `jsonb_to_recordset(… AS k(pid text, lim text, sk text, ws bigint))` parameter. */
export const keysJson = (keys: CounterKey[]) => JSON.stringify(keys.map((k) => ({ pid: k.policy_id, lim: k.limit, sk: k.scope_key, ws: k.window_start })));
/** The recordset of {@link keysJson} bound as `$2`, aliased `k`, in the order given (`k.ord`). */
const KEYS_RECORDSET = 'ROWS FROM (jsonb_to_recordset($2::jsonb) AS (pid text, lim text, sk text, ws bigint)) WITH ORDINALITY AS k(pid, lim, sk, ws, ord)';
/** The condition that table alias `t`'s row is the counter (or of the counter) of key row `k`. */
const KEY_MATCH = (t: string) => `${t}.policy_id = k.pid AND ${t}.limit_name = k.lim AND ${t}.scope_key = k.sk AND ${t}.window_start = k.ws`;
/**
 * `FROM` the keys of {@link keysJson} (bound as `$2`, the organisation as `$1`), each joined to the rows of `table`
 * (alias `t`) of its counter that meet `where` (more conditions, or ''), with `tail` (e.g. `FOR UPDATE`) inside.
 * The rows are found per key through an index (a LATERAL subquery, kept from being flattened into a join by its
 * `FOR UPDATE` or an `OFFSET 0`: the primary key of `agp_quota_counters`, the partial index of the active leases of `agp_quota_leases`)
 * whatever the planner's statistics say, so a call costs the same however many counters and leases the organisation
 * has; a plain join, planned while the tables had no statistics, hashed every row of the organisation.
 * Rows come in the keys' order, each with its `row_ctid` (the row version's `ctid`).
 */
export const rowsByKeys = (table: string, t: string, where = '', tail = '') =>
  `${KEYS_RECORDSET} CROSS JOIN LATERAL (SELECT ${t}.ctid AS row_ctid, ${t}.* FROM ${table} ${t} WHERE ${t}.organization_id = $1 AND ${KEY_MATCH(t)} ${where} ${tail || 'OFFSET 0'}) ${t}`;

/**
 * Where a policy's limit counts for an action: the counter key (the scope key the limit's scope picks: the run, the
 * session, the agent or the organisation; the window holding `now`), its window end, unit and the policy's value; or
 * undefined when the policy has no such fleet-counted limit, or the id its scope needs is not given. Pure.
 */
export function grantTarget(org: string, p: Policy, limit: string, ids: { agent_id: string; session_id?: string | null; run_id?: string | null }, now: number): Omit<GrantTarget, 'need'> | undefined {
  const lim = quotaLimitOf(p, limit);
  const window = quotaWindow(p, limit, now);
  if (lim === undefined || window === undefined) return undefined;
  const scopeKey = lim.scope === 'run' ? ids.run_id : lim.scope === 'session' ? ids.session_id : lim.scope === 'agent' ? ids.agent_id : org;
  if (!scopeKey) return undefined;
  return { key: { policy_id: p.id, limit, scope_key: scopeKey, window_start: window?.start ?? 0 }, window_end: window?.end ?? null, unit: lim.unit, limit_value: lim.value };
}

/** Whether policy `p` (the organisation's, read with its defaults) governs agent `agentId` now: enabled and in scope. */
const governs = (p: Policy | undefined, agentId: string): p is Policy => p !== undefined && p.enabled && (p.agent_ids.length === 0 || p.agent_ids.includes(agentId));

/** The plan of one call, validated before anything is written. */
interface CallPlan {
  /** Reports, in request order, each with the counter of its lease. */
  reports: Array<{ lease_id: string; key: CounterKey; seq: number; spent: number; release: boolean }>;
  /** Grants, in request order; `retire` instead: the holder's leases of a limit that no longer exists, to release. */
  acquires: Array<{ target: GrantTarget } | { retire: Array<{ lease_id: string; key: CounterKey }>; policy_id: string; limit: string; need: number }>;
}

/** Raised inside a reserving transaction when a need cannot be granted whole: the transaction rolls back. */
export class QuotaNotGranted extends Error {
  constructor(readonly target: GrantTarget) {
    super(`${target.key.limit} of policy ${target.key.policy_id} has less than ${target.need} left`);
  }
}

/**
 * The plan of one `quotas.leases` call, validated against what is stored before anything is written.
 * @param policies the organisation's policies named by the acquire items (with `withPolicyDefaults`), by id.
 * @param reportLeases the organisation's leases named by the report items, by id (others' ids absent).
 * @param now the decision time, ms since the Unix epoch.
 * @throws ValidationError (422) naming each acquire item whose limit needs a `session_id` / `run_id` not given;
 *   NotFoundError (404) naming the item (`body.acquire.<i>.policy_id` / `.limit`, `body.report.<i>.lease_id`) for a
 *   policy that is not the organisation's, is disabled, does not govern the agent or has no such fleet-counted limit,
 *   or a lease id that is not the organisation's; ConflictError (409) for a report on another holder's lease, or on a
 *   released lease (a report whose `seq` was already applied is a replay and changes nothing).
 */
async function planCall(db: SqlExecutor, org: string, policies: ReadonlyMap<string, Policy>, reportLeases: ReadonlyMap<string, LeaseState>, req: LeaseRequest, now: number): Promise<CallPlan> {
  assertAcquireIds(req);
  const plan: CallPlan = { reports: [], acquires: [] };
  req.report.forEach((r, i) => {
    const lease = reportLeases.get(r.lease_id);
    if (!lease) throw new NotFoundError(`body.report.${i}.lease_id: lease ${r.lease_id} not found`);
    if (lease.holder !== req.holder) throw new ConflictError(`body.report.${i}.lease_id: lease ${r.lease_id} belongs to another holder`);
    // A released lease takes no more reports; an expired one still does (what its holder admitted before it lapsed
    // is counted, past what the counter still reserved for it if need be).
    if (r.seq > lease.seq && lease.status === 'released') throw new ConflictError(`body.report.${i}.lease_id: lease ${r.lease_id} has been released; acquire a new one`);
    plan.reports.push({ lease_id: r.lease_id, key: lease.key, seq: r.seq, spent: r.spent, release: r.release });
  });
  for (const [i, a] of req.acquire.entries()) {
    const p = policies.get(a.policy_id);
    const target = governs(p, a.agent_id) ? grantTarget(org, p, a.limit, a, now) : undefined;
    if (target) {
      plan.acquires.push({ target: { ...target, need: a.need } });
      continue;
    }
    const retire = await holderLeasesOf(db, org, req.holder, a);
    if (retire.length === 0) {
      if (!governs(p, a.agent_id)) throw new NotFoundError(`body.acquire.${i}.policy_id: policy ${a.policy_id} not found, disabled, or not governing agent ${a.agent_id}`);
      throw new NotFoundError(`body.acquire.${i}.limit: policy ${a.policy_id} has no fleet-counted limit ${a.limit}`);
    }
    plan.acquires.push({ retire, policy_id: a.policy_id, limit: a.limit, need: a.need });
  }
  return plan;
}

/** @throws ValidationError (422) naming each acquire item whose limit needs a `session_id` / `run_id` not given. */
function assertAcquireIds(req: LeaseRequest): void {
  const errors: FieldError[] = [];
  req.acquire.forEach((a, i) => {
    if (a.limit === RUN_BUDGET_LIMIT && !a.run_id) errors.push({ path: `body.acquire.${i}.run_id`, message: 'run_budget counts per run: give the run_id' });
    if (a.limit === SESSION_BUDGET_LIMIT && !a.session_id) errors.push({ path: `body.acquire.${i}.session_id`, message: 'session_budget counts per session: give the session_id' });
  });
  if (errors.length) throw new ValidationError('an acquire item lacks the id its limit counts by', errors);
}

/** The policies of `ids` of an organisation (with `withPolicyDefaults`), by id: how the granter reads them. */
export type PolicyLookup = (org: string, ids: readonly string[]) => Promise<ReadonlyMap<string, Policy>>;

/** A `quotas.leases` call waiting for its batch. */
interface PendingCall {
  req: LeaseRequest;
  resolve: (answer: LeaseAnswer) => void;
  reject: (err: unknown) => void;
}

/** The most calls one batch applies (one transaction); more wait for the next batch. */
const MAX_BATCH = 256;

/**
 * Lease items applied (acquire and report items: each writes at most one lease row version) after which the granter
 * vacuums its two tables itself. Every grant leaves a dead row version behind (a lease's status changes once, out of
 * the partial index of the active ones), and a shared counter's lookups walk its dead index entries until a vacuum
 * removes them: without one, PostgreSQL's CPU per grant climbed from ~60 µs to over 1 ms as the tables grew
 * (docs/performance.md, `pnpm bench quotas`). Autovacuum may be off, or, on its default thresholds (a fifth of a
 * table), reach a large leases table rarely; PGlite has none. Source: docs/decisions.md (The granter vacuums its tables).
 */
export const QUOTA_VACUUM_EVERY_ITEMS = 20_000;
/** What the granter runs every `vacuumEveryItems` items: it blocks no grant (no `FULL`), skips a locked table. */
const QUOTA_VACUUM = 'VACUUM (SKIP_LOCKED) agp_quota_leases, agp_quota_counters';

/**
 * `POST /api/v1/quotas/leases` (`quotas.leases`), coalesced: the calls of an organisation that arrive while one of
 * its batches is being applied wait, and are then applied together as the next batch, in ONE transaction: one read
 * of their policies and reported leases, one `INSERT` of the counters they need, one `SELECT … FOR UPDATE` of every
 * counter they touch (in key order, so batches of two replicas never deadlock), one reclaim-and-read of those
 * counters' leases, the calls applied one after another in memory (each as if alone, in arrival order), one write
 * back, one commit. Round trips, and the time a counter's row lock is held, are paid per batch rather than per call;
 * a counter shared by many holders is no longer serialised call by call. A call refused while its batch is applied
 * (a 409 found under the lock) leaves the batch's state as it was before it, and the others proceed. Every call of a
 * batch is decided at the batch's time. Source: docs/api.md (Quotas); docs/decisions.md (Coalesced grants).
 */
export class LeaseGranter {
  /** Calls waiting for the next batch, by organisation. */
  private readonly waiting = new Map<string, PendingCall[]>();
  /** Lease items applied since the last vacuum was started (`deps.vacuumEveryItems`). */
  private sinceVacuum = 0;
  /** The vacuum running now, if one is. */
  private vacuuming?: Promise<void>;

  /**
   * @param deps the database and the lease TTL.
   * @param policiesOf reads the organisation's policies (the batch's acquire items name them).
   * @param clock the decision time, ms since the Unix epoch.
   * @param onVacuumError told when the tables' vacuum fails (it is tried again after as many items more).
   */
  constructor(
    private readonly deps: QuotaDeps,
    private readonly policiesOf: PolicyLookup,
    private readonly clock: () => number,
    private readonly onVacuumError: (err: unknown) => void = () => {},
  ) {}

  /** Resolves once no vacuum of the quota tables is running (call before the database is closed). */
  async idle(): Promise<void> {
    await this.vacuuming;
  }

  /** Count `items` lease items applied; past `deps.vacuumEveryItems`, start a vacuum off the grant path (not awaited). */
  private applied(items: number): void {
    const every = this.deps.vacuumEveryItems ?? QUOTA_VACUUM_EVERY_ITEMS;
    this.sinceVacuum += items;
    if (every === 0 || this.sinceVacuum < every || this.vacuuming) return;
    this.sinceVacuum = 0;
    this.vacuuming = this.deps.db
      .query(QUOTA_VACUUM)
      .then(
        () => undefined,
        (err: unknown) => this.onVacuumError(err),
      )
      .finally(() => {
        this.vacuuming = undefined;
      });
  }

  /**
   * Apply the reports, then the acquisitions, of one holder's call (in a batch, see the class).
   * @throws as {@link planCall} (422, 404, 409: nothing written for the call), and what the database throws.
   */
  lease(org: string, req: LeaseRequest): Promise<LeaseAnswer> {
    assertAcquireIds(req);
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(org);
      if (queue) queue.push({ req, resolve, reject });
      else {
        this.waiting.set(org, [{ req, resolve, reject }]);
        void this.drain(org);
      }
    });
  }

  /** Apply the organisation's waiting calls, batch after batch, until none waits. */
  private async drain(org: string): Promise<void> {
    const queue = this.waiting.get(org)!;
    while (queue.length > 0) await this.apply(org, queue.splice(0, MAX_BATCH));
    this.waiting.delete(org);
  }

  /** Plan and apply one batch; settles each of its calls, never throws. */
  private async apply(org: string, batch: PendingCall[]): Promise<void> {
    const planned: Array<{ call: PendingCall; plan: CallPlan }> = [];
    try {
      const now = this.clock();
      const policies = await this.policiesOf(org, [...new Set(batch.flatMap((c) => c.req.acquire.map((a) => a.policy_id)))]);
      const reportLeases = await leasesById(this.deps.db, org, [...new Set(batch.flatMap((c) => c.req.report.map((r) => r.lease_id)))]);
      for (const call of batch) {
        try {
          planned.push({ call, plan: await planCall(this.deps.db, org, policies, reportLeases, call.req, now) });
        } catch (err) {
          call.reject(err);
        }
      }
      if (planned.length === 0) return;
      const calls = planned.map((p) => ({ holder: p.call.req.holder, plan: p.plan }));
      const settled = await this.deps.db.transaction((tx) => applyCalls(tx, org, calls, now, this.deps.ttlMs, false, this.deps.onSpend));
      settled.forEach((s, i) => ('answer' in s ? planned[i].call.resolve(s.answer) : planned[i].call.reject(s.error)));
      this.applied(planned.reduce((n, p) => n + p.call.req.acquire.length + p.call.req.report.length, 0));
    } catch (err) {
      for (const c of batch) c.reject(err); // settling twice is a no-op: only the calls still open get the error
    }
  }
}

/**
 * Draw exactly each target's `need` for holder `holder` as a fresh lease holding it as spent (held = spent = need):
 * it counts at once, and expires with nothing to return. All or nothing, in one transaction.
 * @returns the leases, one per target, in order.
 * @throws QuotaNotGranted when a target has less than its need left (nothing is drawn).
 */
export async function reserveQuotas(deps: QuotaDeps, org: string, holder: string, targets: GrantTarget[], now: number): Promise<Lease[]> {
  if (targets.length === 0) return [];
  const plan: CallPlan = { reports: [], acquires: targets.map((target) => ({ target })) };
  // A refusal is thrown inside the transaction: it rolls back (the counters it created too).
  const answer = await deps.db.transaction(async (tx) => {
    const [settled] = await applyCalls(tx, org, [{ holder, plan }], now, deps.ttlMs, true, deps.onSpend);
    if ('error' in settled) throw settled.error;
    return settled.answer;
  });
  return answer.leases;
}

/** The leases of `ids` of an organisation, by id (others' ids are simply absent). */
async function leasesById(db: SqlExecutor, org: string, ids: string[]): Promise<Map<string, LeaseState>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<LeaseRow>(
    `SELECT ${leaseColumns('l')} FROM unnest($2::text[]) AS i(id) CROSS JOIN LATERAL (SELECT * FROM agp_quota_leases l WHERE l.lease_id = i.id AND l.organization_id = $1 OFFSET 0) l`,
    [org, ids],
    PREPARED,
  );
  return new Map(rows.map((r) => [r.lease_id, leaseOf(r)]));
}

/** The holder's active leases of a policy's limit, whatever their scope key and window (to release when the limit is gone). */
async function holderLeasesOf(db: SqlExecutor, org: string, holder: string, a: LeaseAcquire): Promise<Array<{ lease_id: string; key: CounterKey }>> {
  const { rows } = await db.query<LeaseRow>(
    `SELECT ${leaseColumns('l')} FROM agp_quota_leases l WHERE l.organization_id = $1 AND l.holder = $2 AND l.policy_id = $3 AND l.limit_name = $4 AND l.status = 'active'
       AND l.scope_key = ANY($5::text[])`,
    [org, holder, a.policy_id, a.limit, [a.agent_id, org, a.session_id ?? '', a.run_id ?? ''].filter(Boolean)],
  );
  return rows.map((r) => ({ lease_id: r.lease_id, key: leaseOf(r).key }));
}

/** The lease columns as {@link LeaseRow} reads them, of table alias `t` (numbers as text: `numeric` and `bigint` exactly). */
const leaseColumns = (t: string) =>
  `${t}.lease_id, ${t}.holder, ${t}.policy_id, ${t}.limit_name, ${t}.scope_key, ${t}.window_start::text AS window_start, ${t}.held::text AS held, ${t}.spent::text AS spent, ${t}.seq::text AS seq, ${t}.status, ${t}.expires_ms::text AS expires_ms`;
interface LeaseRow {
  lease_id: string;
  holder: string;
  policy_id: string;
  limit_name: string;
  scope_key: string;
  window_start: string;
  held: string;
  spent: string;
  seq: string;
  status: LeaseStatus;
  expires_ms: string;
}
const leaseOf = (r: LeaseRow): LeaseState => {
  const key = { policy_id: r.policy_id, limit: r.limit_name, scope_key: r.scope_key, window_start: Number(r.window_start) };
  return {
    lease_id: r.lease_id,
    holder: r.holder,
    key,
    cid: counterId(key),
    held: Number(r.held),
    spent: Number(r.spent),
    seq: Number(r.seq),
    status: r.status,
    expires_ms: Number(r.expires_ms),
    dirty: false,
  };
};

/** A counter's amounts as one comparable string. */
const stateOf = (c: CounterState) => `${c.limit_value}/${c.committed}/${c.spent}/${c.overshoot}`;

/** A call of a batch as {@link applyCalls} takes it: its holder and validated plan. */
interface BatchCall {
  holder: string;
  plan: CallPlan;
}

/** How a call of a batch ended: its answer, or the 409 it was refused with before it changed anything. */
type Settled = { answer: LeaseAnswer } | { error: unknown };

/** The counters and leases a batch has locked and read, changing in memory until written back. */
interface BatchState {
  counters: Map<string, CounterState>;
  leases: Map<string, LeaseState>;
}

/**
 * The calls of one batch in one transaction:
 * 1. create the counters the grants need (`INSERT … ON CONFLICT DO NOTHING`, in key order);
 * 2. lock every counter the calls touch (`SELECT … FOR UPDATE`, key by key in key order);
 * 3. reclaim their active leases expired longer ago than the grace (`quotaLeaseGraceMs`: status `expired`; their
 *    unspent `held − spent` leaves `committed`) and read
 *    their active leases (and the reported ones), in one statement;
 * 4. apply each call's reports, then its grants, in memory, one call after another ({@link applyInMemory}); a call
 *    whose report finds its lease ended under the lock is refused before it changes anything, and settled with its 409
 *    (any other error, and every refusal when `exact`, fails the transaction);
 * 5. write the changed counters and leases back in one statement;
 * 6. tell `onSpend` of the USD counters whose spend rose.
 * @returns one {@link Settled} per call, in order.
 */
async function applyCalls(tx: SqlExecutor, org: string, calls: BatchCall[], now: number, ttlMs: number, exact: boolean, onSpend?: SpendHook): Promise<Settled[]> {
  const at = new Date(now).toISOString();
  const targets = calls.flatMap((c) => c.plan.acquires.flatMap((a) => ('target' in a ? [a.target] : [])));
  const reports = calls.flatMap((c) => c.plan.reports);
  const newCounters = new Map(targets.map((t) => [counterId(t.key), t]));
  const touched = new Map<string, CounterKey>();
  for (const t of targets) touched.set(counterId(t.key), t.key);
  for (const r of reports) touched.set(counterId(r.key), r.key);
  for (const c of calls) for (const a of c.plan.acquires) if ('retire' in a) for (const l of a.retire) touched.set(counterId(l.key), l.key);
  const keys = [...touched.values()].sort(byKey);

  if (newCounters.size) {
    const fresh = [...newCounters.values()].sort((a, b) => byKey(a.key, b.key));
    await tx.query(
      `INSERT INTO agp_quota_counters (organization_id, policy_id, limit_name, scope_key, window_start, window_end, unit, limit_value, updated_at)
       SELECT $1, k.pid, k.lim, k.sk, k.ws, k.we, k.u, k.v, $3::timestamptz FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS (pid text, lim text, sk text, ws bigint, we bigint, u text, v numeric)) WITH ORDINALITY AS k(pid, lim, sk, ws, we, u, v, i)
       ORDER BY k.i
       ON CONFLICT DO NOTHING`,
      [org, JSON.stringify(fresh.map((t) => ({ pid: t.key.policy_id, lim: t.key.limit, sk: t.key.scope_key, ws: t.key.window_start, we: t.window_end, u: t.unit, v: t.limit_value }))), at],
      PREPARED,
    );
  }
  const { rows: locked } = await tx.query<{ row_id: string; policy_id: string; limit_name: string; scope_key: string; window_start: string; window_end: string | null; unit: QuotaUnit; limit_value: string; committed: string; spent: string; overshoot: string }>(
    `SELECT c.row_ctid::text AS row_id, c.policy_id, c.limit_name, c.scope_key, c.window_start::text AS window_start, c.window_end::text AS window_end, c.unit,
            c.limit_value::text AS limit_value, c.committed::text AS committed, c.spent::text AS spent, c.overshoot::text AS overshoot
       FROM ${rowsByKeys('agp_quota_counters', 'c', '', 'FOR UPDATE')}
      ORDER BY k.ord`,
    [org, keysJson(keys)],
    PREPARED,
  );
  const counters = new Map<string, CounterState>();
  for (const r of locked) {
    const key = { policy_id: r.policy_id, limit: r.limit_name, scope_key: r.scope_key, window_start: Number(r.window_start) };
    counters.set(counterId(key), { row_id: r.row_id, key, window_end: r.window_end === null ? null : Number(r.window_end), unit: r.unit, limit_value: Number(r.limit_value), committed: Number(r.committed), spent: Number(r.spent), overshoot: Number(r.overshoot) });
  }
  // What each counter held when locked: only the counters this call changes are written (and their updated_at moved).
  const before = new Map([...counters].map(([id, c]) => [id, stateOf(c)]));
  const spentBefore = new Map([...counters].map(([id, c]) => [id, c.spent]));
  // Reclaim and read in one statement: the read sees the rows as they were before the reclaim (one snapshot), so a
  // reclaimed lease is told by `reclaimed` and folded in below. No one else changes these leases: the counters are locked.
  const { rows: leaseRows } = await tx.query<LeaseRow & { reclaimed: boolean }>(
    `WITH reclaimed AS (
       UPDATE agp_quota_leases u SET status = 'expired', updated_at = $5::timestamptz
        WHERE u.lease_id = ANY(ARRAY(SELECT l.lease_id FROM ${rowsByKeys('agp_quota_leases', 'l', "AND l.status = 'active' AND l.expires_ms <= $4")}))
       RETURNING u.lease_id)
     SELECT ${leaseColumns('l')}, l.lease_id IN (SELECT lease_id FROM reclaimed) AS reclaimed
       FROM ${rowsByKeys('agp_quota_leases', 'l', "AND l.status = 'active'")}
     UNION SELECT ${leaseColumns('r')}, false FROM unnest($3::text[]) AS i(id)
       CROSS JOIN LATERAL (SELECT * FROM agp_quota_leases r WHERE r.lease_id = i.id AND r.organization_id = $1 AND r.status <> 'active' OFFSET 0) r`,
    [org, keysJson(keys), [...new Set(reports.map((r) => r.lease_id))], now - quotaLeaseGraceMs(ttlMs), at],
    PREPARED,
  );
  for (const r of leaseRows) {
    if (!r.reclaimed) continue;
    r.status = 'expired';
    const c = counters.get(counterId({ policy_id: r.policy_id, limit: r.limit_name, scope_key: r.scope_key, window_start: Number(r.window_start) }));
    if (c) c.committed = clean(c.committed - Math.max(0, Number(r.held) - Number(r.spent)));
  }
  const state: BatchState = { counters, leases: new Map(leaseRows.map((r) => [r.lease_id, leaseOf(r)])) };
  const settled = calls.map((call): Settled => {
    try {
      return { answer: applyInMemory(state, call.holder, call.plan, now, ttlMs, exact) };
    } catch (error) {
      // A report refused under the lock is refused before the call changes anything (see applyInMemory); anything
      // else (and every refusal of an exact draw, whose transaction rolls back) fails the whole transaction.
      if (exact || !(error instanceof ConflictError)) throw error;
      return { error };
    }
  });

  const dirty = [...state.leases.values()].filter((l) => l.dirty);
  const changed = [...state.counters.values()].filter((c) => stateOf(c) !== before.get(counterId(c.key)));
  if (dirty.length === 0 && changed.length === 0) return settled;

  await tx.query(
    `WITH c AS (
       UPDATE agp_quota_counters c SET limit_value = x.v, committed = x.c, spent = x.sp, overshoot = x.o, updated_at = $3::timestamptz
         FROM jsonb_to_recordset($2::jsonb) AS x(t tid, pid text, lim text, sk text, ws bigint, v numeric, c numeric, sp numeric, o numeric)
        WHERE c.ctid = ANY($5::tid[]) AND c.ctid = x.t
          AND c.organization_id = $1 AND c.policy_id = x.pid AND c.limit_name = x.lim AND c.scope_key = x.sk AND c.window_start = x.ws
       RETURNING 1)
     INSERT INTO agp_quota_leases (lease_id, organization_id, holder, policy_id, limit_name, scope_key, window_start, held, spent, seq, status, expires_ms, created_at, updated_at)
     SELECT y.id, $1, y.h, y.pid, y.lim, y.sk, y.ws, y.held, y.spent, y.seq, y.st, y.exp, $3::timestamptz, $3::timestamptz
       FROM jsonb_to_recordset($4::jsonb) AS y(id text, h text, pid text, lim text, sk text, ws bigint, held numeric, spent numeric, seq bigint, st text, exp bigint)
     ON CONFLICT (lease_id) DO UPDATE SET held = excluded.held, spent = excluded.spent, seq = excluded.seq, status = excluded.status, expires_ms = excluded.expires_ms, updated_at = excluded.updated_at
       WHERE agp_quota_leases.organization_id = excluded.organization_id`,
    [
      org,
      JSON.stringify(changed.map((c) => ({ t: c.row_id, pid: c.key.policy_id, lim: c.key.limit, sk: c.key.scope_key, ws: c.key.window_start, v: c.limit_value, c: c.committed, sp: c.spent, o: c.overshoot }))),
      at,
      JSON.stringify(dirty.map((l) => ({ id: l.lease_id, h: l.holder, pid: l.key.policy_id, lim: l.key.limit, sk: l.key.scope_key, ws: l.key.window_start, held: l.held, spent: l.spent, seq: l.seq, st: l.status, exp: l.expires_ms }))),
      changed.map((c) => c.row_id),
    ],
    PREPARED,
  );
  if (onSpend) {
    const rose = changed.filter((c) => c.unit === 'usd' && c.spent > (spentBefore.get(counterId(c.key)) ?? 0));
    if (rose.length) await onSpend(tx, org, rose.map((c) => ({ key: c.key, window_end: c.window_end, limit_value: c.limit_value, from: spentBefore.get(counterId(c.key)) ?? 0, to: c.spent })), now);
  }

  return settled;
}

/**
 * Refuse a call whose report finds its lease ended (released) or another holder's under the lock, before the call
 * changes anything: the reports are walked in order over what the call's own earlier reports would leave (a report
 * past a lease's `seq` moves it; one with `release` ends an active lease), so a call is refused whole or applied.
 * @throws ConflictError (409) naming the report item (`body.report.<i>.lease_id`).
 */
function assertReportsOpen(leases: ReadonlyMap<string, LeaseState>, holder: string, plan: CallPlan): void {
  const after = new Map<string, { seq: number; status: LeaseStatus }>();
  for (const [i, r] of plan.reports.entries()) {
    const l = leases.get(r.lease_id)!;
    const cur = after.get(r.lease_id) ?? { seq: l.seq, status: l.status };
    if (r.seq <= cur.seq) continue; // a replay
    if (cur.status === 'released' || l.holder !== holder) throw new ConflictError(`body.report.${i}.lease_id: lease ${l.lease_id} has ended (${cur.status}); acquire a new one`);
    after.set(r.lease_id, { seq: r.seq, status: cur.status === 'active' && r.release ? 'released' : cur.status });
  }
}

/**
 * One call applied to a batch's state in memory: its reports (a replay, `seq` not past the lease's, changes nothing),
 * then its grants ({@link leaseSlice} per grant, or exactly the need when `exact`). Marks what changed `dirty`.
 * @returns the call's answer, as of the state right after it.
 * @throws ConflictError (409) for a report on a lease that has ended or changed holder; QuotaNotGranted when `exact`
 *   and a target has less than its need left (the state may be half changed then: the transaction must roll back).
 */
function applyInMemory(state: BatchState, holder: string, plan: CallPlan, now: number, ttlMs: number, exact: boolean): LeaseAnswer {
  const { counters, leases } = state;
  const expiry = (c: CounterState) => (c.window_end === null ? now + ttlMs : Math.min(now + ttlMs, c.window_end));
  const counterOf = (key: CounterKey) => counters.get(counterId(key))!;
  const answered: LeaseState[] = [];
  const granted = new Map<LeaseState, number>();
  const exhausted = new Set<LeaseState>();
  const released: string[] = [];
  const retiredIds = new Set<string>();
  const end = (l: LeaseState, c: CounterState) => {
    c.committed = clean(c.committed - Math.max(0, l.held - l.spent));
    l.status = 'released';
    l.dirty = true;
    released.push(l.lease_id);
  };
  assertReportsOpen(leases, holder, plan);
  for (const r of plan.reports) {
    const l = leases.get(r.lease_id)!;
    if (r.seq <= l.seq) {
      answered.push(l); // a replay: applied before, answered as it is
      continue;
    }
    const c = counterOf(l.key);
    if (l.status === 'expired') {
      // Expired: the counter keeps only what the lease had reported spent. What the holder admitted since is counted
      // now, all of it past what the counter reserved (an overshoot, recorded); the lease stays ended.
      const delta = r.spent - l.spent;
      c.committed = clean(c.committed + delta);
      c.spent = clean(c.spent + delta);
      if (delta > 0) c.overshoot = clean(c.overshoot + delta);
      l.spent = r.spent;
      l.seq = r.seq;
      l.dirty = true;
      if (r.release) released.push(l.lease_id);
      else answered.push(l);
      continue;
    }
    c.committed = clean(c.committed + Math.max(l.held, r.spent) - Math.max(l.held, l.spent));
    c.spent = clean(c.spent + r.spent - l.spent);
    c.overshoot = clean(c.overshoot + Math.max(0, r.spent - l.held) - Math.max(0, l.spent - l.held));
    l.spent = r.spent;
    l.seq = r.seq;
    l.expires_ms = expiry(c);
    l.dirty = true;
    if (r.release) end(l, c);
    else answered.push(l);
  }
  const acquired: Array<{ lease: LeaseState; limit_value?: number }> = [];
  for (const a of plan.acquires) {
    if ('retire' in a) {
      for (const { lease_id } of a.retire) {
        const l = leases.get(lease_id);
        if (!l || l.status !== 'active' || retiredIds.has(lease_id)) continue;
        retiredIds.add(lease_id);
        end(l, counterOf(l.key));
        if (a.need > 0) exhausted.add(l);
        acquired.push({ lease: l, limit_value: 0 });
      }
      continue;
    }
    const t = a.target;
    const c = counterOf(t.key);
    c.limit_value = t.limit_value;
    const cid = counterId(t.key);
    let mine: LeaseState | undefined;
    const otherHolders = new Set<string>();
    for (const l of leases.values()) {
      if (l.status !== 'active' || l.cid !== cid) continue;
      if (l.holder !== holder) otherHolders.add(l.holder);
      else if (!exact) mine ??= l;
    }
    const others = otherHolders.size;
    const remaining = c.limit_value - c.committed;
    const amount = exact ? (t.need <= remaining + TOLERANCE ? t.need : 0) : clean(leaseSlice({ limit_value: c.limit_value, committed: c.committed, need: t.need, others, unit: c.unit }));
    if (exact && (amount < t.need || t.need <= 0)) throw new QuotaNotGranted(t);
    if (!mine) {
      mine = { lease_id: newId(), holder, key: t.key, cid: counterId(t.key), held: 0, spent: 0, seq: 0, status: 'active', expires_ms: 0, dirty: true };
      leases.set(mine.lease_id, mine);
    }
    if (amount > 0) {
      c.committed = clean(c.committed + amount);
      mine.held = clean(mine.held + amount);
      if (exact) {
        mine.spent = amount;
        c.spent = clean(c.spent + amount);
      }
    }
    granted.set(mine, clean((granted.get(mine) ?? 0) + amount));
    if ((t.need > 0 && amount === 0) || (t.need === 0 && amount === 0 && remaining <= TOLERANCE)) exhausted.add(mine);
    mine.expires_ms = expiry(c);
    mine.dirty = true;
    acquired.push({ lease: mine });
  }

  // Holders of each answered counter, counted once per counter after the call's changes.
  const holderCounts = new Map<string, number>();
  const holdersOf = (l0: LeaseState) => {
    let n = holderCounts.get(l0.cid);
    if (n === undefined) {
      const holders = new Set<string>();
      for (const l of leases.values()) if (l.status === 'active' && l.cid === l0.cid) holders.add(l.holder);
      holderCounts.set(l0.cid, (n = holders.size));
    }
    return n;
  };
  const answer = (l: LeaseState, limitValue?: number): Lease => {
    const c = counterOf(l.key);
    const value = limitValue ?? c.limit_value;
    return {
      lease_id: l.lease_id,
      policy_id: l.key.policy_id,
      limit: l.key.limit,
      unit: quotaUnitOf(l.key.limit),
      scope_key: l.key.scope_key,
      status: l.status,
      held: l.held,
      spent: l.spent,
      granted: granted.get(l) ?? 0,
      exhausted: exhausted.has(l),
      expires_at: new Date(l.expires_ms).toISOString(),
      window_start: c.window_end === null ? null : new Date(c.key.window_start).toISOString(),
      window_end: c.window_end === null ? null : new Date(c.window_end).toISOString(),
      limit_value: value,
      remaining: clean(c.limit_value - c.committed),
      holders: holdersOf(l),
    };
  };
  return { holder, leases: [...acquired.map((a) => answer(a.lease, a.limit_value)), ...answered.map((l) => answer(l))], released };
}
