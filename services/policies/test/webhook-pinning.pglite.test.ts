import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessBroker, InProcessClient, SqlIngestLog } from '@agp/bus';
import { CreateWebhookSchema } from '@agp/contracts';
import { createEventStore, createPgliteSql, type EventStore, type Sql } from '@agp/eventstore';
import { SecretBox, createLogger, type RequestContext } from '@agp/runtime';
import { PoliciesService } from '../src/index.js';

/**
 * Webhook deliveries connect only to the addresses their outbound check accepted (service level, PGlite): the host
 * name `hooks.rebound.invalid` resolves, for the platform's check, to 127.0.0.1 (allowed by AGP_OUTBOUND_ALLOWED_HOSTS);
 * the system resolver knows no `.invalid` name (RFC 6761), so the delivery arrives only because the connection goes to
 * the checked address, never to whatever the name resolves to at connect time (DNS rebinding). A name the check
 * resolves to 127.0.0.2, where nothing listens, is not delivered to the receiver on 127.0.0.1.
 */
const logger = createLogger('webhook-pinning-test', 'silent');
const ctx: RequestContext = { organization_id: 'acme', scope: 'admin', key_id: 'k1', correlation_id: 'c1' };

describe('webhook delivery pinned to the checked addresses', () => {
  const received: IncomingHttpHeaders[] = [];
  const receiver = createServer((req, res) => {
    received.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  let port = 0;
  let sql: Sql;
  let store: EventStore;
  let log: SqlIngestLog;
  let service: PoliciesService;

  beforeAll(async () => {
    await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', () => ok()));
    port = (receiver.address() as AddressInfo).port;
    sql = await createPgliteSql();
    store = createEventStore(sql);
    log = await SqlIngestLog.create(sql);
    const lookup = async (host: string) => (host === 'hooks.rebound.invalid' ? ['127.0.0.1'] : host === 'elsewhere.rebound.invalid' ? ['127.0.0.2'] : []);
    service = new PoliciesService({
      store,
      db: sql,
      ingestLog: log,
      subjectPrefix: 'wp',
      bus: new InProcessClient({ broker: new InProcessBroker() }),
      logger,
      lookup,
      env: { AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.0/8', AGP_WEBHOOK_POLL_MS: 50, AGP_WEBHOOK_RETRY_SCHEDULE_MS: '60000' },
      secrets: new SecretBox(randomBytes(32)),
    });
    await service.start();
  });
  afterAll(async () => {
    await service?.stop();
    await log?.close();
    await store?.close();
    receiver.closeAllConnections();
    await new Promise((ok) => receiver.close(ok));
  });

  it('delivers to the address the check accepted, with the URL’s host name, and nowhere else', async () => {
    const pinned = await service.webhooks.create(ctx, CreateWebhookSchema.parse({ url: `http://hooks.rebound.invalid:${port}/hook`, events: ['kill_switch.changed'] }));
    const elsewhere = await service.webhooks.create(ctx, CreateWebhookSchema.parse({ url: `http://elsewhere.rebound.invalid:${port}/hook`, events: ['kill_switch.changed'] }));
    await service.setKillSwitch(ctx, 'agent-1', { engaged: true, reason: 'pinning test' });
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1);
    expect(received[0].host).toBe(`hooks.rebound.invalid:${port}`);
    await expect
      .poll(async () => (await service.webhooks.deliveries(ctx, pinned.id, { skip: 0, limit: 10 })).deliveries, { timeout: 15_000 })
      .toMatchObject([{ status: 'delivered', response_status: 204 }]);
    await expect
      .poll(async () => (await service.webhooks.deliveries(ctx, elsewhere.id, { skip: 0, limit: 10 })).deliveries[0]?.last_error ?? null, { timeout: 15_000 })
      .toMatch(/ECONNREFUSED|fetch failed/);
    expect(received).toHaveLength(1);
  });
});
