import { RunEvents, actionSpentUsd, purposeOf, skewBucketIndex, type ActionRecordedData, type Purpose, type RunEndedData, type RunStartedData, type RunStatus } from '@agp/contracts';

/**
 * Pure pieces of the stats projection: a run row folded from its events, and the deltas that runs and actions add
 * to the aggregate tables. Source: architecture §4 (Runs: `running → completed | failed`; a run's cost is the sum
 * of the costs of the actions that ran, each the actual cost where reported, else the estimate; Estimation accuracy);
 * docs/decisions.md (Run cost).
 */

/**
 * The USD one action adds to the cost sums (see {@link actionSpentUsd}): `cost` (actual where reported, else the
 * estimate), `estimated` and `actual` of an action that ran; all 0 for a blocked one, whatever its entry carries.
 */
export function spentOf(a: Pick<ActionRecordedData, 'status' | 'cost_usd' | 'actual_cost_usd'>): { cost: number; estimated: number; actual: number } {
  if (a.status === 'blocked') return { cost: 0, estimated: 0, actual: 0 };
  return { cost: actionSpentUsd(a), estimated: a.cost_usd ?? 0, actual: a.actual_cost_usd ?? 0 };
}

/**
 * A run as the `agp_runs` row holds it. Times are ISO 8601 UTC; costs USD over the actions that ran ({@link spentOf}):
 * `cost_usd` = Σ `actionSpentUsd` (actual where reported, else estimated), `estimated_cost_usd` = Σ estimates,
 * `actual_cost_usd` = Σ reported costs. `action_count` counts every action, blocked ones too.
 */
export interface RunRow {
  organization_id: string;
  run_id: string;
  agent_id: string;
  name: string | null;
  status: RunStatus;
  started_at: string | null;
  ended_at: string | null;
  first_action_at: string | null;
  cost_usd: number;
  estimated_cost_usd: number;
  actual_cost_usd: number;
  action_count: number;
  error: string | null;
  /** Fixed by the first event stored for the run (`purposeOf` its stated purpose and run id); its actions count as it. */
  purpose: Purpose;
}

/** An event as the projection sees it. */
export interface RunEventLike {
  type: string;
  data: Record<string, unknown>;
  metadata: { organization_id: string };
}

/** The earlier of two ISO times (null-tolerant). */
const earliest = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a <= b ? a : b);

/**
 * The run's sort and day key: when it started, else its first action, else when it ended. Every run row has at
 * least one of them, whatever order its events arrived in.
 */
export function runTs(r: RunRow): string {
  return (r.started_at ?? r.first_action_at ?? r.ended_at)!;
}

/**
 * Why the projection refuses to fold run event `e` into the run row, or null when it applies. Two rules keep a run
 * row consistent whatever order its events arrive in (docs/decisions.md, Run data quality):
 * - a run belongs to one agent: the agent of the first event stored for it. A run.start, run.end or action.record
 *   naming another agent is refused (it would otherwise be silently ignored, silently move the run, or count one
 *   agent's action in another agent's run);
 * - a run never ends before it starts: a run.end whose `ended_at` is before the run's `started_at`, or a run.start
 *   whose `started_at` is after the run's `ended_at` (a run.end came first), is refused, so `duration_ms` is never
 *   negative. The run keeps what it had (e.g. `running` with its start; or ended with no start, `duration_ms` null);
 * - a run has one purpose: that of the first event stored for it. A run.start or run.end stating another purpose is
 *   refused (it would otherwise move the run between production and eval figures); one stating none follows the run.
 * A refused event stays in the run's stream (the log is never rewritten); the projection records it with this reason
 * in `agp_projection_dead_letters`. Pure.
 */
export function runEventRejection(row: RunRow | null, e: RunEventLike): string | null {
  if (!row || (e.type !== RunEvents.Started && e.type !== RunEvents.Ended && e.type !== RunEvents.ActionRecorded)) return null;
  const d = e.data as { run_id: string; agent_id: string };
  const what = e.type === RunEvents.Started ? 'run.start' : e.type === RunEvents.Ended ? 'run.end' : 'action.record';
  if (d.agent_id !== row.agent_id) return `${what} names agent ${d.agent_id}, but run ${row.run_id} belongs to agent ${row.agent_id}`;
  if (e.type === RunEvents.ActionRecorded) return null;
  const stated = (e.data as { purpose?: Purpose }).purpose;
  if (stated !== undefined && stated !== row.purpose) return `${what} states purpose ${stated}, but run ${row.run_id} has purpose ${row.purpose}`;
  if (e.type === RunEvents.Started) {
    const start = earliest(row.started_at, (e.data as unknown as RunStartedData).started_at)!;
    if (row.ended_at !== null && Date.parse(start) > Date.parse(row.ended_at)) return `run.start started_at ${start} is after the run's ended_at ${row.ended_at}`;
  } else {
    const end = (e.data as unknown as RunEndedData).ended_at;
    if (row.started_at !== null && Date.parse(end) < Date.parse(row.started_at)) return `run.end ended_at ${end} is before the run's started_at ${row.started_at}`;
  }
  return null;
}

/**
 * Fold one run event into the run row (the caller first asks {@link runEventRejection}). A row may begin with any event (an action before run.start, a run.end
 * without a start): it is then `running` (or the end's status) with the times it knows. run.start keeps the earliest
 * start; run.end sets the terminal status (the latest run.end applied wins).
 */
export function evolveRun(row: RunRow | null, e: RunEventLike): RunRow {
  const d = e.data as { run_id: string; agent_id: string };
  const r: RunRow = row
    ? { ...row }
    : {
        organization_id: e.metadata.organization_id,
        run_id: d.run_id,
        agent_id: d.agent_id,
        name: null,
        status: 'running',
        started_at: null,
        ended_at: null,
        first_action_at: null,
        cost_usd: 0,
        estimated_cost_usd: 0,
        actual_cost_usd: 0,
        action_count: 0,
        error: null,
        purpose: purposeOf((e.data as { purpose?: Purpose }).purpose, d.run_id),
      };
  switch (e.type) {
    case RunEvents.Started: {
      const s = e.data as unknown as RunStartedData;
      r.started_at = earliest(r.started_at, s.started_at);
      if (s.name !== undefined) r.name = s.name;
      break;
    }
    case RunEvents.Ended: {
      const s = e.data as unknown as RunEndedData;
      r.status = s.status;
      r.ended_at = s.ended_at;
      r.error = s.error ?? null;
      break;
    }
    case RunEvents.ActionRecorded: {
      const a = e.data as unknown as ActionRecordedData;
      const spent = spentOf(a);
      r.cost_usd += spent.cost;
      r.estimated_cost_usd += spent.estimated;
      r.actual_cost_usd += spent.actual;
      r.action_count += 1;
      r.first_action_at = earliest(r.first_action_at, a.timestamp);
      break;
    }
  }
  return r;
}

/** Largest skew counted, as a fraction (1,000,000 = 100,000,000 %): an estimate of a near-zero amount cannot overflow the sums. */
export const MAX_SKEW = 1e6;

/**
 * Skew fraction of one action, rounded to 1e-9 and capped at {@link MAX_SKEW}, or null when it lacks an estimate > 0
 * or an actual cost.
 */
export function skewOf(a: Pick<ActionRecordedData, 'cost_usd' | 'actual_cost_usd'>): number | null {
  if (a.cost_usd === undefined || a.cost_usd <= 0 || a.actual_cost_usd === undefined) return null;
  return Math.min(MAX_SKEW, Math.round(((a.actual_cost_usd - a.cost_usd) / a.cost_usd) * 1e9) / 1e9);
}

/** Lowest and highest fine histogram bucket (percentage points): skew is clamped to −100 %..+1000 %. */
export const HIST_MIN = -100;
export const HIST_MAX = 1000;

/** The 1-percentage-point histogram bucket of a skew fraction, clamped to [HIST_MIN, HIST_MAX]. */
export function fineBucket(skew: number): number {
  return Math.max(HIST_MIN, Math.min(HIST_MAX, Math.floor(skew * 100 + 1e-6)));
}


/**
 * Counters of one daily or agent row. USD over the actions that ran ({@link spentOf}): `cost` = Σ `actionSpentUsd`
 * (actual where reported, else estimated), `estimated` = Σ estimates, `actual` = Σ reported costs; `actions` counts
 * every action; `dur` ms over `durN` actions.
 */
export interface Totals {
  runs: number;
  running: number;
  completed: number;
  failed: number;
  actions: number;
  cost: number;
  estimated: number;
  actual: number;
  dur: number;
  durN: number;
}

const zero = (): Totals => ({ runs: 0, running: 0, completed: 0, failed: 0, actions: 0, cost: 0, estimated: 0, actual: 0, dur: 0, durN: 0 });

/**
 * Aggregate deltas accumulated over a batch, keyed by table row (organisation, purpose, then the table's own key), so
 * a batch becomes one upsert per table. A run's contribution (its day and agent, counted by status) is subtracted as
 * it was and added as it is now, so a status change or a late run.start that moves its day never double counts.
 */
export class StatsDeltas {
  readonly daily = new Map<string, { org: string; purpose: Purpose; day: string; t: Totals }>();
  readonly agents = new Map<string, { org: string; purpose: Purpose; agent: string; t: Totals }>();
  /** Per agent and action: calls `n` (blocked ones too), `cost` (actual where reported, else estimated) and `estimated` of those that ran, USD. */
  readonly agentActions = new Map<string, { org: string; purpose: Purpose; agent: string; action: string; n: number; cost: number; estimated: number }>();
  readonly skewActions = new Map<string, { org: string; purpose: Purpose; action: string; n: number; sum: number; abs: number; b: number[] }>();
  readonly skewHist = new Map<string, { org: string; purpose: Purpose; bucket: number; n: number; sum: number }>();

  private day(org: string, purpose: Purpose, day: string): Totals {
    const k = `${org}\u0000${purpose}\u0000${day}`;
    let v = this.daily.get(k);
    if (!v) this.daily.set(k, (v = { org, purpose, day, t: zero() }));
    return v.t;
  }

  private agent(org: string, purpose: Purpose, agent: string): Totals {
    const k = `${org}\u0000${purpose}\u0000${agent}`;
    let v = this.agents.get(k);
    if (!v) this.agents.set(k, (v = { org, purpose, agent, t: zero() }));
    return v.t;
  }

  /** Add (+1) or remove (−1) a run's contribution: one run of its purpose on its day and for its agent, counted by status. */
  run(r: RunRow, sign: 1 | -1): void {
    for (const t of [this.day(r.organization_id, r.purpose, runTs(r).slice(0, 10)), this.agent(r.organization_id, r.purpose, r.agent_id)]) {
      t.runs += sign;
      t[r.status === 'running' ? 'running' : r.status] += sign;
    }
  }

  /**
   * Add (+1) or remove (−1) one action of a run of `purpose`: to its day, its agent, its agent and action, and (with
   * both costs) the skew tables. Its costs count only when it ran ({@link spentOf}).
   */
  action(org: string, purpose: Purpose, a: ActionRecordedData, sign: 1 | -1 = 1): void {
    const { cost, estimated, actual } = spentOf(a);
    for (const t of [this.day(org, purpose, a.timestamp.slice(0, 10)), this.agent(org, purpose, a.agent_id)]) {
      t.actions += sign;
      t.cost += sign * cost;
      t.estimated += sign * estimated;
      t.actual += sign * actual;
      if (a.duration_ms !== undefined) {
        t.dur += sign * a.duration_ms;
        t.durN += sign;
      }
    }
    const ak = `${org}\u0000${purpose}\u0000${a.agent_id}\u0000${a.action_name}`;
    const aa = this.agentActions.get(ak) ?? { org, purpose, agent: a.agent_id, action: a.action_name, n: 0, cost: 0, estimated: 0 };
    aa.n += sign;
    aa.cost += sign * cost;
    aa.estimated += sign * estimated;
    this.agentActions.set(ak, aa);
    const skew = skewOf(a);
    if (skew === null) return;
    const sk = `${org}\u0000${purpose}\u0000${a.action_name}`;
    const s = this.skewActions.get(sk) ?? { org, purpose, action: a.action_name, n: 0, sum: 0, abs: 0, b: [0, 0, 0, 0, 0, 0] };
    s.n += sign;
    s.sum += sign * skew;
    s.abs += sign * Math.abs(skew);
    s.b[skewBucketIndex(skew)] += sign;
    this.skewActions.set(sk, s);
    const bucket = fineBucket(skew);
    const hk = `${org}\u0000${purpose}\u0000${bucket}`;
    const h = this.skewHist.get(hk) ?? { org, purpose, bucket, n: 0, sum: 0 };
    h.n += sign;
    h.sum += sign * skew;
    this.skewHist.set(hk, h);
  }
}
