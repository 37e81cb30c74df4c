import { ServiceUnavailableError } from '@agp/runtime';
import { describe, expect, it } from 'vitest';
import { infra, runSuffix, skipIntegration } from '../../../test/support/infra.js';
import { ingestSubjects, JetStreamIngestLog } from '../src/index.js';
import { ingestLogContract, QuietLogger } from './ingest-log-contract.js';

describe.skipIf(skipIntegration('nats'))('JetStreamIngestLog', () => {
  const suffix = runSuffix();
  const prefix = `t${suffix}`;
  const streamName = `INGEST_T${suffix}`;

  ingestLogContract(async () => {
    const log = await JetStreamIngestLog.create({
      servers: infra().natsUrl,
      streamName,
      subjects: [ingestSubjects(prefix)],
      maxBytes: 64 * 1024 * 1024,
      // Each test's own durable over its own subject (work-queue retention: no platform durable over the same subjects).
      durables: [],
      logger: new QuietLogger(),
    });
    return { log, prefix, cleanup: () => deleteStream(streamName), prepare: (durable, filter) => log.ensureDurable(durable, filter) };
  });

  it('creates the stream with file storage, work-queue retention, discard new, no age limit and a 2-minute dedupe window, with the platform durables', async () => {
    const name = `INGEST_T${runSuffix()}`;
    const log = await JetStreamIngestLog.create({ servers: infra().natsUrl, streamName: name, subjects: [ingestSubjects(`t${runSuffix()}`)], maxBytes: 8 * 1024 * 1024 });
    try {
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const { connect } = await import('@nats-io/transport-node');
      const nc = await connect({ servers: infra().natsUrl });
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(name);
      const durables = (await jsm.consumers.list(name).next()).map((c) => c.name).sort();
      await nc.close();
      expect(info.config).toMatchObject({ storage: 'file', retention: 'workqueue', discard: 'new', max_age: 0, duplicate_window: 120_000_000_000, max_bytes: 8 * 1024 * 1024 });
      expect(durables).toEqual(['interventions-ingest', 'policies-ingest', 'stats-ingest']);
    } finally {
      await log.deleteStream();
      await log.close();
    }
  });

  it('reports an unreachable NATS server as ServiceUnavailableError', async () => {
    const err = await JetStreamIngestLog.create({ servers: 'nats://127.0.0.1:1', streamName: 'NOPE', subjects: ['nope.ingested.>'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as Error).cause).toBeDefined();
  });
});

async function deleteStream(name: string): Promise<void> {
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const { connect } = await import('@nats-io/transport-node');
  const nc = await connect({ servers: infra().natsUrl });
  try {
    await (await jetstreamManager(nc)).streams.delete(name);
  } finally {
    await nc.close();
  }
}
