/**
 * The decision API's state gathering (`policies.evaluate`, `POST /api/v1/policies/evaluate`): the organisation's
 * enabled policies for the agent and its kill switches from this service's read model, the action's declared risk
 * and typical cost from the agent registry, and the run's spend and recent actions from the stats service over the
 * bus, and what the fleet-wide limits have left from this service's quota counters. The decision itself is the pure
 * `decide` of `@agp/policy-engine`. Source: docs/api.md (Policy decisions; Quotas).
 */
import type { ClientProxy } from '@nestjs/microservices';
import { DECISION_OUTCOME, RATE_LIMIT_ANY_ACTION, RUN_BUDGET_LIMIT, SESSION_BUDGET_LIMIT, quotaLeaseGraceMs, rateLimitAction, withPolicyDefaults, type EvaluateAction, type PolicyDecisionKind, type PolicyEvaluation, type RequestContext } from '@agp/contracts';
import { call, RemoteProblemError, tracedDecision } from '@agp/bus';
import type { SqlExecutor } from '@agp/eventstore';
import { argumentsHash, decide, quotaNeeds, type IdempotencyRecord, type QuotaView, type RecentCall } from '@agp/policy-engine';
import { ForbiddenError } from '@agp/runtime';
import type { DecisionAlerts } from './alerts/decisions.js';
import { agentGovernance, registeredAction } from './queries.js';
import { committedOf } from './quotas/counters.js';
import { QuotaNotGranted, counterId, grantTarget, reserveQuotas, type GrantTarget, type QuotaDeps } from './quotas/leases.js';

/**
 * The most recent actions of a run the decision API reads for rate-limit windows (one `runs.get` page, the most it
 * serves). A window holding more of the run's calls than this undercounts: limits above 1000 calls per window
 * cannot be reached through the API (the agent-side SDK passes its own window).
 */
export const RECENT_CALLS_MAX = 1000;

/**
 * What the decision API knows of a run: whether the organisation has it, its spend so far (USD), its recent calls
 * and, when asked for hashes, the idempotency keys its actions used (each action's arguments hash: the ledger keeps
 * no caller key).
 */
export interface RunState {
  found: boolean | null;
  spend_usd: number;
  calls: RecentCall[];
  keys: IdempotencyRecord[];
}

/**
 * The run's spend so far and, when `withCalls`, its {@link RECENT_CALLS_MAX} latest actions (by timestamp) as calls,
 * leaving out `blocked` ones (never executed), asked of the stats service (`runs.get`): one message, two when calls
 * are needed. With `withHashes` each call carries its inputs' arguments hash (loop guardrail) and is also an
 * idempotency key seen (idempotency guardrail; `cached_result_ref` = `action:<ledger entry id>`). Spend is the run's `cost_usd` (USD: per action the actual cost where reported, else the estimate;
 * docs/decisions.md (Run cost)). An unknown run (404, including another organisation's) has spent
 * nothing and made no calls.
 * @throws ServiceUnavailableError (503) or RemoteProblemError when the stats service cannot answer.
 */
export async function runState(bus: Pick<ClientProxy, 'send'>, ctx: RequestContext, runId: string | undefined, withCalls: boolean, withHashes = false): Promise<RunState> {
  if (runId === undefined) return { found: null, spend_usd: 0, calls: [], keys: [] };
  const path = { id: runId };
  let head;
  try {
    head = await call(bus, 'runs.get', ctx, { path, query: { actions_limit: 1 } });
  } catch (err) {
    if (err instanceof RemoteProblemError && err.status === 404) return { found: false, spend_usd: 0, calls: [], keys: [] };
    throw err;
  }
  if (!withCalls || head.actions_total === 0) return { found: true, spend_usd: head.cost_usd, calls: [], keys: [] };
  const n = Math.min(RECENT_CALLS_MAX, head.actions_total);
  const page = await call(bus, 'runs.get', ctx, { path, query: { actions_skip: head.actions_total - n, actions_limit: n } });
  const calls: RecentCall[] = [];
  const keys: IdempotencyRecord[] = [];
  for (const a of page.actions) {
    if (a.status === 'blocked') continue;
    const at = Date.parse(a.timestamp);
    if (!withHashes) {
      calls.push({ action_name: a.action_name, at });
      continue;
    }
    const hash = argumentsHash(a.inputs ?? undefined);
    calls.push({ action_name: a.action_name, at, arguments_hash: hash });
    keys.push({ action_name: a.action_name, idempotency_key: hash, at, cached_result_ref: `action:${a.id}` });
  }
  return { found: true, spend_usd: head.cost_usd, calls, keys };
}

/** Decisions that let the action run: the ones `reserve: true` draws its needs for. */
const RUNS: ReadonlySet<PolicyDecisionKind> = new Set(['allow', 'warn', 'downgrade']);

/**
 * Whether a decision stopped the action, as the block-rate alerts count it: outcome `blocked` (block, a blocking
 * guardrail, budget_exceeded, rate_limited, loop_detected), but not an idempotent replay (the first call's result is
 * answered) nor an escalation (a person decides).
 */
export const stopsTheAction = (d: PolicyDecisionKind): boolean => DECISION_OUTCOME[d] === 'blocked' && d !== 'idempotent_replay';

/** Times a reserving decision is decided again when a need was drawn by another caller between reading and drawing. */
const RESERVE_ATTEMPTS = 3;

/**
 * A fleet-wide limit the action counts against: its counter, what the fleet has left of it (`remaining`, answered in
 * `context.quotas`), and what the decision sees of it (`view`; undefined: the engine counts the run's own spend and
 * calls, as for a limit nobody leases).
 */
interface LimitRead {
  target: GrantTarget;
  remaining: number;
  view: number | undefined;
}

/**
 * What each of `targets` has left for the fleet: the policy's value less the counter's committed amount (no counter:
 * nothing committed). A run or session budget never answers more than the value less the run's recorded spend, and a
 * rate limit than `max_calls` less the run's recorded calls in the window (actions recorded without a lease count
 * too; what was leased and recorded counts once). A run or session budget or a rate limit without a counter in this
 * window (nobody leased it) is decided as before fleet counting: on the run's spend and recent calls.
 */
async function readLimits(sql: SqlExecutor, org: string, targets: GrantTarget[], run: RunState, now: number, graceMs: number): Promise<LimitRead[]> {
  const committed = await committedOf(sql, org, targets.map((t) => t.key), now, graceMs);
  return targets.map((t) => {
    const counted = committed.get(counterId(t.key));
    let used = counted ?? 0;
    const action = rateLimitAction(t.key.limit);
    if (t.key.limit === RUN_BUDGET_LIMIT || t.key.limit === SESSION_BUDGET_LIMIT) used = Math.max(used, run.spend_usd);
    else if (action !== null) used = Math.max(used, run.calls.filter((c) => c.at >= t.key.window_start && (action === RATE_LIMIT_ANY_ACTION || c.action_name === action)).length);
    const remaining = Number((t.limit_value - used).toFixed(10));
    return { target: t, remaining, view: counted === undefined && !t.key.limit.startsWith('period_budget:') ? undefined : remaining };
  });
}

/** The {@link QuotaView} of `reads`: what a policy's limit has left, undefined for a limit not read or not counted. */
const viewOf =
  (reads: LimitRead[]): QuotaView =>
  (policyId, limit) =>
    reads.find((r) => r.target.key.policy_id === policyId && r.target.key.limit === limit)?.view;

/**
 * Decide one action against the organisation's current state. The session spend is the run's spend (the platform
 * records no sessions; a session holds its runs, so this is a lower bound); rate limits count the run's recent
 * actions, and the loop and idempotency guardrails the hashes of their inputs. The arguments, the idempotency key and
 * the moderation scores are the body's. The estimated cost is the body's, else the registered action's typical cost,
 * else 0 USD; the risk level the registered action's, else the rule's default.
 *
 * Fleet-wide limits (session budgets with `session_id`, run budgets with `run_id`, period budgets; `agent`- and
 * `organization`-scoped rate limits) are decided against what their counters have left (`context.quotas`), so an
 * action is stopped once the fleet's leases and reservations used a shared limit up. Without `reserve` nothing is
 * written. With `reserve: true` and a decision that lets the action run, each limit's need (the estimate, or one call)
 * is drawn as a lease of holder `decision-api:<key id>` holding it as spent, all or nothing (`reservations`); when
 * another caller drew it first, the action is decided again against the counters as they are then.
 * @param now the decision time (the end of every rate-limit window).
 * @throws ForbiddenError (403) for `reserve: true` with a read key; as {@link runState}.
 */
export async function evaluateAction(
  deps: { sql: SqlExecutor; bus: Pick<ClientProxy, 'send'>; quotas: QuotaDeps; alerts?: Pick<DecisionAlerts, 'noteDecision'> },
  ctx: RequestContext,
  body: EvaluateAction,
  now: Date,
): Promise<PolicyEvaluation> {
  if (body.reserve && ctx.scope === 'read') throw new ForbiddenError('reserve: true draws from the fleet-wide limits: it needs a write key (a read key may evaluate without reserve)');
  const org = ctx.organization_id;
  const [governance, registered] = await Promise.all([agentGovernance(deps.sql, org, body.agent_id), registeredAction(deps.sql, org, body.agent_id, body.action_name)]);
  const policies = governance.policies.map((p) => withPolicyDefaults(p));
  const killSwitches = governance.kill_switches;
  const hashed = policies.some((p) => p.guardrails.loop !== undefined || p.guardrails.idempotency !== undefined);
  const windowed = hashed || policies.some((p) => Object.keys(p.rate_limits).length > 0);
  const cost = body.estimated_cost_usd ?? registered?.typical_cost_usd ?? 0;
  const nowMs = now.getTime();
  const ids = { agent_id: body.agent_id, session_id: body.session_id, run_id: body.run_id };
  const targets = quotaNeeds(policies, body.agent_id, body.action_name, cost, { sessionId: body.session_id, runId: body.run_id }).flatMap((n) => {
    const t = grantTarget(org, policies.find((p) => p.id === n.policy_id)!, n.limit, ids, nowMs);
    return t ? [{ ...t, need: n.need }] : [];
  });
  const run = await runState(deps.bus, ctx, body.run_id, windowed, hashed);
  const action = {
    agent_id: body.agent_id,
    action_name: body.action_name,
    arguments: body.arguments,
    estimated_cost_usd: cost,
    risk_level: registered?.risk_level ?? null,
    idempotency_key: body.idempotency_key,
    moderation_scores: body.moderation_scores,
  };
  // A span per decision (decision, rule, policy, intervention type, tool, agent; never the arguments) and agp_policy_decisions_total.
  const decideWith = (reads: LimitRead[]) =>
    tracedDecision('evaluate', action, () =>
      decide(policies, killSwitches, action, {
        now: nowMs,
        session_spend_usd: run.spend_usd,
        run_spend_usd: run.spend_usd,
        recent_calls: run.calls,
        idempotency_records: run.keys,
        quota: viewOf(reads),
      }),
    );
  let reads = await readLimits(deps.sql, org, targets, run, nowMs, quotaLeaseGraceMs(deps.quotas.ttlMs));
  let decision = decideWith(reads);
  let reservations: PolicyEvaluation['reservations'] = [];
  for (let attempt = 1; body.reserve && RUNS.has(decision.decision) && targets.length > 0; attempt++) {
    try {
      const leases = await reserveQuotas(deps.quotas, org, `decision-api:${ctx.key_id}`, targets, nowMs);
      reservations = leases.map((l, i) => ({ lease_id: l.lease_id, policy_id: l.policy_id, limit: l.limit, scope_key: l.scope_key, amount: targets[i].need }));
      break;
    } catch (err) {
      if (!(err instanceof QuotaNotGranted)) throw err;
      reads = await readLimits(deps.sql, org, targets, run, nowMs, quotaLeaseGraceMs(deps.quotas.ttlMs));
      // The last attempt: the limit that could not be drawn answers nothing left, whatever the counters say now.
      if (attempt >= RESERVE_ATTEMPTS) reads = reads.map((r) => (counterId(r.target.key) === counterId(err.target.key) ? { ...r, remaining: 0, view: 0 } : r));
      decision = decideWith(reads);
    }
  }
  // The enforcing form governs: its decision counts for the block-rate alerts and the automatic kill switch.
  if (body.reserve) await deps.alerts?.noteDecision(org, body.agent_id, stopsTheAction(decision.decision));
  const quotas = reads.map((r) => ({ policy_id: r.target.key.policy_id, limit: r.target.key.limit, scope_key: r.target.key.scope_key, limit_value: r.target.limit_value, remaining: r.remaining }));
  return { ...decision, context: { now: now.toISOString(), run_spend_usd: run.spend_usd, session_spend_usd: run.spend_usd, recent_calls: run.calls.length, run_found: run.found, quotas }, reservations };
}
