/**
 * The decision API's state gathering (`policies.evaluate`, `POST /api/v1/policies/evaluate`): the organisation's
 * enabled policies for the agent and its kill switches from this service's read model, the action's declared risk
 * and typical cost from the agent registry, and the run's spend and recent actions from the stats service over the
 * bus. The decision itself is the pure `decide` of `@agp/policy-engine`. Source: docs/api.md (Policy decisions).
 */
import type { ClientProxy } from '@nestjs/microservices';
import type { EvaluateAction, PolicyEvaluation, RequestContext } from '@agp/contracts';
import { call, RemoteProblemError, tracedDecision } from '@agp/bus';
import type { SqlExecutor } from '@agp/eventstore';
import { argumentsHash, decide, type IdempotencyRecord, type RecentCall } from '@agp/policy-engine';
import { agentGovernance, registeredAction } from './queries.js';

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

/**
 * Decide one action against the organisation's current state. The session spend is the run's spend (the platform
 * records no sessions; a session holds its runs, so this is a lower bound); rate limits count the run's recent
 * actions, and the loop and idempotency guardrails the hashes of their inputs. The arguments, the idempotency key and
 * the moderation scores are the body's. The estimated cost is the body's, else the registered action's typical cost,
 * else 0 USD; the risk level the registered action's, else the rule's default.
 * @param now the decision time (the end of every rate-limit window).
 * @throws as {@link runState}.
 */
export async function evaluateAction(deps: { sql: SqlExecutor; bus: Pick<ClientProxy, 'send'> }, ctx: RequestContext, body: EvaluateAction, now: Date): Promise<PolicyEvaluation> {
  const org = ctx.organization_id;
  const [{ policies, kill_switches: killSwitches }, registered] = await Promise.all([agentGovernance(deps.sql, org, body.agent_id), registeredAction(deps.sql, org, body.agent_id, body.action_name)]);
  const hashed = policies.some((p) => p.guardrails.loop !== undefined || p.guardrails.idempotency !== undefined);
  const windowed = hashed || policies.some((p) => Object.keys(p.rate_limits).length > 0);
  const run = await runState(deps.bus, ctx, body.run_id, windowed, hashed);
  const action = {
    agent_id: body.agent_id,
    action_name: body.action_name,
    arguments: body.arguments,
    estimated_cost_usd: body.estimated_cost_usd ?? registered?.typical_cost_usd ?? 0,
    risk_level: registered?.risk_level ?? null,
    idempotency_key: body.idempotency_key,
    moderation_scores: body.moderation_scores,
  };
  // A span per decision (decision, rule, policy, intervention type, tool, agent; never the arguments) and agp_policy_decisions_total.
  const decision = tracedDecision('evaluate', action, () =>
    decide(policies, killSwitches, action, {
      now: now.getTime(),
      session_spend_usd: run.spend_usd,
      run_spend_usd: run.spend_usd,
      recent_calls: run.calls,
      idempotency_records: run.keys,
    }),
  );
  return { ...decision, context: { now: now.toISOString(), run_spend_usd: run.spend_usd, session_spend_usd: run.spend_usd, recent_calls: run.calls.length, run_found: run.found } };
}
