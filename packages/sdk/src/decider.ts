/**
 * The decision step of `run.act`: from the governance snapshot, the run's state and one action, the decision. No
 * network and no state of its own beyond what it derives from the snapshot (once per snapshot):
 * - the fail-closed gate first (no snapshot under `failMode: 'closed'`, a stale one past `maxStaleness`, or an answer
 *   of the platform the SDK does not understand) → a `block` of the SDK's own ({@link failClosed});
 * - a fleet-wide limit the action needs that could not be leased, under `failMode: 'closed'` → a `block` of its own;
 * - else the policy engine's `decide()`, the same the platform's decision API runs, with the run's spend, its recent
 *   calls, the idempotency record of a repeated call and what the leases have left of each fleet-wide limit;
 * - a moderation guardrail that could not score the arguments fails closed ({@link moderationUnavailable}).
 * It also tells `run.act` what the snapshot asks of the run's state: the longest counting window, whether the
 * arguments' hash is needed, an action's idempotency TTL, whether a moderation guardrail applies.
 * Source: docs/sdk.md §Governing actions, §Fail modes; spec §Intervention types.
 */
import { POLICY_DECISIONS, type KillSwitchOverview } from '@agp/contracts';
import { decide, PreparedPolicies, reviewResult, RULE_RISK, type DecisionContext, type PolicyAction, type QuotaView, type RecentCall } from '@agp/policy-engine';
import type { GovernanceDecision } from './errors.js';
import type { Moderated } from './moderation-scores.js';
import type { ActionSchemas } from './schema.js';
import type { SnapshotSource } from './snapshot.js';

/** The state of one run the decision counts: spend (USD) of the run and of its session, and its executed calls, oldest first. */
export interface RunState {
  spendUsd: number;
  sessionSpendUsd: number;
  calls: ReadonlyArray<RecentCall & { arguments_hash?: string }>;
}

/**
 * One action to decide. `key`: its idempotency key when one applies (the caller's `idempotencyKey`, else the
 * arguments' hash when a guardrail needs it); `repeats`: when the cached result of the same action under `key` was
 * produced (ms since the epoch), while it is still cached; `moderation`: the provider's scores when a moderation
 * guardrail applies.
 */
export interface ActionToDecide {
  name: string;
  args: Record<string, unknown>;
  estimatedUsd: number;
  /** The caller's explicit `idempotencyKey`, when given (the engine names it in its decision). */
  explicitKey: string | undefined;
  key: string | undefined;
  repeats: number | undefined;
  moderation: Moderated | undefined;
  /** What the governor's leases have left of each fleet-wide limit the action counts against (./leases.ts), when any. */
  quota: QuotaView | undefined;
  /** Why a fleet-wide limit the action needs could not be leased (the platform unreachable), or null. */
  quotaUnavailable: string | null;
}

/** Settings of the fail-closed gate. Durations in ms. */
export interface GateSettings {
  url: string;
  failMode: 'closed' | 'open';
  maxStaleness: number;
}

const NO_KILL_SWITCHES: KillSwitchOverview = {
  organization: { scope: 'organization', agent_id: null, engaged: false, reason: null, changed_at: null, changed_by: null, actor_name: null, version: 0 },
  agents: [],
};
const NO_POLICIES: never[] = [];

/** A policy's moderation guardrail, as the fail-closed rule needs it. */
export interface ModerationGuardrailOf {
  policy_id: string;
  policy_name: string;
  mode: 'block' | 'warn';
}

/** What the snapshot's policies ask of the SDK's state, computed once per snapshot. */
interface SnapshotFacts {
  longestWindowMs: number;
  needsArgsHash: boolean;
  idempotency: Array<{ actions: string[]; ttlMs: number }> | null;
  /** The applicable policies with a moderation guardrail, in the snapshot's order; null for none. */
  moderation: ModerationGuardrailOf[] | null;
  /** The snapshot's policies prepared for `decide` (an action none of them can stop is answered without evaluating each). */
  prepared: PreparedPolicies;
  /** Whether a policy's PII guardrail scans results (`results` set). */
  scansResults: boolean;
}

/** See the module docs. */
export class Decider {
  private factsOf: unknown = null;
  private cachedFacts: SnapshotFacts | null = null;

  constructor(
    private readonly snapshot: SnapshotSource,
    private readonly schemas: ActionSchemas,
    private readonly agentId: string,
    private readonly gate: GateSettings,
  ) {}

  /** Why `act` must fail closed now, or null. */
  gateReason(): string | null {
    const s = this.snapshot;
    if (s.incompatible) return s.incompatible;
    const age = s.ageMs();
    if (age === null) return this.gate.failMode === 'closed' ? `no policy snapshot has been loaded from ${this.gate.url} yet and failMode is closed${s.lastError ? ` (${s.lastError})` : ''}` : null;
    if (age > this.gate.maxStaleness) return `the policy snapshot is ${age} ms old, past maxStaleness ${this.gate.maxStaleness} ms${s.lastError ? ` (${s.lastError})` : ''}`;
    return null;
  }

  /** The decision for action `a` of a run in state `run`: the fail-closed gate, else the engine. */
  decide(a: ActionToDecide, run: RunState): GovernanceDecision {
    const risk = this.schemas.definition(a.name)?.risk_level ?? null;
    const closedReason = this.gateReason();
    if (closedReason) return failClosed(closedReason, a.estimatedUsd, risk ?? 'high');
    // A fleet-wide limit that could not be leased: failMode closed blocks; open decides without it (this process counts alone).
    if (a.quotaUnavailable !== null && this.gate.failMode === 'closed') return failClosed(`${a.quotaUnavailable}; failMode is closed`, a.estimatedUsd, risk ?? 'high');
    const action: PolicyAction = { agent_id: this.agentId, action_name: a.name, arguments: a.args, estimated_cost_usd: a.estimatedUsd, risk_level: risk };
    if (a.explicitKey !== undefined) action.idempotency_key = a.explicitKey;
    const moderation = a.moderation;
    if (moderation && 'scores' in moderation) action.moderation_scores = moderation.scores;
    const now = Date.now();
    const context: DecisionContext = {
      now,
      run_spend_usd: run.spendUsd,
      session_spend_usd: run.sessionSpendUsd,
      // The run's calls with their arguments hashes (rate limits and the loop guardrail count them), and the
      // idempotency key this call repeats while its result is still cached (the idempotency guardrail replays it).
      recent_calls: run.calls as RecentCall[],
      idempotency_records: a.key !== undefined && a.repeats !== undefined ? [{ action_name: a.name, idempotency_key: a.key, at: a.repeats }] : [],
      quota: a.quota,
    };
    const d = decide(this.facts().prepared, this.snapshot.current?.killSwitches ?? NO_KILL_SWITCHES, action, context);
    // An allow is acted on, never shown to the caller: no copy (the hot path).
    if (d.decision === 'allow' && !(moderation && 'error' in moderation)) return d as unknown as GovernanceDecision;
    const out = { ...d, ...(d.guardrail_context ? { context: d.guardrail_context as Record<string, unknown> } : {}) } as GovernanceDecision;
    if (moderation && 'error' in moderation) return moderationUnavailable(out, this.facts().moderation ?? [], a.name, moderation.error, a.estimatedUsd, risk);
    return out;
  }

  /** Whether any applicable policy has a moderation guardrail (`act` then asks the provider first). */
  moderates(): boolean {
    return this.facts().moderation !== null;
  }

  /** How long results of `name` are kept for the idempotency guardrail (ms), or null when no policy asks. */
  idempotencyTtlMs(name: string): number | null {
    const f = this.facts();
    if (!f.idempotency) return null;
    let ttl: number | null = null;
    for (const g of f.idempotency) if (g.actions.includes(name) || g.actions.includes('*')) ttl = Math.max(ttl ?? 0, g.ttlMs);
    return ttl;
  }

  /**
   * The PII guardrail's verdict on the result `out` of action `name` (policies with `results` set; see
   * `reviewResult` of @agp/policy-engine): null when nothing is to be done (no policy scans results, or none found
   * personal data); else `pii_blocked` (withhold the result), `downgrade` (`result` is the masked copy) or `warn`,
   * as a decision to record with the call (`context` the guardrail's payload, `cost_prevented_usd` 0: the action ran).
   */
  reviewResult(name: string, out: unknown, estimatedUsd: number): { decision: GovernanceDecision; result: unknown } | null {
    const f = this.facts();
    if (!f.scansResults || out === null || typeof out !== 'object') return null;
    const r = reviewResult(f.prepared, this.agentId, name, out);
    if (r.outcome === 'pass') return null;
    const [decision, type, outcome] = r.outcome === 'block' ? ['pii_blocked', 'pii_blocked', 'blocked'] : r.outcome === 'redact' ? ['downgrade', 'downgrade', 'modified'] : ['warn', 'warning', 'warned'];
    return {
      result: r.result,
      decision: {
        decision,
        intervention_type: type,
        outcome,
        rule: 'pii_guardrail',
        policy_id: r.policy_id,
        policy_name: r.policy_name,
        reason: r.reason ?? '',
        risk_level: RULE_RISK.pii_guardrail,
        estimated_cost_usd: estimatedUsd,
        cost_prevented_usd: 0,
        ...(r.guardrail_context ? { context: r.guardrail_context as Record<string, unknown> } : {}),
      },
    };
  }

  /** The longest window (ms) of any rate limit or loop guardrail of the snapshot's policies; 0 for none. */
  longestWindowMs(): number {
    return this.facts().longestWindowMs;
  }

  /** Whether any applicable policy has a loop or idempotency guardrail (the argument hash is then computed). */
  needsArgsHash(): boolean {
    return this.facts().needsArgsHash;
  }

  /** What the snapshot's policies ask of the SDK's state, computed once per snapshot. */
  private facts(): SnapshotFacts {
    const policies = this.snapshot.current?.policies ?? NO_POLICIES;
    if (this.factsOf === policies && this.cachedFacts) return this.cachedFacts;
    const f: SnapshotFacts = { longestWindowMs: 0, needsArgsHash: false, idempotency: null, moderation: null, prepared: new PreparedPolicies(policies), scansResults: false };
    for (const p of policies) {
      for (const k in p.rate_limits) f.longestWindowMs = Math.max(f.longestWindowMs, p.rate_limits[k].window_seconds * 1000);
      const g = (p as { guardrails?: { loop?: { window_seconds?: number } | null; idempotency?: { actions?: string[]; ttl_seconds?: number } | null; moderation?: { mode?: string } | null } | null }).guardrails;
      if ((g as { pii?: { results?: string } | null } | null | undefined)?.pii?.results !== undefined) f.scansResults = true;
      if (g?.moderation) (f.moderation ??= []).push({ policy_id: p.id, policy_name: p.name, mode: g.moderation.mode === 'warn' ? 'warn' : 'block' });
      if (g?.loop) {
        f.needsArgsHash = true;
        if (g.loop.window_seconds) f.longestWindowMs = Math.max(f.longestWindowMs, g.loop.window_seconds * 1000);
      }
      if (g?.idempotency && Array.isArray(g.idempotency.actions)) {
        f.needsArgsHash = true;
        (f.idempotency ??= []).push({ actions: g.idempotency.actions, ttlMs: (g.idempotency.ttl_seconds ?? 3600) * 1000 });
      }
    }
    this.factsOf = policies;
    this.cachedFacts = f;
    return f;
  }
}

const rankOf = (decision: string) => {
  const i = (POLICY_DECISIONS as readonly string[]).indexOf(decision);
  return i < 0 ? 0 : i;
};

/**
 * The decision when the moderation guardrail could not score the arguments (no provider, provider error or timeout,
 * an answer of the wrong shape). A guardrail that cannot look acts as if it had found something, without a context:
 * - a `block`-mode moderation guardrail applies → the action is blocked (`block` / `hard_block`, rule
 *   `moderation_guardrail`, the guardrail's policy, a reason naming the failure), unless `d` is already at least as
 *   restrictive (a kill switch, a deny list, the PII guardrail: the engine's precedence);
 * - only `warn`-mode ones → `d` when something else decided, else a warning naming the failure.
 */
export function moderationUnavailable(d: GovernanceDecision, guardrails: ModerationGuardrailOf[], name: string, error: string, estimated: number, risk: GovernanceDecision['risk_level'] | null): GovernanceDecision {
  const blocking = guardrails.find((g) => g.mode === 'block');
  const g = blocking ?? guardrails[0];
  if (!g) return d;
  const why = `${name} arguments could not be moderated (${error})`;
  const base = { rule: 'moderation_guardrail', policy_id: g.policy_id, policy_name: g.policy_name, risk_level: risk ?? RULE_RISK.moderation_guardrail, estimated_cost_usd: estimated };
  if (blocking) {
    if (rankOf(d.decision) <= rankOf('content_blocked')) return d;
    return { ...base, decision: 'block', intervention_type: 'hard_block', outcome: 'blocked', reason: `${why}; the moderation guardrail of policy "${g.policy_name}" fails closed`, cost_prevented_usd: estimated };
  }
  if (d.decision !== 'allow') return d;
  return { ...base, decision: 'warn', intervention_type: 'warning', outcome: 'warned', reason: `${why}; warned by the moderation guardrail of policy "${g.policy_name}"`, cost_prevented_usd: 0 };
}

/** A decision the SDK takes itself when it cannot trust its snapshot (or cannot record): block, no policy. */
export function failClosed(reason: string, estimated: number, risk: GovernanceDecision['risk_level']): GovernanceDecision {
  return { decision: 'block', intervention_type: 'hard_block', outcome: 'blocked', rule: null, policy_id: null, policy_name: null, reason, risk_level: risk, estimated_cost_usd: estimated, cost_prevented_usd: estimated };
}
