/**
 * `budget.threshold`: when a grant or report raises a fleet-wide budget counter's spend (run, session or period
 * budget, USD) past 50, 80 or 100 % of its limit, a delivery is enqueued for each enabled subscription of the
 * organisation that asked for the kind (and the percentage), in the transaction that moved the counter. The delivery id
 * is derived from the subscription, the counter (policy, limit, scope key, window start) and the percentage, so each
 * percentage of each budget and period is sent once, however often the counter is replayed or passes it again.
 * Source: docs/notifications.md (Alerts).
 */
import type { WebhookFilter } from '@agp/contracts';
import type { SqlExecutor } from '@agp/eventstore';
import type { SpendChange } from '../quotas/leases.js';
import { subscriptionWants, type WebhookEvent } from '../webhooks/events.js';
import { payloadOf } from '../webhooks/projection.js';
import { deliveryId, enqueueDeliveries, type NewDelivery } from '../webhooks/store.js';
import { budgetAgent, crossedPercents } from './rules.js';

const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/** The `budget.threshold` events of the counters whose spend rose (one per percentage passed), at `at` (ms). */
export function budgetThresholdEvents(org: string, changes: readonly SpendChange[], at: number): WebhookEvent[] {
  const out: WebhookEvent[] = [];
  for (const c of changes) {
    for (const pct of crossedPercents(c.limit_value, c.from, c.to)) {
      const agent = budgetAgent(c.key.limit, c.key.scope_key);
      const windowed = c.window_end !== null;
      out.push({
        kind: 'budget.threshold',
        key: `budget.threshold:${c.key.policy_id}:${c.key.limit}:${c.key.scope_key}:${c.key.window_start}:${pct}`,
        organization_id: org,
        at: new Date(at).toISOString(),
        data: {
          policy_id: c.key.policy_id,
          limit: c.key.limit,
          scope_key: c.key.scope_key,
          agent_id: agent,
          window_start: windowed ? new Date(c.key.window_start).toISOString() : null,
          window_end: windowed ? new Date(c.window_end!).toISOString() : null,
          threshold_percent: pct,
          limit_usd: c.limit_value,
          spent_usd: Number(c.to.toFixed(6)),
        },
        agents: agent === null ? null : [agent],
        intervention_type: null,
        risk_level: null,
        budget_percent: pct,
      });
    }
  }
  return out;
}

/**
 * The quotas' spend hook (`QuotaDeps.onSpend`): enqueue the `budget.threshold` deliveries of `changes` in `tx`.
 * Reads the subscriptions only when a percentage was passed. @returns whether any delivery was enqueued.
 */
export async function enqueueBudgetThresholds(tx: SqlExecutor, org: string, changes: readonly SpendChange[], at: number): Promise<boolean> {
  const events = budgetThresholdEvents(org, changes, at);
  if (events.length === 0) return false;
  const { rows } = await tx.query<{ id: string; events: unknown; filter: unknown }>(
    `SELECT id, events, filter FROM agp_webhooks WHERE organization_id = $1 AND enabled AND events @> '["budget.threshold"]'::jsonb AND created_at <= $2`,
    [org, new Date(at).toISOString()],
  );
  const out: NewDelivery[] = [];
  for (const ev of events) {
    for (const r of rows) {
      if (!subscriptionWants(json(r.events), r.filter === null ? null : json<WebhookFilter>(r.filter), ev)) continue;
      out.push({ id: deliveryId(r.id, ev.key), organization_id: org, webhook_id: r.id, event: ev.kind, payload: payloadOf(ev) });
    }
  }
  await enqueueDeliveries(tx, out, new Date(at));
  return out.length > 0;
}
