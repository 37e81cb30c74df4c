import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { InProcessBroker, InProcessClient, SqlIngestLog } from '@agp/bus';
import { McpServerRegistrationSchema } from '@agp/contracts';
import { createEventStore, createPgliteSql, type EventStore, type Sql } from '@agp/eventstore';
import { AgpError, SecretBox, createLogger, type RequestContext } from '@agp/runtime';
import { PoliciesService } from '../src/index.js';
import { mcpServerStream } from '../src/mcpservers/mcpserver.js';

/**
 * The registry of upstream MCP servers at the service level (PGlite): `mcp-servers.open` answers the headers opened
 * for the caller's organisation only; the event and the read-model row hold them only sealed; a service without a
 * secrets key (distributed mode without AGP_SECRETS_KEY) refuses headers with a 503 naming the setting, and stores a
 * registration without headers.
 */
const logger = createLogger('mcp-servers-test', 'silent');
const ctx = (org = 'acme'): RequestContext => ({ organization_id: org, scope: 'write', key_id: 'k1', correlation_id: 'c1' });
const SECRET = 'Bearer ghp_service_level_secret_value';
const reg = (body: Record<string, unknown>) => McpServerRegistrationSchema.parse(body);

async function boot(secrets: SecretBox | undefined): Promise<{ sql: Sql; store: EventStore; log: SqlIngestLog; service: PoliciesService }> {
  const sql = await createPgliteSql();
  const store = createEventStore(sql);
  const log = await SqlIngestLog.create(sql);
  const service = new PoliciesService({ store, db: sql, ingestLog: log, subjectPrefix: 'mt', bus: new InProcessClient({ broker: new InProcessBroker() }), logger, env: { AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, secrets });
  await service.start();
  return { sql, store, log, service };
}

async function status(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AgpError) return { status: err.status, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('MCP server registry (service level)', () => {
  let p: Awaited<ReturnType<typeof boot>>;
  let keyless: Awaited<ReturnType<typeof boot>>;
  beforeAll(async () => {
    [p, keyless] = await Promise.all([boot(new SecretBox(randomBytes(32))), boot(undefined)]);
  });
  afterAll(async () => {
    for (const x of [p, keyless]) {
      await x?.service.stop();
      await x?.log.close();
      await x?.store.close();
    }
  });

  it('opens the headers for the gateway in the owning organisation only, and stores them only sealed', async () => {
    const created = await p.service.registerMcpServer(ctx(), reg({ name: 'github', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: SECRET, 'X-Team': 'a' } }));
    expect(created).toMatchObject({ name: 'github', action_prefix: 'github.', header_names: ['Authorization', 'X-Team'], version: 1 });
    expect(JSON.stringify(created)).not.toContain(SECRET);
    const opened = await p.service.openMcpServer(ctx(), 'github');
    expect(opened).toEqual({
      settings: { name: 'github', url: 'http://127.0.0.1:9/mcp', action_prefix: 'github.', tool_costs_usd: {}, hide_denied_tools: false, timeout_ms: 30000, approval: 'platform' },
      headers: { Authorization: SECRET, 'X-Team': 'a' },
      pins: [],
    });
    expect(await status(p.service.openMcpServer(ctx('globex'), 'github'))).toMatchObject({ status: 404 });
    const events = await p.store.readStream(mcpServerStream('acme', 'github'));
    expect(events.map((e) => e.type)).toEqual(['McpServerRegistered']);
    expect(JSON.stringify(events.map((e) => ({ data: e.data, metadata: e.metadata })))).not.toContain('ghp_service_level');
    expect(String(events[0].data.sealed_headers)).toMatch(/^agp1\./);
    const { rows } = await p.sql.query<{ doc: unknown; sealed_headers: string }>('SELECT doc, sealed_headers FROM agp_mcp_servers');
    expect(JSON.stringify(rows)).not.toContain('ghp_service_level');
    expect(rows[0].sealed_headers).toBe(events[0].data.sealed_headers);
    // Headers replaced by a patch open as the new set; an empty set removes them.
    await p.service.updateMcpServer(ctx(), 'github', null, { headers: { 'X-Other': 'b' } });
    expect((await p.service.openMcpServer(ctx(), 'github')).headers).toEqual({ 'X-Other': 'b' });
    await p.service.updateMcpServer(ctx(), 'github', '"2"', { headers: {} });
    expect((await p.service.openMcpServer(ctx(), 'github')).headers).toEqual({});
  });

  it('without a secrets key: headers are a 503 naming AGP_SECRETS_KEY, nothing written; no headers still registers', async () => {
    const refused = await status(keyless.service.registerMcpServer(ctx(), reg({ name: 'linear', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: SECRET } })));
    expect(refused.status).toBe(503);
    expect(refused.message).toContain('AGP_SECRETS_KEY');
    expect(await keyless.store.readStream(mcpServerStream('acme', 'linear'))).toEqual([]);
    const plain = await keyless.service.registerMcpServer(ctx(), reg({ name: 'linear', url: 'http://127.0.0.1:9/mcp' }));
    expect(plain.header_names).toEqual([]);
    expect((await keyless.service.openMcpServer(ctx(), 'linear')).headers).toEqual({});
  });
});
