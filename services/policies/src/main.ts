import 'reflect-metadata';
import { QueueGroups } from '@agp/contracts';
import { runServiceProcess } from '@agp/bus';
import { policiesEnvSchema } from './env.js';
import { PoliciesModule } from './module.js';
import { PoliciesService } from './service.js';

/** Distributed mode: the policies service as its own process (NATS + PostgreSQL); ops port 9463. */
await runServiceProcess({
  name: 'policies',
  queue: QueueGroups.policies,
  env: policiesEnvSchema,
  build: ({ env, logger, store, db, ingestLog, bus }) => {
    const service = new PoliciesService({ store, db, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus, logger, env });
    return { service, module: PoliciesModule.register(service, logger) };
  },
});
