import { describe, expect, it } from 'vitest';
import { startEmbedded } from '@agp/embedded';

/**
 * The gateway listens where HOST says, and on loopback (127.0.0.1) when it is unset: an embedded platform started on
 * a laptop is not reachable from the network unless asked (the address is read back from the listening socket).
 */
describe('gateway listen address (HOST)', () => {
  it('is 127.0.0.1 unless HOST is set, and HOST=0.0.0.0 listens on every interface', async () => {
    for (const [HOST, expected] of [['', '127.0.0.1'], ['0.0.0.0', '0.0.0.0']]) {
      const p = await startEmbedded({ port: 0, dataDir: 'memory', bootstrapFirstRun: false, env: { HOST, LOG_LEVEL: 'warn' } });
      try {
        expect(p.host, `HOST=${HOST}`).toBe(expected);
        expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
      } finally {
        await p.stop();
      }
    }
  }, 120_000);
});
