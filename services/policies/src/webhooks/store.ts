/**
 * The webhook tables of the policies service and every statement on them. Subscriptions and deliveries are
 * operational state kept in PostgreSQL / PGlite (like the fleet-wide counters), not event-sourced: a delivery's
 * attempts change too often to be events. The projection that enqueues deliveries commits them with its checkpoint,
 * so an event is enqueued exactly once and nothing lives only in memory. Source: docs/notifications.md;
 * docs/decisions.md (Webhooks in the policies service).
 */
import type { Webhook, WebhookDelivery, WebhookFilter, WebhookPage, WebhookDeliveryPage } from '@agp/contracts';
import { deterministicId } from '@agp/runtime';
import type { SqlExecutor } from '@agp/eventstore';

/**
 * - `agp_webhooks`: one row per subscription; `sealed_secret` (and `sealed_previous_secret` until
 *   `previous_secret_expires_at`) sealed with the SecretBox, bound to the organisation and the id; `created_position`
 *   the event log's head when it was created (earlier events are not sent to it); `failing_since` the first of the
 *   current run of failed attempts.
 * - `agp_webhook_deliveries`: one row per (subscription, event); `payload` the exact bytes signed and sent; `round`
 *   the attempts since the last (re)delivery, which index the retry schedule; `lease_until` the claim of the worker
 *   sending it (a crashed worker's claim lapses). The worker's claim reads them per subscription through
 *   `agp_webhook_deliveries_next` and counts the leased ones through `agp_webhook_deliveries_leased`.
 * - `agp_webhook_escalations`, `agp_webhook_policy_scopes`: what the projection needs to describe an approval's
 *   decision (its intervention's agent, type and risk) and a policy change (the policy's agent scope).
 */
export const WEBHOOKS_DDL = `
CREATE TABLE IF NOT EXISTS agp_webhooks (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  url text NOT NULL,
  events jsonb NOT NULL,
  filter jsonb,
  enabled boolean NOT NULL,
  description text,
  disabled_reason text,
  consecutive_failures integer NOT NULL DEFAULT 0,
  failing_since timestamptz,
  sealed_secret text NOT NULL,
  sealed_previous_secret text,
  previous_secret_expires_at timestamptz,
  created_position bigint NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS agp_webhooks_org ON agp_webhooks (organization_id, created_at, id);
CREATE TABLE IF NOT EXISTS agp_webhook_deliveries (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  webhook_id text NOT NULL,
  event text NOT NULL,
  payload text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  round integer NOT NULL DEFAULT 0,
  response_status integer,
  latency_ms integer,
  last_error text,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
);
DROP INDEX IF EXISTS agp_webhook_deliveries_due;
CREATE INDEX IF NOT EXISTS agp_webhook_deliveries_next ON agp_webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS agp_webhook_deliveries_leased ON agp_webhook_deliveries (webhook_id) WHERE status = 'pending' AND lease_until IS NOT NULL;
CREATE INDEX IF NOT EXISTS agp_webhook_deliveries_by_webhook ON agp_webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS agp_webhook_escalations (
  organization_id text NOT NULL,
  intervention_id text NOT NULL,
  agent_id text NOT NULL,
  type text NOT NULL,
  risk_level text,
  PRIMARY KEY (organization_id, intervention_id)
);
CREATE TABLE IF NOT EXISTS agp_webhook_policy_scopes (
  organization_id text NOT NULL,
  policy_id text NOT NULL,
  agent_ids jsonb NOT NULL,
  PRIMARY KEY (organization_id, policy_id)
);
`;

/** The context a subscription's secret is sealed under: it opens for this organisation and subscription only. */
export const webhookSecretContext = (organizationId: string, id: string) => `webhook-secret\0${organizationId}\0${id}`;

/** The id of the delivery of one webhook event to one subscription: the same for every attempt and every process. */
export const deliveryId = (webhookId: string, eventKey: string) => `msg_${deterministicId(webhookId, eventKey).replaceAll('-', '')}`;

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/** A row of `agp_webhooks`, as read. */
export interface WebhookRow {
  id: string;
  organization_id: string;
  url: string;
  events: unknown;
  filter: unknown;
  enabled: boolean;
  description: string | null;
  disabled_reason: string | null;
  consecutive_failures: number;
  failing_since: unknown;
  sealed_secret: string;
  sealed_previous_secret: string | null;
  previous_secret_expires_at: unknown;
  created_position: string | number;
  created_at: unknown;
  updated_at: unknown;
}

/** A subscription row as the API answers it (never a secret). */
export function webhookOf(r: WebhookRow): Webhook {
  return {
    id: r.id,
    url: r.url,
    events: json(r.events),
    filter: r.filter === null ? null : json<WebhookFilter>(r.filter),
    enabled: r.enabled,
    description: r.description,
    disabled_reason: r.disabled_reason as Webhook['disabled_reason'],
    consecutive_failures: r.consecutive_failures,
    previous_secret_expires_at: r.sealed_previous_secret === null ? null : iso(r.previous_secret_expires_at),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** One subscription of an organisation, or null (unknown, or another organisation's). */
export async function getWebhookRow(db: SqlExecutor, org: string, id: string): Promise<WebhookRow | null> {
  const { rows } = await db.query<WebhookRow>('SELECT * FROM agp_webhooks WHERE organization_id = $1 AND id = $2', [org, id]);
  return rows[0] ?? null;
}

/** One page of an organisation's subscriptions, oldest first. */
export async function listWebhooks(db: SqlExecutor, org: string, skip: number, limit: number): Promise<WebhookPage> {
  const { rows } = await db.query<WebhookRow>('SELECT * FROM agp_webhooks WHERE organization_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3', [org, limit, skip]);
  const total = await db.query<{ n: number | string }>('SELECT count(*) AS n FROM agp_webhooks WHERE organization_id = $1', [org]);
  return { webhooks: rows.map(webhookOf), total: Number(total.rows[0].n), skip, limit };
}

/** A row of `agp_webhook_deliveries`, as read. */
export interface DeliveryRow {
  id: string;
  organization_id: string;
  webhook_id: string;
  event: string;
  payload: string;
  status: string;
  attempts: number;
  round: number;
  response_status: number | null;
  latency_ms: number | null;
  last_error: string | null;
  next_attempt_at: unknown;
  created_at: unknown;
  delivered_at: unknown;
}

/** A delivery row as the API answers it (not its payload). */
export function deliveryOf(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    webhook_id: r.webhook_id,
    event: r.event as WebhookDelivery['event'],
    status: r.status as WebhookDelivery['status'],
    attempts: r.attempts,
    response_status: r.response_status,
    latency_ms: r.latency_ms,
    last_error: r.last_error,
    next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    created_at: iso(r.created_at)!,
    delivered_at: iso(r.delivered_at),
  };
}

/** One page of a subscription's deliveries, newest first. */
export async function listDeliveries(db: SqlExecutor, org: string, webhookId: string, status: string | undefined, skip: number, limit: number): Promise<WebhookDeliveryPage> {
  const where = `organization_id = $1 AND webhook_id = $2${status ? ' AND status = $3' : ''}`;
  const params: unknown[] = status ? [org, webhookId, status] : [org, webhookId];
  const { rows } = await db.query<DeliveryRow>(`SELECT * FROM agp_webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${skip}`, params);
  const total = await db.query<{ n: number | string }>(`SELECT count(*) AS n FROM agp_webhook_deliveries WHERE ${where}`, params);
  return { deliveries: rows.map(deliveryOf), total: Number(total.rows[0].n), skip, limit };
}

/** A delivery to insert: its subscription, kind and the payload's JSON text. */
export interface NewDelivery {
  id: string;
  organization_id: string;
  webhook_id: string;
  event: string;
  payload: string;
}

/**
 * Insert deliveries due at `now`; one that exists already (the same subscription and event) is left as it is.
 */
export async function enqueueDeliveries(tx: SqlExecutor, deliveries: readonly NewDelivery[], now: Date): Promise<void> {
  if (deliveries.length === 0) return;
  await tx.query(
    `INSERT INTO agp_webhook_deliveries (id, organization_id, webhook_id, event, payload, status, next_attempt_at, created_at)
     SELECT x.id, x.o, x.w, x.e, x.p, 'pending', $2::timestamptz, $2::timestamptz FROM jsonb_to_recordset($1::jsonb) AS x(id text, o text, w text, e text, p text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(deliveries.map((d) => ({ id: d.id, o: d.organization_id, w: d.webhook_id, e: d.event, p: d.payload }))), now.toISOString()],
  );
}
