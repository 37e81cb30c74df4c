import { describe } from 'vitest';
import { createPgSql } from '@agp/eventstore';
import { infra, skipIntegration } from '../support/infra.js';
import { startDistributed } from '../support/distributed.js';
import { databaseHandles } from '../support/http.js';
import { platformScenarios } from './platform.scenarios.js';

// Distributed mode: gateway, ingest and interventions as separate processes on real NATS and PostgreSQL.
describe.skipIf(skipIntegration())('distributed mode', () => {
  platformScenarios('distributed', async () => {
    const run = await startDistributed({
      adminDatabaseUrl: infra().databaseUrl,
      natsUrl: infra().natsUrl,
      env: { AGP_INIT_ORG: 'acme', AGP_INIT_WRITE_KEY: 'agp_dist_write_key_001', AGP_INIT_READ_KEY: 'agp_dist_read_key_0001' },
    });
    const sql = createPgSql(run.databaseUrl);
    return {
      url: run.url,
      writeKey: 'agp_dist_write_key_001',
      readKey: 'agp_dist_read_key_0001',
      ...(await databaseHandles(sql)),
      async stop() {
        await sql.close();
        await run.stop();
      },
    };
  });
});
