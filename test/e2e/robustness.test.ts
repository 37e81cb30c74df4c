import { expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, eventually } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * No input, however malformed, gets a 5xx (architecture §5): odd query strings (arrays, objects, repeats), odd
 * path ids (long, unicode, encoded slashes and NULs) and odd JSON bodies (null, arrays, scalars) against every route
 * of the fleet data (runs, ledger, policies, approvals, stats) and of enrichment. Each answer must be a 2xx, or a 4xx with problem details.
 */
describeModes('malformed input never yields a 5xx', (platform) => {
  const long = 'x'.repeat(300);
  const gets = [
    '/api/v1/policies?enabled=maybe', '/api/v1/policies?limit[a]=1', '/api/v1/policies?skip=1&skip=2', `/api/v1/policies/${long}`,
    '/api/v1/policies/%00?version=1', '/api/v1/policies/p?version=-1', '/api/v1/policies/p/history?x=1',
    '/api/v1/agents?limit=abc', `/api/v1/agents/${long}`, '/api/v1/agents/%E2%9C%93', '/api/v1/agents/a%2Fb/stats',
    '/api/v1/kill-switches?scope=x', '/api/v1/approvals?status[]=pending', '/api/v1/approvals?status=', '/api/v1/approvals/not-an-approval',
    `/api/v1/approvals/apr-${long}`, '/api/v1/runs?min_cost=NaN', '/api/v1/runs?status=running,failed', '/api/v1/runs?limit=1e9',
    `/api/v1/runs/${long}`, '/api/v1/runs/r?actions_limit=0', '/api/v1/stats/?days=1e3', '/api/v1/stats/?days[x]=1',
    '/api/v1/stats/daily?days=3', '/api/v1/stats/estimation-accuracy?agent_id=a', '/api/v1/ledger/export',
    '/api/v1/ledger/export?format=csv&start_date=2026-02-30', '/api/v1/ledger/export?format[]=csv', '/api/v1/ledger/export?format=json&end_date=2020-01-01&start_date=2021-01-01',
    `/api/v1/interventions/${long}`, '/api/v1/ledger/export?format=csv&start_date=0000-01-01', '/api/v1/ledger/export?format=csv&end_date=9999-12-31',
    '/api/v1/interventions?end_date=9999-12-31', '/api/v1/interventions/stats?start_date=0000-01-01',
  ];
  it.each(gets)('GET %s', async (path) => {
    const p = platform();
    const r = await call(p, 'GET', path, { key: p.readKey });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
    if (r.status >= 400) expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  const bodies: unknown[] = [null, [], 'text', 42, { name: null }, { engaged: 'yes' }, { approver_email: ['a@b.c'] }, { agent_id: { $gt: '' } }];
  const writes: Array<[string, string]> = [
    ['POST', '/api/v1/policies'], ['PATCH', '/api/v1/policies/unknown'], ['POST', '/api/v1/agents'],
    ['PUT', '/api/v1/kill-switches/organization'], ['PUT', '/api/v1/kill-switches/agents/a1'],
    ['POST', '/api/v1/approvals/apr-x/approve'], ['POST', '/api/v1/approvals/apr-x/reject'], ['POST', '/api/v1/interventions/x/enrich'],
  ];
  it.each(writes)('%s %s with null, array, scalar and mistyped bodies', async (method, path) => {
    const p = platform();
    for (const body of bodies) {
      const r = await call(p, method, path, { key: p.writeKey, rawBody: JSON.stringify(body) });
      expect(r.status, `${JSON.stringify(body)} -> ${JSON.stringify(r.body)}`).toBeLessThan(500);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('refuses a NUL character in a URL with 400 and in a JSON body with 422 naming the field; nothing is written', async () => {
    const p = platform();
    for (const path of ['/api/v1/policies/%00?version=1', '/api/v1/interventions?agent_id=a%00b', '/api/v1/runs/%00', '/api/v1/agents/%00/stats']) {
      const r = await call(p, 'GET', path, { key: p.readKey });
      expect(r.status, path).toBe(400);
      expect(r.body.detail).toMatch(/NUL/);
    }
    const agent = `nul-${Math.random().toString(36).slice(2, 8)}`;
    const r = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'warning', outcome: 'warned', action_name: 'x', agent_id: agent, reason: 'a\u0000b', original_inputs: { 'k\u0000': 1 } } });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual(['body.reason', 'body.original_inputs.k\\u0000']);
    expect((await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: 'n\u0000' } })).status).toBe(422);
    // An unpaired surrogate is refused the same way (PostgreSQL's jsonb cannot hold it); a proper pair is fine.
    const lone = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: { type: 'warning', outcome: 'warned', action_name: 'x', agent_id: agent, reason: 'half \ud83d' } });
    expect(lone.status).toBe(422);
    expect(lone.body.errors).toEqual([{ path: 'body.reason', message: expect.stringMatching(/surrogate/) }]);
    expect((await call(p, 'POST', '/api/v1/agents', { key: p.writeKey, body: { agent_id: `${agent}-ok`, description: 'smile \ud83d\ude00' } })).status).toBe(201);
    expect((await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey })).body.total).toBe(0);
  });

  it('refuses only the ingest events that hold a NUL character or an unpaired surrogate (207), and stores the rest', async () => {
    const p = platform();
    const agent = `nul-${Math.random().toString(36).slice(2, 8)}`;
    const ev = (id: string, reason: string) => ({ id, type: 'intervention.create', timestamp: '2026-11-20T12:00:00Z', body: { type: 'warning', outcome: 'warned', action_name: 'x', agent_id: agent, reason } });
    const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch: [ev(`${agent}-1`, 'fine'), ev(`${agent}-2`, 'bad\u0000'), ev(`${agent}-3`, 'also fine'), ev(`${agent}-4`, 'half \udc00')] } });
    expect(r.status).toBe(207);
    expect(r.body.successes.map((x: { id: string }) => x.id)).toEqual([`${agent}-1`, `${agent}-3`]);
    expect(r.body.errors).toEqual([
      { id: `${agent}-2`, status: 422, message: expect.stringMatching(/batch\[1\]\.body\.reason: NUL/) },
      { id: `${agent}-4`, status: 422, message: expect.stringMatching(/batch\[3\]\.body\.reason: .*surrogate/) },
    ]);
    await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey })).body.total === 2);
  });

  it('refuses ingest events whose times, costs or durations PostgreSQL could not store or sum (per event, 207)', async () => {
    const p = platform();
    const run = `range-${Math.random().toString(36).slice(2, 8)}`;
    const action = (id: string, over: Record<string, unknown>) => ({ id, type: 'action.record', timestamp: '2026-11-20T12:00:00Z', body: { run_id: run, agent_id: 'a', action_name: 'x', status: 'success', ...over } });
    const r = await call(p, 'POST', '/api/v1/ingest/', {
      key: p.writeKey,
      body: { batch: [action(`${run}-1`, { timestamp: '0000-06-01T00:00:00Z' }), action(`${run}-2`, { cost_usd: 1e308 }), action(`${run}-3`, { duration_ms: 1e300 }), action(`${run}-4`, { cost_usd: 0.5 })] },
    });
    expect(r.status).toBe(207);
    expect(r.body.successes.map((x: { id: string }) => x.id)).toEqual([`${run}-4`]);
    expect(r.body.errors.map((e: { id: string; status: number }) => [e.id, e.status])).toEqual([[`${run}-1`, 422], [`${run}-2`, 422], [`${run}-3`, 422]]);
    await eventually(async () => (await call(p, 'GET', `/api/v1/runs/${run}`, { key: p.readKey })).body.action_count === 1);
  });
});

/** JSON text `{"a":{"a":…leaf…}}`, `levels` objects deep, written out without recursion. */
const deepText = (levels: number, leaf: string) => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
/** The value `{a: {a: … leaf …}}`, `levels` objects deep. */
function deepValue(levels: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

/**
 * No request body can end the gateway (a recursive check of a deeply nested body once exhausted the call stack inside
 * the body parser's callback, uncaught): bodies 4,000 and 100,000 levels deep with a NUL or a lone surrogate at the
 * bottom, to a public path, to a JSON route and to ingest, with and without a key; afterwards the gateway still
 * answers. And the nesting limit (MAX_JSON_DEPTH, 64): 64 levels are stored, 65 refused with 422 naming the limit and
 * the path, per event for ingest (207).
 */
describeModes('no request body can end the gateway; JSON nests at most 64 levels', (platform) => {
  const runId = () => Math.random().toString(36).slice(2, 8);

  it.each([4_000, 100_000])('bodies %i levels deep with a NUL or a lone surrogate get 4xx, and the gateway still answers', async (levels) => {
    const p = platform();
    for (const leaf of ['"\\u0000"', '"\\ud800"', '["\\udc00"]']) {
      const body = deepText(levels, leaf);
      const event = `{"id":"deep-${runId()}","type":"intervention.create","timestamp":"2026-11-20T12:00:00Z","body":{"type":"warning","outcome":"warned","action_name":"x","agent_id":"a","reason":"r","original_inputs":${body}}}`;
      for (const [path, rawBody] of [['/healthz', body], ['/api/v1/policies', body], ['/api/v1/ingest/', `{"batch":[${event}]}`]] as const) {
        const anonymous = await call(p, 'POST', path, { rawBody });
        expect(anonymous.status, `${path} without a key`).toBe(path === '/healthz' ? 422 : 401);
        expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        if (path === '/healthz') expect(anonymous.body.detail).toMatch(/limit of 64 levels/);
        const keyed = await call(p, 'POST', path, { key: p.writeKey, rawBody });
        if (path === '/api/v1/ingest/') {
          expect(keyed.status).toBe(207);
          expect(keyed.body.successes).toEqual([]);
          expect(keyed.body.errors).toEqual([{ id: expect.stringMatching(/^deep-/), status: 422, message: expect.stringMatching(/^batch\[0\]\.body\.original_inputs(\.a)+: nested deeper than the limit of 64 levels/) }]);
        } else {
          expect(keyed.status, path).toBe(422);
          expect(keyed.body.errors).toEqual([{ path: `body${'.a'.repeat(64)}`, message: 'nested deeper than the limit of 64 levels of objects and arrays' }]);
        }
      }
    }
    expect((await call(p, 'GET', '/healthz')).status).toBe(200);
    expect((await call(p, 'GET', '/api/v1/policies', { key: p.readKey })).status).toBe(200);
  }, 60_000);

  it('a record field nesting the body 64 levels deep is stored; 65 is refused with 422 naming the limit and the field', async () => {
    const p = platform();
    const agent = `depth-${runId()}`;
    const create = (levels: number) => ({ type: 'warning', outcome: 'warned', action_name: 'x', agent_id: agent, reason: 'r', original_inputs: deepValue(levels, 1) });
    // The body is one level, original_inputs the second: 63 objects under it make 64.
    expect((await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: create(63) })).status).toBe(201);
    const refused = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body: create(64) });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/limit of 64 levels/);
    expect(refused.body.errors).toEqual([{ path: `body.original_inputs${'.a'.repeat(63)}`, message: 'nested deeper than the limit of 64 levels of objects and arrays' }]);
    await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey })).body.total === 1);
  });

  it('ingest refuses only the events nested deeper than 64 levels (422 in the 207), and stores the rest', async () => {
    const p = platform();
    const agent = `depth-${runId()}`;
    // The event is one level, its body the second, original_inputs the third: 62 objects under it make 64.
    const ev = (id: string, levels: number) => ({ id, type: 'intervention.create', timestamp: '2026-11-20T12:00:00Z', body: { type: 'warning', outcome: 'warned', action_name: 'x', agent_id: agent, reason: 'r', original_inputs: deepValue(levels, 1) } });
    const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch: [ev(`${agent}-1`, 62), ev(`${agent}-2`, 63), ev(`${agent}-3`, 62)] } });
    expect(r.status).toBe(207);
    expect(r.body.successes.map((x: { id: string }) => x.id)).toEqual([`${agent}-1`, `${agent}-3`]);
    expect(r.body.errors).toEqual([{ id: `${agent}-2`, status: 422, message: `batch[1].body.original_inputs${'.a'.repeat(62)}: nested deeper than the limit of 64 levels of objects and arrays` }]);
    await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey })).body.total === 2);
  });

  it('MCP tools/call and the REST facade refuse a NUL or lone surrogate argument, and arguments past 64 levels, by one check: nothing written, no 5xx', async () => {
    const p = platform();
    const name = `mcp-text-${runId()}`;
    const c = new Client({ name: 'agp-robustness', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/api/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${p.writeKey}` } } }));
    try {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ name: `${name}\u0000` }, /^arguments\.name$/],
        [{ name, description: 'half \ud800' }, /^arguments\.description$/],
        [{ name, rate_limits: { ['x\udc00']: { max_calls: 1, window_seconds: 1 } } }, /^arguments\.rate_limits\.x\\udc00$/],
        [{ name, rate_limits: deepValue(64, 1) }, new RegExp(`^arguments\\.rate_limits${'\\.a'.repeat(63)}$`)],
      ];
      for (const [args, path] of cases) {
        const res = (await c.callTool({ name: 'create_policy', arguments: args })) as { isError?: boolean; structuredContent?: { error: { code: string; details: { errors: Array<{ path: string }> } } } };
        expect(res.isError, JSON.stringify(res)).toBe(true);
        expect(res.structuredContent!.error.code).toBe('invalid_arguments');
        expect(res.structuredContent!.error.details.errors.map((e) => e.path)).toEqual([expect.stringMatching(path)]);
        const rest = await call(p, 'POST', '/api/v1/mcp/call', { key: p.writeKey, body: { tool_name: 'create_policy', arguments: args } });
        expect(rest.status, JSON.stringify(rest.body)).toBe(422);
        expect(rest.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(rest.body.errors.map((e: { path: string }) => e.path)).toEqual([expect.stringMatching(/^body\.arguments\./)]);
      }
      // Prompt arguments and resource template variables: invalid params (-32602), not an internal error.
      await expect(c.getPrompt({ name: 'analyze_agent_costs', arguments: { agent_id: `a\u0000${name}` } })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/arguments\.agent_id/) });
      await expect(c.readResource({ uri: `platform://runs/r\ud800${name}` })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/uri\.run_id/) });
      // A raw JSON-RPC tools/call whose arguments nest 100,000 levels: an answer, not a crash.
      const raw = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_policy","arguments":{"name":"${name}","rate_limits":${deepText(100_000, '"\\u0000"')}}}}`;
      const deep = await call(p, 'POST', '/api/v1/mcp', { key: p.writeKey, rawBody: raw, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
      expect(deep.status, JSON.stringify(deep.body).slice(0, 300)).toBeLessThan(500);
    } finally {
      await c.close();
    }
    const policies = await call(p, 'GET', '/api/v1/policies?limit=1000', { key: p.readKey });
    expect(policies.status).toBe(200);
    expect(JSON.stringify(policies.body)).not.toContain(name);
    expect((await call(p, 'GET', '/healthz')).status).toBe(200);
  });
});
