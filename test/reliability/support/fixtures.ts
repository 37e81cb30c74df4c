/**
 * Objects of every kind one organisation owns, created through the public API for the reliability suites: an agent
 * (with an engaged kill switch), a policy, an escalated intervention with its approval, a completed run with ledger
 * entries, an eval run, a replay submission of the run, an API key (never used) and an ingest dead letter. The fuzzer uses their ids as valid-ish path parameters;
 * the cross-tenant matrix calls every route with another organisation's key and these ids.
 * Source: the reliability suite (docs/reliability.md, "Fuzzing", "Cross-tenant matrix").
 */
import { call, eventually, type BootedPlatform } from '../../support/http.js';

/** The ids of one organisation's objects. */
export interface OrgObjects {
  /** A text in every object's free-text fields (names, reasons, inputs) and in none of its ids: seen anywhere else, it leaked. */
  secret: string;
  agentId: string;
  policyId: string;
  interventionId: string;
  approvalId: string;
  runId: string;
  evalRunId: string;
  replaySubmissionId: string;
  /** An API key of the organisation, created over HTTP with its admin key and never used. */
  keyId: string;
  /** An ingest dead letter of the organisation (a message its stats consumer could not store), listed by the API. */
  deadLetterId: string;
  /** A registered upstream MCP server of the organisation (no headers: distributed mode runs without a secrets key). */
  mcpServerName: string;
  /** A member of the organisation (an invited e-mail), created over HTTP with its admin key. */
  memberId: string;
  /** A webhook subscription of the organisation (disabled: nothing is sent), created with its admin key. */
  webhookId: string;
  /** A record of the organisation's verifiable audit trail (the policy's creation, whose leaf holds the secret). */
  auditRecordId: string;
}

const uniq = () => Math.random().toString(36).slice(2, 10);

/** Require a 2xx answer. @throws Error naming the request and the answer otherwise. */
async function ok(p: BootedPlatform, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const r = await call(p, method, path, { key, body });
  if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * Create one object of each kind in the organisation of `key` (a write key; `adminKey`, an admin key of the same
 * organisation, creates the API key) and wait until the read models show them. `tag` makes the names unique in the run.
 */
export async function createOrgObjects(p: BootedPlatform, key: string, adminKey: string, tag = uniq()): Promise<OrgObjects> {
  const agentId = `agent-${tag}`;
  const secret = `SECRET${uniq()}${uniq()}`;
  await ok(p, 'POST', '/api/v1/agents', key, { agent_id: agentId, name: `Agent ${secret}`, framework: 'langgraph', owner: 'fuzz', actions: [{ name: 'refund', risk_level: 'high', typical_cost_usd: 0.03 }, { name: 'lookup' }] });
  await ok(p, 'PUT', `/api/v1/kill-switches/agents/${agentId}`, key, { engaged: true, reason: `looping ${secret}` });
  const policy = await ok(p, 'POST', '/api/v1/policies', key, { name: `policy ${secret}`, run_budget: 5, denied_actions: ['drop_table'], agent_ids: [agentId] });
  const intervention = await ok(p, 'POST', '/api/v1/interventions', key, {
    type: 'approval_required',
    outcome: 'escalated',
    action_name: 'wire_transfer',
    agent_id: agentId,
    risk_level: 'high',
    estimated_cost_usd: 950,
    reason: `reason ${secret}`,
    original_inputs: { amount: 950, note: secret },
  });
  const approvalId = `apr-${intervention.id}`;
  const runId = `run-${tag}`;
  const t0 = Date.now() - 120_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const ev = (type: string, body: Record<string, unknown>, s: number) => ({ id: `ev-${uniq()}`, type, timestamp: at(s), body });
  const batch = [
    ev('run.start', { run_id: runId, agent_id: agentId, name: `run ${secret}`, started_at: at(0) }, 0),
    ...[1, 2, 3].map((i) => ev('action.record', { run_id: runId, agent_id: agentId, action_name: i === 2 ? 'refund' : 'lookup', status: 'success', cost_usd: 0.1 * i, duration_ms: 5, timestamp: at(i), inputs: { note: secret }, outputs: { ok: i } }, i)),
    ev('run.end', { run_id: runId, agent_id: agentId, status: 'completed', ended_at: at(4) }, 4),
  ];
  const ingested = await ok(p, 'POST', '/api/v1/ingest', key, { batch });
  if (ingested.errors?.length) throw new Error(`fixture ingest: ${JSON.stringify(ingested.errors)}`);
  const evalRun = await ok(p, 'POST', '/api/v1/evals', key, { id: `eval-${tag}`, suite: `suite-${tag}`, agent_id: agentId, branch: 'main', scenarios: [{ name: `s1 ${secret}`, category: 'injection', status: 'blocked' }, { name: 's2', category: 'exfil', status: 'failed' }] });
  await eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${runId}`, { key });
    return r.status === 200 && r.body.action_count === 3 && r.body.status === 'completed';
  }, 30_000);
  await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key })).status === 200, 30_000);
  const replay = await ok(p, 'POST', `/api/v1/replay/${runId}/results`, key, { id: `sub-${tag}`, actions_replayed: 3, divergences: 1, cost_savings: 0.1, status: 'partial', started_at: at(10), completed_at: at(11), client_version: 'fuzz/1', divergence_details: [{ step: 1, action_name: 'lookup', expected: { note: secret }, actual: { ok: 2 } }] });
  const mcpServerName = `srv-${tag}`.toLowerCase().slice(0, 64);
  await ok(p, 'POST', '/api/v1/mcp/servers', key, { name: mcpServerName, url: 'https://93.184.215.14/mcp', action_prefix: `${secret}.` });
  const apiKey = await ok(p, 'POST', '/api/v1/keys', adminKey, { name: `key ${secret}`, scope: 'read' });
  const member = await ok(p, 'POST', '/api/v1/members', adminKey, { email: `member-${tag}@acme.test`, role: 'viewer' });
  const webhook = await ok(p, 'POST', '/api/v1/webhooks', adminKey, { url: 'https://93.184.215.14/hooks', events: ['approval.requested'], filter: { agent_ids: [agentId] }, enabled: false, description: `hook ${secret}` });
  const { organization_id: org } = await ok(p, 'GET', '/api/v1/auth/key', key);
  const deadEvent = ev('run.start', { run_id: `dead-${tag}`, agent_id: agentId, name: `dead ${secret}\u0000` }, 5);
  await p.deadLetterIngest(org, [deadEvent]);
  const letters = await ok(p, 'GET', '/api/v1/dead-letters?kind=ingest&limit=200', adminKey);
  const deadLetterId = letters.dead_letters.find((d: { event: { events: Array<{ id: string }> } }) => d.event.events[0]?.id === deadEvent.id).id;
  const [created] = await p.queryRows('SELECT event_id FROM agp_events WHERE stream_id = $1 ORDER BY stream_version LIMIT 1', [`policy-${policy.id}`]);
  const auditRecordId = String(created.event_id);
  await eventually(async () => (await call(p, 'GET', `/api/v1/audit/proofs/inclusion?record=${auditRecordId}`, { key })).status === 200, 30_000);
  return { secret, agentId, policyId: policy.id, interventionId: intervention.id, approvalId, runId, evalRunId: evalRun.id, replaySubmissionId: replay.id, keyId: apiKey.id, deadLetterId, mcpServerName, memberId: member.id, webhookId: webhook.id, auditRecordId };
}

/**
 * Which object of {@link OrgObjects} fills each `{param}` of a route, by the route's first segment after `/api/v1`
 * (or its first two, `mcp/servers`, `mcp/proxy`, when a rule names them) and the parameter's name. A route whose parameter has no rule here makes {@link objectFor} throw, so a new route
 * cannot go untested: add its rule.
 */
export const ID_RULES: Readonly<Record<string, (o: OrgObjects) => string>> = {
  'interventions:id': (o) => o.interventionId,
  'approvals:id': (o) => o.approvalId,
  'policies:id': (o) => o.policyId,
  'agents:id': (o) => o.agentId,
  'agents:agent_id': (o) => o.agentId,
  'kill-switches:agent_id': (o) => o.agentId,
  'runs:id': (o) => o.runId,
  'evals:id': (o) => o.evalRunId,
  'evals:baseline_id': (o) => o.evalRunId,
  'evals:current_id': (o) => o.evalRunId,
  'replay:run_id': (o) => o.runId,
  'mcp:uri': (o) => `platform://runs/${o.runId}`,
  'mcp:name': () => 'analyze_agent_costs',
  'mcp/servers:name': (o) => o.mcpServerName,
  // A tool of the server (its upstream is never reached here, so none is pinned: A's own accept is a 404 too).
  'mcp/servers:tool': () => 'echo',
  'mcp/proxy:server': (o) => o.mcpServerName,
  'keys:id': (o) => o.keyId,
  'dead-letters:id': (o) => o.deadLetterId,
  'members:id': (o) => o.memberId,
  'webhooks:id': (o) => o.webhookId,
  // A disabled subscription has no deliveries: an id of the form the platform issues, so the route runs its checks.
  'webhooks:delivery_id': () => 'msg_0190000000007000800000000000000a',
};

/** The id of `objects` that fills `{param}` of OpenAPI path `path`. @throws Error when no rule names it. */
export function objectFor(path: string, param: string, objects: OrgObjects): string {
  // The protected-resource metadata of an endpoint is named by the endpoint's path after the well-known prefix.
  const [area, sub] = path.replace(/^\/\.well-known\/[^/]+/, '').split('/').slice(3, 5);
  const rule = ID_RULES[`${area}/${sub}:${param}`] ?? ID_RULES[`${area}:${param}`];
  if (!rule) throw new Error(`no id-substitution rule for {${param}} of ${path}: add one to ID_RULES (test/reliability/support/fixtures.ts)`);
  return rule(objects);
}

/** `path` with every `{param}` filled by {@link objectFor}, percent-encoded. */
export function fillPath(path: string, objects: OrgObjects): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(objectFor(path, name, objects)));
}
