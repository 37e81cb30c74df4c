/**
 * `Leases`: the governor's leases of fleet-wide limits (session, run and period budgets; rate limits of scope `agent`
 * or `organization`). The platform keeps one counter per policy, limit, scope key and window; the governor holds one
 * lease per counter it decides against, a slice of what the limit has left, and admits actions against it locally:
 * - `needsOf`: what an action needs of each fleet-wide limit (the policy engine's `quotaNeeds`, with its counter);
 *   none, without allocating, while no policy of the snapshot has such a limit;
 * - `covered` / `ensure`: whether the leases hold enough, and asking for the rest (one batched
 *   `POST /api/v1/quotas/leases` for every missing need of every waiting action), a remainder too small for a need
 *   the limit cannot grant being given back;
 * - `view`: what each lease has left, the engine's `context.quota`; `unavailable`: why a need could not be leased
 *   (the platform unreachable), for the fail mode;
 * - `consume` (synchronously after a decision that runs the action) and `settle` (the actual cost);
 * - off the allow path, a timer (every 250 ms while anything is held) reports what was spent (cumulative, with an
 *   increasing `seq`), tops up a lease under 25 % of its last slice (asking for the last action's need, so a slice is
 *   of use), renews one within 1/3 of its TTL of expiry while
 *   it was used in the last TTL, and releases one unused for 2 × TTL or whose policy limit changed;
 * - `close` releases every lease (what was not spent returns to the limit at once).
 * Source: docs/sdk.md (Fleet-wide limits).
 */
import { DEFAULT_QUOTA_LEASE_TTL_MS, type Lease, type LeaseAcquire, type LeaseAnswer, type LeaseReport, type LeaseRequest, type QuotaUnit } from '@agp/contracts';
import { fleetCounted, quotaLimitOf, quotaNeeds, quotaWindow, type QuotaNeed, type QuotaPolicy, type QuotaView } from '@agp/policy-engine';
import { AgpHttpError } from './http.js';
import type { LeaseStatus } from './status.js';

/** A policy as the leases read it: the quota fields and its name (a snapshot policy fits). */
export type LeasedPolicy = QuotaPolicy & { name: string };

/**
 * One need of an action ({@link QuotaNeed}: policy, limit, unit, scope, limit value, need in USD or calls) with the
 * counter it draws on: `scope_key` (the run or session id, the agent id, or `organization`), the window (ms since
 * the epoch; `window_start` 0 and `window_end` null for run and session budgets), the policy's name, and `key`, the
 * counter's key in this process.
 */
export interface LeaseNeed extends QuotaNeed {
  policy_name: string;
  scope_key: string;
  window_start: number;
  window_end: number | null;
  /** `policy_id` and `limit`, the key of a limit ignored until the next snapshot. */
  pair: string;
  key: string;
}

/** What {@link Leases} needs of its governor. */
export interface LeasesDeps {
  /** `POST /api/v1/quotas/leases` ({@link AgpClient.leaseQuotas}). */
  request(body: LeaseRequest): Promise<LeaseAnswer>;
  /** The snapshot's policies that apply to the agent (a new array when the snapshot changes). */
  policies(): readonly LeasedPolicy[];
  agentId: string;
  /** This process's holder id (random per governor). */
  holder: string;
  /** Where failures to reach the platform are told (once per distinct error). */
  onError(message: string): void;
  /** How often the timer reports, tops up, renews and releases, ms. @default 250 */
  intervalMs?: number;
}

/** The local state of one counter: its lease (when one is held) and what this process spent of it. */
interface Counter {
  key: string;
  policy_id: string;
  limit: string;
  unit: QuotaUnit;
  scope: QuotaNeed['scope'];
  scope_key: string;
  /** The counter's scope key as the platform names it (the organisation's id for `organization`), once answered. */
  platformScopeKey: string | null;
  ids: { agent_id: string; session_id?: string; run_id?: string };
  /** The policy's limit when the counter was first needed; a snapshot with another value ends the lease. */
  limitValue: number;
  windowEnd: number | null;
  leaseId: string | null;
  /** Quota the lease holds in total (USD or calls); 0 without a lease. */
  held: number;
  /** What this process admitted against the counter: consumed needs, settled to actual costs. */
  spent: number;
  /** `spent` as the platform last acknowledged it for the current lease. */
  reported: number;
  lastSlice: number;
  /** The need of the last action that asked or consumed (what a top-up asks for: a slice smaller is no use to it). */
  lastNeed: number;
  /** When the lease lapses (ms since the epoch), 0 without one. */
  expiresAt: number;
  ttlMs: number;
  lastUsed: number;
  /** Consumed since the last answer about it (a top-up is worth asking). */
  used: boolean;
  /** The flight that last answered about it, its error, and the ask it could not grant (exhausted). */
  flight: number;
  error: string | null;
  exhaustedAsk: number | null;
  /** When the platform last answered about it (ms since the epoch). */
  answeredAt: number;
}

/** One report item of a request: about counter `c`'s current lease, or (`c` null) a report owed on a lapsed lease. */
interface ReportItem {
  c: Counter | null;
  lease_id: string;
  seq: number;
  spent: number;
  release: boolean;
}

/** Slack when comparing USD amounts (the engine's tolerance). */
const TOLERANCE = 1e-9;
/** A lease is treated as lapsed this long before its expiry (ms; at most a tenth of its TTL): clocks of holder and platform differ a little. */
const EXPIRY_MARGIN_MS = 250;
/** Most lapsed lease ids kept to refuse an answer that names one again ({@link Leases.lapsed}). */
const LAPSED_KEPT = 1024;
/** After a failed request, how long needs not covered are answered as unavailable without asking again (ms). */
const RETRY_AFTER_MS = 1000;
/** Most items of one kind in one request (`LeaseRequestSchema`). */
const MAX_ITEMS = 100;
const NO_NEEDS: readonly LeaseNeed[] = Object.freeze([]);
/** Most actions (name, cost, run, session) whose needs are kept between calls. */
const NEEDS_CACHE_SIZE = 1024;
const TIMEOUT = Symbol('timeout');

/** Whether policy `p` has any fleet-wide limit. */
const hasFleetLimit = (p: LeasedPolicy): boolean =>
  p.run_budget !== null || p.session_budget !== null || (p.period_budgets?.length ?? 0) > 0 || Object.values(p.rate_limits).some(fleetCounted);

/** See the module docs. */
export class Leases {
  private readonly counters = new Map<string, Counter>();
  /** Counters whose lease is being released (ended, idle, window over, policy changed, closing). */
  private readonly ending = new Set<Counter>();
  /**
   * Reports owed on leases that lapsed while this process had admitted more against them than the platform
   * acknowledged: sent once (with `release`) on that lease id; the platform counts a report on an expired lease, past
   * what it still reserved if need be (an overshoot, recorded), so nothing admitted goes uncounted. Every lapsed lease
   * is owed one (with nothing more spent, it ends a lease the platform still counts as active).
   */
  private readonly owed: Array<{ leaseId: string; seq: number; spent: number }> = [];
  /**
   * The `seq` of the last report this holder sent, on any lease: every report takes the next one, so a report is never
   * taken for a replay of an earlier one, whichever lease it is about.
   */
  private seq = 0;
  /**
   * Leases that lapsed here, most recent last (at most {@link LAPSED_KEPT}): an answer that names one as active
   * (a renewal applied by the platform but answered after the lapse) is not taken up again; its owed report ends it.
   */
  private readonly lapsed = new Set<string>();
  /** Acquisitions for the next request: counter → what it needs now (0: ahead of need, a renewal). */
  private readonly asks = new Map<Counter, number>();
  /** Limits (`pair`) the platform does not know (policy gone or changed): counted per process until the next snapshot. */
  private readonly ignored = new Set<string>();
  private syncedOf: readonly LeasedPolicy[] | null = null;
  private byId = new Map<string, LeasedPolicy>();
  private fleet = false;
  /** Needs computed for this snapshot, by action, cost, run and session, until the first of their windows ends. */
  private readonly needsCache = new Map<string, { needs: readonly LeaseNeed[]; until: number }>();
  private current: Promise<number> | null = null;
  private next: Promise<number> | null = null;
  private flights = 0;
  private lastError: string | null = null;
  private downUntil = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  private readonly intervalMs: number;

  constructor(private readonly deps: LeasesDeps) {
    this.intervalMs = deps.intervalMs ?? 250;
  }

  /**
   * What action `action` with estimated cost `costUsd` (USD) of run `runId` (in session `sessionId`, or none) needs
   * of each fleet-wide limit of the snapshot's policies, in the engine's order. An empty frozen array, with no
   * allocation, while no policy has such a limit; the same array for the same action, cost, run and session until
   * the snapshot changes or a window of theirs ends (read only).
   */
  needsOf(action: string, costUsd: number, runId: string, sessionId: string | null): readonly LeaseNeed[] {
    const policies = this.deps.policies();
    if (policies !== this.syncedOf) this.sync(policies);
    if (!this.fleet || this.closed) return NO_NEEDS;
    const now = Date.now();
    const cacheKey = `${action}\n${costUsd}\n${runId}\n${sessionId ?? ''}`;
    const cached = this.needsCache.get(cacheKey);
    if (cached !== undefined && now < cached.until) return cached.needs;
    const needs = this.computeNeeds(policies, action, costUsd, runId, sessionId, now);
    let until = Infinity;
    for (const n of needs) if (n.window_end !== null && n.window_end < until) until = n.window_end;
    if (this.needsCache.size >= NEEDS_CACHE_SIZE) this.needsCache.clear();
    this.needsCache.set(cacheKey, { needs, until });
    return needs;
  }

  /** {@link needsOf} without the cache: the engine's `quotaNeeds`, each with its counter. */
  private computeNeeds(policies: readonly LeasedPolicy[], action: string, costUsd: number, runId: string, sessionId: string | null, now: number): readonly LeaseNeed[] {
    const raw = quotaNeeds(policies, this.deps.agentId, action, costUsd, { runId, sessionId });
    if (raw.length === 0) return NO_NEEDS;
    return raw.map((q) => {
      const p = this.byId.get(q.policy_id) as LeasedPolicy;
      const w = quotaWindow(p, q.limit, now);
      const scopeKey = q.scope === 'run' ? runId : q.scope === 'session' ? (sessionId as string) : q.scope === 'agent' ? this.deps.agentId : 'organization';
      const start = w ? w.start : 0;
      const pair = `${q.policy_id}\n${q.limit}`;
      return { ...q, policy_name: p.name, scope_key: scopeKey, window_start: start, window_end: w ? w.end : null, pair, key: `${pair}\n${q.scope}\n${scopeKey}\n${start}` };
    });
  }

  /** Whether the leases hold every need of `needs` now (a limit the platform does not know counts as held). */
  covered(needs: readonly LeaseNeed[]): boolean {
    const now = Date.now();
    for (const n of needs) {
      if (this.ignored.has(n.pair)) continue;
      const c = this.counters.get(n.key);
      if (c === undefined || this.left(c, now) < n.need - TOLERANCE) return false;
    }
    return true;
  }

  /**
   * Ask the platform for what the leases lack of `needs` (one batched request with every other waiting action's
   * asks), waiting at most `waitMs`. Resolves true when it is worth checking {@link covered} again (an answer came,
   * with no refusal for these needs), false when not: the wait elapsed, a need could not be granted (the limit has
   * less left than it needs), or the platform could not be reached (see {@link unavailable}). Never rejects.
   */
  async ensure(needs: readonly LeaseNeed[], waitMs: number): Promise<boolean> {
    if (this.closed || !(waitMs > 0)) return false;
    const now = Date.now();
    const mine: Array<{ c: Counter; ask: number }> = [];
    for (const n of needs) {
      if (this.ignored.has(n.pair)) continue;
      const c = this.counters.get(n.key) ?? this.create(n, now);
      const left = this.left(c, now);
      if (left >= n.need - TOLERANCE) continue;
      if (now < this.downUntil) return false;
      const ask = n.need - left;
      c.lastNeed = n.need;
      if (c.exhaustedAsk !== null && now - c.answeredAt < this.intervalMs && ask >= c.exhaustedAsk - TOLERANCE) return false;
      this.asks.set(c, Math.max(this.asks.get(c) ?? 0, ask));
      mine.push({ c, ask });
    }
    if (mine.length === 0) return true;
    const flight = await within(this.flush(), waitMs);
    if (flight === TIMEOUT) return false;
    for (const { c, ask } of mine) {
      if (c.flight === flight && (c.error !== null || (c.exhaustedAsk !== null && ask >= c.exhaustedAsk - TOLERANCE))) return false;
    }
    return true;
  }

  /**
   * Why a need of `needs` that the leases do not hold could not be asked for (the platform unreachable or failing:
   * the reason names the limit, its policy and the error), or null. The fail mode decides what then happens.
   */
  unavailable(needs: readonly LeaseNeed[]): string | null {
    const now = Date.now();
    for (const n of needs) {
      if (this.ignored.has(n.pair)) continue;
      const c = this.counters.get(n.key);
      if (c !== undefined && this.left(c, now) >= n.need - TOLERANCE) continue;
      const why = c?.error ?? (now < this.downUntil ? this.lastError : null);
      if (why !== null) return `the fleet-wide limit ${n.limit} of policy "${n.policy_name}" could not be leased: ${why}`;
    }
    return null;
  }

  /**
   * The engine's `context.quota` for an action with `needs`: for each of its limits, what the lease has left (USD or
   * calls; 0 or less when nothing is held); undefined for a limit the platform does not know, for one whose need
   * could not be asked for because the platform is unreachable (the process then counts alone), and for limits the
   * action does not count against.
   */
  view(needs: readonly LeaseNeed[]): QuotaView {
    const now = Date.now();
    return (policyId, limit) => {
      for (const n of needs) if (n.policy_id === policyId && n.limit === limit) return this.answer(n, now);
      return undefined;
    };
  }

  /** Count `needs` as spent: the action was admitted and runs. Synchronous (no await between decision and this). */
  consume(needs: readonly LeaseNeed[]): void {
    const now = Date.now();
    for (const n of needs) {
      if (this.ignored.has(n.pair)) continue;
      const c = this.counters.get(n.key);
      if (c === undefined) continue;
      c.spent += n.need;
      c.lastNeed = n.need;
      c.lastUsed = now;
      c.used = true;
    }
  }

  /**
   * Settle the budgets of `needs` to the action's actual cost: `deltaUsd` = actual − estimate (USD) is added to what
   * was spent of each budget lease. Spent may pass what the lease holds: the platform records the overshoot.
   */
  settle(needs: readonly LeaseNeed[], deltaUsd: number): void {
    if (deltaUsd === 0) return;
    for (const n of needs) {
      if (n.unit !== 'usd' || this.ignored.has(n.pair)) continue;
      const c = this.counters.get(n.key);
      if (c !== undefined) c.spent = Math.max(0, c.spent + deltaUsd);
    }
  }

  /** Run `runId` ended: release its run-budget leases now rather than after 2 × TTL unused. */
  endRun(runId: string): void {
    for (const c of this.counters.values()) if (c.scope === 'run' && c.scope_key === runId) this.end(c);
  }

  /** One row per lease held: policy, limit, scope key, held and spent (USD or calls), expiry (ISO 8601). */
  status(): LeaseStatus[] {
    const rows: LeaseStatus[] = [];
    for (const c of this.counters.values()) {
      if (c.leaseId === null) continue;
      rows.push({ policy_id: c.policy_id, limit: c.limit, scope_key: c.platformScopeKey ?? c.scope_key, held: c.held, spent: c.spent, expires_at: new Date(c.expiresAt).toISOString() });
    }
    return rows;
  }

  /**
   * Release every lease (reporting what each spent), waiting at most `timeoutMs`; best effort: a lease not released
   * in time lapses at its expiry. Later calls need nothing and ask for nothing.
   */
  async close(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stop();
    for (const c of [...this.counters.values()]) this.end(c);
    this.asks.clear();
    if ((this.ending.size > 0 || this.owed.length > 0) && timeoutMs > 0) await within(this.flush(), timeoutMs);
  }

  /** Stop the timer (the governor shuts down). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** What the lease of need `n` has left for the engine, or undefined (see {@link view}). */
  private answer(n: LeaseNeed, now: number): number | undefined {
    if (this.ignored.has(n.pair)) return undefined;
    const c = this.counters.get(n.key);
    const left = c === undefined ? 0 : this.left(c, now);
    if (left >= n.need - TOLERANCE) return left;
    const down = (c?.error ?? (now < this.downUntil ? this.lastError : null)) !== null;
    return down ? undefined : left;
  }

  /** What counter `c`'s lease has left at `now` (USD or calls); a lease past its expiry lapses first. */
  private left(c: Counter, now: number): number {
    if (c.leaseId !== null && now >= c.expiresAt - Math.min(EXPIRY_MARGIN_MS, c.ttlMs / 10)) this.lapse(c);
    return c.held - c.spent;
  }

  /**
   * Counter `c`'s lease is gone (lapsed, reclaimed, refused): a report of what it spent, releasing it, is owed on that
   * lease ({@link owed}; not when `owe` is false: the platform refused reports on it), the lease is never taken up
   * again ({@link lapsed}), and the counter starts afresh with no lease.
   */
  private lapse(c: Counter, owe = true): void {
    if (c.leaseId !== null) {
      if (owe) this.owed.push({ leaseId: c.leaseId, seq: ++this.seq, spent: c.spent });
      this.lapsed.add(c.leaseId);
      if (this.lapsed.size > LAPSED_KEPT) this.lapsed.delete(this.lapsed.values().next().value as string);
    }
    c.spent = 0;
    c.reported = 0;
    c.held = 0;
    c.leaseId = null;
    c.expiresAt = 0;
  }

  private create(n: LeaseNeed, now: number): Counter {
    const ids: Counter['ids'] = { agent_id: this.deps.agentId };
    if (n.scope === 'run') ids.run_id = n.scope_key;
    if (n.scope === 'session') ids.session_id = n.scope_key;
    const c: Counter = {
      key: n.key,
      policy_id: n.policy_id,
      limit: n.limit,
      unit: n.unit,
      scope: n.scope,
      scope_key: n.scope_key,
      platformScopeKey: null,
      ids,
      limitValue: n.limit_value,
      windowEnd: n.window_end,
      leaseId: null,
      held: 0,
      spent: 0,
      reported: 0,
      lastSlice: 0,
      lastNeed: n.need,
      expiresAt: 0,
      ttlMs: DEFAULT_QUOTA_LEASE_TTL_MS,
      lastUsed: now,
      used: false,
      flight: 0,
      error: null,
      exhaustedAsk: null,
      answeredAt: 0,
    };
    this.counters.set(n.key, c);
    if (this.timer === null && !this.closed) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.timer.unref?.();
    }
    return c;
  }

  /** Counter `c` is done: forget it; a lease it holds is released by the next request. */
  private end(c: Counter): void {
    if (this.counters.get(c.key) === c) this.counters.delete(c.key);
    this.asks.delete(c);
    if (c.leaseId !== null) this.ending.add(c);
  }

  /** A new snapshot: which policies have fleet-wide limits; end the leases whose limit changed or went. */
  private sync(policies: readonly LeasedPolicy[]): void {
    this.syncedOf = policies;
    this.ignored.clear();
    this.needsCache.clear();
    this.byId = new Map();
    this.fleet = false;
    for (const p of policies) {
      if (!hasFleetLimit(p)) continue;
      this.fleet = true;
      this.byId.set(p.id, p);
    }
    for (const c of [...this.counters.values()]) {
      const p = this.byId.get(c.policy_id);
      const limit = p === undefined || !p.enabled ? undefined : quotaLimitOf(p, c.limit);
      if (limit === undefined || limit.value !== c.limitValue) this.end(c);
    }
  }

  /** The timer: end what is over or idle, top up and renew, then send whatever changed. */
  private tick(): void {
    const policies = this.deps.policies();
    if (policies !== this.syncedOf) this.sync(policies);
    const now = Date.now();
    let changed = this.ending.size > 0 || this.asks.size > 0 || this.owed.length > 0;
    for (const c of [...this.counters.values()]) {
      const left = this.left(c, now);
      if ((c.windowEnd !== null && now >= c.windowEnd) || now - c.lastUsed > 2 * c.ttlMs) {
        this.end(c);
        changed ||= c.leaseId !== null;
        continue;
      }
      if (c.leaseId === null) {
        // Spent without a lease (admitted under failMode open while the platform was away): ask for one (at most once
        // a TTL), so it is reported and counted.
        if (c.spent > TOLERANCE && now - c.answeredAt > c.ttlMs && !this.asks.has(c)) {
          this.asks.set(c, 0);
          changed = true;
        }
        continue;
      }
      if (c.spent !== c.reported) changed = true;
      const lowWater = c.used && left < 0.25 * c.lastSlice;
      const renew = c.expiresAt - now < c.ttlMs / 3 && now - c.lastUsed < c.ttlMs;
      if ((lowWater || renew) && !this.asks.has(c)) {
        this.asks.set(c, lowWater ? c.lastNeed : 0);
        changed = true;
      }
    }
    if (this.counters.size === 0 && this.ending.size === 0 && this.owed.length === 0) this.stop();
    if (changed && this.current === null && this.next === null && now >= this.downUntil) void this.flush();
  }

  /**
   * Resolves with the number of a request that carries everything asked for until it starts (requests go one at a
   * time; callers in the same turn of the event loop share one).
   */
  private flush(): Promise<number> {
    if (this.next !== null) return this.next;
    const before = this.current;
    const run = async (): Promise<number> => {
      await (before ?? new Promise<void>((r) => setImmediate(r)));
      this.next = null;
      this.current = p;
      try {
        return await this.send();
      } catch (err) {
        this.deps.onError(`fleet-wide limits: ${err instanceof Error ? err.message : String(err)}`);
        return this.flights;
      } finally {
        if (this.current === p) this.current = null;
      }
    };
    const p = run();
    this.next = p;
    return p;
  }

  /** Send the asks, the releases and the reports of what changed (in requests of at most 100 items each). */
  private async send(): Promise<number> {
    const flight = ++this.flights;
    const acquire = [...this.asks].map(([c, ask]) => ({ c, ask }));
    this.asks.clear();
    const reports: ReportItem[] = [];
    for (const c of this.ending) if (c.leaseId !== null) reports.push({ c, lease_id: c.leaseId, seq: ++this.seq, spent: c.spent, release: true });
    for (const c of this.counters.values()) if (c.leaseId !== null && c.spent !== c.reported) reports.push({ c, lease_id: c.leaseId, seq: ++this.seq, spent: c.spent, release: false });
    for (const o of this.owed.splice(0)) reports.push({ c: null, lease_id: o.leaseId, seq: o.seq, spent: o.spent, release: true });
    for (const c of [...this.ending]) if (c.leaseId === null) this.ending.delete(c);
    while (acquire.length > 0 || reports.length > 0) await this.exchange(acquire.splice(0, MAX_ITEMS), reports.splice(0, MAX_ITEMS), flight, 2);
    return flight;
  }

  /** One request; items the platform names as unknown (404) or not this holder's live lease (409) are dropped and the rest sent again. */
  private async exchange(acquire: Array<{ c: Counter; ask: number }>, reports: ReportItem[], flight: number, tries: number): Promise<void> {
    if (acquire.length === 0 && reports.length === 0) return;
    const acquireItems = acquire.map(({ c, ask }): LeaseAcquire => ({ policy_id: c.policy_id, limit: c.limit, ...c.ids, need: ask }));
    const reportItems = reports.map(({ lease_id, seq, spent, release }): LeaseReport => ({ lease_id, seq, spent, release }));
    let answer: LeaseAnswer;
    try {
      answer = await this.deps.request({ holder: this.deps.holder, acquire: acquireItems, report: reportItems });
    } catch (err) {
      if (err instanceof AgpHttpError && (err.status === 404 || err.status === 409) && tries > 1) {
        const named = namedItems(err);
        const badAcquire = named?.acquire ?? new Set(err.status === 404 ? acquire.keys() : []);
        const badReport = named?.report ?? new Set(reports.keys());
        for (const i of badAcquire) {
          const { c } = acquire[i];
          this.ignored.add(`${c.policy_id}\n${c.limit}`);
          if (c.leaseId === null) this.end(c);
        }
        for (const i of badReport) {
          const { c } = reports[i];
          if (c === null) continue; // an owed report the platform refuses (the lease was released): nothing more to send
          this.ending.delete(c);
          this.lapse(c, false);
        }
        return this.exchange(
          acquire.filter((_, i) => !badAcquire.has(i)),
          reports.filter((_, i) => !badReport.has(i)),
          flight,
          tries - 1,
        );
      }
      const message = err instanceof Error ? err.message : String(err);
      if (message !== this.lastError) this.deps.onError(`fleet-wide limits: ${message}`);
      this.lastError = message;
      this.downUntil = Date.now() + RETRY_AFTER_MS;
      for (const { c } of acquire) {
        c.flight = flight;
        c.error = message;
      }
      // Owed reports are sent again with the next request (a copy the platform already applied is a replay there).
      if (!this.closed) for (const r of reports) if (r.c === null) this.owed.push({ leaseId: r.lease_id, seq: r.seq, spent: r.spent });
      if (this.closed) this.ending.clear();
      return;
    }
    this.lastError = null;
    this.downUntil = 0;
    const now = Date.now();
    for (let i = 0; i < acquire.length; i++) {
      const { c, ask } = acquire[i];
      const l = answer.leases[i];
      c.flight = flight;
      c.error = null;
      c.used = false;
      if (l === undefined) continue;
      if (l.limit_value === 0 && l.status !== 'active') {
        this.ignored.add(`${c.policy_id}\n${c.limit}`);
        this.end(c);
        continue;
      }
      this.granted(c, l, now);
      c.exhaustedAsk = l.exhausted ? ask : null;
      c.answeredAt = now;
      // A need the limit cannot grant: a remainder too small for it returns to the fleet, where it may complete another holder's.
      const left = c.held - c.spent;
      if (l.exhausted && ask > 0 && left > TOLERANCE && left < c.lastNeed - TOLERANCE) this.end(c);
      if (this.counters.get(c.key) !== c && c.leaseId !== null) this.ending.add(c);
    }
    const byLease = new Map<string, Lease>();
    for (let i = acquire.length; i < answer.leases.length; i++) byLease.set(answer.leases[i].lease_id, answer.leases[i]);
    for (const r of reports) {
      if (r.c === null) continue; // an owed report, applied (or a replay of one already applied)
      if (r.release) {
        this.ending.delete(r.c);
        continue;
      }
      const l = byLease.get(r.lease_id);
      if (l === undefined || r.c.leaseId !== r.lease_id) continue;
      if (l.status !== 'active') {
        // The lease ended on the platform; a report it applied there is acknowledged, anything later is owed.
        if (Math.abs(l.spent - r.spent) <= TOLERANCE) r.c.reported = r.spent;
        this.lapse(r.c);
        continue;
      }
      r.c.reported = r.spent;
      this.granted(r.c, l, now);
    }
    // Nothing is cleared here when closed: a request in flight when close() was called answers leases that close()
    // ended after it was sent (or new ones), and the request close() chained after it releases them.
  }

  /** Apply the platform's answer `l` about counter `c`'s lease. */
  private granted(c: Counter, l: Lease, now: number): void {
    if (!l.lease_id || l.status !== 'active') {
      if (c.leaseId !== null && (!l.lease_id || l.lease_id === c.leaseId)) this.lapse(c);
      return;
    }
    if (l.lease_id !== c.leaseId) {
      // A lease that lapsed here, renewed by a request answered after the lapse: not taken up again (the platform counts
      // what it spent up to the lapse; the owed report ends it), so the counter asks anew.
      if (this.lapsed.has(l.lease_id)) return;
      // A new lease (none before, or the old one lapsed and was reclaimed): what the old one owes is reported on it.
      if (c.leaseId !== null) this.lapse(c);
      c.leaseId = l.lease_id;
      c.reported = l.spent;
    }
    c.held = l.held;
    c.expiresAt = Date.parse(l.expires_at);
    c.ttlMs = Math.max(100, c.expiresAt - now);
    if (l.granted > 0) c.lastSlice = l.granted;
    c.platformScopeKey = l.scope_key;
    if (l.window_end !== null) c.windowEnd = Date.parse(l.window_end);
  }
}

/** The acquire and report items a 404/409 problem names (`acquire.<i>…`, `report.<i>…` in its errors or detail), or null. */
function namedItems(err: AgpHttpError): { acquire: Set<number>; report: Set<number> } | null {
  const out = { acquire: new Set<number>(), report: new Set<number>() };
  const texts = [...(err.problem.errors ?? []).map((e) => e.path), err.problem.detail];
  for (const t of texts) for (const m of t.matchAll(/(acquire|report)(?:\.|\[)(\d+)/g)) out[m[1] as 'acquire' | 'report'].add(Number(m[2]));
  return out.acquire.size + out.report.size > 0 ? out : null;
}

/** `p`, or {@link TIMEOUT} when it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  let t: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMEOUT>((resolve) => {
    t = setTimeout(resolve, ms, TIMEOUT);
    t.unref?.();
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}
