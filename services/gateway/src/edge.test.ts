import { describe, expect, it } from 'vitest';
import { matchHttpRoute } from '@agp/contracts';
import { authenticate, requiredScope, routeLabel } from './edge.js';

describe('routeLabel', () => {
  it.each([
    ['/api/v1/interventions', '/api/v1/interventions'],
    ['/api/v1/interventions/stats/', '/api/v1/interventions/stats'],
    ['/api/v1/interventions/0190abcd', '/api/v1/interventions/{id}'],
    ['/api/v1/interventions/0190abcd/enrich', '/api/v1/interventions/{id}/enrich'],
    ['/api/v1/approvals/apr-1/approve', '/api/v1/approvals/{id}/approve'],
    ['/api/v1/policies/p1/history', '/api/v1/policies/{id}/history'],
    ['/api/v1/agents/billing-agent-3/stats', '/api/v1/agents/{id}/stats'],
    ['/api/v1/runs/run-42', '/api/v1/runs/{id}'],
    ['/api/v1/kill-switches/agents/a.b', '/api/v1/kill-switches/agents/{agent_id}'],
    ['/api/v1/replay/history/run-1', '/api/v1/replay/history/{run_id}'],
    ['/api/v1/replay/run-1/bundle', '/api/v1/replay/{run_id}/bundle'],
    ['/api/v1/nowhere/x', '/api/v1/nowhere/x'],
    ['/api/v1/stats/daily', '/api/v1/stats/daily'],
    ['/api/v1/evals/', '/api/v1/evals'],
    ['/api/v1/evals/latest', '/api/v1/evals/latest'],
    ['/api/v1/evals/ci-1234', '/api/v1/evals/{id}'],
    ['/api/v1/evals/compare/ci-1/ci-2', '/api/v1/evals/compare/{baseline_id}/{current_id}'],
    ['/docs/assets/x.css', '/docs'],
  ])('%s -> %s', (path, label) => {
    expect(routeLabel(path)).toBe(label);
  });
});

describe('requiredScope (the scope of the route in the HTTP route table)', () => {
  it.each([
    ['GET', '/api/v1/policies', 'read'],
    ['POST', '/api/v1/policies', 'write'],
    ['POST', '/api/v1/policies/', 'write'],
    ['GET', '/api/v1/policies/p-1', 'read'],
    ['PATCH', '/api/v1/policies/p-1', 'write'],
    ['GET', '/api/v1/interventions/stats', 'read'],
    ['POST', '/api/v1/evals/', 'write'],
    ['GET', '/api/v1/evals/compare/a/b', 'read'],
    ['DELETE', '/api/v1/interventions/0190abcd', 'write'],
    ['POST', '/api/v1/interventions/0190abcd/enrich', 'write'],
    ['POST', '/api/v1/approvals/apr-1/approve', 'write'],
    ['PUT', '/api/v1/kill-switches/agents/a.b', 'write'],
    ['POST', '/api/v1/ingest', 'write'],
    ['GET', '/api/v1/ledger/export', 'read'],
    ['GET', '/api/v1/agents/billing-agent-3/stats', 'read'],
    ['GET', '/api/v1/auth/key', 'read'],
    ['GET', '/api/v1/keys', 'admin'],
    ['POST', '/api/v1/keys/', 'admin'],
    ['DELETE', '/api/v1/keys/0190abcd', 'admin'],
    // No route: the method decides (a read key's write is a 403, anything else the 404).
    ['POST', '/api/v1/nowhere', 'write'],
    ['DELETE', '/api/v1/policies/p-1', 'write'],
    ['PUT', '/api/v1/stats', 'write'],
    ['GET', '/api/v1/nowhere', 'read'],
    ['HEAD', '/api/v1/policies', 'read'],
    ['OPTIONS', '/api/v1/policies', 'read'],
  ])('%s %s -> %s', (method, path, scope) => {
    expect(requiredScope(method, matchHttpRoute(method, path))).toBe(scope);
  });
});

describe('authenticate: the scope check', () => {
  /** Run the middleware on a fake request with a key of `scope`; resolves to the answer, or 'next' when it passed. */
  async function run(scope: 'read' | 'write' | 'admin', method: string, path: string) {
    const req = { method, path, agpRoute: matchHttpRoute(method, path), get: (h: string) => (h.toLowerCase() === 'authorization' ? 'Bearer agp_test' : undefined) };
    const out: { status?: number; headers?: Record<string, string>; body?: string; next?: boolean } = {};
    const res = {
      locals: { requestId: 'req-1' },
      status(s: number) {
        out.status = s;
        return this;
      },
      set(h: Record<string, string>) {
        out.headers = h;
        return this;
      },
      send(b: string) {
        out.body = b;
        return this;
      },
    };
    await authenticate({ resolve: async () => ({ key_id: 'k1', organization_id: 'org-1', scope }) })(req as never, res as never, () => void (out.next = true));
    return out;
  }

  it('refuses a read key a write route with a 403 problem naming the scope it needs', async () => {
    const out = await run('read', 'PATCH', '/api/v1/policies/p-1/');
    expect(out.status).toBe(403);
    expect(out.headers).toEqual({ 'content-type': 'application/problem+json' });
    expect(JSON.parse(out.body!)).toEqual({ type: 'https://agp.dev/problems/forbidden', title: 'Forbidden', status: 403, detail: 'a read key cannot PATCH /api/v1/policies/p-1; use a write key' });
    expect(out.next).toBeUndefined();
  });

  it('refuses a read key a write method on an unknown route (403)', async () => {
    const out = await run('read', 'POST', '/api/v1/nowhere');
    expect(out.status).toBe(403);
    expect(JSON.parse(out.body!).detail).toBe('a read key cannot POST /api/v1/nowhere; use a write key');
  });

  it('refuses a write key a key-management route, naming the admin scope', async () => {
    const out = await run('write', 'POST', '/api/v1/keys');
    expect(out.status).toBe(403);
    expect(JSON.parse(out.body!).detail).toBe('a write key cannot POST /api/v1/keys; use an admin key');
  });

  it.each([
    ['read', 'GET', '/api/v1/policies'],
    ['read', 'GET', '/api/v1/auth/key'],
    ['admin', 'PATCH', '/api/v1/policies/p-1'],
    ['admin', 'DELETE', '/api/v1/keys/k-1'],
    ['read', 'GET', '/api/v1/nowhere'],
    ['write', 'POST', '/api/v1/policies'],
    ['write', 'DELETE', '/api/v1/nowhere'],
  ] as const)('lets a %s key %s %s through', async (scope, method, path) => {
    const out = await run(scope, method, path);
    expect(out).toEqual({ next: true });
  });
});
