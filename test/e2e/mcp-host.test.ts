/**
 * The MCP endpoint's Host validation (docs/mcp.md, DNS rebinding): with AGP_MCP_ALLOWED_HOSTS set, a request whose
 * `Host` is neither one of those names nor localhost-class is refused with 403 and a JSON-RPC error, in both run modes;
 * an allowed name is served. (Without the setting Host is not checked; `Origin` always is: test/e2e/mcp.test.ts.)
 */
import { request } from 'node:http';
import { expect, it } from 'vitest';
import { describeModes } from '../support/modes.js';

/** POST a 2026-07-28 tools/list to `url` with an explicit Host header (fetch cannot set one). */
function postWithHost(url: string, host: string, key: string): Promise<{ status: number; json: any }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'host-test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
  });
  const u = new URL('/api/v1/mcp', url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          host,
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/list',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describeModes(
  'MCP endpoint Host validation (AGP_MCP_ALLOWED_HOSTS)',
  (platform) => {
    it('refuses a Host that is not allowed with 403 and a JSON-RPC error, and serves allowed and localhost names', async () => {
      const p = platform();
      const port = new URL(p.url).port;
      for (const host of [`evil.example:${port}`, 'attacker.test']) {
        const r = await postWithHost(p.url, host, p.readKey);
        expect(r.status, host).toBe(403);
        expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/host/i) } });
      }
      for (const host of [`agp.example.com:${port}`, `127.0.0.1:${port}`, `localhost:${port}`]) {
        const r = await postWithHost(p.url, host, p.readKey);
        expect(r.status, host).toBe(200);
        expect(r.json.result.tools.map((t: { name: string }) => t.name)).toContain('get_dashboard_stats');
      }
    });
  },
  { env: { AGP_MCP_ALLOWED_HOSTS: 'agp.example.com' } },
);
