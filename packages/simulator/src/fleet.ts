import type { ActionDefinition, ActionRecord, AgentRegister, RiskLevel, RunEnd, RunStart } from '@agp/contracts';
import { RISK_LEVELS, roundUsd } from '@agp/contracts';
import { ACTIONS, type ActionSpec } from './catalogue.js';
import { createRng, type Rng } from './prng.js';
import { buildFleet, intervention, timeline, type SimulatedEvent, type SimulationPlan } from './simulate.js';

/**
 * The whole fleet as ingest events: agent registrations with their action definitions, runs (`run.start` …
 * `run.end`), the action ledger (`action.record` with estimated and actual costs) and, for the attempts a policy
 * stopped, `intervention.create`. Pure and seedable like {@link simulateEvents}; sending is `run-simulation.ts`.
 * Source: docs/ingest.md (Simulated data: `agp simulate`).
 */

/** One fleet ingest event: `{id, type, timestamp, body}`; `body` parses with the type's schema in `INGEST_BODY_SCHEMAS`. */
export type FleetEvent =
  | SimulatedEvent
  | { id: string; type: 'agent.register'; timestamp: string; body: AgentRegister }
  | { id: string; type: 'run.start'; timestamp: string; body: RunStart }
  | { id: string; type: 'run.end'; timestamp: string; body: RunEnd }
  | { id: string; type: 'action.record'; timestamp: string; body: ActionRecord & { cost_usd: number; duration_ms: number } };

/**
 * Execution cost of one call of each action, in USD (model tokens plus the tool's own API charge), as the agent-side
 * client estimates it: log-normal `median`/`sigma`. `bias` is the median of actual ÷ estimated (an estimator that
 * undercounts prompt tokens has bias > 1); `reported` is the share of calls whose provider reported an actual cost.
 * `ms` is the log-normal median duration.
 */
const EXECUTION: Readonly<Record<string, { median: number; sigma: number; bias: number; spread: number; reported: number; ms: number }>> = {
  refund_payment: { median: 0.012, sigma: 0.4, bias: 1.05, spread: 0.15, reported: 0.9, ms: 850 },
  transfer_funds: { median: 0.02, sigma: 0.4, bias: 1.0, spread: 0.1, reported: 0.9, ms: 1200 },
  delete_records: { median: 0.004, sigma: 0.5, bias: 1.1, spread: 0.2, reported: 0.6, ms: 400 },
  deploy_service: { median: 0.35, sigma: 0.6, bias: 1.4, spread: 0.35, reported: 0.8, ms: 45_000 },
  run_shell: { median: 0.006, sigma: 0.7, bias: 1.2, spread: 0.4, reported: 0.5, ms: 2500 },
  send_email: { median: 0.009, sigma: 0.5, bias: 0.95, spread: 0.15, reported: 0.95, ms: 600 },
  post_to_slack: { median: 0.003, sigma: 0.5, bias: 0.9, spread: 0.2, reported: 0.95, ms: 300 },
  query_customer_db: { median: 0.015, sigma: 0.6, bias: 1.25, spread: 0.3, reported: 0.85, ms: 700 },
  generate_report: { median: 0.42, sigma: 0.7, bias: 1.6, spread: 0.45, reported: 0.95, ms: 18_000 },
  update_crm_contact: { median: 0.006, sigma: 0.4, bias: 1.0, spread: 0.1, reported: 0.9, ms: 500 },
};

/** Share of attempts a policy intervenes on; the rest execute and land in the ledger. */
const INTERVENTION_SHARE = 0.2;
/** Runs in flight at once. */
const ACTIVE_RUNS = 4;

/** A ledger cost in USD: `roundUsd`, and at least a micro-dollar (ledger costs are fractions of a cent). */
const micro = (n: number) => Math.max(0.000001, roundUsd(n));

/** The JSON Schema of an action's parameters, from the shape of one sample of its arguments. */
function parametersSchema(sample: Record<string, unknown>): Record<string, unknown> {
  const typeOf = (v: unknown): Record<string, unknown> =>
    typeof v === 'number' ? { type: 'number' } : typeof v === 'boolean' ? { type: 'boolean' } : Array.isArray(v) ? { type: 'array' } : v && typeof v === 'object' ? parametersSchema(v as Record<string, unknown>) : { type: 'string' };
  return { type: 'object', properties: Object.fromEntries(Object.entries(sample).map(([k, v]) => [k, typeOf(v)])), required: Object.keys(sample) };
}

/**
 * The registered definition of a catalogue action: what the action does (its `summary`, never one call's intent),
 * the parameter schema (from a sample call's arguments), its most likely risk level and typical cost.
 */
function actionDefinition(spec: ActionSpec, rng: Rng): ActionDefinition {
  const sample = spec.inputs(rng, spec.cost.median);
  const risk = (Object.entries(spec.risk) as Array<[RiskLevel, number]>).sort((a, b) => b[1] - a[1] || RISK_LEVELS.indexOf(a[0]) - RISK_LEVELS.indexOf(b[0]))[0][0];
  return { name: spec.name, description: spec.summary, parameters: parametersSchema(sample), risk_level: risk, typical_cost_usd: EXECUTION[spec.name]?.median ?? 0.01 };
}

/**
 * Generate `plan.count` fleet events, lazily: first one `agent.register` per agent (ids `sim-<seed>-agent-<agent>`),
 * then runs of 3–12 attempts each, several in flight. Each attempt either executes (an `action.record` with a
 * log-normal estimated `cost_usd`, an `actual_cost_usd` skewed from it per action — some estimators undercount — for
 * most calls, a duration, outputs computed from its inputs (see {@link actionRecord}), and a 4% error rate) or is stopped by a policy (an `intervention.create` from
 * {@link intervention}). A run ends `completed`, or `failed` after an error; runs still in flight at the end stay
 * `running`. Event ids are `sim-<seed>-f<n>`; timestamps follow `plan.shape` like {@link simulateEvents}.
 * @throws RangeError when `plan.agents` < 1.
 */
export function* simulateFleetEvents(plan: SimulationPlan): Generator<FleetEvent> {
  const fleet = buildFleet(plan.seed, plan.agents);
  const rng = createRng(plan.seed ^ 0x00f1_ee75);
  const at = timeline(plan, createRng(plan.seed ^ 0x7133_11e5));
  let n = 0;
  const stamp = () => new Date(at(n)).toISOString();
  const id = () => `sim-${plan.seed}-f${n}`;

  for (const agent of fleet.agents) {
    if (n >= plan.count) return;
    const defs = Object.keys(agent.actions).map((name) => actionDefinition(ACTIONS[name], rng));
    const family = agent.id.replace(/-\d+$/, '');
    yield { id: `sim-${plan.seed}-agent-${agent.id}`, type: 'agent.register', timestamp: stamp(), body: { agent_id: agent.id, name: agent.id, description: `Simulated ${agent.description}`, framework: 'agp-simulate', owner: `${family}@example.com`, actions: defs } };
    n++;
  }

  const activity = Object.fromEntries(fleet.agents.map((a, i) => [String(i), a.activity]));
  type Run = { id: string; agent: (typeof fleet.agents)[number]; remaining: number; failed: boolean; started: boolean };
  const newRun = (): Run => ({ id: `run-${rng.uuid()}`, agent: fleet.agents[Number(rng.weighted(activity))], remaining: rng.int(3, 12), failed: false, started: false });
  const active = Array.from({ length: Math.min(ACTIVE_RUNS, fleet.agents.length) }, newRun);
  while (n < plan.count) {
    const slot = rng.int(0, active.length - 1);
    const run = active[slot];
    const timestamp = stamp();
    if (!run.started) {
      run.started = true;
      yield { id: id(), type: 'run.start', timestamp, body: { run_id: run.id, agent_id: run.agent.id, started_at: timestamp } };
    } else if (run.remaining === 0 || run.failed) {
      yield { id: id(), type: 'run.end', timestamp, body: { run_id: run.id, agent_id: run.agent.id, status: run.failed ? 'failed' : 'completed', ended_at: timestamp, ...(run.failed ? { error: 'action failed; run aborted' } : {}) } };
      active[slot] = newRun();
    } else {
      run.remaining--;
      if (rng.chance(INTERVENTION_SHARE)) {
        yield { id: id(), type: 'intervention.create', timestamp, body: intervention(rng, run.agent.id, run.agent.actions, run.id, timestamp) };
      } else {
        const record = actionRecord(rng, run.agent.id, run.agent.actions, run.id, timestamp);
        if (record.status === 'error' && rng.chance(0.5)) run.failed = true;
        yield { id: id(), type: 'action.record', timestamp, body: record };
      }
    }
    n++;
  }
}

/**
 * One executed action of a run, as a ledger entry. Its `outputs` are the action's `output(inputs)` (catalogue.ts): a
 * pure function of its inputs, so a replay reproduces them (examples/replay-handlers.mjs), except generate_report's
 * (a completion, drawn from the generator); a failed call (4%, `status: 'error'`, an upstream error message) has none.
 */
function actionRecord(rng: Rng, agentId: string, profile: Readonly<Record<string, number>>, runId: string, timestamp: string): Extract<FleetEvent, { type: 'action.record' }>['body'] {
  const spec = ACTIONS[rng.weighted(profile)];
  const x = EXECUTION[spec.name] ?? { median: 0.01, sigma: 0.5, bias: 1, spread: 0.2, reported: 0.8, ms: 500 };
  const estimate = micro(rng.logNormal(x.median, x.sigma));
  const error = rng.chance(0.04);
  const inputs = spec.inputs(rng, spec.cost.median);
  const body: Extract<FleetEvent, { type: 'action.record' }>['body'] = {
    run_id: runId,
    agent_id: agentId,
    action_name: spec.name,
    status: error ? 'error' : 'success',
    inputs,
    outputs: error ? null : spec.output(inputs, rng),
    cost_usd: estimate,
    duration_ms: Math.round(rng.logNormal(x.ms, 0.5)),
    timestamp,
  };
  if (rng.chance(x.reported)) body.actual_cost_usd = micro(estimate * rng.logNormal(x.bias, x.spread));
  if (error) body.error = rng.pick(['upstream timeout', 'rate limited by provider', 'validation error from the tool']);
  return body;
}
