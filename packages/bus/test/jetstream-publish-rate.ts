/**
 * One-off measurement (not a test): JetStream publish rates on this machine, to compare with the
 * ARCHITECTURE.md §6 baseline ("JetStream async publish, file storage, 800 B messages, 1000 in flight:
 * about 20k msg/s").
 *
 *   NATS_URL=nats://127.0.0.1:4222 npx tsx packages/bus/test/jetstream-publish-rate.ts
 *
 * 1. Raw `js.publish` of 800-byte messages with a msgID each, 1000 in flight, file storage.
 * 2. `JetStreamIngestLog.publish` of 80 KB messages (100 events of 800 B each), at several concurrencies:
 *    messages/s and events/s.
 * Each run uses its own stream and deletes it afterwards.
 */
import { randomBytes } from 'node:crypto';
import { DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import { JetStreamIngestLog } from '../src/index.js';

const servers = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const suffix = randomBytes(4).toString('hex');

/** Run `total` tasks keeping `inFlight` of them running; returns elapsed ms. */
async function pump(total: number, inFlight: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, lane));
  return performance.now() - started;
}

async function rawPublish(): Promise<void> {
  const nc = await connect({ servers });
  const jsm = await jetstreamManager(nc);
  const name = `RATE_RAW_${suffix}`;
  const subject = `rate${suffix}.raw`;
  await jsm.streams.add({
    name,
    subjects: [`rate${suffix}.raw`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_bytes: 1024 * 1024 * 1024,
    duplicate_window: nanos(120_000),
  });
  const js = jetstream(nc);
  const data = randomBytes(400).toString('hex'); // 800 B
  try {
    await pump(5_000, 1000, (i) => js.publish(subject, data, { msgID: `w${i}` })); // warm-up
    const total = 60_000;
    const ms = await pump(total, 1000, (i) => js.publish(subject, data, { msgID: `m${i}` }));
    console.log(`raw js.publish, 800 B, msgID, 1000 in flight, file storage: ${Math.round((total / ms) * 1000)} msg/s (${total} in ${Math.round(ms)} ms)`);
  } finally {
    await jsm.streams.delete(name);
    await nc.close();
  }
}

async function ingestLogPublish(): Promise<void> {
  const name = `RATE_LOG_${suffix}`;
  const prefix = `rate${suffix}`;
  const log = await JetStreamIngestLog.create({ servers, streamName: name, subjects: [`${prefix}.ingest.>`], maxBytes: 4 * 1024 * 1024 * 1024 });
  const events = Array.from({ length: 100 }, (_, i) => ({
    id: `evt-${i}`,
    type: 'intervention.create',
    timestamp: '2026-01-01T00:00:00Z',
    body: { action_name: 'send_email', note: randomBytes(350).toString('hex') },
  }));
  const payload = { organization_id: 'acme', actor: 'key:k1', correlation_id: 'c1', received_at: '2026-01-01T00:00:00Z', events };
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  try {
    await pump(300, 64, (i) => log.publish({ subject: `${prefix}.ingest.acme.interventions`, msg_id: `w${i}`, payload })); // warm-up
    for (const inFlight of [16, 64, 256]) {
      const total = 3_000;
      const ms = await pump(total, inFlight, (i) => log.publish({ subject: `${prefix}.ingest.acme.interventions`, msg_id: `m${inFlight}-${i}`, payload }));
      const rate = (total / ms) * 1000;
      console.log(
        `JetStreamIngestLog.publish, ${(bytes / 1024).toFixed(1)} KB (100 events), ${inFlight} in flight: ${Math.round(rate)} msg/s = ${Math.round(rate * 100)} events/s, ${Math.round((rate * bytes) / 1024 / 1024)} MiB/s (${total} in ${Math.round(ms)} ms)`,
      );
    }
  } finally {
    await log.deleteStream();
    await log.close();
  }
}

await rawPublish();
await ingestLogPublish();
