import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { call, expectProblem } from '../support/http.js';
import { describeModes } from '../support/modes.js';

const uniq = () => Math.random().toString(36).slice(2, 8);
/** A header value that must never come back: not in an answer, a tool output, the read model or an event unsealed. */
const SECRET = `Bearer ghp_${randomBytes(12).toString('hex')}`;
const BASE = '/api/v1/mcp/servers';

/**
 * The registry of upstream MCP servers over HTTP and the platform's MCP tools, in both run modes: register, list, get,
 * patch (headers replace the set; If-Match), delete; a taken name is a 409; bad fields, refused URLs (other schemes,
 * credentials, metadata, private addresses not in AGP_OUTBOUND_ALLOWED_HOSTS) and control characters in a header are
 * 422s naming the field, writing nothing; another organisation's server is a 404; a header value is never answered and
 * is stored only sealed. Source: docs/api.md (MCP servers); docs/mcp-proxy.md; docs/decisions.md (Secrets at rest).
 */
describeModes(
  'MCP server registry over HTTP',
  (platform, mode) => {
    it('registers, lists, gets, patches and deletes a server; header values are never answered, stored only sealed, never logged', async () => {
      const p = platform();
      // Distributed mode passes every service process's output through this process's stderr: collect it while the
      // secret travels (embedded mode's pino writes to fd 1 directly, out of reach here).
      const logged: string[] = [];
      const write = process.stderr.write;
      if (mode === 'distributed') process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => (logged.push(String(chunk)), (write as (...a: unknown[]) => boolean).call(process.stderr, chunk, ...rest))) as typeof process.stderr.write;
      try {
        const name = `gh-${uniq()}`;
        const body = { name, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: SECRET }, tool_costs_usd: { create_issue: 0.02 }, hide_denied_tools: true, timeout_ms: 20000, approval: 'client' };
        const created = await call(p, 'POST', BASE, { key: p.writeKey, body });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        expect(created.body).toEqual({
          name,
          url: 'http://127.0.0.1:9/mcp',
          action_prefix: `${name}.`,
          tool_costs_usd: { create_issue: 0.02 },
          hide_denied_tools: true,
          timeout_ms: 20000,
          approval: 'client',
          header_names: ['Authorization'],
          created_at: expect.any(String),
          updated_at: expect.any(String),
          version: 1,
        });
        expectProblem(await call(p, 'POST', BASE, { key: p.writeKey, body: { name, url: 'http://127.0.0.1:9/other' } }), 409);
        expectProblem(await call(p, 'POST', BASE, { key: p.readKey, body: { name: `r-${uniq()}`, url: 'http://127.0.0.1:9/mcp' } }), 403);

        const got = await call(p, 'GET', `${BASE}/${name}`, { key: p.readKey });
        expect(got.body).toEqual(created.body);
        const list = await call(p, 'GET', `${BASE}?limit=1000`, { key: p.readKey });
        expect(list.body).toMatchObject({ total: expect.any(Number), skip: 0, limit: 1000 });
        expect(list.body.servers.find((s: { name: string }) => s.name === name)).toEqual(created.body);

        // PATCH: a subset of fields; headers replace the whole set; If-Match guards the version.
        const patched = await call(p, 'PATCH', `${BASE}/${name}`, { key: p.writeKey, body: { timeout_ms: 5000, headers: { 'X-Api-Key': SECRET, 'X-Team': 'core' } }, headers: { 'if-match': '"1"' } });
        expect(patched.status, JSON.stringify(patched.body)).toBe(200);
        expect(patched.body).toMatchObject({ name, timeout_ms: 5000, approval: 'client', header_names: ['X-Api-Key', 'X-Team'], version: 2, created_at: created.body.created_at });
        expectProblem(await call(p, 'PATCH', `${BASE}/${name}`, { key: p.writeKey, body: { timeout_ms: 6000 }, headers: { 'if-match': '"1"' } }), 409);
        expectProblem(await call(p, 'PATCH', `${BASE}/${name}`, { key: p.writeKey, body: { name: 'renamed' } }), 422, ['body.name', 'body']);

        // Through the platform's MCP tools (REST facade): the same records, never a header value.
        const tool = (tool_name: string, args: Record<string, unknown>, key = p.writeKey) => call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name, arguments: args } });
        const viaTool = await tool('get_mcp_server', { name }, p.readKey);
        expect(viaTool.body).toMatchObject({ success: true, data: { name, version: 2 } });
        const toolName = `tool-${uniq()}`;
        const registered = await tool('register_mcp_server', { name: toolName, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: SECRET } });
        expect(registered.body).toMatchObject({ success: true, data: { name: toolName, header_names: ['Authorization'] } });
        const listed = await tool('list_mcp_servers', {}, p.readKey);
        expect(listed.body.data.servers.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining([name, toolName]));
        expect((await tool('register_mcp_server', { name: `x-${uniq()}`, url: 'http://127.0.0.1:9/mcp' }, p.readKey)).body).toMatchObject({ success: false });
        const updated = await tool('update_mcp_server', { name: toolName, expected_version: 1, headers: { Authorization: `${SECRET}-2` } });
        expect(updated.body).toMatchObject({ success: true, data: { version: 2 } });

        // Never a header value: in any answer above, in the read model (sealed only), in an event (sealed only).
        for (const r of [created, got, list, patched, viaTool, registered, listed, updated]) expect(JSON.stringify(r.body)).not.toContain(SECRET.slice(7));
        const rows = await p.queryRows('SELECT doc, sealed_headers FROM agp_mcp_servers WHERE name = ANY($1::text[])', [[name, toolName]]);
        expect(rows).toHaveLength(2);
        expect(JSON.stringify(rows)).not.toContain(SECRET.slice(7));
        for (const r of rows) expect(r.sealed_headers).toMatch(/^agp1\./);
        const events = await p.queryRows("SELECT data::text AS data FROM agp_events WHERE event_type LIKE 'McpServer%'");
        expect(events.length).toBeGreaterThanOrEqual(4);
        expect(JSON.stringify(events)).not.toContain(SECRET.slice(7));

        // Delete: 204, then gone (404 on get, patch and delete), out of the list; the name may be registered again.
        expect((await call(p, 'DELETE', `${BASE}/${name}`, { key: p.writeKey })).status).toBe(204);
        expectProblem(await call(p, 'GET', `${BASE}/${name}`, { key: p.readKey }), 404);
        expectProblem(await call(p, 'PATCH', `${BASE}/${name}`, { key: p.writeKey, body: { timeout_ms: 1000 } }), 404);
        expectProblem(await call(p, 'DELETE', `${BASE}/${name}`, { key: p.writeKey }), 404);
        expect((await call(p, 'GET', `${BASE}?limit=1000`, { key: p.readKey })).body.servers.map((s: { name: string }) => s.name)).not.toContain(name);
        const again = await call(p, 'POST', BASE, { key: p.writeKey, body: { name, url: 'http://127.0.0.1:9/mcp' } });
        expect(again.status).toBe(201);
        expect(again.body).toMatchObject({ header_names: [], version: 4 });
        expect((await tool('delete_mcp_server', { name: toolName })).body).toMatchObject({ success: true, data: { deleted: toolName } });
      } finally {
        process.stderr.write = write;
      }
      expect(logged.join('')).not.toContain(SECRET.slice(7));
    });

    it('refuses bad fields, URLs the platform does not call and control characters in a header with 422 naming the field, writing nothing', async () => {
      const p = platform();
      const before = await p.eventCount();
      const post = (body: unknown) => call(p, 'POST', BASE, { key: p.writeKey, body });
      expectProblem(await post({ name: 'Bad Name', url: 'http://127.0.0.1:9/mcp', approval: 'nobody', timeout_ms: 5 }), 422, ['body.name', 'body.timeout_ms', 'body.approval']);
      expectProblem(await post({ name: 'x', url: 'ftp://x' }), 422, ['body.url']);
      expectProblem(await post({ name: 'x', url: 'http://user:pw@127.0.0.1:9/mcp' }), 422, ['body.url']);
      for (const url of ['http://169.254.169.254/mcp', 'http://10.0.0.1/mcp', 'http://metadata.google.internal/mcp', 'http://[::1]:9/mcp']) {
        const r = await post({ name: 'x', url });
        expectProblem(r, 422, ['body.url']);
        expect(r.body.errors[0].message).toMatch(/refused/);
      }
      const ctl = await post({ name: 'x', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer a\r\nX-Injected: 1' } });
      expectProblem(ctl, 422, ['body.headers.Authorization']);
      expectProblem(await post({ name: 'x', url: 'http://127.0.0.1:9/mcp', headers: { Host: 'evil' } }), 422);
      expectProblem(await post({ name: 'x', url: 'http://127.0.0.1:9/mcp', extra: 1 }), 422, ['body.extra']);
      const name = `v-${uniq()}`;
      expect((await post({ name, url: 'http://127.0.0.1:9/mcp' })).status).toBe(201);
      const mid = await p.eventCount();
      expectProblem(await call(p, 'PATCH', `${BASE}/${name}`, { key: p.writeKey, body: { url: 'http://10.0.0.1/mcp' } }), 422, ['body.url']);
      expectProblem(await call(p, 'PATCH', `${BASE}/${name}`, { key: p.writeKey, body: {} }), 422);
      expect(await p.eventCount()).toBe(mid);
      expect(mid).toBe(before + 1);
    });

    it("answers 404 for another organisation's server on get, patch and delete, and lists only the caller's", async () => {
      const p = platform();
      const name = `own-${uniq()}`;
      expect((await call(p, 'POST', BASE, { key: p.writeKey, body: { name, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: SECRET } } })).status).toBe(201);
      expectProblem(await call(p, 'GET', `${BASE}/${name}`, { key: p.otherOrgWriteKey }), 404);
      expectProblem(await call(p, 'PATCH', `${BASE}/${name}`, { key: p.otherOrgWriteKey, body: { url: 'http://127.0.0.1:9/hijack' } }), 404);
      expectProblem(await call(p, 'DELETE', `${BASE}/${name}`, { key: p.otherOrgWriteKey }), 404);
      expect((await call(p, 'GET', BASE, { key: p.otherOrgWriteKey })).body.servers.map((s: { name: string }) => s.name)).not.toContain(name);
      // The other organisation may use the same name for a server of its own.
      expect((await call(p, 'POST', BASE, { key: p.otherOrgWriteKey, body: { name, url: 'http://127.0.0.1:9/theirs' } })).status).toBe(201);
      expect((await call(p, 'GET', `${BASE}/${name}`, { key: p.writeKey })).body).toMatchObject({ url: 'http://127.0.0.1:9/mcp', version: 1 });
    });
  },
  { env: { AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', AGP_SECRETS_KEY: randomBytes(32).toString('base64') } },
);
