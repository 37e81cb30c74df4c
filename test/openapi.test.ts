/**
 * Regressions of the redocly lint of the OpenAPI document, on the embedded platform:
 * the document references GuardrailContext instead of inlining copies, declares a licence, and documents no
 * path with a trailing slash; and the gateway still answers the spec's trailing-slash spellings
 * (`GET /api/v1/stats/`, `POST /api/v1/ingest/`) as well as the documented ones. The full lint is
 * `npx -y pnpm@10.34.8 lint:openapi` (scripts/lint-openapi.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument, GuardrailContextSchema, OPENAPI_LICENSE } from '@agp/contracts';
import { bootEmbedded } from './support/modes.js';
import type { BootedPlatform } from './support/http.js';

type Json = Record<string, any>;

const GUARDRAIL_REF = '#/components/schemas/GuardrailContext';

/** Every value in `node` (depth first) with its JSON pointer. */
function* walk(node: unknown, pointer = '#'): Generator<[string, unknown]> {
  yield [pointer, node];
  if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) yield* walk(v, `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  }
}

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument('/') as Json;
  const schemas = doc.components.schemas as Record<string, Json>;

  it('references GuardrailContext from every intervention context field', () => {
    expect(schemas.GuardrailContext.oneOf.map((s: Json) => s.properties.guardrail.const)).toEqual(['pii', 'moderation', 'loop', 'idempotency']);
    expect(schemas.Intervention.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    expect(schemas.InterventionDetail.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    expect(schemas.InterventionPage.properties.interventions.items).toEqual({ $ref: '#/components/schemas/Intervention' });
    expect(schemas.CreateIntervention.properties.context).toEqual({ $ref: GUARDRAIL_REF });
    // One component serves both request (input) and response (output) schemas only while the two agree.
    expect(z.toJSONSchema(GuardrailContextSchema, { io: 'input' })).toEqual(z.toJSONSchema(GuardrailContextSchema, { io: 'output' }));
  });

  it('holds no inline copy of a guardrail context outside its component', () => {
    const copies = [...walk(doc)]
      .filter(([, v]) => (v as Json)?.properties?.guardrail_schema_version !== undefined)
      .map(([pointer]) => pointer)
      .filter((pointer) => !pointer.startsWith('#/components/schemas/GuardrailContext/'));
    expect(copies).toEqual([]);
  });

  it('uses every component and resolves every $ref', () => {
    const refs = [...walk(doc)].filter(([p]) => p.endsWith('/$ref')).map(([, v]) => v as string);
    const used = new Set(refs.filter((r) => r.startsWith('#/components/schemas/')).map((r) => r.slice('#/components/schemas/'.length)));
    expect(Object.keys(schemas).filter((name) => !used.has(name))).toEqual([]);
    expect([...used].filter((name) => !schemas[name])).toEqual([]);
  });

  it("describes each mode a guardrail takes: the PII guardrail's redact too", () => {
    const guardrails = (schemas.Policy.properties.guardrails as Json).properties as Record<string, Json>;
    const pii = guardrails.pii.properties.mode as Json;
    expect(pii.enum).toEqual(['block', 'warn', 'redact']);
    for (const mode of pii.enum) expect(pii.description).toContain(mode);
    expect(guardrails.moderation.properties.mode.description).toBe('How the guardrail acts: block or warn.');
  });

  it('names on every operation the role it needs (x-agp-role): approving needs approver, keys and members admin; signing in none', () => {
    const op = (path: string, method: string) => (doc.paths as Json)[path][method] as Json;
    expect(op('/api/v1/approvals/{id}/approve', 'post')['x-agp-role']).toBe('approver');
    expect(op('/api/v1/policies', 'post')['x-agp-role']).toBe('policy_admin');
    expect(op('/api/v1/policies', 'get')['x-agp-role']).toBe('viewer');
    expect(op('/api/v1/keys', 'post')['x-agp-role']).toBe('admin');
    expect(op('/api/v1/members', 'post')['x-agp-role']).toBe('admin');
    expect(op('/auth/login', 'get').security).toEqual([]);
    expect(op('/auth/login', 'get')['x-agp-role']).toBeUndefined();
    const ops = Object.values(doc.paths as Json).flatMap((item) => Object.values(item as Json) as Json[]);
    expect(ops.filter((o) => !o['x-agp-role'] && !(Array.isArray(o.security) && o.security.length === 0))).toEqual([]);
  });

  it('declares a licence with a name and an SPDX identifier or url', () => {
    expect(doc.info.license).toEqual(OPENAPI_LICENSE);
    expect(typeof doc.info.license.name).toBe('string');
    expect(doc.info.license.identifier ?? doc.info.license.url).toBeTruthy();
  });

  it('documents on every operation what the edge answers first: 400, 401, 413, 415, 422, 431, 503; 304 on every GET', () => {
    const ops = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })));
    expect(ops.length).toBeGreaterThan(40);
    for (const { path, method, op } of ops) {
      const statuses = Object.keys(op.responses);
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '401', '413', '415', '431', '503']));
      expect(op.responses['431'].content, `${method} ${path}: 431 has no body`).toBeUndefined();
      // A GET answering 200 (not the sign-in redirects) may answer 304.
      if (method === 'get' && op.responses['200']) expect(op.responses['304'], `${method} ${path}`).toMatchObject({ description: expect.stringContaining('If-None-Match') });
    }
  });

  it('documents the tool-call envelope on the failures of POST /api/v1/mcp/call and JSON-RPC errors on /api/v1/mcp', () => {
    const call = doc.paths['/api/v1/mcp/call'].post.responses as Json;
    for (const status of ['403', '404', '409']) expect(Object.keys(call[status].content), status).toEqual(['application/json']);
    for (const status of ['422', '503']) expect(Object.keys(call[status].content).sort(), status).toEqual(['application/json', 'application/problem+json']);
    expect(call['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/McpToolEnvelope' });
    expect(call['500']).toBeUndefined();
    const mcp = doc.paths['/api/v1/mcp'].post.responses as Json;
    expect(Object.keys(mcp['200'].content).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(mcp['202'].content).toBeUndefined();
    for (const status of ['400', '403', '406', '413', '415']) expect(mcp[status].content, status).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcError' } } });
    expect(Object.keys(mcp['401'].content)).toEqual(['application/problem+json']);
  });

  it('names every record and page as a component with a description, referenced by the routes that return it', () => {
    const records = ['Intervention', 'InterventionPage', 'Approval', 'ApprovalPage', 'Policy', 'PolicyPage', 'PolicyHistory', 'Agent', 'AgentPage', 'KillSwitch', 'KillSwitchOverview', 'Run', 'RunPage', 'RunDetail', 'LedgerEntry', 'StatsSummary', 'StatsDaily', 'EstimationAccuracy', 'AgentStats', 'EvalRun', 'EvalRunDetail', 'EvalRunPage', 'EvalSummary', 'EvalScenario', 'EvalComparison', 'ReplaySubmission', 'ReplaySubmissionDetail', 'ReplayHistoryPage', 'ReplayRunHistoryPage', 'DivergenceDetail', 'ReplayBundle', 'McpToolDescriptor', 'McpToolList'];
    for (const name of records) {
      expect(schemas[name], name).toBeDefined();
      expect(schemas[name].description, name).toMatch(/\w{3,}/);
    }
    const ok = (path: string, method = 'get') => doc.paths[path][method].responses[method === 'post' ? Object.keys(doc.paths[path][method].responses).find((s) => s.startsWith('2'))! : '200'].content['application/json'].schema;
    expect(ok('/api/v1/runs')).toEqual({ $ref: '#/components/schemas/RunPage' });
    expect(ok('/api/v1/policies')).toEqual({ $ref: '#/components/schemas/PolicyPage' });
    expect(ok('/api/v1/approvals')).toEqual({ $ref: '#/components/schemas/ApprovalPage' });
    expect(ok('/api/v1/replay/history/{run_id}')).toEqual({ $ref: '#/components/schemas/ReplayRunHistoryPage' });
    // Records inside pages are references too, so a generated client types `page.runs[0]` as `Run`.
    expect(schemas.RunPage.properties.runs.items).toEqual({ $ref: '#/components/schemas/Run' });
    expect(schemas.EvalRunDetail.properties.scenarios.items).toEqual({ $ref: '#/components/schemas/EvalScenario' });
    expect(schemas.ReplayRunHistoryPage.properties.submissions.items).toEqual({ $ref: '#/components/schemas/ReplaySubmissionDetail' });
    expect(schemas.ReplaySubmissionDetail.properties.divergence_details.items).toEqual({ $ref: '#/components/schemas/DivergenceDetail' });
  });

  it('describes the fields: at least 95% of the properties, units and precision on money and durations', () => {
    const props = [...walk(doc)].filter(([p]) => /\/properties\/[^/]+$/.test(p)).map(([p, v]) => [p, v as Json] as const);
    const described = props.filter(([, v]) => v.description || v.$ref);
    expect(described.length / props.length).toBeGreaterThanOrEqual(0.95);
    expect(schemas.Run.properties.cost_usd.description).toMatch(/USD, rounded to 6 decimals/);
    expect(schemas.EvalSummary.properties.avg_detection_time_ms.description).toMatch(/Milliseconds, rounded to 1 decimal/);
    expect(schemas.Run.properties.started_at.description).toMatch(/ISO 8601/);
  });

  it('types the enum query parameters as arrays of their values, comma-separated (style form, explode false)', () => {
    const param = (path: string, name: string) => (doc.paths[path].get.parameters as Json[]).find((x) => x.name === name)!;
    for (const [path, name, some] of [
      ['/api/v1/interventions', 'type', 'hard_block'],
      ['/api/v1/interventions', 'outcome', 'escalated'],
      ['/api/v1/interventions', 'risk_level', 'critical'],
      ['/api/v1/approvals', 'status', 'pending'],
    ] as const) {
      const p = param(path, name);
      expect(p, `${path} ${name}`).toMatchObject({ in: 'query', style: 'form', explode: false, schema: { type: 'array', items: { type: 'string' } } });
      expect(p.schema.items.enum, `${path} ${name}`).toContain(some);
    }
  });

  it("names every area (tag) of the API in the document's description, and every tag is used by an operation", () => {
    const tags = (doc.tags as Array<{ name: string }>).map((t) => t.name);
    expect(tags.length).toBeGreaterThan(10);
    for (const t of tags) expect(doc.info.description, t).toContain(t);
    expect(doc.info.description).toContain(`${tags.join(', ')}.`);
    const used = new Set(Object.values(doc.paths as Record<string, Record<string, { tags: string[] }>>).flatMap((item) => Object.values(item).flatMap((op) => op.tags)));
    expect(tags.filter((t) => !used.has(t))).toEqual([]);
  });

  it('documents no path with a trailing slash', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.endsWith('/'))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/stats', '/api/v1/ingest']));
  });
});

describe('gateway routes for the trailing-slash spellings (embedded platform)', () => {
  let p: BootedPlatform | undefined;
  beforeAll(async () => {
    p = await bootEmbedded();
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('answers GET /api/v1/stats and /api/v1/stats/ (with and without a query) with the same stats summary', async () => {
    const bodies = [];
    for (const path of ['/api/v1/stats', '/api/v1/stats/', '/api/v1/stats?days=1', '/api/v1/stats/?days=1']) {
      const res = await fetch(p!.url + path, { headers: { authorization: `Bearer ${p!.readKey}` } });
      expect(res.status, path).toBe(200);
      bodies.push(await res.json());
    }
    expect(bodies[0]).toHaveProperty('total_runs');
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[3]).toEqual(bodies[2]);
  });

  it('answers POST /api/v1/ingest and /api/v1/ingest/ with the per-event 207', async () => {
    for (const [i, path] of ['/api/v1/ingest', '/api/v1/ingest/'].entries()) {
      const event = { id: `slash-${i}`, type: 'agent.register', timestamp: new Date().toISOString(), body: { agent_id: `slash-agent-${i}`, name: 'Slash agent' } };
      const res = await fetch(p!.url + path, { method: 'POST', headers: { authorization: `Bearer ${p!.writeKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ batch: [event] }) });
      expect(res.status, path).toBe(207);
      expect(await res.json()).toEqual({ successes: [{ id: event.id, status: 201, result: 'created' }], errors: [] });
    }
  });

  it('gives the answers the document lists: 202 without a body, 406 JSON-RPC, 431, 304 on If-None-Match: *, 400 on a bad percent-encoding, 415 on GET with a body', async () => {
    const auth = { authorization: `Bearer ${p!.writeKey}` };
    const mcp = (headers: Record<string, string>, body: unknown) => fetch(`${p!.url}/api/v1/mcp`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const notification = await mcp({ accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(202);
    expect(notification.headers.get('content-type')).toBeNull();
    expect(await notification.text()).toBe('');
    const notAcceptable = await mcp({ accept: 'text/html' }, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(notAcceptable.status).toBe(406);
    expect(notAcceptable.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await notAcceptable.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    expect((await fetch(`${p!.url}/api/v1/policies?q=${'x'.repeat(20_000)}`, { headers: auth })).status).toBe(431);
    expect((await fetch(`${p!.url}/api/v1/mcp/tools`, { headers: { ...auth, 'if-none-match': '*' } })).status).toBe(304);
    const badEncoding = await fetch(`${p!.url}/api/v1/policies/%zz`, { headers: auth });
    expect(badEncoding.status).toBe(400);
    expect(badEncoding.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const { request } = await import('node:http');
    const getWithBody = await new Promise<number>((resolve, reject) => {
      const url = new URL(p!.url);
      const r = request({ host: url.hostname, port: url.port, method: 'GET', path: '/api/v1/policies', headers: { ...auth, 'content-type': 'text/plain', 'content-length': 3 } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      r.on('error', reject);
      r.end('abc');
    });
    expect(getWithBody).toBe(415);
  });

  it('accepts an enum filter comma-separated (style form, explode false) and repeated (explode true), and names a bad value', async () => {
    const get = (q: string) => fetch(`${p!.url}/api/v1/interventions?${q}`, { headers: { authorization: `Bearer ${p!.readKey}` } });
    expect((await get('type=hard_block,warning&limit=1')).status).toBe(200);
    expect((await get('type=hard_block&type=warning&limit=1')).status).toBe(200);
    const bad = await get('type=hard_block,nope');
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain('query.type');
  });

  it('serves the linted document at /api/v1/openapi.json', async () => {
    const res = await fetch(`${p!.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument('/'))));
  });
});
