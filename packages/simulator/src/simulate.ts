import { createHash } from 'node:crypto';
import type { CreateIntervention, GuardrailContext, InterventionOutcome, InterventionType, RiskLevel } from '@agp/contracts';
import { RISK_LEVELS } from '@agp/contracts';
import {
  ACTIONS,
  AGENT_FAMILIES,
  HARD_BLOCK_REASONS,
  MODERATION_PHRASES,
  POLICIES,
  TYPE_LABELS,
  TYPE_WEIGHTS,
  WARNING_FLAGS,
  fakePii,
  maskMatch,
  moderationMatch,
  piiPhrase,
  type ActionSpec,
  type PiiCategory,
  type PolicySpec,
} from './catalogue.js';
import { createRng, type Rng } from './prng.js';

/**
 * A pure, seedable generator of a realistic agent fleet's interventions, as `intervention.create` ingest events.
 * Sending is separate (`run-simulation.ts`), so everything here is deterministic and unit-tested without I/O.
 */

/** A simulated agent: its id (`billing-agent-3`), what it does, the actions it attempts (relative weights) and how busy it is. */
export interface SimAgent {
  id: string;
  /** What the agent does (its family's description), e.g. `billing agent: refunds, transfers and …`. */
  description: string;
  actions: Readonly<Record<string, number>>;
  /** Relative chance that the agent starts the next run. */
  activity: number;
}

/** The agents and policies of a simulation. */
export interface Fleet {
  agents: SimAgent[];
  policies: readonly PolicySpec[];
}

/** What to generate. Same plan, same events. */
export interface SimulationPlan {
  /** PRNG seed; also part of every event id (`sim-<seed>-<n>`). */
  seed: number;
  /** Number of agents, at least 1. */
  agents: number;
  /** Number of events. */
  count: number;
  /** Timestamp of the first event, ms since the epoch. */
  fromMs: number;
  /** Timestamp bound of the last event, ms since the epoch. */
  toMs: number;
  /**
   * `uniform`: event n at `fromMs + n × (toMs − fromMs) / count`, matching a sender paced at a constant rate.
   * `daily`: a backfill shape: busier in UTC working hours and on weekdays, growing over the period, with day-to-day noise.
   * @default 'uniform'
   */
  shape?: 'uniform' | 'daily';
}

/** One generated ingest event; `body` parses with `CreateInterventionSchema`. */
export interface SimulatedEvent {
  /** `sim-<seed>-<n>`, n from 0: the idempotency key, so a re-run with the same seed re-sends the same ids. */
  id: string;
  type: 'intervention.create';
  /** ISO 8601 UTC; equal to `body.timestamp`. */
  timestamp: string;
  body: CreateIntervention & { run_id: string; policy_id: string; policy_name: string; risk_level: RiskLevel; estimated_cost_usd: number };
}

/** Outcome mix of each type: blocks for the blocking guards, review outcomes for approvals. */
const OUTCOMES: Readonly<Record<InterventionType, Readonly<Partial<Record<InterventionOutcome, number>>>>> = {
  hard_block: { blocked: 1 },
  approval_required: { escalated: 55, approved_after_review: 25, rejected_after_review: 20 },
  rate_limited: { blocked: 1 },
  budget_exceeded: { blocked: 85, escalated: 15 },
  pii_blocked: { blocked: 1 },
  content_blocked: { blocked: 1 },
  loop_detected: { blocked: 1 },
  idempotent_replay: { blocked: 1 },
  downgrade: { modified: 1 },
  warning: { warned: 1 },
};

/** Concurrently active runs; a run's interventions interleave with those of the others. */
const ACTIVE_RUNS = 4;

/**
 * The fleet of a seed: `agents` agents named `<family>-<k>` over six families (billing, support, devops, finance,
 * data, sales), family order shuffled by the seed, with log-normal activity, plus the six policies.
 * @throws RangeError when `agents` < 1.
 */
export function buildFleet(seed: number, agents: number): Fleet {
  if (!Number.isInteger(agents) || agents < 1) throw new RangeError(`agents must be a positive integer, got ${agents}`);
  const rng = createRng(seed ^ 0x5eed_f1ee);
  const families = [...AGENT_FAMILIES];
  for (let i = families.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [families[i], families[j]] = [families[j], families[i]];
  }
  return {
    agents: Array.from({ length: agents }, (_, i) => {
      const family = families[i % families.length];
      return { id: `${family.stem}-${Math.floor(i / families.length) + 1}`, description: family.description, actions: family.actions, activity: rng.logNormal(1, 0.6) };
    }),
    policies: POLICIES,
  };
}

/**
 * Generate `plan.count` intervention events, lazily. Agents work in runs (`run-<uuid>`, 3–12 interventions
 * each, several runs in flight); each intervention picks an action from its agent's profile, a type that fits
 * the action (all ten appear), an outcome that fits the type (all six appear), a risk level correlated with the
 * action, a log-normal estimated cost in USD, and the guardrail context for the four guardrail types.
 * @throws RangeError when `plan.agents` < 1.
 */
export function* simulateEvents(plan: SimulationPlan): Generator<SimulatedEvent> {
  const fleet = buildFleet(plan.seed, plan.agents);
  const rng = createRng(plan.seed);
  const at = timeline(plan, createRng(plan.seed ^ 0x7133_11e5));
  const activity = Object.fromEntries(fleet.agents.map((a, i) => [String(i), a.activity]));
  let runsStarted = 0;
  const newRun = () => {
    // The first runs go round-robin so that every agent shows up; later ones follow activity.
    const agent = runsStarted < fleet.agents.length ? fleet.agents[runsStarted] : fleet.agents[Number(rng.weighted(activity))];
    runsStarted++;
    return { id: `run-${rng.uuid()}`, agent, remaining: rng.int(3, 12) };
  };
  const active = Array.from({ length: Math.min(ACTIVE_RUNS, fleet.agents.length) }, newRun);
  for (let n = 0; n < plan.count; n++) {
    const slot = rng.int(0, active.length - 1);
    const run = active[slot];
    const timestamp = new Date(at(n)).toISOString();
    yield { id: `sim-${plan.seed}-${n}`, type: 'intervention.create', timestamp, body: intervention(rng, run.agent.id, run.agent.actions, run.id, timestamp) };
    if (--run.remaining === 0) active[slot] = newRun();
  }
}

/**
 * Build one intervention body for an attempt of one of the agent's actions (weighted by `profile`) in run `runId`.
 * Also used by the fleet generator (fleet.ts). Pure given `rng`.
 */
export function intervention(rng: Rng, agentId: string, profile: Readonly<Record<string, number>>, runId: string, timestamp: string): SimulatedEvent['body'] {
  const action = ACTIONS[rng.weighted(profile)];
  const type = rng.weighted(Object.fromEntries(action.types.map((t) => [t, TYPE_WEIGHTS[t]])) as Record<InterventionType, number>);
  const outcome = rng.weighted(OUTCOMES[type]);
  const policy = rng.pick(POLICIES.filter((p) => p.types.includes(type)));
  const cost = money(Math.min(25_000, rng.logNormal(action.cost.median, action.cost.sigma)));
  const inputs = action.inputs(rng, cost);
  let risk: RiskLevel = rng.weighted(action.risk);
  const body: SimulatedEvent['body'] = {
    type,
    outcome,
    action_name: action.name,
    agent_id: agentId,
    run_id: runId,
    policy_id: policy.id,
    policy_name: policy.name,
    risk_level: risk,
    estimated_cost_usd: cost,
    description: `${TYPE_LABELS[type]}: ${agentId} attempted ${action.name} (${policy.name})`,
    agent_intent: action.intent(inputs),
    blast_radius: action.blastRadius(inputs),
    reason: '',
    original_inputs: inputs,
    modified_inputs: null,
    timestamp,
  };
  let executedCost = cost;
  switch (type) {
    case 'hard_block':
      body.reason = rng.pick(HARD_BLOCK_REASONS)(action.name, agentId);
      break;
    case 'approval_required': {
      const threshold = [1000, 500, 100, 25].find((t) => t < cost);
      body.reason =
        threshold && rng.chance(0.6)
          ? `${action.name} of $${cost.toFixed(2)} is above the $${threshold} auto-approval threshold and needs a human`
          : `${risk}-risk action ${action.name} requires human approval`;
      break;
    }
    case 'rate_limited': {
      const limit = rng.pick([5, 10, 30, 60]);
      body.reason = `${action.name} called ${limit + rng.int(1, limit)} times in the last 60s; the limit is ${limit} per 60s`;
      break;
    }
    case 'budget_exceeded': {
      const budget = rng.pick([5, 20, 50, 100, 500, 2000]);
      const spent = money(budget * (0.7 + rng.next() * 0.3));
      body.reason = `Run budget of $${budget.toFixed(2)} would be exceeded: $${spent.toFixed(2)} spent, this call is estimated at $${cost.toFixed(2)}`;
      break;
    }
    case 'pii_blocked': {
      const ctx = injectPii(rng, action, inputs);
      body.context = ctx;
      body.reason = `Arguments contain ${ctx.categories.join(', ')} in ${ctx.fields.join(', ')}`;
      if (ctx.categories.includes('credit_card') || ctx.categories.includes('us_ssn')) risk = atLeast(risk, 'high');
      break;
    }
    case 'content_blocked': {
      const ctx = injectModeration(rng, action, inputs);
      body.context = ctx;
      body.reason = `Moderation flagged ${ctx.categories.join(', ')} (score ${Math.max(...ctx.matches.map((m) => m.score)).toFixed(2)}) in ${ctx.fields.join(', ')}`;
      break;
    }
    case 'loop_detected': {
      const threshold = rng.pick([3, 5, 10]);
      const ctx: GuardrailContext = {
        guardrail_schema_version: 1,
        guardrail: 'loop',
        action_name: action.name,
        arguments_hash: sha256(inputs),
        repeat_count: threshold + rng.int(1, threshold * 2),
        threshold,
        window_seconds: rng.pick([30, 60, 300, 900]),
      };
      body.context = ctx;
      body.reason = `${action.name} repeated ${ctx.repeat_count} times with identical arguments within ${ctx.window_seconds}s (threshold ${threshold})`;
      break;
    }
    case 'idempotent_replay': {
      const ctx: GuardrailContext = {
        guardrail_schema_version: 1,
        guardrail: 'idempotency',
        idempotency_key: `${action.name}:${sha256(inputs).slice(0, 24)}`,
        original_timestamp: new Date(Date.parse(timestamp) - rng.int(5, 6 * 3600) * 1000).toISOString(),
        cached_result_ref: `cache://results/${rng.uuid()}`,
      };
      body.context = ctx;
      body.reason = `Duplicate ${action.name} call with idempotency key ${ctx.idempotency_key}; returned the cached result from ${ctx.original_timestamp}`;
      break;
    }
    case 'downgrade': {
      const d = action.downgrade!(inputs);
      body.modified_inputs = d.inputs;
      body.reason = d.reason;
      executedCost = money(cost * d.costFactor);
      body.cost_prevented_usd = Math.max(0, Math.round((cost - executedCost) * 100) / 100);
      break;
    }
    case 'warning':
      body.reason = `${action.name} allowed but flagged: ${rng.pick(WARNING_FLAGS)}`;
      break;
  }
  body.risk_level = risk;
  if (outcome === 'blocked' || outcome === 'rejected_after_review') body.cost_prevented_usd = cost;
  if ((outcome === 'warned' || outcome === 'approved_after_review' || outcome === 'modified') && rng.chance(0.7)) {
    body.actual_cost_usd = money(executedCost * rng.logNormal(1, 0.3));
  }
  if (rng.chance(0.35)) body.remediation_payload = { suggested_rewrite: rewrite(rng, body) };
  return body;
}

/** Put 1–2 fake personal-data values into the action's PII slots; the context lists each, masked. */
function injectPii(rng: Rng, action: ActionSpec, inputs: Record<string, unknown>): Extract<GuardrailContext, { guardrail: 'pii' }> {
  const slots = [...action.piiSlots];
  const matches: Array<{ category: PiiCategory; field_path: string; matched_text: string }> = [];
  for (let k = rng.int(1, Math.min(2, slots.length)); k > 0; k--) {
    const slot = slots.splice(rng.int(0, slots.length - 1), 1)[0];
    const category = rng.pick(slot.categories);
    const value = fakePii(rng, category);
    setPath(inputs, slot.path, slot.mode === 'replace' ? value : `${String(getPath(inputs, slot.path) ?? '')} ${(slot.phrase ?? piiPhrase)(category, value)}`.trim());
    matches.push({ category, field_path: slot.path, matched_text: maskMatch(category, value) });
  }
  return { guardrail_schema_version: 1, guardrail: 'pii', matches, categories: unique(matches.map((m) => m.category)), fields: unique(matches.map((m) => m.field_path)) };
}

/** Append a flagged phrase to one of the action's free-text fields; the context scores it. */
function injectModeration(rng: Rng, action: ActionSpec, inputs: Record<string, unknown>): Extract<GuardrailContext, { guardrail: 'moderation' }> {
  const path = rng.pick(action.textSlots);
  const category = rng.pick(Object.keys(MODERATION_PHRASES));
  const phrase = moderationMatch(rng.pick(MODERATION_PHRASES[category]));
  setPath(inputs, path, `${String(getPath(inputs, path) ?? '')} ${phrase.text}`.trim());
  const score = Math.round((0.7 + rng.next() * 0.29) * 1000) / 1000;
  return {
    guardrail_schema_version: 1,
    guardrail: 'moderation',
    matches: [{ category, field_path: path, matched_text: phrase.masked, score }],
    categories: [category],
    fields: [path],
  };
}

/** A suggested rewrite for the agent, by type. */
function rewrite(rng: Rng, b: SimulatedEvent['body']): string {
  const fields = b.context && 'fields' in b.context ? b.context.fields.join(', ') : 'the flagged fields';
  switch (b.type) {
    case 'hard_block':
      return `Open a change request and let an operator run ${b.action_name}`;
    case 'approval_required':
      return `Submit ${b.action_name} through the approval inbox with a ticket reference and the customer's consent`;
    case 'rate_limited':
      return `Batch the ${b.action_name} calls and retry after ${rng.pick([10, 30, 60])}s`;
    case 'budget_exceeded':
      return `Request a budget increase for ${b.run_id} or split the work across runs`;
    case 'pii_blocked':
      return `Remove or tokenise ${fields} before calling ${b.action_name}`;
    case 'content_blocked':
      return `Rewrite ${fields} in a neutral, professional tone`;
    case 'loop_detected':
      return `Check the previous result of ${b.action_name} before retrying, and back off exponentially`;
    case 'idempotent_replay':
      return `Reuse the cached result instead of calling ${b.action_name} again`;
    case 'downgrade':
      return `Call ${b.action_name} with ${JSON.stringify(b.modified_inputs)} from the start`;
    case 'warning':
      return `Add a justification when calling ${b.action_name}`;
  }
}

/**
 * Timestamp (ms) of event n. `uniform` is exact pacing; `daily` samples a stratified inverse CDF over hourly
 * weights, so timestamps stay in order.
 */
export function timeline(plan: SimulationPlan, rng: Rng): (n: number) => number {
  const span = Math.max(0, plan.toMs - plan.fromMs);
  if ((plan.shape ?? 'uniform') === 'uniform' || span < 3_600_000) return (n) => plan.fromMs + Math.floor((n * span) / Math.max(1, plan.count));
  const hours = Math.ceil(span / 3_600_000);
  const cumulative: number[] = [];
  let total = 0;
  let dayNoise = 1;
  for (let h = 0; h < hours; h++) {
    const t = new Date(plan.fromMs + h * 3_600_000);
    if (h === 0 || t.getUTCHours() === 0) dayNoise = 0.75 + rng.next() * 0.5;
    const hourOfDay = t.getUTCHours();
    const weekday = t.getUTCDay() === 0 || t.getUTCDay() === 6 ? 0.35 : 1;
    const working = 0.2 + Math.exp(-((hourOfDay - 14) ** 2) / 18);
    const growth = 0.6 + 0.8 * (h / hours);
    total += weekday * working * growth * dayNoise;
    cumulative.push(total);
  }
  return (n) => {
    const target = ((n + rng.next()) / plan.count) * total;
    let lo = 0;
    let hi = hours - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    const before = lo === 0 ? 0 : cumulative[lo - 1];
    const within = (target - before) / (cumulative[lo] - before);
    return Math.min(plan.toMs, plan.fromMs + Math.floor((lo + within) * 3_600_000));
  };
}

function atLeast(level: RiskLevel, floor: RiskLevel): RiskLevel {
  return RISK_LEVELS.indexOf(level) > RISK_LEVELS.indexOf(floor) ? floor : level;
}

/** USD rounded to cents, at least one cent. */
export function money(n: number): number {
  return Math.max(0.01, Math.round(n * 100) / 100);
}

function sha256(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
  o[keys[keys.length - 1]] = value;
}
