import type { IngestLogConsumer } from '@agp/bus';
import type { EventStore } from '@agp/eventstore';
import type { Logger } from '@agp/runtime';

/** Dependencies of the policies service; the same in both run modes. */
export interface PoliciesDeps {
  store: EventStore;
  /** Where accepted `agent.register` ingest batches come from (JetStream, or the embedded SQL log). */
  ingestLog: IngestLogConsumer;
  /** Subject prefix (AGP_SUBJECT_PREFIX), for the ingest consumer's filter. */
  subjectPrefix: string;
  logger: Logger;
  /** Clock; injectable for tests. */
  now?: () => Date;
}

/**
 * The policies service: versioned event-sourced policies, kill switches and the agent registry.
 * Source: issue #3 point 2; ARCHITECTURE.md §1.
 */
export class PoliciesService {
  constructor(private readonly deps: PoliciesDeps) {}

  /** Create tables, start projections and the ingest consumer. */
  async start(): Promise<void> {
    await this.deps.store.migrate();
  }

  async stop(): Promise<void> {}
}
