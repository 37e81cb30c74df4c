/**
 * The ingest log under faults, on a NATS server of its own (started here on a free port, so it can be stopped):
 * a full stream refuses publishes (503) and drops nothing it acknowledged; a dead consumer's messages come back
 * within seconds while a long batch kept alive by progress acks is not redelivered; the pull loop resumes after
 * NATS is down 25 s; an existing stream and consumer are updated in place; lag is a gauge and a /readyz detail.
 * Skips with one printed reason when the `nats-server` binary is missing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, metricsRegistry, ServiceUnavailableError, startOpsServer } from '@agp/runtime';
import { IngestService } from '../../../services/ingest/src/service.js';
import { ingestFilter, ingestSubject, ingestSubjects, JetStreamIngestLog, type IngestDelivery } from '../src/index.js';
import { QuietLogger, sleep, until } from './ingest-log-contract.js';
import { freePort, missingNatsServer as missing, OwnNats } from './own-nats.js';

if (missing) console.warn(missing);

describe.skipIf(Boolean(missing))('JetStreamIngestLog under faults (own nats-server)', () => {
  let nats: OwnNats;
  let dir: string;
  const logs: JetStreamIngestLog[] = [];
  let n = 0;
  /** Handlers that must not finish during a test wait on this; afterAll releases them so the logs can close. */
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const open = async (o: Partial<Parameters<typeof JetStreamIngestLog.create>[0]> & { prefix: string }) => {
    const log = await JetStreamIngestLog.create({ servers: nats.url, streamName: `S${++n}`, subjects: [ingestSubjects(o.prefix)], logger: new QuietLogger(), ...o });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agp-js-faults-'));
    nats = new OwnNats(await freePort(), dir);
    await nats.start();
  });
  afterAll(async () => {
    release();
    try {
      await Promise.race([Promise.all(logs.map((l) => l.close().catch(() => undefined))), sleep(10_000)]);
    } finally {
      await nats?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses publishes when the stream is full (503 at the ingest service), and keeps every acknowledged message', async () => {
    const prefix = 'full';
    const log = await open({ prefix, maxBytes: 16 * 1024 });
    const svc = new IngestService({ log, ingested: { stored: async () => new Set() }, subjectPrefix: prefix, logger: createLogger('ingest-test', 'silent') });
    const ctx = { organization_id: 'acme', scope: 'write' as const, key_id: 'k1', correlation_id: 'c1' };
    const created: string[] = [];
    let refused: unknown;
    for (let i = 0; i < 200 && !refused; i++) {
      const id = `ev-${i}`;
      const event = { id, type: 'intervention.create', timestamp: '2026-01-02T03:04:05Z', body: { type: 'hard_block', outcome: 'blocked', action_name: 'x'.repeat(200), agent_id: 'a1' } };
      try {
        const r = await svc.accept(ctx, { events: [event], offset: 0 });
        created.push(...r.successes.map((s) => s.id));
      } catch (err) {
        refused = err;
      }
    }
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).status).toBe(503);
    expect(created.length).toBeGreaterThan(10);
    // The direct publish names the cause.
    const direct = await log.publish({ subject: ingestSubject(prefix, 'acme', 'interventions'), msg_id: 'one-more', payload: { x: 'y'.repeat(5000) } }).catch((e: unknown) => e);
    expect((direct as Error).message).toMatch(/full.*maximum bytes exceeded/);
    // Nothing acknowledged was dropped: the interventions durable (created with the stream) gets every created event.
    const got = new Set<string>();
    const c = await log.consume<{ events: Array<{ id: string }> }>({
      durable: 'interventions-ingest',
      subjectFilter: ingestFilter(prefix, 'interventions'),
      handler: async (batch) => {
        for (const m of batch) for (const e of m.payload.events) got.add(e.id);
        await Promise.all(batch.map((m) => m.ack()));
      },
    });
    await until(() => got.size >= created.length, 10_000, 'every acknowledged event');
    await c.stop();
    expect([...got].sort()).toEqual([...created].sort());
    // Once consumed, the space is free again (work-queue retention): publishing works.
    await expect(svc.accept(ctx, { events: [{ id: 'after', type: 'intervention.create', timestamp: '2026-01-02T03:04:05Z', body: { type: 'hard_block', outcome: 'blocked', action_name: 'a', agent_id: 'a1' } }], offset: 0 })).resolves.toMatchObject({ successes: [{ id: 'after' }] });
  });

  it('redelivers a dead consumer\'s messages within seconds, and keeps a long batch alive with progress acks', async () => {
    const prefix = 'redeliver';
    const subject = ingestSubject(prefix, 'acme', 'interventions');
    const filter = ingestFilter(prefix, 'interventions');
    // "Killed" consumer: its own connection pulls messages and closes without acking.
    const dead = await open({ prefix, durables: [{ durable: 'd', subjectFilter: filter }] });
    for (let i = 0; i < 5; i++) await dead.publish({ subject, msg_id: `k${i}`, payload: { n: i } });
    let pulled = 0;
    await dead.consume({ durable: 'd', subjectFilter: filter, handler: () => ((pulled += 1), held) });
    await until(() => pulled > 0, 5000, 'the first pull');
    const killedAt = Date.now();
    await (dead as unknown as { nc: { close(): Promise<void> } }).nc.close(); // like SIGKILL: no ack, no nak
    const survivor = await open({ prefix, streamName: dead.streamName, durables: [{ durable: 'd', subjectFilter: filter }] });
    const again: Array<IngestDelivery<{ n: number }>> = [];
    let firstBackAt = 0;
    await survivor.consume<{ n: number }>({
      durable: 'd',
      subjectFilter: filter,
      handler: async (batch) => {
        firstBackAt ||= Date.now();
        again.push(...batch);
        await Promise.all(batch.map((m) => m.ack()));
      },
    });
    await until(() => again.length >= 5, 15_000, 'redelivery of the dead consumer\'s messages');
    const recoveryMs = firstBackAt - killedAt;
    console.log(`[jetstream faults] redelivery after a killed consumer: ${recoveryMs} ms (ack_wait 5000 ms)`);
    expect(recoveryMs).toBeLessThan(7_000);
    expect(again.every((m) => m.attempt >= 2)).toBe(true);

    // A batch that takes 3 × ack_wait is kept alive by progress acks: delivered once.
    const slowPrefix = 'slow';
    const slow = await open({ prefix: slowPrefix, ackWaitMs: 1_000, durables: [{ durable: 'slow', subjectFilter: ingestFilter(slowPrefix, 'interventions') }] });
    await slow.publish({ subject: ingestSubject(slowPrefix, 'acme', 'interventions'), msg_id: 'long', payload: { n: 1 } });
    const attempts: number[] = [];
    await slow.consume<{ n: number }>({
      durable: 'slow',
      subjectFilter: ingestFilter(slowPrefix, 'interventions'),
      handler: async (batch) => {
        attempts.push(...batch.map((m) => m.attempt));
        await sleep(3_000);
        await Promise.all(batch.map((m) => m.ack()));
      },
    });
    await until(() => attempts.length >= 1, 5000);
    await sleep(3_800);
    expect(attempts).toEqual([1]);
  });

  it('updates an existing limits stream (discard old, 7 days) and a 30 s consumer in place', async () => {
    const prefix = 'legacy';
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    const name = `S${n + 1}`;
    await jsm.streams.add({ name, subjects: [ingestSubjects(prefix)], storage: StorageType.File, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old, max_bytes: 1 << 30, max_age: nanos(7 * 86_400_000) });
    await jsm.consumers.add(name, { durable_name: 'stats-ingest', ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000), filter_subject: ingestFilter(prefix, 'stats') });
    const quiet = new QuietLogger();
    await open({ prefix, logger: quiet });
    const info = await jsm.streams.info(name);
    const consumer = await jsm.consumers.info(name, 'stats-ingest');
    await nc.close();
    expect(consumer.config.ack_wait).toBe(nanos(5_000));
    if (info.config.retention === 'workqueue') {
      expect(info.config).toMatchObject({ discard: 'new', max_age: 0 });
    } else {
      // NATS cannot change retention to workqueue in place: the stream keeps it, and says so once.
      expect(info.config).toMatchObject({ retention: 'limits', discard: 'old' });
      expect(quiet.records.filter((r) => r.level === 'error' && /keeps its limits retention/.test(r.msg ?? ''))).toHaveLength(1);
    }
  });

  it('shows consumer lag as a gauge and in the /readyz detail, and stays ready while lagging', async () => {
    const prefix = 'lag';
    const filter = ingestFilter(prefix, 'interventions');
    const log = await open({ prefix, lagIntervalMs: 200, durables: [{ durable: 'lagging', subjectFilter: filter }] });
    for (let i = 0; i < 7; i++) await log.publish({ subject: ingestSubject(prefix, 'acme', 'interventions'), msg_id: `l${i}`, payload: { n: i } });
    // A consumer that holds one batch of 2 without acking: 5 pending + 2 ack-pending.
    await log.consume({ durable: 'lagging', subjectFilter: filter, batchSize: 2, handler: () => held });
    await sleep(600);
    const lag = await log.refreshLag();
    expect(lag).toEqual([expect.objectContaining({ durable: 'lagging', lag: 7 })]);
    const metrics = await metricsRegistry.metrics();
    expect(metrics).toMatch(new RegExp(`agp_ingest_consumer_lag\\{stream="${log.streamName}",durable="lagging"\\} 7`));
    const ops = await startOpsServer({ port: 0, host: '127.0.0.1', service: 'test', readiness: async () => {} });
    try {
      const res = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { detail: { ingest_consumers: Array<{ durable: string; lag: number }> } };
      expect(body.detail.ingest_consumers).toEqual(expect.arrayContaining([expect.objectContaining({ durable: 'lagging', lag: 7, pending: 3, ack_pending: 4 })]));
    } finally {
      await ops.close();
    }
  });

  it('resumes pulling after NATS is down 25 s', async () => {
    const prefix = 'outage';
    const subject = ingestSubject(prefix, 'acme', 'interventions');
    const filter = ingestFilter(prefix, 'interventions');
    const quiet = new QuietLogger();
    const log = await open({ prefix, logger: quiet, durables: [{ durable: 'o', subjectFilter: filter }] });
    const got: number[] = [];
    await log.consume<{ n: number }>({ durable: 'o', subjectFilter: filter, handler: async (b) => (got.push(...b.map((m) => m.payload.n)), void (await Promise.all(b.map((m) => m.ack())))) });
    await log.publish({ subject, msg_id: 'before', payload: { n: 0 } });
    await until(() => got.length === 1, 5000, 'the message before the outage');
    await nats.stop();
    await sleep(25_000);
    await nats.start();
    const back = Date.now();
    let published = false;
    while (!published && Date.now() - back < 15_000) published = await log.publish({ subject, msg_id: 'after', payload: { n: 1 } }).then(() => true, () => false);
    await until(() => got.includes(1), 20_000, 'delivery after NATS came back');
    console.log(`[jetstream faults] delivery resumed ${Date.now() - back} ms after NATS came back from a 25 s outage`);
    // The log's own connection reports each transition once (the shared NATS connection watcher), not each attempt.
    const connectionLogs = quiet.records.filter((r) => /^NATS ingest log/.test(r.msg ?? '')).map((r) => r.msg);
    expect(connectionLogs.filter((m) => /disconnected/.test(m!))).toHaveLength(1);
    expect(connectionLogs.filter((m) => /reconnected after/.test(m!))).toHaveLength(1);
    expect(log.health?.state).toBe('connected');
  }, 70_000);
});
