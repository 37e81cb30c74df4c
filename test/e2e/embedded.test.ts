import { startEmbedded } from '@agp/embedded';
import { databaseHandles } from '../support/http.js';
import { platformScenarios } from './platform.scenarios.js';

// Embedded mode needs nothing but Node: it always runs (PGlite in memory, the in-process bus).
platformScenarios('embedded', async () => {
  const p = await startEmbedded({ port: 0, host: '127.0.0.1', dataDir: 'memory', initOrg: 'acme', initWriteKey: 'agp_test_write_key_0001', initReadKey: 'agp_test_read_key_0001' });
  return {
    url: p.url,
    writeKey: 'agp_test_write_key_0001',
    readKey: 'agp_test_read_key_0001',
    ...(await databaseHandles(p.sql)),
    stop: () => p.stop(),
  };
});
