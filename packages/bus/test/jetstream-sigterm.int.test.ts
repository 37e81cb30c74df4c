/**
 * The ingest log when its NATS server is stopped by SIGTERM (a clean shutdown) on a server of its own: a clean
 * shutdown stops the stream's consumers before the stream, and for those milliseconds the stream still answers
 * publishes. Every message whose publish resolved must reach its consumer after the restart. Under interest retention
 * the server acknowledged such a message and dropped it (no consumer had interest), so the retry-free client lost it.
 * Skips with one printed reason when the `nats-server` binary is missing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_DURABLES } from '@agp/contracts';
import { ingestFilter, ingestSubject, ingestSubjects, JetStreamIngestLog } from '../src/index.js';
import { QuietLogger, sleep, until } from './ingest-log-contract.js';
import { freePort, missingNatsServer as missing, OwnNats } from './own-nats.js';

if (missing) console.warn(missing);

const TARGETS = Object.keys(INGEST_DURABLES) as Array<keyof typeof INGEST_DURABLES>;

describe.skipIf(Boolean(missing))('JetStreamIngestLog and a NATS server stopped by SIGTERM (own nats-server)', () => {
  let nats: OwnNats;
  let dir: string;
  const logs: JetStreamIngestLog[] = [];
  let n = 0;
  const open = async (prefix: string, streamName = `T${++n}`) => {
    const log = await JetStreamIngestLog.create({ servers: nats.url, streamName, subjects: [ingestSubjects(prefix)], logger: new QuietLogger() });
    logs.push(log);
    return log;
  };
  /** Consume every platform durable of `log`, recording the msg_ids each got (then acking them). */
  const consumeAll = async (log: JetStreamIngestLog, prefix: string) => {
    const got = new Map<string, Set<string>>(TARGETS.map((t) => [t, new Set<string>()]));
    for (const t of TARGETS) {
      await log.consume({
        durable: INGEST_DURABLES[t],
        subjectFilter: ingestFilter(prefix, t),
        handler: async (batch) => {
          for (const m of batch) got.get(t)!.add(m.msg_id);
          await Promise.all(batch.map((m) => m.ack()));
        },
      });
    }
    return got;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agp-js-sigterm-'));
    nats = new OwnNats(await freePort(), dir);
    await nats.start();
  });
  afterAll(async () => {
    try {
      await Promise.race([Promise.all(logs.map((l) => l.close().catch(() => undefined))), sleep(10_000)]);
    } finally {
      await nats?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a message published while its subject has no consumer (as mid-shutdown), for the consumer that comes back', async () => {
    const prefix = 'gap';
    const log = await open(prefix);
    // What a clean shutdown does for a moment: the stream is up, its consumers are not.
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.delete(log.streamName, INGEST_DURABLES.interventions);
    await nc.close();
    await expect(log.publish({ subject: ingestSubject(prefix, 'acme', 'interventions'), msg_id: 'while-gone', payload: { n: 1 } })).resolves.toEqual({ duplicate: false });
    // The consumer is back (every process re-creates the platform durables): the acknowledged message is there.
    const got = await consumeAll(log, prefix);
    await until(() => got.get('interventions')!.has('while-gone'), 8000, 'the message published while its consumer was gone').catch(() => undefined);
    expect([...got.get('interventions')!]).toEqual(['while-gone']);
  });

  it('delivers every acknowledged publish across three SIGTERM restarts under load', async () => {
    const prefix = 'sigterm';
    const log = await open(prefix);
    const publisher = await open(prefix, log.streamName); // ingest's own connection
    const got = await consumeAll(log, prefix);
    const acked = new Map<string, string>();
    let stop = false;
    // Eight clients publishing back to back; a failed publish is retried with the same msg_id, as ingest's clients do.
    const publish = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const target = TARGETS[i % TARGETS.length];
        const id = `w${w}-${i}`;
        while (!(await publisher.publish({ subject: ingestSubject(prefix, 'acme', target), msg_id: id, payload: { id } }).then(() => true, () => false))) await sleep(250);
        acked.set(id, target);
      }
    };
    const clients = Array.from({ length: 8 }, (_, w) => publish(w));
    for (let round = 0; round < 3; round++) {
      await sleep(1000);
      await nats.stop('SIGTERM');
      await sleep(1000);
      await nats.start();
    }
    await sleep(2000);
    stop = true;
    await Promise.all(clients);
    const missing = () => [...acked].filter(([id, target]) => !got.get(target)!.has(id)).map(([id]) => id);
    await until(() => missing().length === 0, 20_000, 'every acknowledged message').catch(() => undefined);
    console.log(`[jetstream sigterm] ${acked.size} acknowledged publishes over 3 SIGTERM restarts, ${missing().length} not delivered`);
    expect(acked.size).toBeGreaterThan(100);
    expect(missing()).toEqual([]);
  }, 90_000);
});
