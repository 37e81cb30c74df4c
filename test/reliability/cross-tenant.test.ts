import { randomBytes } from 'node:crypto';
/**
 * The cross-tenant matrix, in both run modes, generated from the route table (`HTTP_ROUTES` in @agp/contracts) and
 * the MCP registry (tools, resources, resource templates, prompts as the platform lists them):
 * - organisation A (acme) owns one object of each kind (support/fixtures.ts), each holding a secret text;
 * - every route, every MCP tool (REST facade and JSON-RPC), every resource and template and every prompt is called
 *   with organisation B's key (globex) and A's ids: an object addressed by A's id answers 404 (an unknown-run history:
 *   an empty page), nothing anywhere answers A's secret, and A's objects are unchanged afterwards;
 * - every write route, and every tool that changes state, with a read key (A's and B's): 403, and not one event
 *   written;
 * - every route and the MCP endpoint with no key, a malformed header, an unknown key (both headers) and a revoked key:
 *   401 problem details.
 * A route or tool argument that carries an id without a substitution rule (ID_RULES, PROPERTY_RULES) or a body
 * without a rule (BODIES) fails the suite, so a new route cannot go untested.
 * Source: the reliability suite (docs/reliability.md, "Cross-tenant matrix"); architecture §4 (Auth).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HTTP_ROUTES, buildOpenApiDocument, routeOperation, type HttpRoute } from '@agp/contracts';
import { call, eventually } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { createOrgObjects, fillPath, type OrgObjects } from './support/fixtures.js';
import { mcpList, mcpRpc } from './support/mcp.js';
import { rawClient, type RawClient } from './support/raw-http.js';

type Json = Record<string, any>;

/** A valid body per operation with a body, from the objects of A (so the request reaches the organisation check). */
const BODIES: Readonly<Record<string, (a: OrgObjects) => unknown>> = {
  createIntervention: (a) => ({ type: 'warning', outcome: 'warned', action_name: 'refund', agent_id: a.agentId, run_id: a.runId }),
  enrichIntervention: () => ({}),
  ingest: (a) => ({ batch: [{ id: `ev-x-${Date.now()}`, type: 'action.record', timestamp: new Date().toISOString(), body: { run_id: a.runId, agent_id: a.agentId, action_name: 'lookup', status: 'success', cost_usd: 0.01 } }] }),
  approveApproval: () => ({ approver_email: 'mallory@globex.test' }),
  rejectApproval: () => ({ approver_email: 'mallory@globex.test' }),
  createPolicy: (a) => ({ name: 'globex policy', agent_ids: [a.agentId] }),
  evaluatePolicies: (a) => ({ agent_id: a.agentId, action_name: 'refund', run_id: a.runId }),
  // A lease of A's policy's limit for A's agent: B's key must get a 404 (the policy is not B's), nothing granted.
  leaseQuotas: (a) => ({ holder: 'globex-holder', acquire: [{ policy_id: a.policyId, limit: 'session_budget', agent_id: a.agentId, session_id: 'globex-session', need: 0.01 }] }),
  updatePolicy: () => ({ name: 'hijacked' }),
  // B registers a server of its own under A's server's name (names are per organisation); B's patch of A's is a 404.
  registerMcpServer: (a) => ({ name: a.mcpServerName, url: 'https://93.184.215.14/mcp' }),
  updateMcpServer: () => ({ url: 'https://93.184.215.14/hijacked' }),
  acceptMcpServerTool: () => ({}),
  // B records a tool list for A's server: a 404, nothing recorded.
  recordMcpServerTools: () => ({ tools: [{ name: 'echo', description: 'hijacked', input_schema: { type: 'object' } }] }),
  registerAgent: (a) => ({ agent_id: a.agentId, name: 'hijacked' }),
  setOrganizationKillSwitch: () => ({ engaged: false }),
  setAgentKillSwitch: () => ({ engaged: false }),
  submitEvalRun: (a) => ({ suite: 'globex', agent_id: a.agentId, scenarios: [{ name: 's', category: 'c', status: 'blocked' }] }),
  generateEvalScenarios: (a) => ({ agent_id: a.agentId }),
  submitReplay: () => ({ actions_replayed: 1, divergences: 0, cost_savings: 0, status: 'completed', started_at: '2026-01-01T00:00:00Z', completed_at: '2026-01-01T00:00:01Z', client_version: 'x' }),
  evaluateReplayRun: () => ({}),
  evaluateReplayRuns: (a) => ({ run_ids: [a.runId] }),
  callMcpTool: (a) => ({ tool_name: 'get_run', arguments: { run_id: a.runId } }),
  getMcpPrompt: (a) => ({ arguments: { agent_id: a.agentId } }),
  createApiKey: () => ({ name: 'globex key', scope: 'read' }),
  createMember: () => ({ email: 'mallory@globex.test', role: 'viewer' }),
  updateMember: () => ({ role: 'admin' }),
  // A key cannot switch organisation (409), to A's or any other.
  switchOrganization: () => ({ organization_id: 'acme' }),
  retryDeadLetter: () => ({}),
  // B signs a checkpoint of its own log (the body is empty): nothing of A's in it.
  createAuditCheckpoint: () => ({}),
  // B asks to erase A's agent's records: only B's organisation is searched, so nothing of A's is erased.
  createAuditErasure: (a) => ({ agent_id: a.agentId, reason: 'globex erasure' }),
  putAuditRetention: () => ({ audit_retention_days: null }),
  createWebhook: (a) => ({ url: 'https://93.184.215.14/globex', events: ['approval.requested'], filter: { agent_ids: [a.agentId] }, enabled: false }),
  updateWebhook: () => ({ url: 'https://93.184.215.14/hijacked' }),
  rotateWebhookSecret: () => ({}),
  putSlackConnection: (a) => ({ bot_token: 'xoxb-globex-0001', signing_secret: 'globexsigningsecret0001', channels: [{ channel: 'C0GLOBEX', filter: { agent_ids: [a.agentId] } }] }),
  redeliverWebhook: () => ({}),
  // An OTLP/JSON export whose execute_tool span names A's agent (its service.name and gen_ai.agent.id) and carries A's run id as its conversation.
  otlpTraces: (a) => {
    const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const now = BigInt(Date.now()) * 1_000_000n;
    const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
    const span = { traceId: hex(32), spanId: hex(16), name: 'execute_tool lookup', kind: 1, startTimeUnixNano: String(now - 5_000_000n), endTimeUnixNano: String(now), attributes: [str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', 'lookup'), str('gen_ai.conversation.id', a.runId), str('gen_ai.agent.id', a.agentId)], status: {} };
    return { resourceSpans: [{ resource: { attributes: [str('service.name', a.agentId)] }, scopeSpans: [{ scope: { name: 'cross-tenant' }, spans: [span] }] }] };
  },
  mcpEndpoint: (a) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_run', arguments: { run_id: a.runId } } }),
  // A call through the hosted proxy to A's registered server: B's key must get a 404 before anything is sent upstream.
  mcpProxy: (a) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { run_id: a.runId } } }),
};

/** Which of A's ids fills a query parameter or a tool argument, by its name (`id` of a tool: by tool). */
const PROPERTY_RULES: Readonly<Record<string, (a: OrgObjects) => unknown>> = {
  agent_id: (a) => a.agentId,
  run_id: (a) => a.runId,
  run_ids: (a) => [a.runId],
  intervention_id: (a) => a.interventionId,
  agent_ids: (a) => [a.agentId],
  policy_id: (a) => a.policyId,
  approval_id: (a) => a.approvalId,
  baseline_id: (a) => a.evalRunId,
  current_id: (a) => a.evalRunId,
  'get_intervention.id': (a) => a.interventionId,
  'get_mcp_server.name': (a) => a.mcpServerName,
  'delete_mcp_server.name': (a) => a.mcpServerName,
  'list_mcp_server_tools.name': (a) => a.mcpServerName,
  'accept_mcp_server_tool.name': (a) => a.mcpServerName,
  'accept_mcp_server_tool.tool': () => 'echo',
  // The audit log filtered to A's policy: B's log has no entry of it.
  object_id: (a) => a.policyId,
  'update_webhook.id': (a) => a.webhookId,
  'delete_webhook.id': (a) => a.webhookId,
  'rotate_webhook_secret.id': (a) => a.webhookId,
  'list_webhook_deliveries.id': (a) => a.webhookId,
  'redeliver_webhook.id': (a) => a.webhookId,
  delivery_id: () => 'msg_0190000000007000800000000000000a',
  // The inclusion proof of A's audit record (its leaf holds A's secret): B's log has no such record.
  record: (a) => a.auditRecordId,
};

/** Fixed values of the other required tool arguments. */
const OTHER_ARGUMENTS: Readonly<Record<string, unknown>> = { approver_email: 'mallory@globex.test', format: 'json', engaged: false, name: 'globex policy', from: 0, to: 0 };

/** The document, for each route's query parameters. */
const DOC = buildOpenApiDocument('/') as Json;

/** An argument or parameter name that carries an id. */
const isIdName = (name: string) => name === 'id' || name.endsWith('_id') || name.endsWith('_ids');

describeModes('cross-tenant matrix', (platform, mode) => {
  let client: RawClient;
  let a: OrgObjects;
  let b: OrgObjects;
  const figures = { leakAttempts: 0, readKeyWrites: 0, badKeyRequests: 0 };

  beforeAll(async () => {
    const p = platform();
    client = rawClient(p.url, 6);
    [a, b] = await Promise.all([createOrgObjects(p, p.writeKey, p.adminKey), createOrgObjects(p, p.otherOrgWriteKey, p.otherOrgAdminKey)]);
  }, 180_000);
  afterAll(() => {
    client?.close();
    console.log(`[cross-tenant ${mode}] ${figures.leakAttempts} cross-organisation attempts, ${figures.readKeyWrites} read-key writes, ${figures.badKeyRequests} bad-key requests`);
  });

  /** Send one route's request: A's ids in the path and the id query parameters, its body rule's body. */
  async function send(route: HttpRoute, key: string | null, objects: OrgObjects, headers: Record<string, string> = {}) {
    const params = new URLSearchParams();
    const documented = (DOC.paths[route.path][route.method.toLowerCase()].parameters ?? []) as Json[];
    for (const { name } of documented.filter((q) => q.in === 'query')) {
      if (isIdName(name) && !PROPERTY_RULES[name]) throw new Error(`no id-substitution rule for query parameter ${name} of ${route.path}: add one to PROPERTY_RULES`);
      if (PROPERTY_RULES[name]) params.set(name, String(PROPERTY_RULES[name](objects)));
    }
    const path = fillPath(route.path, objects) + (params.size ? `?${params}` : '');
    const bodyRule = BODIES[route.operationId];
    const hasBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
    if (hasBody && !bodyRule) throw new Error(`no body rule for ${route.operationId} (${route.method} ${route.path}): add one to BODIES`);
    const extra: Record<string, string> = route.path === '/api/v1/mcp' || route.path === '/api/v1/mcp/proxy/{server}' ? { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' } : {};
    return client.send({
      method: route.method,
      path,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(hasBody ? { 'content-type': 'application/json' } : {}), ...extra, ...headers },
      ...(hasBody ? { body: JSON.stringify(bodyRule!(objects)) } : {}),
    });
  }

  /** A's objects as A sees them, for before/after comparison. */
  async function snapshot(key: string, o: OrgObjects) {
    const p = platform();
    const paths = [`/api/v1/policies/${o.policyId}`, `/api/v1/policies/${o.policyId}/history`, `/api/v1/agents/${o.agentId}`, `/api/v1/interventions/${o.interventionId}`, `/api/v1/approvals/${o.approvalId}`, `/api/v1/runs/${o.runId}`, `/api/v1/evals/${o.evalRunId}`, `/api/v1/replay/history/${o.runId}`, `/api/v1/mcp/servers/${o.mcpServerName}`, '/api/v1/mcp/servers', '/api/v1/kill-switches', '/api/v1/policies', '/api/v1/agents', '/api/v1/runs', '/api/v1/evals'];
    return Promise.all(paths.map(async (path) => [path, (await call(p, 'GET', path, { key })).body] as const));
  }

  it('B with A’s ids over MCP: every tool (REST facade and JSON-RPC), resource, template and prompt; never A’s data', async () => {
    const p = platform();
    const before = await snapshot(p.writeKey, a);
    const tools = await mcpList(client, p.otherOrgWriteKey, 'tools/list', 'tools');
    const resources = await mcpList(client, p.otherOrgWriteKey, 'resources/list', 'resources');
    const templates = await mcpList(client, p.otherOrgWriteKey, 'resources/templates/list', 'resourceTemplates');
    const prompts = await mcpList(client, p.otherOrgWriteKey, 'prompts/list', 'prompts');
    const failures: string[] = [];
    for (const tool of tools) {
      const props = (tool.inputSchema?.properties ?? {}) as Json;
      const required = new Set<string>(tool.inputSchema?.required ?? []);
      const args: Json = {};
      let addressesA = false;
      for (const name of Object.keys(props)) {
        const rule = PROPERTY_RULES[`${tool.name}.${name}`] ?? PROPERTY_RULES[name];
        if (isIdName(name) && !rule) throw new Error(`no id-substitution rule for argument ${name} of tool ${tool.name}: add one to PROPERTY_RULES`);
        if (rule) {
          args[name] = rule(a);
          if (required.has(name)) addressesA = true;
        } else if (required.has(name)) args[name] = OTHER_ARGUMENTS[name];
      }
      // B's admin key (a write key is refused the admin tools before their organisation check).
      const rest = await call(p, 'POST', '/api/v1/mcp/call', { key: p.otherOrgAdminKey, body: { tool_name: tool.name, arguments: args } });
      const rpc = await mcpRpc(client, p.otherOrgAdminKey, 'tools/call', { name: tool.name, arguments: args });
      figures.leakAttempts += 2;
      const where = `${tool.name}(${JSON.stringify(args)}) → REST ${rest.status} ${JSON.stringify(rest.body).slice(0, 200)}; JSON-RPC ${rpc.http.text.slice(0, 200)}`;
      if (JSON.stringify(rest.body).includes(a.secret) || rpc.http.text.includes(a.secret)) failures.push(`LEAK: ${where}`);
      if (rest.status >= 500 || rpc.message?.error?.code === -32603) failures.push(`internal: ${where}`);
      if (addressesA && (rest.status !== 404 || rest.body?.error?.code !== 'not_found')) failures.push(`not not_found: ${where}`);
      if (addressesA && rpc.message?.result?.structuredContent?.error?.code !== 'not_found') failures.push(`JSON-RPC not not_found: ${where}`);
    }
    const uris = [...resources.map((r) => String(r.uri)), ...templates.map((t) => String(t.uriTemplate).replace(/\{([^}]+)\}/g, (_m, name: string) => String(({ run_id: a.runId, id: a.interventionId, date: '2099-01-01' } as Json)[name] ?? 'x')))];
    for (const uri of uris) {
      const rpc = await mcpRpc(client, p.otherOrgWriteKey, 'resources/read', { uri });
      const rest = await call(p, 'GET', `/api/v1/mcp/resources/${encodeURIComponent(uri)}`, { key: p.otherOrgWriteKey });
      figures.leakAttempts += 2;
      const where = `${uri} → JSON-RPC ${rpc.http.text.slice(0, 200)}; REST ${rest.status}`;
      if (rpc.http.text.includes(a.secret) || JSON.stringify(rest.body).includes(a.secret)) failures.push(`LEAK: ${where}`);
      if (rpc.message?.error?.code === -32603 || rest.status >= 500) failures.push(`internal: ${where}`);
      if (!resources.some((r) => r.uri === uri) && !uri.includes('2099') && (rest.status !== 404 || !rpc.message?.error)) failures.push(`not 404: ${where}`);
    }
    for (const prompt of prompts) {
      const args = Object.fromEntries(((prompt.arguments ?? []) as Json[]).map((x) => [x.name, x.name === 'agent_id' ? a.agentId : x.name === 'budget_usd' ? '5' : x.name === 'days' ? '30' : '2026-01-01']));
      const rpc = await mcpRpc(client, p.otherOrgWriteKey, 'prompts/get', { name: prompt.name, arguments: args });
      figures.leakAttempts++;
      if (rpc.http.text.includes(a.secret)) failures.push(`LEAK: prompt ${prompt.name} → ${rpc.http.text.slice(0, 200)}`);
      if (rpc.message?.error?.code === -32603) failures.push(`internal: prompt ${prompt.name} → ${rpc.http.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    expect(await snapshot(p.writeKey, a)).toEqual(before);
  });

  it('B with A’s ids: every route answers 404 (or an empty answer) and never A’s data; A is unchanged', async () => {
    const p = platform();
    const before = await snapshot(p.writeKey, a);
    const failures: string[] = [];
    // Routes that address one of A's objects first; then the others, whose bodies name A's ids for B's own new objects
    // (an agent registered, a run ingested under the same ids in B): A's objects must stay as they were.
    const addressing = (r: HttpRoute) => /\{(?!name\})[^}]+\}/.test(r.path) || r.path.startsWith('/api/v1/mcp/servers/') || r.path === '/api/v1/audit/proofs/inclusion';
    // The sign-in rows (`auth: 'none'`) take no key and address nothing of an organisation (test/e2e/oidc.test.ts).
    const keyed = HTTP_ROUTES.filter((r) => r.auth !== 'none');
    for (const route of [...keyed.filter(addressing), ...keyed.filter((r) => !addressing(r))]) {
      const scope = routeOperation(route.message).scope;
      for (const key of scope === 'admin' ? [p.otherOrgAdminKey] : scope === 'write' ? [p.otherOrgWriteKey] : [p.otherOrgWriteKey, p.otherOrgReadKey]) {
        const r = await send(route, key, a);
        figures.leakAttempts++;
        const where = `${route.method} ${route.path} (${key === p.otherOrgReadKey ? 'B read key' : key === p.otherOrgAdminKey ? 'B admin key' : 'B write key'}) → ${r.status} ${r.text.slice(0, 200)}`;
        if (r.text.includes(a.secret)) failures.push(`LEAK: ${where}`);
        if (r.status >= 500) failures.push(`5xx: ${where}`);
        const addressesA = addressing(route);
        const emptyForUnknown = route.problems?.[404]?.startsWith('Not answered') ?? false;
        if (addressesA && r.status !== 404 && !(emptyForUnknown && r.status === 200)) failures.push(`not 404: ${where}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot(p.writeKey, a)).toEqual(before);
    // A's API key is still A's and still active after B's admin key tried to revoke it.
    const keys = await call(p, 'GET', '/api/v1/keys?limit=1000', { key: p.adminKey });
    expect(keys.body.keys.find((k: Json) => k.id === a.keyId)).toMatchObject({ status: 'active', revoked_at: null, name: `key ${a.secret}` });
    // The control: with A's own key the same GETs do answer A's secret, so its absence above means something.
    const own = await Promise.all(HTTP_ROUTES.filter((r) => r.method === 'GET' && addressing(r)).map((r) => send(r, p.writeKey, a)));
    expect(own.filter((r) => r.text.includes(a.secret)).length).toBeGreaterThanOrEqual(5);
  });

  it('a read key on every write and admin route, a write key on every admin route, an agent-bound write key on every write naming no agent, a read key on every tool that changes state: 403, and nothing written', async () => {
    const p = platform();
    const bound = await call(p, 'POST', '/api/v1/keys', { key: p.adminKey, body: { name: 'matrix-bound', scope: 'write', agent_id: 'matrix-bound-agent' } });
    expect(bound.status).toBe(201);
    // What B's writes above started (ingest, agents) has settled before counting.
    let count = await p.eventCount();
    await eventually(async () => {
      await new Promise((r) => setTimeout(r, 500));
      const now = await p.eventCount();
      const settled = now === count;
      count = now;
      return settled;
    }, 30_000);
    const beforeA = await snapshot(p.writeKey, a);
    const beforeB = await snapshot(p.otherOrgWriteKey, b);
    const failures: string[] = [];
    const writes = HTTP_ROUTES.filter((r) => routeOperation(r.message).scope !== 'read');
    expect(writes.length).toBeGreaterThan(10);
    for (const route of writes) {
      const below: Array<readonly [string, OrgObjects, string]> = [[p.readKey, a, 'A read key'], [p.otherOrgReadKey, b, 'B read key']];
      if (routeOperation(route.message).scope === 'admin') below.push([p.writeKey, a, 'A write key'], [p.otherOrgWriteKey, b, 'B write key']);
      else if (!route.agentId && route.boundKeys !== 'allowed') below.push([bound.body.key, a, 'A write key bound to an agent']);
      for (const [key, objects, who] of below) {
        const r = await send(route, key, objects);
        figures.readKeyWrites++;
        if (r.status !== 403 || !String(r.headers['content-type']).startsWith('application/problem+json')) failures.push(`${route.method} ${route.path} (${who}) → ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    const catalog = await call(p, 'GET', '/api/v1/mcp/tools', { key: p.readKey });
    const tools = (catalog.body.tools as Json[]).filter((t) => t.changes_state);
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) {
      for (const [key, objects] of [[p.readKey, a], [p.otherOrgReadKey, b]] as const) {
        const args = Object.fromEntries(Object.keys(tool.input_schema?.properties ?? {}).filter((n) => (tool.input_schema?.required ?? []).includes(n)).map((n) => [n, (PROPERTY_RULES[`${tool.name}.${n}`] ?? PROPERTY_RULES[n])?.(objects) ?? OTHER_ARGUMENTS[n]]));
        const rest = await call(p, 'POST', '/api/v1/mcp/call', { key, body: { tool_name: tool.name, arguments: args } });
        const rpc = await mcpRpc(client, key, 'tools/call', { name: tool.name, arguments: args });
        figures.readKeyWrites += 2;
        if (rest.status !== 403 || rest.body?.error?.code !== 'forbidden') failures.push(`${tool.name} REST → ${rest.status} ${JSON.stringify(rest.body).slice(0, 200)}`);
        if (rpc.message?.result?.structuredContent?.error?.code !== 'forbidden') failures.push(`${tool.name} JSON-RPC → ${rpc.http.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(await p.eventCount()).toBe(count);
    expect(await snapshot(p.writeKey, a)).toEqual(beforeA);
    expect(await snapshot(p.otherOrgWriteKey, b)).toEqual(beforeB);
  });

  it('no key, a malformed header, an unknown key, a revoked key: 401 on every route and the MCP endpoint', async () => {
    const p = platform();
    const variants: Array<[string, Record<string, string>]> = [
      ['no key', {}],
      ['malformed', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['unknown bearer', { authorization: `Bearer agp_unknown_${Date.now()}` }],
      ['unknown X-API-Key', { 'x-api-key': `agp_unknown_x_${Date.now()}` }],
      ['revoked', { authorization: `Bearer ${p.revokedKey}` }],
    ];
    const failures: string[] = [];
    for (const route of HTTP_ROUTES.filter((r) => r.auth !== 'none')) {
      for (const [name, headers] of variants) {
        const r = await send(route, null, a, headers);
        figures.badKeyRequests++;
        if (r.status !== 401 || !String(r.headers['content-type']).startsWith('application/problem+json')) failures.push(`${route.method} ${route.path} (${name}) → ${r.status} ${r.text.slice(0, 200)}`);
        if (r.text.includes(a.secret)) failures.push(`LEAK: ${route.method} ${route.path} (${name})`);
      }
    }
    expect(failures).toEqual([]);
  });
}, { env: { AGP_SECRETS_KEY: randomBytes(32).toString('base64') } });
