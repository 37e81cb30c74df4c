import 'reflect-metadata';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '@agp/auth';
import { InProcessBroker, InProcessClient } from '@agp/bus';
import { createEventStore, createPgliteSql, type Sql } from '@agp/eventstore';
import { createLogger } from '@agp/runtime';
import { createGateway, type Gateway } from '../src/gateway.js';

/**
 * The console inside the real gateway (PGlite, no services): browser navigations reach the console, while the API,
 * the un-prefixed /mcp/* lists (which need a key), the OpenAPI document, health, metrics and docs answer as API routes.
 */
describe('the gateway serves the console without shadowing the API', () => {
  let sql: Sql;
  let gateway: Gateway;
  let url: string;
  let dir: string;
  const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agp-console-gw-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>AGP console</title>');
    sql = await createPgliteSql();
    const keys = new KeyStore(sql);
    await keys.migrate();
    await keys.ensureInit({ org: 'acme', writeKey: 'agp_console_write_key_0001', readKey: 'agp_console_read_key_00001', adminKey: 'agp_console_admin_key_0001' });
    gateway = await createGateway({ bus: new InProcessClient({ broker: new InProcessBroker() }), keys, sql, store: createEventStore(sql), logger: createLogger('gateway', 'silent'), consoleDir: dir });
    url = `http://127.0.0.1:${await gateway.listen(0, '127.0.0.1')}`;
  });
  afterAll(async () => {
    await gateway?.close();
    await sql?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a browser navigation to /, /mcp and /runs/<id> with the console', async () => {
    for (const path of ['/', '/mcp', '/runs/run-1', '/evals/benchmarks']) {
      const res = await fetch(url + path, { headers: HTML });
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain('<title>AGP console</title>');
    }
  });

  it('keeps /mcp/tools, /mcp/resources and /mcp/prompts the authenticated API (401 without a key), even for a browser', async () => {
    for (const path of ['/mcp/tools', '/mcp/resources', '/mcp/prompts']) {
      const res = await fetch(url + path, { headers: HTML });
      expect(res.status, path).toBe(401);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
    }
    expect((await fetch(`${url}/api/v1/interventions`, { headers: HTML })).status).toBe(401);
  });

  it('leaves the OpenAPI document, health, metrics, docs and the JSON root of API clients alone', async () => {
    expect(await (await fetch(`${url}/api/v1/openapi.json`, { headers: HTML })).json()).toMatchObject({ openapi: expect.stringMatching(/^3\.1/) });
    expect(await (await fetch(`${url}/healthz`, { headers: HTML })).json()).toEqual({ status: 'ok', service: 'gateway' });
    expect(await (await fetch(`${url}/metrics`, { headers: { ...HTML, authorization: 'Bearer agp_console_admin_key_0001' } })).text()).toContain('agp_http_requests_total');
    const docs = await fetch(`${url}/docs`, { headers: HTML });
    expect(await docs.text()).toContain('SwaggerUIBundle');
    expect(await (await fetch(`${url}/`, { headers: { accept: 'application/json' } })).json()).toMatchObject({ openapi: '/api/v1/openapi.json' });
  });
});
