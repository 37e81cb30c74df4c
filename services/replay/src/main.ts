import 'reflect-metadata';
import { QueueGroups } from '@agp/contracts';
import { runServiceProcess } from '@agp/bus';
import { replayEnvSchema } from './env.js';
import { ReplayModule } from './module.js';
import { ReplayService } from './service.js';

/** Distributed mode: the replay service as its own process (NATS + PostgreSQL); ops port 9467. */
await runServiceProcess({
  name: 'replay',
  queue: QueueGroups.replay,
  env: replayEnvSchema,
  build: ({ logger, store, db, bus }) => {
    const service = new ReplayService({ store, db, bus, logger });
    return { service, module: ReplayModule.register(service, logger) };
  },
});
