/**
 * The webhooks projection: a catch-up subscription over the event log that turns each event into its webhook events
 * and enqueues one delivery per subscription that wants it, in the transaction that moves its checkpoint (so every
 * event is enqueued once, whichever process or restart applies it). Source: docs/notifications.md (Delivery).
 */
import { InterventionEvents, InterventionRecordedDataSchema, PolicyEvents, type WebhookFilter } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { subscriptionWants, webhookEventsOf, type EscalatedIntervention, type WebhookEvent } from './events.js';
import { deliveryId, enqueueDeliveries, type NewDelivery } from './store.js';
import { approvalRequestMessage } from '../slack/message.js';
import { enqueueSlackPosts, enqueueSlackUpdates, slackChannelsOf, type NewSlackPost, type SlackDecided } from '../slack/slack.js';
import type { SlackDecision } from '../slack/message.js';

/** Name (and checkpoint) of the webhooks projection. */
export const WEBHOOKS_PROJECTION = 'policies-webhooks';

/** An enabled subscription as the projection matches it. */
interface Target {
  id: string;
  events: string[];
  filter: WebhookFilter | null;
  created_position: bigint;
}

const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/** The JSON text of a delivery's body: `{type, timestamp, organization_id, data}`. */
export const payloadOf = (ev: Pick<WebhookEvent, 'kind' | 'at' | 'organization_id' | 'data'>) => JSON.stringify({ type: ev.kind, timestamp: ev.at, organization_id: ev.organization_id, data: ev.data });

/**
 * Apply a batch: keep the escalated interventions and policy scopes the mapping reads, map each event, and enqueue a
 * delivery for each enabled subscription of its organisation that wants it and was created before it, and for each
 * `approval.requested` a Slack message to each channel of the organisation's Slack connection whose filter it passes;
 * for each `approval.decided` its Slack messages are marked for an update in place.
 * @param now when the deliveries are due (the projection's clock).
 */
export async function applyWebhookEvents(events: StoredEvent[], tx: SqlExecutor, now: Date): Promise<void> {
  const orgs = [...new Set(events.map((e) => e.metadata.organization_id))];
  const { rows } = await tx.query<{ id: string; organization_id: string; events: unknown; filter: unknown; created_position: string | number }>(
    'SELECT id, organization_id, events, filter, created_position FROM agp_webhooks WHERE enabled AND organization_id = ANY($1::text[])',
    [orgs],
  );
  const targets = new Map<string, Target[]>();
  for (const r of rows) (targets.get(r.organization_id) ?? targets.set(r.organization_id, []).get(r.organization_id)!).push({ id: r.id, events: json(r.events), filter: r.filter === null ? null : json(r.filter), created_position: BigInt(r.created_position) });

  const escalated = new Map<string, EscalatedIntervention>();
  const scopes = new Map<string, string[]>();
  const k = (org: string, id: string) => `${org}\0${id}`;
  const ids = (type: string, field = 'id') => events.filter((e) => e.type === type || (type === 'policy' && Object.values(PolicyEvents).includes(e.type as never))).map((e) => [e.metadata.organization_id, String((e.data as Record<string, unknown>)[field] ?? '')]);
  const decided = ids(InterventionEvents.OutcomeChanged);
  if (decided.length) {
    const found = await tx.query<{ organization_id: string; intervention_id: string; agent_id: string; type: string; risk_level: string | null }>(
      'SELECT e.* FROM agp_webhook_escalations e JOIN jsonb_to_recordset($1::jsonb) AS x(o text, i text) ON e.organization_id = x.o AND e.intervention_id = x.i',
      [JSON.stringify(decided.map(([o, i]) => ({ o, i })))],
    );
    for (const r of found.rows) escalated.set(k(r.organization_id, r.intervention_id), { agent_id: r.agent_id, type: r.type as never, risk_level: r.risk_level as never });
  }
  const policies = ids('policy');
  if (policies.length) {
    const found = await tx.query<{ organization_id: string; policy_id: string; agent_ids: unknown }>(
      'SELECT s.* FROM agp_webhook_policy_scopes s JOIN jsonb_to_recordset($1::jsonb) AS x(o text, i text) ON s.organization_id = x.o AND s.policy_id = x.i',
      [JSON.stringify(policies.map(([o, i]) => ({ o, i })))],
    );
    for (const r of found.rows) scopes.set(k(r.organization_id, r.policy_id), json(r.agent_ids));
  }

  const slackChannels = events.some((e) => e.type === InterventionEvents.Recorded) ? await slackChannelsOf(tx, orgs) : new Map();
  const slackPosts: NewSlackPost[] = [];
  const slackDecided: SlackDecided[] = [];
  const newEscalations: Array<{ o: string; i: string; a: string; t: string; r: string | null }> = [];
  const touchedScopes = new Set<string>();
  const out: NewDelivery[] = [];
  for (const e of events) {
    const org = e.metadata.organization_id;
    const mapped = webhookEventsOf(e, { policyScope: (o, id) => scopes.get(k(o, id)), escalated: (o, id) => escalated.get(k(o, id)) });
    // Keep what later events of the same streams need.
    if (e.type === InterventionEvents.Recorded) {
      const d = InterventionRecordedDataSchema.safeParse(e.data);
      if (d.success && d.data.outcome === 'escalated') {
        const v = { agent_id: d.data.agent_id, type: d.data.type, risk_level: d.data.risk_level ?? null };
        escalated.set(k(org, d.data.id), v);
        newEscalations.push({ o: org, i: d.data.id, a: v.agent_id, t: v.type, r: v.risk_level });
      }
    } else if (e.type === PolicyEvents.Created || e.type === PolicyEvents.Updated) {
      const d = e.data as { id: string; agent_ids?: string[]; changes?: { agent_ids?: { to?: unknown } } };
      const set = e.type === PolicyEvents.Created ? (d.agent_ids ?? []) : Array.isArray(d.changes?.agent_ids?.to) ? (d.changes!.agent_ids!.to as string[]) : undefined;
      if (set) {
        scopes.set(k(org, d.id), set);
        touchedScopes.add(k(org, d.id));
      }
    }
    for (const ev of mapped) {
      if (ev.kind === 'approval.decided') {
        const { status, decided_by, at } = ev.data as unknown as SlackDecision;
        slackDecided.push({ organization_id: org, approval_id: String(ev.data.approval_id), decision: { status, decided_by, at } });
      }
      if (ev.kind === 'approval.requested' && slackChannels.has(org)) {
        const i = ev.data.intervention as { agent_id: string; action_name: string; reason: string | null; risk_level: string | null; estimated_cost_usd: number | null };
        const message = approvalRequestMessage({
          organization_id: org,
          approval_id: String(ev.data.approval_id),
          agent_id: i.agent_id,
          action_name: i.action_name,
          reason: i.reason,
          risk_level: i.risk_level,
          estimated_cost_usd: i.estimated_cost_usd,
          arguments: (e.data as { original_inputs?: unknown }).original_inputs,
          expires_at: (ev.data.expires_at as string | null) ?? null,
        });
        for (const c of slackChannels.get(org)!) {
          if (subscriptionWants(['approval.requested'], c.filter ?? null, ev)) slackPosts.push({ organization_id: org, approval_id: String(ev.data.approval_id), channel: c.channel, message });
        }
      }
      let payload: string | undefined; // the same bytes for every subscription
      for (const t of targets.get(org) ?? []) {
        if (e.global_position < t.created_position || !subscriptionWants(t.events, t.filter, ev)) continue;
        out.push({ id: deliveryId(t.id, ev.key), organization_id: org, webhook_id: t.id, event: ev.kind, payload: (payload ??= payloadOf(ev)) });
      }
    }
  }
  if (newEscalations.length) {
    await tx.query(
      `INSERT INTO agp_webhook_escalations (organization_id, intervention_id, agent_id, type, risk_level)
       SELECT x.o, x.i, x.a, x.t, x.r FROM jsonb_to_recordset($1::jsonb) AS x(o text, i text, a text, t text, r text) ON CONFLICT DO NOTHING`,
      [JSON.stringify(newEscalations)],
    );
  }
  if (touchedScopes.size) {
    const list = [...touchedScopes].map((key) => {
      const [o, i] = key.split('\0');
      return { o, i, s: scopes.get(key) };
    });
    await tx.query(
      `INSERT INTO agp_webhook_policy_scopes (organization_id, policy_id, agent_ids)
       SELECT x.o, x.i, x.s FROM jsonb_to_recordset($1::jsonb) AS x(o text, i text, s jsonb)
       ON CONFLICT (organization_id, policy_id) DO UPDATE SET agent_ids = excluded.agent_ids`,
      [JSON.stringify(list)],
    );
  }
  await enqueueDeliveries(tx, out, now);
  await enqueueSlackPosts(tx, slackPosts, now);
  await enqueueSlackUpdates(tx, slackDecided, now); // after the posts: a request decided in the same batch is marked too
}
