import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consoleAssets, defaultConsoleDir, isConsoleRoute } from './console.js';

/** An express app with the console middleware over `dir` and a stand-in for everything behind it (answers `passed`). */
async function serve(dir: string) {
  const app = express();
  app.use(consoleAssets({ dir }));
  app.use((req, res) => void res.status(299).type('text/plain').send(`passed ${req.method} ${req.path}`));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((r) => server.close(r)) };
}

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('isConsoleRoute', () => {
  it.each([
    ['/', true],
    ['/interventions', true],
    ['/interventions/0190abc', true],
    ['/approvals/', true],
    ['/policies/p-1', true],
    ['/runs/run-42', true],
    ['/evals', true],
    ['/evals/benchmarks', true],
    ['/replay/run-1', true],
    ['/mcp', true],
    ['/mcp/', true],
    ['/mcp/tools', false],
    ['/mcp/resources', false],
    ['/mcp/prompts', false],
    ['/api/v1/interventions', false],
    ['/healthz', false],
    ['/metrics', false],
    ['/docs', false],
    ['/runsx', false],
    ['/unknown', false],
  ])('%s -> %s', (path, yes) => expect(isConsoleRoute(path)).toBe(yes));
});

describe('consoleAssets (the gateway serving the built console)', () => {
  let dir: string;
  let app: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agp-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/assets/index-abc123.js"></script>');
    writeFileSync(join(dir, 'assets/index-abc123.js'), 'console.log("hi")');
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    app = await serve(dir);
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['/', '/interventions', '/runs/run-42', '/policies/0190/', '/evals/benchmarks', '/replay/run-1', '/mcp', '/mcp/', '/approvals?status=pending'])(
    'answers a browser navigation to %s with index.html, no-cache and a strict CSP (history fallback)',
    async (path) => {
      const res = await fetch(app.url + path, { headers: HTML });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('<title>console</title>');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(CONSOLE_CSP).toContain("script-src 'self'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('vary')).toBe('Accept');
    },
  );

  it.each(['/mcp/tools', '/mcp/resources', '/mcp/prompts', '/api/v1/interventions', '/api/v1/openapi.json', '/healthz', '/readyz', '/metrics', '/docs', '/unknown', '/runsx'])(
    'never shadows %s, even for a browser navigation',
    async (path) => {
      const res = await fetch(app.url + path, { headers: HTML });
      expect(res.status).toBe(299);
      expect(await res.text()).toBe(`passed GET ${path}`);
    },
  );

  it('leaves a console path to the API for a client that does not ask for HTML (JSON, curl) and for writes', async () => {
    for (const accept of ['application/json', '*/*']) {
      const res = await fetch(`${app.url}/runs`, { headers: { accept } });
      expect(res.status, accept).toBe(299);
      expect(res.headers.get('vary'), accept).toBe('Accept');
    }
    expect((await fetch(`${app.url}/`, { headers: { accept: '*/*' } })).status).toBe(299);
    expect((await fetch(`${app.url}/runs`, { method: 'POST', headers: HTML })).status).toBe(299);
  });

  it('serves hashed assets with a year-long immutable cache, and a missing one as a 404 that is not cached', async () => {
    const res = await fetch(`${app.url}/assets/index-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('console.log("hi")');
    const missing = await fetch(`${app.url}/assets/index-nope.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    expect((await fetch(`${app.url}/assets/..%2findex.html`)).status).not.toBe(200);
    expect((await fetch(`${app.url}/favicon.svg`)).status).toBe(200);
  });

  it('says how to build the console when it is not built (503), and still leaves the API alone', async () => {
    const empty = await serve(join(dir, 'nothing-here'));
    try {
      const res = await fetch(`${empty.url}/runs`, { headers: HTML });
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(text).toContain('The AGP console is not built');
      expect(text).toContain('npm run build');
      expect((await fetch(`${empty.url}/mcp/tools`, { headers: HTML })).status).toBe(299);
    } finally {
      await empty.close();
    }
  });

  it('finds services/console/dist from the sources and both bundles, or AGP_CONSOLE_DIR', () => {
    expect(defaultConsoleDir({})).toMatch(/services\/console\/dist$/);
    expect(defaultConsoleDir({ AGP_CONSOLE_DIR: '/srv/console' })).toBe('/srv/console');
  });
});
