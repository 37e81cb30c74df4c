/**
 * The HTTP route table (`HTTP_ROUTES` in `@agp/contracts`) against the wire table and the gateway, without PostgreSQL
 * or NATS (docs/decisions.md, One typed wire registry): every row names a wire message and every message a client may call has a route; a write
 * message is never behind a GET nor a read message behind a write method; the gateway's router serves every row (a
 * forward, or the row's handler in its route map, and nothing else), and the scope check derived from the table
 * refuses a read key every write route of a real platform. The table is the gateway's router, its scope check and
 * the OpenAPI paths, so these keep all three honest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_HANDLERS, unservedRoutes } from '@agp/gateway';
import { buildOpenApiDocument, GatewayOps, HTTP_ROUTES, PROJECTION_OWNERS, HTTP_TAGS, matchHttpRoute, routeOperation, Wire, type RouteKey, type WireKey } from '@agp/contracts';
import { bootEmbedded } from './support/modes.js';
import type { BootedPlatform } from './support/http.js';

/** The row Slack signs instead of a key (docs/notifications.md, Approvals in Slack). */
const SLACK_CALLBACK = '/api/v1/integrations/slack/interactivity';

/**
 * Messages only services call, or the gateway calls behind another message's route or for its hosted MCP proxy (a
 * registered server opened; a bundle's parts; a projection
 * dead letter's retry, sent to the projection's owner behind `dead-letters.retry`): never a route.
 */
const SERVICE_ONLY: ReadonlySet<WireKey> = new Set([
  'interventions.agent-counts',
  'interventions.enrichment-coverage',
  'replay.bundle-part',
  'mcp-servers.open',
  ...Object.values(PROJECTION_OWNERS).map((owner) => `${owner}.retry-projection-dead-letter` as const),
]);
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * POSTs that any key may send: the spec fixes POST for a tool call and a prompt, and MCP speaks POST. A tool that
 * changes state refuses a read key itself (docs/mcp.md), which the MCP tests prove. The decision API takes its action
 * as a JSON body, as OPA's does, and changes nothing (docs/api.md, Policy decisions), so a read key may ask it too.
 */
// Counterfactual evaluation stores nothing (scope read); a candidate policy in its body is refused to read keys (403) by the handler.
// Switching a session's organisation (PUT /api/v1/auth/session) changes no data: any member, a viewer too, may do it.
const READ_POSTS = new Set(['PUT /api/v1/auth/session', 'POST /api/v1/mcp/call', 'POST /api/v1/mcp/prompts/{name}', 'POST /api/v1/mcp', 'POST /api/v1/policies/evaluate', 'POST /api/v1/replay/{run_id}/evaluate', 'POST /api/v1/replay/evaluate']);

describe('HTTP route table', () => {
  it('names a wire message or a gateway operation in every row, and reaches every one but the service-only messages', () => {
    expect(HTTP_ROUTES.filter((r) => !Object.hasOwn(Wire, r.message) && !Object.hasOwn(GatewayOps, r.message)).map((r) => r.message)).toEqual([]);
    expect(Object.keys(GatewayOps).filter((k) => Object.hasOwn(Wire, k))).toEqual([]);
    const reached = new Set<RouteKey>(HTTP_ROUTES.map((r) => r.message));
    expect((Object.keys(Wire) as WireKey[]).filter((k) => !reached.has(k) && !SERVICE_ONLY.has(k))).toEqual([]);
    expect((Object.keys(GatewayOps) as RouteKey[]).filter((k) => !reached.has(k))).toEqual([]);
    expect([...SERVICE_ONLY].filter((k) => reached.has(k))).toEqual([]);
  });

  it('puts no write message behind a GET and no read message behind POST, PUT, PATCH or DELETE (but the tool gateway’s and the decision API’s)', () => {
    // `admin` is `write` and more (key management): a GET of the key list needs it too, since the list names every key.
    // Signing out (`auth: 'none'`) takes no key: its handler checks the session cookie and its Origin.
    const wrong = HTTP_ROUTES.filter((r) => r.auth !== 'none').filter((r) => {
      const scope = routeOperation(r.message).scope;
      return scope !== 'admin' && (scope === 'write') !== WRITE_METHODS.has(r.method) && !READ_POSTS.has(`${r.method} ${r.path}`);
    }).map((r) => `${r.method} ${r.path} -> ${r.message}`);
    expect(wrong).toEqual([]);
  });

  it('has one row per method and path, unique operation ids, defined tags and no trailing slash', () => {
    const keys = HTTP_ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const ids = HTTP_ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set<string>(HTTP_TAGS.map((t) => t.name));
    expect(HTTP_ROUTES.flatMap((r) => r.tags.filter((t) => !tags.has(t)))).toEqual([]);
    // Signing in and out lives under /auth/ (the provider redirects a browser there), the OAuth protected-resource
    // metadata under /.well-known/ (RFC 9728), as do the audit trail's public keys (a binding path); every other row
    // under /api/v1/. The one /api/v1 row without credentials is Slack's interactivity callback, which Slack signs instead.
    expect(HTTP_ROUTES.filter((r) => r.path.endsWith('/') || !(r.auth === 'none' && r.path !== SLACK_CALLBACK ? ['/auth/', '/.well-known/oauth-protected-resource/', '/.well-known/agp-audit-keys'] : ['/api/v1/']).some((prefix) => r.path.startsWith(prefix)))).toEqual([]);
    expect(HTTP_ROUTES.filter((r) => r.auth === 'none' && r.path.startsWith('/api/v1/')).map((r) => r.path)).toEqual([SLACK_CALLBACK]);
  });

  it('documents exactly the table in the OpenAPI paths', () => {
    const doc = buildOpenApiDocument('/') as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`));
    expect(documented.sort()).toEqual(HTTP_ROUTES.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort());
  });

  it('matches each row by method and path, literal segments before parameters', () => {
    for (const route of HTTP_ROUTES) {
      const concrete = route.path.replace(/\{[^}]+\}/g, 'x-1');
      expect(matchHttpRoute(route.method, concrete), `${route.method} ${concrete}`).toBe(route);
      expect(matchHttpRoute(route.method, `${concrete}/`), `${route.method} ${concrete}/`).toBe(route);
    }
    expect(matchHttpRoute('GET', '/api/v1/interventions/stats')?.message).toBe('interventions.stats');
    expect(matchHttpRoute('GET', '/api/v1/interventions/i-1')?.message).toBe('interventions.get');
    expect(matchHttpRoute('GET', '/api/v1/interventions/i-1/stats')).toBeUndefined();
    expect(matchHttpRoute('POST', '/api/v1/stats')).toBeUndefined();
    // HEAD is a GET; a row's alsoAt paths are the row; a row with anyMethod answers every method on its path.
    expect(matchHttpRoute('HEAD', '/api/v1/runs/r-1')?.message).toBe('runs.get');
    for (const route of HTTP_ROUTES) for (const alias of route.alsoAt ?? []) expect(matchHttpRoute(route.method, alias), alias).toBe(route);
    expect(matchHttpRoute('GET', '/mcp/tools')?.operationId).toBe('listMcpTools');
    expect(matchHttpRoute('DELETE', '/api/v1/mcp')?.operationId).toBe('mcpEndpoint');
    expect(matchHttpRoute('DELETE', '/api/v1/policies')).toBeUndefined();
  });

  it('wakes the governance feed on exactly the writes that change what it streams', () => {
    const wakes = HTTP_ROUTES.filter((r) => r.wakesGovernance).map((r) => r.message);
    expect(new Set(wakes)).toEqual(new Set(['policies.create', 'policies.update', 'kill-switches.set', 'approvals.approve', 'approvals.reject']));
  });
});

describe('HTTP route table against the gateway', () => {
  let platform: BootedPlatform | undefined;

  beforeAll(async () => {
    platform = await bootEmbedded();
  }, 60_000);
  afterAll(async () => {
    await platform?.stop();
  });

  it('forwards each row marked forward to a wire message whose path fields are the row’s parameters', () => {
    for (const route of HTTP_ROUTES.filter((r) => r.forward)) {
      expect(Object.hasOwn(Wire, route.message), `${route.method} ${route.path} forwards ${route.message}, not a wire message`).toBe(true);
      type Field = { safeParse(v: unknown): { success: boolean } };
      const fields = (Wire[route.message as WireKey].request as unknown as { shape: { path?: { shape: Record<string, Field> } } }).shape.path?.shape ?? {};
      const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => route.params?.[m[1]]?.field ?? m[1]);
      // Each parameter fills a field of the wire row's path, and each field the row requires comes from a parameter.
      expect(params.filter((p) => !Object.hasOwn(fields, p)), `${route.method} ${route.path}`).toEqual([]);
      expect(Object.keys(fields).filter((k) => !params.includes(k) && !fields[k].safeParse(undefined).success), `${route.method} ${route.path}`).toEqual([]);
    }
  });

  it('has a handler in the route map for exactly the rows not forwarded', () => {
    expect(unservedRoutes(ROUTE_HANDLERS)).toEqual({ missing: [], extra: [] });
    expect(Object.keys(ROUTE_HANDLERS).sort()).toEqual(HTTP_ROUTES.filter((r) => !r.forward).map((r) => r.operationId).sort());
    expect(unservedRoutes({ ...ROUTE_HANDLERS, listPolicies: () => undefined })).toEqual({ missing: [], extra: ['listPolicies'] });
  });

  it('serves every row of the table: an admin key reaches each one (never the gateway’s "no such route")', async () => {
    const p = platform!;
    for (const route of HTTP_ROUTES) {
      const withBody = WRITE_METHODS.has(route.method) && route.method !== 'DELETE';
      const res = await fetch(p.url + route.path.replace(/\{[^}]+\}/g, 'no-such-id'), {
        method: route.method,
        headers: { authorization: `Bearer ${p.adminKey}`, ...(withBody ? { 'content-type': 'application/json' } : {}) },
        // Each body is refused (422 or the like) or names nothing that exists: nothing of the platform changes.
        body: withBody ? '{"__probe":1}' : undefined,
      });
      const text = route.content?.['text/event-stream'] ? (await res.body?.cancel(), '') : await res.text();
      expect(text, `${route.method} ${route.path}`).not.toContain('no such route');
      expect(res.status, `${route.method} ${route.path}: ${text}`).toBeLessThan(500);
    }
  });

  it('refuses a read key on every write and admin route of the table with 403, and lets it through on every read route', async () => {
    const p = platform!;
    // The sign-in rows need no key (test/e2e/oidc.test.ts runs them against an OpenID provider).
    for (const route of HTTP_ROUTES.filter((r) => r.auth !== 'none')) {
      const write = routeOperation(route.message).scope !== 'read';
      const res = await fetch(p.url + route.path.replace(/\{[^}]+\}/g, 'no-such-id'), {
        method: route.method,
        headers: { authorization: `Bearer ${p.readKey}`, ...(write ? { 'content-type': 'application/json' } : {}) },
        body: write && WRITE_METHODS.has(route.method) && route.method !== 'DELETE' ? '{}' : undefined,
      });
      // A Server-Sent Events stream never ends: its status is enough.
      const text = route.content?.['text/event-stream'] ? (await res.body?.cancel(), '') : await res.text();
      // A 404 is the service's (no such id), never the gateway's own "no such route": every row has its handler.
      if (res.status === 404) expect(text, `${route.method} ${route.path}`).not.toContain('no such route');
      if (write) expect(res.status, `${route.method} ${route.path}`).toBe(403);
      // The MCP endpoint answers a bodiless POST as the protocol does (415 without a JSON content type).
      else expect(route.path === '/api/v1/mcp' ? [415] : [200, 404, 422], `${route.method} ${route.path}`).toContain(res.status);
    }
  });

  it('answers every sign-in row (auth: none) with 404 problem details while sign-in is off (AGP_AUTH_MODE=keys), with or without a key', async () => {
    const p = platform!;
    // /auth/config answers in every mode: the sign-in page reads it to know what to offer.
    const config = await fetch(`${p.url}/auth/config`);
    expect(await config.json()).toEqual({ mode: 'keys', sign_in_url: null, provider: null });
    // The audit trail's public keys answer in every mode (test/e2e/audit-trail.test.ts).
    const rows = HTTP_ROUTES.filter((r) => r.auth === 'none' && r.path !== '/auth/config' && r.path !== '/.well-known/agp-audit-keys' && r.path !== SLACK_CALLBACK);
    expect(rows.map((r) => r.path).sort()).toEqual(['/.well-known/oauth-protected-resource/api/v1/mcp', '/.well-known/oauth-protected-resource/api/v1/mcp/proxy/{server}', '/auth/callback', '/auth/login', '/auth/logout']);
    for (const route of rows) {
      for (const headers of [{}, { authorization: `Bearer ${p.readKey}` }] as Array<Record<string, string>>) {
        const res = await fetch(p.url + route.path.replace('{server}', 'github'), { method: route.method, headers, redirect: 'manual' });
        expect(res.status, `${route.method} ${route.path}`).toBe(404);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(await res.text()).toContain('AGP_AUTH_MODE=keys');
      }
    }
  });

  it('refuses a write key on every admin route of the table with 403 problem details', async () => {
    const p = platform!;
    const admin = HTTP_ROUTES.filter((r) => routeOperation(r.message).scope === 'admin');
    expect(admin.length).toBeGreaterThanOrEqual(3);
    for (const route of admin) {
      const withBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
      const res = await fetch(p.url + route.path.replace(/\{[^}]+\}/g, 'no-such-id'), {
        method: route.method,
        headers: { authorization: `Bearer ${p.writeKey}`, ...(withBody ? { 'content-type': 'application/json' } : {}) },
        body: withBody ? '{}' : undefined,
      });
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/use an admin key$/);
    }
  });
});
