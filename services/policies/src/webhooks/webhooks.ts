/**
 * Webhook subscriptions and their delivery, in the policies service: the `webhooks.*` requests, and the delivery
 * worker that claims due deliveries (a lease on each row, so replicas never send one twice at once), signs them per
 * the Standard Webhooks specification with the `standardwebhooks` library, POSTs them with a 10 s timeout and no
 * redirects, and records the outcome: 2xx delivered; 410 disables the subscription; anything else is retried on the
 * schedule (./schedule.ts), and a subscription failing too long is disabled and `delivery.disabled` sent to the
 * organisation's other subscriptions. Source: docs/notifications.md; docs/decisions.md (Webhooks in the policies service).
 */
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { CreateWebhook, UpdateWebhook, Webhook, WebhookDelivery, WebhookDeliveryPage, WebhookPage, WebhookWithSecret } from '@agp/contracts';
import type { EventStore, Sql, SqlExecutor } from '@agp/eventstore';
import { ConflictError, NotFoundError, assertOutboundUrl, checkOutboundUrl, counter, newId, type HostLookup, type Logger, type OutboundAllowList, type RequestContext, type SecretBox } from '@agp/runtime';
import { pinnedFetch, type PinnedFetchFn } from '@agp/runtime/pinned-fetch';
import { payloadOf } from './projection.js';
import { nextAttemptAt, shouldDisable, type DisableRule } from './schedule.js';
import { deliveryId, deliveryOf, getWebhookRow, listDeliveries, listWebhooks, webhookOf, webhookSecretContext, type DeliveryRow, type WebhookRow } from './store.js';

/** What the webhooks part of the policies service is built with. */
export interface WebhookDeps {
  db: Sql;
  store: EventStore;
  secrets: () => SecretBox;
  outbound: OutboundAllowList;
  lookup?: HostLookup;
  logger: Pick<Logger, 'warn' | 'error'>;
  now: () => Date;
  /** Delays before each retry, in ms (AGP_WEBHOOK_RETRY_SCHEDULE_MS). */
  schedule: readonly number[];
  /** When a failing subscription is disabled (AGP_WEBHOOK_DISABLE_AFTER_FAILURES, AGP_WEBHOOK_DISABLE_AFTER_MS). */
  disable: DisableRule;
  /** How long one attempt may take, in ms (AGP_WEBHOOK_TIMEOUT_MS, default 10000). */
  timeoutMs: number;
  /** How often the worker looks for due deliveries when idle, in ms (AGP_WEBHOOK_POLL_MS, default 500). */
  pollMs: number;
}

/**
 * Most attempts in flight in one process, and to one subscription (a slow receiver holds at most this many). A
 * delivery counts until its outcome is recorded.
 */
export const MAX_IN_FLIGHT = 64;
export const MAX_IN_FLIGHT_PER_WEBHOOK = 4;

/** Most pinned HTTP clients kept (one per set of checked addresses; ./webhooks.ts `fetchTo`). */
const MAX_PINNED_CLIENTS = 64;
const attemptsTotal = counter('agp_webhook_attempts_total', 'Webhook delivery attempts, by result', ['result']);

/** A fresh signing secret: `whsec_` and 32 random bytes in base64, the Standard Webhooks form. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** A delivery claimed by the worker, with what sending it needs of its subscription. */
type Claimed = DeliveryRow & { url: string; sealed_secret: string; sealed_previous_secret: string | null; previous_secret_expires_at: unknown; failing: boolean };

/** An attempt's outcome: the HTTP status (null: no answer), the error (null: delivered), how long it took in ms. */
interface Outcome {
  d: Claimed;
  status: number | null;
  error: string | null;
  latency: number;
}

/**
 * The `webhook-signature` header of one attempt: `v1,<signature>` with the current secret and, during a rotation's
 * overlap, also with the previous one (space-separated), each made by `standardwebhooks`' `Webhook.sign`.
 */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, payload: string): string {
  return secrets.map((s) => new StandardWebhook(s).sign(id, at, payload)).join(' ');
}

/** See the module's doc. One instance per policies service process. */
export class Webhooks {
  private timer?: NodeJS.Timeout;
  private stopped = true;
  /** Pinned HTTP clients by their address set, least recently used first. */
  private readonly pins = new Map<string, ReturnType<typeof pinnedFetch>>();
  private readonly inFlight = new Set<Promise<void>>();
  private polling = false;
  /** A wake came while a claim ran. */
  private dirty = false;
  /** Outcomes of ended attempts not yet recorded, and the batch being recorded. */
  private readonly outcomes: Outcome[] = [];
  private flushing?: Promise<void>;

  constructor(private readonly deps: WebhookDeps) {}

  // ------------------------------------------------------------------------------------------- subscriptions

  /**
   * `webhooks.create`: check the URL (outbound address check), make and seal a secret, insert the subscription.
   * @throws ValidationError (422, `body.url`) for a URL the platform does not call; ServiceUnavailableError (503) without a secrets key.
   */
  async create(ctx: RequestContext, body: CreateWebhook): Promise<WebhookWithSecret> {
    await assertOutboundUrl(body.url, 'body.url', this.deps.outbound, this.deps.lookup);
    const id = `wh_${newId().replaceAll('-', '')}`;
    const secret = newWebhookSecret();
    const sealed = this.deps.secrets().seal(secret, webhookSecretContext(ctx.organization_id, id));
    const now = this.deps.now().toISOString();
    const head = await this.deps.store.headPosition();
    const { rows } = await this.deps.db.query<WebhookRow>(
      `INSERT INTO agp_webhooks (id, organization_id, url, events, filter, enabled, description, sealed_secret, created_position, created_at, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9, $10, $10) RETURNING *`,
      [id, ctx.organization_id, body.url, JSON.stringify(body.events), body.filter ? JSON.stringify(body.filter) : null, body.enabled, body.description ?? null, sealed, String(head + 1n), now],
    );
    return { ...webhookOf(rows[0]), secret };
  }

  /** `webhooks.list`. */
  list(ctx: RequestContext, q: { skip: number; limit: number }): Promise<WebhookPage> {
    return listWebhooks(this.deps.db, ctx.organization_id, q.skip, q.limit);
  }

  /** `webhooks.get`. @throws NotFoundError (404), also for another organisation's. */
  async get(ctx: RequestContext, id: string): Promise<Webhook> {
    return webhookOf(await this.row(this.deps.db, ctx, id));
  }

  /**
   * `webhooks.update`: the fields given replace the stored ones (`filter: null`, `description: null` clear them);
   * enabling resets the failure count and the disabled reason; an empty patch changes nothing.
   * @throws ValidationError (422, `body.url`); NotFoundError (404).
   */
  async update(ctx: RequestContext, id: string, patch: UpdateWebhook): Promise<Webhook> {
    if (patch.url !== undefined) await assertOutboundUrl(patch.url, 'body.url', this.deps.outbound, this.deps.lookup);
    const current = await this.row(this.deps.db, ctx, id);
    if (Object.values(patch).every((v) => v === undefined)) return webhookOf(current);
    const sets: string[] = ['updated_at = $3'];
    const params: unknown[] = [ctx.organization_id, id, this.deps.now().toISOString()];
    const set = (col: string, v: unknown, cast = '') => {
      params.push(v);
      sets.push(`${col} = $${params.length}${cast}`);
    };
    if (patch.url !== undefined) set('url', patch.url);
    if (patch.events !== undefined) set('events', JSON.stringify(patch.events), '::jsonb');
    if (patch.filter !== undefined) set('filter', patch.filter === null ? null : JSON.stringify(patch.filter), '::jsonb');
    if (patch.description !== undefined) set('description', patch.description);
    if (patch.enabled !== undefined) {
      set('enabled', patch.enabled);
      if (patch.enabled) sets.push('disabled_reason = NULL', 'consecutive_failures = 0', 'failing_since = NULL');
    }
    const { rows } = await this.deps.db.query<WebhookRow>(`UPDATE agp_webhooks SET ${sets.join(', ')} WHERE organization_id = $1 AND id = $2 RETURNING *`, params);
    if (!rows[0]) throw new NotFoundError(`webhook ${id} not found`);
    return webhookOf(rows[0]);
  }

  /** `webhooks.delete`: the subscription and its deliveries. @throws NotFoundError (404). */
  async delete(ctx: RequestContext, id: string): Promise<null> {
    return this.deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>('DELETE FROM agp_webhooks WHERE organization_id = $1 AND id = $2 RETURNING id', [ctx.organization_id, id]);
      if (!rows[0]) throw new NotFoundError(`webhook ${id} not found`);
      await tx.query('DELETE FROM agp_webhook_deliveries WHERE organization_id = $1 AND webhook_id = $2', [ctx.organization_id, id]);
      return null;
    });
  }

  /**
   * `webhooks.rotate-secret`: a new secret signs from now on; the current one also signs for `overlapSeconds`.
   * @throws NotFoundError (404); ServiceUnavailableError (503) without a secrets key.
   */
  async rotateSecret(ctx: RequestContext, id: string, overlapSeconds: number): Promise<WebhookWithSecret> {
    const current = await this.row(this.deps.db, ctx, id);
    const secret = newWebhookSecret();
    const sealed = this.deps.secrets().seal(secret, webhookSecretContext(ctx.organization_id, id));
    const now = this.deps.now();
    const until = overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000).toISOString() : null;
    const { rows } = await this.deps.db.query<WebhookRow>(
      `UPDATE agp_webhooks SET sealed_secret = $3, sealed_previous_secret = $4, previous_secret_expires_at = $5, updated_at = $6 WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [ctx.organization_id, id, sealed, until ? current.sealed_secret : null, until, now.toISOString()],
    );
    if (!rows[0]) throw new NotFoundError(`webhook ${id} not found`);
    return { ...webhookOf(rows[0]), secret };
  }

  /** `webhooks.deliveries`. @throws NotFoundError (404) for an unknown subscription. */
  async deliveries(ctx: RequestContext, id: string, q: { status?: string; skip: number; limit: number }): Promise<WebhookDeliveryPage> {
    await this.row(this.deps.db, ctx, id);
    return listDeliveries(this.deps.db, ctx.organization_id, id, q.status, q.skip, q.limit);
  }

  /**
   * `webhooks.redeliver`: the delivery is due now again with a fresh retry schedule and the same id.
   * @throws NotFoundError (404); ConflictError (409) when the subscription is disabled.
   */
  async redeliver(ctx: RequestContext, id: string, delivery: string): Promise<WebhookDelivery> {
    const hook = await this.row(this.deps.db, ctx, id);
    if (!hook.enabled) throw new ConflictError(`webhook ${id} is disabled: enable it (PATCH {"enabled": true}) before redelivering`);
    const { rows } = await this.deps.db.query<DeliveryRow>(
      `UPDATE agp_webhook_deliveries SET status = 'pending', round = 0, next_attempt_at = $4, lease_until = NULL, delivered_at = NULL
       WHERE organization_id = $1 AND webhook_id = $2 AND id = $3 RETURNING *`,
      [ctx.organization_id, id, delivery, this.deps.now().toISOString()],
    );
    if (!rows[0]) throw new NotFoundError(`delivery ${delivery} of webhook ${id} not found`);
    this.wake();
    return deliveryOf(rows[0]);
  }

  private async row(db: SqlExecutor, ctx: RequestContext, id: string): Promise<WebhookRow> {
    const row = await getWebhookRow(db, ctx.organization_id, id);
    if (!row) throw new NotFoundError(`webhook ${id} not found`);
    return row;
  }

  // ------------------------------------------------------------------------------------------------- worker

  /** Start the delivery worker: it polls every `pollMs` and whenever {@link wake} is called. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stop polling and wait for the attempts in flight (each bounded by the timeout) and their outcomes recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
    await this.flushing;
    const pins = [...this.pins.values()];
    this.pins.clear();
    await Promise.allSettled(pins.map((p) => p.agent.close()));
  }

  /**
   * The `fetch` of an attempt to the addresses its outbound check accepted: connections go to those addresses only,
   * so a host name re-pointed at an internal address after the check (DNS rebinding) is not followed. One pinned
   * client per address set, kept for its connections (at most {@link MAX_PINNED_CLIENTS}, the least recently used
   * closed first). A host the allow list names has no addresses: resolved as usual.
   */
  private fetchTo(addresses: string[]): PinnedFetchFn {
    if (addresses.length === 0) return fetch;
    const key = addresses.join(',');
    let pin = this.pins.get(key);
    if (pin) this.pins.delete(key);
    else pin = pinnedFetch(addresses);
    this.pins.set(key, pin);
    if (this.pins.size > MAX_PINNED_CLIENTS) {
      const [oldest, evicted] = this.pins.entries().next().value as [string, ReturnType<typeof pinnedFetch>];
      this.pins.delete(oldest);
      // Closed once its requests are done (undici's close waits for them).
      void evicted.agent.close().catch(() => undefined);
    }
    return pin.fetch;
  }

  /** Look for due deliveries now (after the projection committed some, a redelivery, or an outcome recorded). */
  wake(): void {
    if (this.stopped) return;
    // A wake during a claim may concern rows that claim could not see: claim again once it is done.
    if (this.polling) this.dirty = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), ms);
    this.timer.unref?.();
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    this.dirty = false;
    let full = false;
    try {
      const room = MAX_IN_FLIGHT - this.inFlight.size;
      if (room > 0) {
        const rows = await this.claim(room);
        full = rows.length === room;
        const secrets = new Map<string, string[]>();
        for (const row of rows) {
          const p = this.attempt(row, secrets).then(
            (outcome) => this.settle(outcome),
            (err) => this.deps.logger.error({ err, delivery: row.id }, 'webhook delivery attempt failed'),
          );
          this.inFlight.add(p);
          void p.finally(() => this.inFlight.delete(p));
        }
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'webhook worker could not claim deliveries; retrying');
    } finally {
      this.polling = false;
      // More may be due (a full claim), or a wake came during the claim: claim again at once. Else the next claim
      // comes with a wake (new deliveries committed, outcomes recorded) or after pollMs (retries falling due).
      if (!this.stopped) this.schedule(full || this.dirty ? 0 : this.deps.pollMs);
    }
  }

  /**
   * Claim up to `limit` due deliveries of enabled subscriptions: each gets a lease (`lease_until`) of the timeout and
   * 5 s, so another worker skips it until then; a subscription with {@link MAX_IN_FLIGHT_PER_WEBHOOK} leased
   * deliveries gets no more, so a slow receiver never takes the others' turns. Reads only the leased rows and, per
   * enabled subscription, its first due rows (indexes `agp_webhook_deliveries_leased`, `agp_webhook_deliveries_next`):
   * the cost does not grow with the backlog.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = this.deps.now();
    const until = new Date(now.getTime() + this.deps.timeoutMs + 5_000).toISOString();
    const { rows } = await this.deps.db.query<Claimed>(
      `WITH busy AS (
         SELECT webhook_id, count(*) AS n FROM agp_webhook_deliveries WHERE status = 'pending' AND lease_until IS NOT NULL AND lease_until > $1 GROUP BY webhook_id
       ), hooks AS (
         SELECT w.id, $3 - COALESCE(b.n, 0) AS free FROM agp_webhooks w LEFT JOIN busy b ON b.webhook_id = w.id WHERE w.enabled AND $3 - COALESCE(b.n, 0) > 0
       ), picked AS (
         SELECT x.id FROM hooks h CROSS JOIN LATERAL (
           SELECT d.id, d.next_attempt_at FROM agp_webhook_deliveries d
            WHERE d.webhook_id = h.id AND d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)
            ORDER BY d.next_attempt_at, d.id LIMIT h.free FOR UPDATE OF d SKIP LOCKED
         ) x ORDER BY x.next_attempt_at LIMIT $4
       )
       UPDATE agp_webhook_deliveries d SET lease_until = $2 FROM picked, agp_webhooks w
        WHERE d.id = picked.id AND w.id = d.webhook_id
        RETURNING d.*, w.url, w.sealed_secret, w.sealed_previous_secret, w.previous_secret_expires_at, (w.consecutive_failures <> 0 OR w.failing_since IS NOT NULL) AS failing`,
      [now.toISOString(), until, MAX_IN_FLIGHT_PER_WEBHOOK, limit],
    );
    return rows;
  }

  /** The secrets that sign a claimed delivery: the current one and, during a rotation's overlap, the previous one. */
  private secretsOf(d: Claimed): string[] {
    const secrets = [this.deps.secrets().open(d.sealed_secret, webhookSecretContext(d.organization_id, d.webhook_id))];
    const overlap = d.previous_secret_expires_at ? new Date(d.previous_secret_expires_at as string).getTime() : 0;
    if (d.sealed_previous_secret && overlap > this.deps.now().getTime()) secrets.push(this.deps.secrets().open(d.sealed_previous_secret, webhookSecretContext(d.organization_id, d.webhook_id)));
    return secrets;
  }

  /** One attempt of a claimed delivery; its outcome, to record. `secrets`: opened secrets by subscription, shared by one claim's attempts. */
  private async attempt(d: Claimed, secrets: Map<string, string[]>): Promise<Outcome> {
    const started = Date.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const verdict = await checkOutboundUrl(d.url, this.deps.outbound, this.deps.lookup);
      if (!verdict.ok) throw new Error(`the platform does not call this URL: ${verdict.reason}`);
      const signing = secrets.get(d.webhook_id) ?? secrets.set(d.webhook_id, this.secretsOf(d)).get(d.webhook_id)!;
      const at = this.deps.now();
      const res = await this.fetchTo(verdict.addresses)(d.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.deps.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'AGP-Webhooks/1',
          'webhook-id': d.id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signatureHeader(signing, d.id, at, d.payload),
        },
        body: d.payload,
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (status >= 300 && status < 400) error = `redirect to ${res.headers.get('location') ?? '(no location)'} not followed`;
      else if (status < 200 || status >= 300) error = `answered ${status}`;
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      error = e.name === 'TimeoutError' ? `no answer within ${this.deps.timeoutMs} ms` : `${e.message}${e.cause?.code ? ` (${e.cause.code})` : ''}`;
    }
    return { d, status, error, latency: Date.now() - started };
  }

  /**
   * Queue an attempt's outcome to be recorded. Outcomes are recorded in batches, one transaction at a time: while one
   * is written the next ones gather, so under load one transaction records many. Until recorded the delivery keeps its
   * lease (an outcome lost with the process is sent again when the lease lapses: at least once).
   */
  private settle(o: Outcome): void {
    this.outcomes.push(o);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.outcomes.length > 0) {
      const batch = this.outcomes.splice(0);
      try {
        await this.record(batch);
      } catch (err) {
        this.deps.logger.error({ err, deliveries: batch.map((o) => o.d.id) }, 'webhook delivery outcomes could not be recorded; sent again when their leases lapse');
      }
    }
    this.flushing = undefined;
    this.wake(); // their subscriptions have room again
  }

  /**
   * Record outcomes, in the order the attempts ended, in one transaction: deliveries, subscriptions, and any
   * `delivery.disabled` deliveries. A run of successes is one statement for the deliveries and, when one of their
   * subscriptions was failing (as claimed, or earlier in the batch), one resetting its failure count; each failure is
   * its own.
   */
  private async record(batch: readonly Outcome[]): Promise<void> {
    const now = this.deps.now();
    for (const o of batch) attemptsTotal.inc({ result: o.error === null ? 'delivered' : o.status === 410 ? 'gone' : 'failed' });
    await this.deps.db.transaction(async (tx) => {
      let delivered: Outcome[] = [];
      const failedHere = new Set<string>();
      const recordDelivered = async () => {
        if (delivered.length === 0) return;
        await tx.query(
          `UPDATE agp_webhook_deliveries d SET status = 'delivered', attempts = d.attempts + 1, round = d.round + 1, response_status = x.s, latency_ms = x.l, last_error = NULL, delivered_at = $2, lease_until = NULL
             FROM jsonb_to_recordset($1::jsonb) AS x(id text, s integer, l integer) WHERE d.id = x.id`,
          [JSON.stringify(delivered.map((o) => ({ id: o.d.id, s: o.status, l: o.latency }))), now.toISOString()],
        );
        // Only subscriptions that were failing when claimed, or failed within this batch, have a count to reset.
        const reset = [...new Set(delivered.filter((o) => o.d.failing || failedHere.has(o.d.webhook_id)).map((o) => o.d.webhook_id))];
        if (reset.length) await tx.query('UPDATE agp_webhooks SET consecutive_failures = 0, failing_since = NULL WHERE id = ANY($1::text[]) AND (consecutive_failures <> 0 OR failing_since IS NOT NULL)', [reset]);
        delivered = [];
      };
      for (const o of batch) {
        if (o.error === null) {
          delivered.push(o);
          continue;
        }
        await recordDelivered();
        await this.recordFailure(tx, o, now);
        failedHere.add(o.d.webhook_id);
      }
      await recordDelivered();
    });
  }

  /** Record a failed attempt: retry it on the schedule (or fail it), count the failure, disable the subscription when it must. */
  private async recordFailure(tx: SqlExecutor, { d, status, error, latency }: Outcome, now: Date): Promise<void> {
    const gone = status === 410;
    const next = gone ? null : nextAttemptAt(this.deps.schedule, d.round + 1, now.getTime());
    await tx.query(
      `UPDATE agp_webhook_deliveries SET status = $2, attempts = attempts + 1, round = round + 1, response_status = $3, latency_ms = $4, last_error = $5, next_attempt_at = $6, lease_until = NULL WHERE id = $1`,
      [d.id, next === null ? 'failed' : 'pending', status, latency, error, next === null ? null : new Date(next).toISOString()],
    );
    const { rows } = await tx.query<WebhookRow>(
      `UPDATE agp_webhooks SET consecutive_failures = consecutive_failures + 1, failing_since = COALESCE(failing_since, $2) WHERE id = $1 AND enabled RETURNING *`,
      [d.webhook_id, now.toISOString()],
    );
    const hook = rows[0];
    if (!hook) return;
    const failing = shouldDisable(this.deps.disable, hook.consecutive_failures, new Date(hook.failing_since as string).getTime(), now.getTime());
    if (gone || failing) await this.disable(tx, hook, gone ? 'gone' : 'failing', status, now);
  }

  /** Disable a subscription and enqueue `delivery.disabled` to the organisation's other enabled subscriptions that want it. */
  private async disable(tx: SqlExecutor, hook: WebhookRow, reason: 'gone' | 'failing', status: number | null, now: Date): Promise<void> {
    await tx.query(`UPDATE agp_webhooks SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1`, [hook.id, reason, now.toISOString()]);
    this.deps.logger.warn({ webhook: hook.id, organization_id: hook.organization_id, reason }, 'webhook subscription disabled');
    const payload = payloadOf({
      kind: 'delivery.disabled',
      at: now.toISOString(),
      organization_id: hook.organization_id,
      data: { webhook_id: hook.id, url: hook.url, reason, consecutive_failures: hook.consecutive_failures, last_response_status: status },
    });
    const key = `disabled:${hook.id}:${now.toISOString()}`;
    await tx.query(
      `INSERT INTO agp_webhook_deliveries (id, organization_id, webhook_id, event, payload, status, next_attempt_at, created_at)
       SELECT x.id, $1, x.w, 'delivery.disabled', $2, 'pending', $3, $3 FROM jsonb_to_recordset($4::jsonb) AS x(id text, w text)
       ON CONFLICT (id) DO NOTHING`,
      [
        hook.organization_id,
        payload,
        now.toISOString(),
        JSON.stringify(
          (
            await tx.query<{ id: string }>(`SELECT id FROM agp_webhooks WHERE organization_id = $1 AND enabled AND id <> $2 AND events @> '["delivery.disabled"]'::jsonb`, [hook.organization_id, hook.id])
          ).rows.map((r) => ({ id: deliveryId(r.id, key), w: r.id })),
        ),
      ],
    );
  }
}
