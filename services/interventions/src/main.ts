import 'reflect-metadata';
import { QueueGroups } from '@agp/contracts';
import { runServiceProcess } from '@agp/bus';
import { interventionsEnvSchema } from './env.js';
import { InterventionsModule } from './module.js';
import { InterventionsService } from './service.js';

/** Distributed mode: the interventions service as its own process (NATS + PostgreSQL); ops port 9461. */
await runServiceProcess({
  name: 'interventions',
  queue: QueueGroups.interventions,
  env: interventionsEnvSchema,
  build: ({ env, logger, store, db, ingestLog, bus }) => {
    const service = new InterventionsService({ store, db, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus, logger, env });
    return { service, module: InterventionsModule.register(service, logger) };
  },
});
