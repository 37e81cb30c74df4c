import { KeyStore } from '@agp/auth';
import { startEmbedded } from '@agp/embedded';
import { platformScenarios } from './platform.scenarios.js';

// Embedded mode needs nothing but Node: it always runs (PGlite in memory, the in-process bus).
platformScenarios('embedded', async () => {
  const p = await startEmbedded({ port: 0, host: '127.0.0.1', dataDir: 'memory', initOrg: 'acme', initWriteKey: 'agp_test_write_key_0001', initReadKey: 'agp_test_read_key_0001' });
  const keys = new KeyStore(p.sql);
  await keys.createOrganization('globex');
  const other = await keys.createKey({ organizationId: 'globex', scope: 'write' });
  return {
    url: p.url,
    writeKey: 'agp_test_write_key_0001',
    readKey: 'agp_test_read_key_0001',
    otherOrgWriteKey: other.key,
    async streamEventTypes(streamId) {
      const { rows } = await p.sql.query<{ event_type: string }>('SELECT event_type FROM agp_events WHERE stream_id = $1 ORDER BY stream_version', [streamId]);
      return rows.map((r) => r.event_type);
    },
    stop: () => p.stop(),
  };
});
