import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinnedFetch } from './pinned-fetch.js';

describe('pinnedFetch (outbound calls connect only to the addresses the outbound check accepted)', () => {
  const server = createServer((req, res) => res.end(`host ${req.headers.host}`));
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });

  it('reaches the pinned address whatever the host name would resolve to, sending the URL’s host name', async () => {
    const { fetch, agent } = pinnedFetch(['127.0.0.1']);
    try {
      // `.invalid` never resolves (RFC 6761): only the pinned address can answer.
      const res = await fetch(`http://rebound.invalid:${port}/mcp`);
      expect(await res.text()).toBe(`host rebound.invalid:${port}`);
    } finally {
      await agent.close();
    }
    await expect(globalThis.fetch(`http://rebound.invalid:${port}/mcp`)).rejects.toThrow();
  });

  it('connects to the pinned address only: the server on 127.0.0.1 is not reached through a pin to 127.0.0.2', async () => {
    const { fetch, agent } = pinnedFetch(['127.0.0.2']);
    try {
      await expect(fetch(`http://rebound.invalid:${port}/mcp`)).rejects.toThrow();
    } finally {
      await agent.close();
    }
  });
});
