import 'reflect-metadata';
import { QueueGroups } from '@agp/contracts';
import { runServiceProcess } from '@agp/bus';
import { evalsEnvSchema } from './env.js';
import { EvalsModule } from './module.js';
import { EvalsService } from './service.js';

/** Distributed mode: the evals service as its own process (NATS + PostgreSQL); ops port 9466. */
await runServiceProcess({
  name: 'evals',
  queue: QueueGroups.evals,
  env: evalsEnvSchema,
  build: ({ env, logger, store, db, bus }) => {
    const service = new EvalsService({ store, db, bus, logger, env });
    return { service, module: EvalsModule.register(service, logger) };
  },
});
