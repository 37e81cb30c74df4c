import type { ClientProxy } from '@nestjs/microservices';
import type { IngestLogConsumer } from '@agp/bus';
import type { EventStore } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';

/** Dependencies of the stats service; the same in both run modes. */
export interface StatsDeps {
  store: EventStore;
  /** Where accepted run.start / run.end / action.record batches come from (JetStream, or the embedded SQL log). */
  ingestLog: IngestLogConsumer;
  /** Subject prefix (AGP_SUBJECT_PREFIX), for the ingest consumer's filter. */
  subjectPrefix: string;
  /** Bus client, to ask other services (e.g. interventions.agent-counts) over NATS or in-process. */
  bus: Pick<ClientProxy, 'send'>;
  logger: Logger;
  /** Clock; injectable for tests. */
  now?: () => Date;
}

/**
 * The stats service: projections of runs and the action ledger, cost and reliability stats, ledger export.
 * Source: issue #3 point 4; platform-api.md (Stats); ARCHITECTURE.md §1.
 */
export class StatsService {
  constructor(private readonly deps: StatsDeps) {}

  /** Create tables, start projections and the ingest consumer. */
  async start(): Promise<void> {
    await this.deps.store.migrate();
  }

  async stop(): Promise<void> {}
}
