/**
 * Block-rate alerts: governed decisions are counted per agent and second (`agp_decision_counts`) from every path that
 * governs — the ledger entries the SDKs and the MCP proxy record (a projection over `ActionRecorded`: status `blocked`
 * stopped the action) and the decision API's enforcing form (`reserve: true`) — and after each count the agents
 * counted are checked:
 * - `block_rate.spike`: each enabled subscription that asked for it and lets the agent through its filter has its
 *   rule (`filter.block_rate`, default 0.5 over 300 s after 20 decisions); a tripped rule enqueues one delivery and
 *   marks the (subscription, agent) as spiking, so it is sent again only after the rate fell back to the threshold.
 * - `auto_kill_switch`: each enabled policy that applies to the agent and has the rule; a tripped rule engages the
 *   agent's own kill switch (unless it is engaged), recorded as actor `rule:auto_kill_switch:<policy id>` with a reason
 *   naming the rule, which the webhooks send as `kill_switch.changed`. Decisions before a person last released the
 *   switch do not count, so a release is not undone at once by the decisions that tripped it.
 * A plain evaluate is a read and counts nothing. Source: docs/notifications.md (Alerts; Automatic kill switch).
 */
import { ActionRecordedDataSchema, BlockRateRuleSchema, DEFAULT_BLOCK_RATE_RULE, RunEvents, type AutoKillSwitch, type Policy, type WebhookFilter } from '@agp/contracts';
import type { Sql, SqlExecutor, StoredEvent } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';
import { applicablePolicies } from '../queries.js';
import { subscriptionWants, type WebhookEvent } from '../webhooks/events.js';
import { payloadOf } from '../webhooks/projection.js';
import { deliveryId, enqueueDeliveries, type NewDelivery } from '../webhooks/store.js';
import { autoKillReason, blockRateOf, trips } from './rules.js';
import { addDecisionCounts, pruneDecisionCounts, tallies, type DecisionCount } from './store.js';

/** Name (and checkpoint) of the projection that counts ledger entries as decisions. */
export const DECISION_COUNTS_PROJECTION = 'policies-decision-counts';
/** The event types it reads. */
export const DECISION_COUNT_EVENT_TYPES: string[] = [RunEvents.ActionRecorded];

/** The decision counts of a batch of ledger events: one decision per entry, stopped when its status is `blocked`, at the second it was recorded. */
export function countsOfLedger(events: readonly StoredEvent[]): DecisionCount[] {
  const out: DecisionCount[] = [];
  for (const e of events) {
    if (e.type !== RunEvents.ActionRecorded) continue;
    const d = ActionRecordedDataSchema.pick({ agent_id: true, status: true }).safeParse(e.data);
    if (!d.success) continue;
    out.push({ organization_id: e.metadata.organization_id, agent_id: d.data.agent_id, second: Math.floor(new Date(e.recorded_at).getTime() / 1000), decisions: 1, stopped: d.data.status === 'blocked' ? 1 : 0 });
  }
  return out;
}

/** An automatic kill switch to engage: the agent, the policy whose rule tripped, and the reason to record. */
export interface AutoKillTrip {
  organization_id: string;
  agent_id: string;
  policy: Pick<Policy, 'id' | 'name'>;
  reason: string;
}

const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/**
 * Check `agents` of `org` at `nowMs` in `tx`: enqueue the `block_rate.spike` deliveries of the rules that tripped
 * (and clear the spikes that ended), and return the automatic kill switches to engage.
 */
export async function checkAgents(tx: SqlExecutor, org: string, agents: readonly string[], nowMs: number): Promise<{ trips: AutoKillTrip[]; enqueued: boolean }> {
  const nowSecond = Math.floor(nowMs / 1000);
  const at = new Date(nowMs).toISOString();
  const { rows: subs } = await tx.query<{ id: string; events: unknown; filter: unknown }>(
    `SELECT id, events, filter FROM agp_webhooks WHERE organization_id = $1 AND enabled AND events @> '["block_rate.spike"]'::jsonb`,
    [org],
  );
  const { rows: ruled } = await tx.query<{ n: number | string }>(
    `SELECT count(*) AS n FROM agp_policies WHERE organization_id = $1 AND enabled AND jsonb_typeof(doc->'auto_kill_switch') = 'object'`,
    [org],
  );
  const rules = subs.map((s) => {
    const filter = s.filter === null ? null : json<WebhookFilter>(s.filter);
    return { id: s.id, events: json<string[]>(s.events), filter, rule: filter?.block_rate ? BlockRateRuleSchema.parse(filter.block_rate) : DEFAULT_BLOCK_RATE_RULE };
  });
  // Per agent: the policies with a rule that apply to it, and since when its own switch counts (a person's release).
  const policies = new Map<string, Array<{ policy: Policy; rule: AutoKillSwitch; from: number }>>();
  if (Number(ruled[0].n) > 0) {
    const { rows: switches } = await tx.query<{ agent_id: string; engaged: boolean; changed_at: string | null }>(
      `SELECT agent_id, engaged, doc->>'changed_at' AS changed_at FROM agp_kill_switches WHERE organization_id = $1 AND scope = 'agent' AND agent_id = ANY($2::text[])`,
      [org, [...agents]],
    );
    for (const agent of agents) {
      const sw = switches.find((s) => s.agent_id === agent);
      if (sw?.engaged) continue;
      const released = sw?.changed_at ? Math.floor(new Date(sw.changed_at).getTime() / 1000) : 0;
      const list = (await applicablePolicies(tx, org, agent)).flatMap((p) => (p.auto_kill_switch ? [{ policy: p, rule: p.auto_kill_switch, from: Math.max(nowSecond - p.auto_kill_switch.window_seconds, released) }] : []));
      if (list.length) policies.set(agent, list);
    }
  }
  if (rules.length === 0 && policies.size === 0) return { trips: [], enqueued: false };
  const windows = [
    ...new Map(rules.map((r) => [`w${r.rule.window_seconds}`, { key: `w${r.rule.window_seconds}`, from: nowSecond - r.rule.window_seconds }])).values(),
    ...[...policies].flatMap(([agent, list]) => list.map((p) => ({ key: `p${agent}\0${p.policy.id}`, from: p.from }))),
  ];
  const tally = await tallies(tx, org, agents, windows, nowSecond);

  const out: NewDelivery[] = [];
  for (const agent of agents) {
    for (const r of rules) {
      const ev = { kind: 'block_rate.spike' as const, agents: [agent], intervention_type: null, risk_level: null };
      if (!subscriptionWants(r.events, r.filter, ev)) continue;
      const t = tally(agent, `w${r.rule.window_seconds}`);
      if (!trips(r.rule, t)) {
        await tx.query('DELETE FROM agp_block_rate_spikes WHERE webhook_id = $1 AND agent_id = $2', [r.id, agent]);
        continue;
      }
      const { rows } = await tx.query<{ since: string | number }>(
        'INSERT INTO agp_block_rate_spikes (webhook_id, agent_id, organization_id, since) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING since',
        [r.id, agent, org, nowSecond],
      );
      if (!rows[0]) continue; // already told of this spike
      const event: WebhookEvent = {
        ...ev,
        key: `block_rate.spike:${agent}:${rows[0].since}`,
        organization_id: org,
        at,
        data: { agent_id: agent, block_rate: Number(blockRateOf(t).toFixed(6)), stopped: t.stopped, decisions: t.decisions, window_seconds: r.rule.window_seconds, threshold: r.rule.threshold, min_actions: r.rule.min_actions, at },
      };
      out.push({ id: deliveryId(r.id, event.key), organization_id: org, webhook_id: r.id, event: event.kind, payload: payloadOf(event) });
    }
  }
  await enqueueDeliveries(tx, out, new Date(nowMs));

  const found: AutoKillTrip[] = [];
  for (const [agent, list] of policies) {
    const hit = list.find((p) => trips(p.rule, tally(agent, `p${agent}\0${p.policy.id}`)));
    if (hit) found.push({ organization_id: org, agent_id: agent, policy: { id: hit.policy.id, name: hit.policy.name }, reason: autoKillReason(hit.policy, hit.rule, tally(agent, `p${agent}\0${hit.policy.id}`)) });
  }
  return { trips: found, enqueued: out.length > 0 };
}

/** What {@link DecisionAlerts} is built with. */
export interface DecisionAlertsDeps {
  db: Sql;
  now: () => Date;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** Engage an agent's kill switch as the rule (the policies service's `engageAutoKillSwitch`). */
  engage: (trip: AutoKillTrip) => Promise<void>;
  /** Tell the webhook worker deliveries are due. */
  wake: () => void;
}

/** How often counts older than a day are pruned, at most, ms. */
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * The checks after decisions are counted. The ledger projection checks in its own transaction ({@link applyLedger});
 * the decision API's reserving decisions are counted at once and checked in the background ({@link noteDecision}:
 * checks are coalesced per organisation and run one at a time). A check lost to a crash is made again by the agent's
 * next decision.
 */
export class DecisionAlerts {
  private readonly pending = new Map<string, Set<string>>();
  private running?: Promise<void>;
  private lastPrune = 0;

  constructor(private readonly deps: DecisionAlertsDeps) {}

  /**
   * The projection's handler: count the ledger entries of `events` and check their agents in `tx` (spikes enqueued
   * with the checkpoint); the kill switches to engage are engaged after it returns.
   */
  async applyLedger(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
    const counts = countsOfLedger(events);
    if (counts.length === 0) return;
    await addDecisionCounts(tx, counts);
    const byOrg = new Map<string, Set<string>>();
    for (const c of counts) (byOrg.get(c.organization_id) ?? byOrg.set(c.organization_id, new Set()).get(c.organization_id)!).add(c.agent_id);
    const now = this.deps.now().getTime();
    const found: AutoKillTrip[] = [];
    let enqueued = false;
    for (const [org, agents] of byOrg) {
      const r = await checkAgents(tx, org, [...agents], now);
      found.push(...r.trips);
      enqueued ||= r.enqueued;
    }
    await this.maybePrune(tx, now);
    if (enqueued) setTimeout(() => this.deps.wake(), 0).unref?.();
    // After the transaction: an append of another stream must not wait on it (PGlite has one connection).
    if (found.length) setTimeout(() => void this.engageAll(found), 0).unref?.();
  }

  /**
   * Count one decision of the decision API's enforcing form (`reserve: true`) now and check its agent in the
   * background. @param stopped whether the decision stopped the action.
   */
  async noteDecision(org: string, agentId: string, stopped: boolean): Promise<void> {
    const now = this.deps.now().getTime();
    await addDecisionCounts(this.deps.db, [{ organization_id: org, agent_id: agentId, second: Math.floor(now / 1000), decisions: 1, stopped: stopped ? 1 : 0 }]);
    (this.pending.get(org) ?? this.pending.set(org, new Set()).get(org)!).add(agentId);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Wait for the background checks in flight (stopping the service, tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.size) {
      const [org, agents] = this.pending.entries().next().value as [string, Set<string>];
      this.pending.delete(org);
      try {
        const now = this.deps.now().getTime();
        const r = await this.deps.db.transaction((tx) => checkAgents(tx, org, [...agents], now));
        if (r.enqueued) this.deps.wake();
        await this.engageAll(r.trips);
      } catch (err) {
        this.deps.logger.warn({ err, organization_id: org }, 'block-rate check failed; the next decision checks again');
      }
    }
  }

  private async engageAll(found: AutoKillTrip[]): Promise<void> {
    for (const t of found) {
      try {
        await this.deps.engage(t);
      } catch (err) {
        this.deps.logger.error({ err, organization_id: t.organization_id, agent_id: t.agent_id }, 'automatic kill switch could not be engaged; the next decision tries again');
      }
    }
  }

  private async maybePrune(tx: SqlExecutor, now: number): Promise<void> {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await pruneDecisionCounts(tx, Math.floor(now / 1000));
  }
}
