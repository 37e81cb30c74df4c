import 'reflect-metadata';
import { QueueGroups } from '@agp/contracts';
import { runServiceProcess } from '@agp/bus';
import { statsEnvSchema } from './env.js';
import { StatsModule } from './module.js';
import { StatsService } from './service.js';

/** Distributed mode: the stats service as its own process (NATS + PostgreSQL); ops port 9464. */
await runServiceProcess({
  name: 'stats',
  queue: QueueGroups.stats,
  env: statsEnvSchema,
  build: ({ env, logger, store, db, ingestLog, bus }) => {
    const service = new StatsService({ store, db, ingestLog, subjectPrefix: env.AGP_SUBJECT_PREFIX, bus, logger, env });
    return { service, module: StatsModule.register(service, logger) };
  },
});
