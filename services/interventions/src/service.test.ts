import { Durables } from '@agp/contracts';
import type { IngestLogConsumer } from '@agp/bus';
import type { EventStore, SubscriptionOptions } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';
import { describe, expect, it, vi } from 'vitest';
import { APPROVALS_PROJECTION } from './approvals/readModel.js';
import { READ_MODEL_PROJECTION } from './projections/interventionReadModel.js';
import { InterventionsService } from './service.js';

const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined, child: () => quiet } as unknown as Logger;

/** A store and ingest log that record what was started and stopped, in order (no database). */
function fakes() {
  const log: string[] = [];
  const executor = { query: async () => ({ rows: [] }) };
  const store = {
    sql: { ...executor, transaction: async (fn: (tx: typeof executor) => Promise<unknown>) => fn(executor) },
    migrate: async () => void log.push('migrate event store'),
    subscribe: (o: SubscriptionOptions) => {
      log.push(`subscribe ${o.name}`);
      return { position: () => 0n, waitFor: async () => undefined, stop: async () => void log.push(`stop ${o.name}`) };
    },
  } as unknown as EventStore;
  const ingestLog: IngestLogConsumer = {
    consume: async (o) => {
      log.push(`consume ${o.durable}`);
      return { stop: async () => void log.push(`stop ${o.durable}`) };
    },
  };
  return { log, store, ingestLog };
}

describe('InterventionsService start/stop', () => {
  it('starts read models, the ingest consumer, then approvals and enrichment; stops the consumer first and the projections last, once', async () => {
    const { log, store, ingestLog } = fakes();
    const service = new InterventionsService({ store, ingestLog, subjectPrefix: 'agp', logger: quiet });
    const approvalsStart = vi.spyOn(service.approvals, 'start').mockImplementation(async () => void log.push('start approvals'));
    vi.spyOn(service.approvals, 'stop').mockImplementation(async () => void log.push('stop approvals'));
    vi.spyOn(service.enrichment, 'start').mockImplementation(async () => void log.push('start enrichment'));
    vi.spyOn(service.enrichment, 'stop').mockImplementation(async () => void log.push('stop enrichment'));

    await service.start();
    expect(approvalsStart).toHaveBeenCalledOnce();
    expect(log).toEqual([
      'migrate event store',
      `subscribe ${READ_MODEL_PROJECTION}`,
      `subscribe ${APPROVALS_PROJECTION}`,
      `consume ${Durables.interventionsIngest}`,
      'start approvals',
      'start enrichment',
    ]);

    log.length = 0;
    await Promise.all([service.stop(), service.stop()]);
    await service.stop();
    expect(log.slice(0, 3)).toEqual([`stop ${Durables.interventionsIngest}`, 'stop enrichment', 'stop approvals']);
    expect(log.slice(3).sort()).toEqual([`stop ${APPROVALS_PROJECTION}`, `stop ${READ_MODEL_PROJECTION}`].sort());
    expect(log).toHaveLength(5);
  });
});
