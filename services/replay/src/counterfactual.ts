/**
 * Counterfactual evaluation (`replay.evaluate-run`, `replay.evaluate-runs`; `POST /api/v1/replay/{run_id}/evaluate`
 * and `POST /api/v1/replay/evaluate`): a recorded run's actions decided again, in order, by the pure `decide` of
 * `@agp/policy-engine` with today's policies or a candidate, and what that would have prevented in USD.
 *
 * Decisions (documented in the contracts and the OpenAPI rows):
 * - Policy set: every policy of the organisation today (`policies.list`); `decide` itself skips the disabled ones and
 *   those scoped to other agents. `candidate_policy` is added (id `candidate`, created now, so it loses ties to older
 *   policies); `policy_patch` is merged (JSON merge patch: a field given replaces the stored one, null clears) into
 *   the policy it names, which must exist (404). Nothing is stored.
 * - Kill switches are not applied ({@link NO_KILL_SWITCHES}): the question is what the policies decide; a switch
 *   engaged today would block every step and hide them.
 * - State at step k (the decision API's, `services/policies/src/evaluate.ts`, rebuilt from the record): `now` = the
 *   action's timestamp; run spend = session spend (no sessions are recorded) = Σ cost of the earlier steps the
 *   counterfactual lets through; recent calls = those earlier steps with their timestamps and arguments hashes (for
 *   the loop guardrail), and each of them an idempotency key seen (its arguments hash: the record keeps no caller
 *   key); the arguments are the recorded inputs (downgrades, the PII guardrail). A stopped step (every decision whose
 *   outcome is `blocked`) adds neither spend nor a call; an escalated one counts as approved. Moderation scores are
 *   not recorded, so the moderation guardrail does not trigger in a counterfactual.
 * - A step's cost = its actual cost where the provider reported one, else its estimate, else 0 USD (`actionCostUsd`,
 *   the rule of a run's `cost_usd`).
 * Source: docs/replay.md (Counterfactual evaluation); docs/decisions.md (Counterfactual evaluation).
 */
import {
  actionCostUsd,
  actionSpentUsd,
  POLICY_DECISIONS,
  REPLAY_EVALUATE_MAX_RUNS,
  REPLAY_EVALUATE_MAX_STEPS,
  STOPPING_DECISIONS,
  scopeAllows,
  type CounterfactualStep,
  type CounterfactualTotals,
  type EvaluateRun,
  type EvaluateRuns,
  type LedgerEntry,
  type Policy,
  type RequestContext,
  type Run,
  type RunEvaluation,
  type RunsEvaluation,
  roundUsd,
} from '@agp/contracts';
import { call, RemoteProblemError, tracedDecision, type Sender } from '@agp/bus';
import { decide, appliesTo, enginePolicy, NO_KILL_SWITCHES, type EnginePolicy, type IdempotencyRecord, type RecentCall } from '@agp/policy-engine';
import { ForbiddenError, NotFoundError, isRawJson } from '@agp/runtime';

/** Page size of `runs.get` actions, `runs.list` and `policies.list` (their maximum). */
const PAGE = 1000;
/** The id the candidate policy decides under. */
export const CANDIDATE_POLICY_ID = 'candidate';

type Bus = Sender;
type Candidate = Pick<EvaluateRun, 'candidate_policy' | 'policy_patch'>;
type PolicySource = RunEvaluation['policy_set']['source'];



/** Every policy of the organisation today, all pages of `policies.list` (any order). */
export async function allPolicies(bus: Bus, ctx: RequestContext): Promise<Policy[]> {
  const out: Policy[] = [];
  for (let skip = 0; ; skip += PAGE) {
    const reply = await call(bus, 'policies.list', ctx, { query: { limit: PAGE, skip } });
    const page = (isRawJson(reply) ? JSON.parse(reply.$json) : reply) as { policies: Policy[]; total: number };
    out.push(...page.policies);
    if (page.policies.length < PAGE || out.length >= page.total) return out;
  }
}

/**
 * The policy set to decide with (see the module docs) and its source.
 * @throws ForbiddenError (403) when a candidate or patch comes with a read key.
 * @throws NotFoundError (404) when `policy_patch` names no policy of the organisation.
 */
export async function policySet(bus: Bus, ctx: RequestContext, body: Candidate, now: Date): Promise<{ source: PolicySource; policies: EnginePolicy[] }> {
  const candidate = body.candidate_policy !== undefined || body.policy_patch !== undefined;
  if (candidate && !scopeAllows(ctx.scope, 'write')) throw new ForbiddenError('evaluating a candidate policy or a policy patch needs a write key');
  const today = await allPolicies(bus, ctx);
  if (body.candidate_policy) {
    return { source: 'candidate', policies: [...today, enginePolicy(CANDIDATE_POLICY_ID, now.toISOString(), body.candidate_policy)] };
  }
  if (body.policy_patch) {
    const { policy_id, patch } = body.policy_patch;
    if (!today.some((p) => p.id === policy_id)) throw new NotFoundError(`policy ${policy_id} not found`);
    return { source: 'patch', policies: today.map((p) => (p.id === policy_id ? { ...p, ...patch } : p)) };
  }
  return { source: 'today', policies: today };
}

/** The run's recorded actions, oldest first (all pages of `runs.get`), and the run. @throws NotFoundError (404) as `runs.get`. */
async function recorded(bus: Bus, ctx: RequestContext, runId: string): Promise<{ run: Run; actions: LedgerEntry[] }> {
  const actions: LedgerEntry[] = [];
  for (let skip = 0; ; skip += PAGE) {
    const { actions: page, actions_total, actions_skip: _s, actions_limit: _l, ...run } = await call(bus, 'runs.get', ctx, { path: { id: runId }, query: { actions_skip: skip, actions_limit: PAGE } }, 30_000);
    actions.push(...page);
    if (page.length < PAGE || actions.length >= actions_total) return { run, actions };
  }
}

/** Totals with every count 0. */
function emptyTotals(): CounterfactualTotals {
  return { steps: 0, by_decision: Object.fromEntries(POLICY_DECISIONS.map((d) => [d, 0])) as CounterfactualTotals['by_decision'], prevented_usd: 0, actually_spent_usd: 0, would_spend_usd: 0, difference_usd: 0 };
}

/** `into` plus `t`: the USD sums rounded once by {@link roundUsdTotals}. */
function addTotals(into: CounterfactualTotals, t: CounterfactualTotals): CounterfactualTotals {
  into.steps += t.steps;
  for (const d of POLICY_DECISIONS) into.by_decision[d] += t.by_decision[d];
  into.prevented_usd += t.prevented_usd;
  into.actually_spent_usd += t.actually_spent_usd;
  into.would_spend_usd += t.would_spend_usd;
  return roundUsdTotals(into);
}

/** `t` with its USD sums rounded (`roundUsd`) and `difference_usd` computed from them. */
function roundUsdTotals(t: CounterfactualTotals): CounterfactualTotals {
  t.prevented_usd = roundUsd(t.prevented_usd);
  t.actually_spent_usd = roundUsd(t.actually_spent_usd);
  t.would_spend_usd = roundUsd(t.would_spend_usd);
  t.difference_usd = roundUsd(t.would_spend_usd - t.actually_spent_usd);
  return t;
}

/**
 * Decide every recorded action of one run again (pure: the state at each step is rebuilt from the earlier steps, see
 * the module docs).
 * @param policies the policy set (all of them; `decide` skips disabled and other agents' policies).
 * @returns every step (all of them; the caller cuts the list) and the totals in USD.
 */
export function replayDecisions(policies: readonly EnginePolicy[], agentId: string, actions: readonly LedgerEntry[]): { steps: CounterfactualStep[]; totals: CounterfactualTotals } {
  const totals = emptyTotals();
  const steps: CounterfactualStep[] = [];
  const calls: RecentCall[] = [];
  const keys: IdempotencyRecord[] = [];
  let spent = 0;
  actions.forEach((a, step) => {
    const cost = actionCostUsd(a);
    const at = Date.parse(a.timestamp);
    const args = a.inputs ?? undefined;
    const action = { agent_id: agentId, action_name: a.action_name, estimated_cost_usd: cost, arguments: args };
    const d = tracedDecision('counterfactual', action, () =>
      decide(policies, NO_KILL_SWITCHES, action, { now: at, session_spend_usd: spent, run_spend_usd: spent, recent_calls: calls, idempotency_records: keys }),
    );
    const stopped = STOPPING_DECISIONS.has(d.decision);
    if (!stopped) {
      spent += cost;
      const hash = d.arguments_hash ?? undefined;
      calls.push({ action_name: a.action_name, at, arguments_hash: hash });
      if (hash !== undefined) keys.push({ action_name: a.action_name, idempotency_key: hash, at, cached_result_ref: `action:${a.id}` });
      totals.would_spend_usd += cost;
    }
    totals.actually_spent_usd += actionSpentUsd(a);
    totals.prevented_usd += d.cost_prevented_usd;
    totals.by_decision[d.decision]++;
    totals.steps++;
    steps.push({
      step,
      action_id: a.id,
      action_name: a.action_name,
      timestamp: a.timestamp,
      cost_usd: cost,
      recorded_status: a.status,
      decision: d.decision,
      rule: d.rule,
      policy_id: d.policy_id,
      policy_name: d.policy_name,
      reason: d.reason,
      prevented_usd: d.cost_prevented_usd,
    });
  });
  return { steps, totals: roundUsdTotals(totals) };
}

/** One run evaluated against `policies` (read from the stats service). @throws NotFoundError (404) for an unknown run. */
async function evaluateOne(bus: Bus, ctx: RequestContext, runId: string, policies: readonly EnginePolicy[]) {
  const { run, actions } = await recorded(bus, ctx, runId);
  return { run, ...replayDecisions(policies, run.agent_id, actions) };
}

/**
 * POST /api/v1/replay/{run_id}/evaluate: one run decided again; the first {@link REPLAY_EVALUATE_MAX_STEPS} steps
 * listed, the totals over all.
 * @throws ForbiddenError (403), NotFoundError (404) as {@link policySet}; NotFoundError (404) for an unknown run or
 *   another organisation's.
 */
export async function evaluateRun(bus: Bus, ctx: RequestContext, runId: string, body: EvaluateRun, now: Date): Promise<RunEvaluation> {
  const set = await policySet(bus, ctx, body, now);
  const { run, steps, totals } = await evaluateOne(bus, ctx, runId, set.policies);
  const applying = set.policies.filter((p) => p.enabled && appliesTo(p, run.agent_id)).map((p) => p.id);
  return {
    run_id: run.id,
    agent_id: run.agent_id,
    evaluated_at: now.toISOString(),
    policy_set: { source: set.source, policy_ids: applying },
    steps: steps.slice(0, REPLAY_EVALUATE_MAX_STEPS),
    steps_truncated: steps.length > REPLAY_EVALUATE_MAX_STEPS,
    totals,
  };
}

/** Whether `run` started within the body's dates (no date: every run; with one, a run never started is out). */
function inRange(run: Pick<Run, 'started_at'>, body: Pick<EvaluateRuns, 'start_date' | 'end_date'>): boolean {
  if (!body.start_date && !body.end_date) return true;
  if (run.started_at === null) return false;
  const t = Date.parse(run.started_at);
  if (body.start_date && t < body.start_date.date.getTime()) return false;
  if (body.end_date) {
    const end = body.end_date.date.getTime();
    if (body.end_date.dateOnly ? t >= end + 86_400_000 : t > end) return false;
  }
  return true;
}

/**
 * The runs matching the body's filters, newest first (as `runs.list` orders them), and how many match in all.
 * `run_ids`: each asked of `runs.get` (an unknown id is left out; any purpose unless `purpose` is given); otherwise
 * every page of `runs.list` (by agent) of `purpose`, default production: eval runs are left out unless asked for.
 */
async function matchingRuns(bus: Bus, ctx: RequestContext, body: EvaluateRuns): Promise<{ runs: Run[]; matched: number }> {
  const out: Run[] = [];
  if (body.run_ids) {
    for (const id of new Set(body.run_ids)) {
      try {
        const { actions: _a, actions_total: _t, actions_skip: _s, actions_limit: _l, ...run } = await call(bus, 'runs.get', ctx, { path: { id }, query: { actions_limit: 1 } });
        if ((!body.agent_id || run.agent_id === body.agent_id) && (!body.purpose || body.purpose.includes(run.purpose)) && inRange(run, body)) out.push(run);
      } catch (err) {
        if (!(err instanceof RemoteProblemError && err.status === 404)) throw err;
      }
    }
    return { runs: out.slice(0, REPLAY_EVALUATE_MAX_RUNS), matched: out.length };
  }
  let matched = 0;
  for (let skip = 0; ; skip += PAGE) {
    const reply = await call(bus, 'runs.list', ctx, { query: { limit: PAGE, skip, ...(body.agent_id ? { agent_id: body.agent_id } : {}), ...(body.purpose ? { purpose: body.purpose } : {}) } });
    const page = (isRawJson(reply) ? JSON.parse(reply.$json) : reply) as { runs: Run[]; total: number };
    for (const run of page.runs) {
      if (!inRange(run, body)) continue;
      matched++;
      if (out.length < REPLAY_EVALUATE_MAX_RUNS) out.push(run);
    }
    if (page.runs.length < PAGE || skip + PAGE >= page.total) return { runs: out, matched };
  }
}

/**
 * POST /api/v1/replay/evaluate: the matching runs (at most {@link REPLAY_EVALUATE_MAX_RUNS}, newest first) each
 * decided again with one policy set; per-run totals and the overall totals (USD).
 * @throws ForbiddenError (403), NotFoundError (404) as {@link policySet}.
 */
export async function evaluateRuns(bus: Bus, ctx: RequestContext, body: EvaluateRuns, now: Date): Promise<RunsEvaluation> {
  const set = await policySet(bus, ctx, body, now);
  const { runs, matched } = await matchingRuns(bus, ctx, body);
  const totals = emptyTotals();
  const out: RunsEvaluation['runs'] = [];
  for (const r of runs) {
    let one;
    try {
      one = await evaluateOne(bus, ctx, r.id, set.policies);
    } catch (err) {
      if (err instanceof RemoteProblemError && err.status === 404) continue; // deleted meanwhile
      throw err;
    }
    out.push({ run_id: r.id, agent_id: r.agent_id, started_at: r.started_at, totals: one.totals });
    addTotals(totals, one.totals);
  }
  return { evaluated_at: now.toISOString(), policy_source: set.source, runs_matched: matched, runs_evaluated: out.length, truncated: matched > out.length, runs: out, totals };
}
