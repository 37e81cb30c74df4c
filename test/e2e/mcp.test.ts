import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { main } from '@agp/cli';
import type { SimulationReport } from '@agp/simulator';
import { EXPORT_LEDGER_INLINE_ROWS } from '@agp/mcp-gateway';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/**
 * The tool gateway (docs/mcp.md) end to end, in both run modes on real NATS and PostgreSQL: every tool, resource
 * (the five platform:// URIs and the three templates) and prompt over the REST facade and over the Model Context
 * Protocol endpoint with the SDKs' own clients (v2 pinned to revision 2026-07-28; the v1 sdk, which speaks
 * 2025-11-25), against data from `agp simulate` plus runs, actions and interventions ingested here with known values.
 * Organisation acme holds the simulated fleet and agent A (exact costs); organisation globex holds only what is
 * ingested here, so its dashboard and compliance overview have exact expected values.
 * Source: spec §Tool gateway, §Tool, resource and prompt descriptors; architecture §4 (Tool call errors, MCP).
 */

const uniq = () => Math.random().toString(36).slice(2, 10);
const DAY = 86_400_000;
const today = Date.parse(new Date().toISOString().slice(0, 10));
/** An ISO time `days` UTC days before today's midnight, plus `seconds`. */
const at = (days: number, seconds = 1) => new Date(today - days * DAY + seconds * 1000).toISOString();
const dayOf = (days: number) => at(days).slice(0, 10);
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

type Ev = { id: string; type: string; timestamp: string; body: Record<string, unknown> };
const ev = (type: string, body: Record<string, unknown>, timestamp = new Date().toISOString()): Ev => ({ id: `ev-${uniq()}-${uniq()}`, type, timestamp, body });
/** A ledger entry of `run` at `timestamp` costing `cost` USD (estimate). */
const act = (run: string, agent: string, action: string, cost: number, timestamp: string, extra: Record<string, unknown> = {}) =>
  ev('action.record', { run_id: run, agent_id: agent, action_name: action, status: 'success', cost_usd: cost, timestamp, ...extra }, timestamp);

/** POST a batch to the ingest endpoint and require every event to be accepted. */
async function ingest(p: BootedPlatform, batch: Ev[], key = p.writeKey) {
  const r = await call(p, 'POST', '/api/v1/ingest/', { key, body: { batch } });
  expect(r.status).toBe(207);
  expect(r.body.errors).toEqual([]);
  expect(r.body.successes).toHaveLength(batch.length);
}

/** GET `path` and require 200; the body. */
async function get(p: BootedPlatform, path: string, key = p.readKey) {
  const r = await call(p, 'GET', path, { key });
  expect(r.status, `GET ${path}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
}

/** `x` without its time-dependent fields (`generated_at`, `age_ms`), to compare two reads a moment apart. */
const stable = (x: unknown) => JSON.parse(JSON.stringify(x, (k, v) => (k === 'generated_at' || k === 'age_ms' ? undefined : v)));

/** The JSON data block a rendered prompt carries in its text. */
function dataBlockOf(text: string): any {
  const m = /```json\n([\s\S]*?)\n```/.exec(text);
  expect(m, `no JSON block in ${text}`).not.toBeNull();
  return JSON.parse(m![1]);
}

/** The HTTP status of each tool error code on the REST facade (architecture §4, Tool call errors). */
const STATUS_OF: Record<string, number> = { unknown_tool: 404, invalid_arguments: 422, forbidden: 403, not_found: 404, conflict: 409, unavailable: 503 };

/**
 * The spec's seven tools: argument types (a string type, an enum's values, or `string[]`) and required arguments.
 * create_policy also takes the engine's action_budget, downgrades, guardrails, period_budgets and auto_kill_switch (optional).
 */
/** The values of the `purpose` argument of the tools that read runs, actions, interventions or stats. */
const PURPOSE_ARG = ['production', 'eval', 'all'] as const;
const SPEC_TOOLS: Record<string, { args: Record<string, string | readonly string[]>; required: string[] }> = {
  create_policy: {
    args: { name: 'string', description: 'string', enabled: 'boolean', session_budget: 'number', run_budget: 'number', denied_actions: 'string[]', rate_limits: 'object', action_budget: 'number', downgrades: 'array', guardrails: 'object', period_budgets: 'array', auto_kill_switch: 'object' },
    required: ['name'],
  },
  // `purpose` (production | eval | all) is an optional addition to the spec's arguments: eval data is left out unless asked for.
  list_runs: { args: { status: ['running', 'completed', 'failed'], min_cost: 'number', agent_id: 'string', limit: 'integer', purpose: PURPOSE_ARG }, required: [] },
  get_pending_approvals: { args: {}, required: [] },
  approve_action: { args: { approval_id: 'string', approver_email: 'string', notes: 'string' }, required: ['approval_id', 'approver_email'] },
  reject_action: { args: { approval_id: 'string', approver_email: 'string', notes: 'string' }, required: ['approval_id', 'approver_email'] },
  get_agent_stats: { args: { agent_id: 'string', purpose: PURPOSE_ARG }, required: ['agent_id'] },
  export_ledger: { args: { format: ['json', 'jsonl', 'csv'], start_date: 'string', end_date: 'string', agent_id: 'string', purpose: PURPOSE_ARG }, required: ['format'] },
};
/** Every tool issues #12 and #13 ask for. */
const ALL_TOOLS = [
  ...Object.keys(SPEC_TOOLS),
  'list_interventions',
  'get_intervention',
  'get_intervention_stats',
  'set_kill_switch',
  'list_policies',
  'update_policy',
  'get_run',
  'list_agents',
  'get_dashboard_stats',
  // Evals
  'list_eval_runs',
  'get_latest_scorecard',
  'compare_eval_runs',
  // Replay
  'get_replay_history',
  'evaluate_run',
  'evaluate_policy_change',
  // The registry of upstream MCP servers
  'list_mcp_servers',
  'get_mcp_server',
  'register_mcp_server',
  'update_mcp_server',
  'delete_mcp_server',
  // The log of administrative changes (an admin key's)
  'list_audit_log',
  // The verifiable audit trail (read keys)
  'list_audit_checkpoints',
  'get_audit_inclusion_proof',
  'get_audit_consistency_proof',
  // Erasure of personal data from the audit trail (an admin key's)
  'erase_audit_data',
  // Webhook subscriptions (admin keys)
  'list_webhooks',
  'create_webhook',
  'update_webhook',
  'delete_webhook',
  'rotate_webhook_secret',
  'list_webhook_deliveries',
  'redeliver_webhook',
  // The Slack connection (admin keys)
  'get_slack_connection',
  'put_slack_connection',
  'delete_slack_connection',
];
/** The tools that change state (a read key is refused them). */
const WRITE_TOOLS = ['create_policy', 'approve_action', 'reject_action', 'set_kill_switch', 'update_policy', 'register_mcp_server', 'update_mcp_server', 'delete_mcp_server', 'accept_mcp_server_tool', 'create_webhook', 'update_webhook', 'delete_webhook', 'rotate_webhook_secret', 'redeliver_webhook', 'erase_audit_data', 'put_slack_connection', 'delete_slack_connection'];
const RESOURCE_URIS = ['platform://runs/latest', 'platform://approvals/pending', 'platform://stats/dashboard', 'platform://policies/active', 'platform://compliance/summary'];
const TEMPLATES = ['platform://runs/{run_id}', 'platform://interventions/{id}', 'platform://ledger/{date}'];
/** The spec's prompts with their arguments' required flags, in order. */
const SPEC_PROMPTS: Record<string, Array<{ name: string; required: boolean }>> = {
  create_budget_policy: [
    { name: 'agent_id', required: false },
    { name: 'budget_usd', required: true },
  ],
  analyze_agent_costs: [
    { name: 'agent_id', required: true },
    { name: 'days', required: false },
  ],
  review_pending_approvals: [],
  compliance_audit_report: [
    { name: 'start_date', required: false },
    { name: 'end_date', required: false },
  ],
};

/** The three surfaces: the REST facade, and the MCP endpoint through the v2 client (2026-07-28) and the v1 sdk client (2025-11-25). */
const SURFACES = ['rest', 'mcp-2026-07-28', 'mcp-2025-11-25'] as const;
type Surface = (typeof SURFACES)[number];
const MCP_SURFACES = ['mcp-2026-07-28', 'mcp-2025-11-25'] as const;
type McpSurface = (typeof MCP_SURFACES)[number];

/** A tool call's outcome, the same on every surface. */
interface Outcome {
  success: boolean;
  data: any;
  code: string | null;
  message: string;
  details?: any;
}

describeModes(
  'tool gateway: REST facade and MCP endpoint',
  (platform) => {
    // ---------------------------------------------------------------------------------------------------------
    // Clients and surface-neutral helpers
    // ---------------------------------------------------------------------------------------------------------
    const clients = new Map<string, Promise<any>>();
    /** An MCP client configured with only the endpoint URL and `key`, as an MCP host would be. */
    const client = (surface: McpSurface, key: string): Promise<any> => {
      const p = platform();
      const id = `${surface} ${p.url} ${key}`;
      if (!clients.has(id)) {
        const url = new URL(`${p.url}/api/v1/mcp`);
        const headers = { Authorization: `Bearer ${key}` };
        clients.set(
          id,
          (async () => {
            if (surface === 'mcp-2026-07-28') {
              const c = new ClientV2({ name: 'agp-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
              await c.connect(new TransportV2(url, { requestInit: { headers } }));
              expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
              return c;
            }
            const t = new TransportV1(url, { requestInit: { headers } });
            const c = new ClientV1({ name: 'agp-e2e-v1', version: '1.0.0' });
            await c.connect(t);
            expect(t.protocolVersion).toBe('2025-11-25');
            return c;
          })(),
        );
      }
      return clients.get(id)!;
    };
    afterAll(async () => {
      for (const c of clients.values()) await (await c.catch(() => null))?.close();
    });

    /** Call tool `name` on `surface`; checks the surface's own shape (envelope, or result with JSON text). */
    async function tool(surface: Surface, key: string, name: string, args: Record<string, unknown> = {}): Promise<Outcome> {
      if (surface === 'rest') {
        const r = await call(platform(), 'POST', '/api/v1/mcp/call', { key, body: { tool_name: name, arguments: args } });
        expect(Object.keys(r.body).sort(), JSON.stringify(r.body)).toEqual(['data', 'error', 'metadata', 'success']);
        expect(Object.keys(r.body.metadata)).toEqual(['execution_time_ms']);
        expect(r.body.metadata.execution_time_ms).toBeGreaterThanOrEqual(0);
        if (r.body.success) {
          expect(r.status).toBe(200);
          expect(r.body.error).toBeNull();
          return { success: true, data: r.body.data, code: null, message: '' };
        }
        expect(r.body.data).toBeNull();
        expect(r.status, JSON.stringify(r.body)).toBe(STATUS_OF[r.body.error.code]);
        return { success: false, data: null, code: r.body.error.code, message: r.body.error.message, details: r.body.error.details };
      }
      const res = await (await client(surface, key)).callTool({ name, arguments: args });
      expect(res.content).toHaveLength(1);
      expect(res.content[0].type).toBe('text');
      if (res.isError) {
        const e = res.structuredContent.error;
        expect(res.content[0].text.startsWith(`${e.code}: ${e.message}`)).toBe(true);
        return { success: false, data: null, code: e.code, message: res.content[0].text, details: e.details };
      }
      expect(JSON.parse(res.content[0].text)).toEqual(res.structuredContent);
      return { success: true, data: res.structuredContent, code: null, message: '' };
    }
    /** A successful tool call's data. */
    const ok = async (surface: Surface, key: string, name: string, args: Record<string, unknown> = {}) => {
      const o = await tool(surface, key, name, args);
      expect(o.success, `${name} on ${surface}: ${o.message}`).toBe(true);
      return o.data;
    };
    /** Read resource `uri` on `surface`; its data. */
    async function resource(surface: Surface, key: string, uri: string): Promise<any> {
      if (surface === 'rest') {
        const r = await call(platform(), 'GET', `/api/v1/mcp/resources/${encodeURIComponent(uri)}`, { key });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(Object.keys(r.body)).toEqual(['uri', 'mime_type', 'data']);
        expect(r.body).toMatchObject({ uri, mime_type: 'application/json' });
        return r.body.data;
      }
      const res = await (await client(surface, key)).readResource({ uri });
      expect(res.contents).toHaveLength(1);
      expect(res.contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
      return JSON.parse(res.contents[0].text);
    }
    /** Render prompt `name` on `surface`: its summary (REST only), details and message text. */
    async function prompt(surface: Surface, key: string, name: string, args: Record<string, unknown> = {}): Promise<{ details: any; text: string; summary?: string }> {
      if (surface === 'rest') {
        const r = await call(platform(), 'POST', `/api/v1/mcp/prompts/${name}`, { key, body: { arguments: args } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toMatchObject({ prompt: name, description: expect.any(String), data: { summary: expect.any(String), details: expect.any(Object) } });
        expect(r.body.messages).toHaveLength(1);
        expect(r.body.messages[0]).toMatchObject({ role: 'user', content: { type: 'text' } });
        const text = r.body.messages[0].content.text as string;
        // The message carries the summary and the very data the REST answer gives.
        expect(text).toContain(r.body.data.summary);
        expect(stable(dataBlockOf(text))).toEqual(stable(r.body.data.details));
        return { details: r.body.data.details, text, summary: r.body.data.summary };
      }
      // MCP sends prompt arguments as strings.
      const strings = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)]));
      const res = await (await client(surface, key)).getPrompt({ name, arguments: strings });
      expect(res.messages).toHaveLength(1);
      expect(res.messages[0]).toMatchObject({ role: 'user', content: { type: 'text' } });
      return { details: dataBlockOf(res.messages[0].content.text), text: res.messages[0].content.text };
    }
    /** The JSON-RPC error an MCP client call throws. */
    const rpcError = async (f: () => Promise<unknown>): Promise<{ code: number; message: string; data?: any }> => {
      try {
        await f();
      } catch (e) {
        return e as { code: number; message: string; data?: any };
      }
      throw new Error('expected a JSON-RPC error');
    };

    /** POST an escalated intervention on acme and wait until its approval is listed; both ids. */
    const escalate = async (over: Record<string, unknown> = {}) => {
      const p = platform();
      const r = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: `apr-agent-${uniq()}`, risk_level: 'high', estimated_cost_usd: 950, reason: 'above the auto-approval threshold', ...over },
      });
      expect(r.status).toBe(201);
      const approvalId = `apr-${r.body.id}`;
      await eventually(async () => (await call(p, 'GET', `/api/v1/approvals/${approvalId}`, { key: p.readKey })).status === 200, 30_000);
      return { interventionId: r.body.id as string, approvalId };
    };

    // ---------------------------------------------------------------------------------------------------------
    // Data: `agp simulate` on acme, agent A and a bulk agent on acme, and a small known organisation (globex)
    // ---------------------------------------------------------------------------------------------------------
    const tag = uniq();
    const A = `mcp-agent-${tag}`;
    const R1 = `mcp-r1-${tag}`;
    const R2 = `mcp-r2-${tag}`;
    const BULK = `mcp-bulk-${tag}`;
    const BULK_RUN = `mcp-bulk-run-${tag}`;
    const BULK_OLD_RUN = `mcp-bulk-old-${tag}`;
    let simulated: SimulationReport;
    /** Agent A's escalated intervention (its approval stays pending throughout) and its blocked one. */
    let IA1: string;
    let IA2: string;
    /** globex: its pending approval and its requested_at. */
    let gApproval: { id: string; requested_at: string; expires_at: string };

    beforeAll(async () => {
      const p = platform();
      // 1. The simulated fleet (organisation acme): 500 events over 4 agents, waited for until every consumer has it.
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['simulate', '--url', p.url, '--key', p.writeKey, '--agents', '4', '--rate', '2000', '--duration', '0.25', '--batch-size', '250', '--json'], {
        env: {},
        out: (t) => out.push(t),
        err: (t) => err.push(t),
      });
      expect(code, err.join('')).toBe(0);
      simulated = JSON.parse(out.join('')) as SimulationReport;
      expect(simulated).toMatchObject({ sent: 500, created: 500, rejected: 0 });

      // 2. Agent A: run R1 three days ago (completed, 6 USD), run R2 today (failed, 2.25 USD); 8.25 USD in all.
      await ingest(p, [
        ev('run.start', { run_id: R1, agent_id: A, name: 'nightly', started_at: at(3, 10) }, at(3, 10)),
        act(R1, A, 'search', 1.25, at(3, 20), { duration_ms: 100 }),
        act(R1, A, 'search', 1.25, at(3, 30), { duration_ms: 300 }),
        act(R1, A, 'llm_call', 3.5, at(3, 40), { duration_ms: 200 }),
        ev('run.end', { run_id: R1, agent_id: A, status: 'completed', ended_at: at(3, 50) }, at(3, 50)),
        ev('run.start', { run_id: R2, agent_id: A, started_at: at(0, 10) }, at(0, 10)),
        act(R2, A, 'llm_call', 2, at(0, 20)),
        act(R2, A, 'send_email', 0.25, at(0, 30)),
        ev('run.end', { run_id: R2, agent_id: A, status: 'failed', ended_at: at(0, 40), error: 'timeout' }, at(0, 40)),
      ]);
      const i1 = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: A, run_id: R2, risk_level: 'high', estimated_cost_usd: 40, reason: 'above the threshold', original_inputs: { amount: 40 } },
      });
      const i2 = await call(p, 'POST', '/api/v1/interventions', {
        key: p.writeKey,
        body: { type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', agent_id: A, run_id: R2, risk_level: 'critical', estimated_cost_usd: 12, cost_prevented_usd: 12 },
      });
      expect([i1.status, i2.status]).toEqual([201, 201]);
      IA1 = i1.body.id;
      IA2 = i2.body.id;

      // 3. The bulk agent: 500 entries today and one five days ago (above the inline cap of export_ledger in all).
      const bulk: Ev[] = [ev('run.start', { run_id: BULK_RUN, agent_id: BULK, started_at: at(0, 1) }, at(0, 1))];
      for (let i = 0; i < EXPORT_LEDGER_INLINE_ROWS; i++) bulk.push(act(BULK_RUN, BULK, `step_${i % 7}`, 0.01, at(0, 2 + i / 100)));
      bulk.push(act(BULK_OLD_RUN, BULK, 'old_step', 0.5, at(5, 100)));
      await ingest(p, bulk);

      // 4. globex: three runs (one completed, one failed, one running; 4 actions, 7.5 USD), six interventions.
      const G = p.otherOrgWriteKey;
      await ingest(
        p,
        [
          ev('run.start', { run_id: 'g1', agent_id: 'g-agent', started_at: at(1, 10) }, at(1, 10)),
          act('g1', 'g-agent', 'search', 1, at(1, 20)),
          act('g1', 'g-agent', 'search', 2, at(1, 30)),
          ev('run.end', { run_id: 'g1', agent_id: 'g-agent', status: 'completed', ended_at: at(1, 40) }, at(1, 40)),
          ev('run.start', { run_id: 'g2', agent_id: 'g-agent', started_at: at(0, 5) }, at(0, 5)),
          act('g2', 'g-agent', 'llm_call', 0.5, at(0, 6)),
          ev('run.end', { run_id: 'g2', agent_id: 'g-agent', status: 'failed', ended_at: at(0, 7) }, at(0, 7)),
          ev('run.start', { run_id: 'g3', agent_id: 'g-agent', started_at: at(0, 8) }, at(0, 8)),
          act('g3', 'g-agent', 'fetch', 4, at(0, 9)),
          // Expires undecided after one second (low risk: not a high-risk block once rejected).
          ev('approval.request', { agent_id: 'g-agent', action_name: 'rotate_keys', risk_level: 'low', expires_in_seconds: 1 }),
        ],
        G,
      );
      const gInterventions = [
        { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', risk_level: 'high', timestamp: ago(60_000) },
        { type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', risk_level: 'critical', timestamp: ago(120_000) },
        { type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', risk_level: 'high', timestamp: ago(3 * DAY) },
        { type: 'warning', outcome: 'warned', action_name: 'send_email', risk_level: 'low', timestamp: ago(3 * DAY) },
        { type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', risk_level: 'high', timestamp: ago(10 * DAY) },
      ];
      expect((await call(p, 'POST', '/api/v1/agents', { key: G, body: { agent_id: 'g-agent', name: 'Globex agent' } })).status).toBe(201);
      for (const body of gInterventions) expect((await call(p, 'POST', '/api/v1/interventions', { key: G, body: { agent_id: 'g-agent', ...body } })).status).toBe(201);

      // Wait until every read model has all of it.
      const count = async (path: string, key = p.readKey) => (await get(p, path, key)).total as number;
      await eventually(async () => {
        const stats = await get(p, '/api/v1/stats/');
        const want = {
          interventions: simulated.by_event_type['intervention.create'] + simulated.by_event_type['approval.request'] + 2,
          actions: simulated.by_event_type['action.record'] + 5 + EXPORT_LEDGER_INLINE_ROWS + 1,
          ended: simulated.by_event_type['run.end'] + 2,
        };
        const got = {
          interventions: await count('/api/v1/interventions?limit=1'),
          actions: stats.total_actions,
          ended: stats.runs_by_status.completed + stats.runs_by_status.failed,
        };
        return JSON.stringify(got) === JSON.stringify(want) && (await call(p, 'GET', `/api/v1/approvals/apr-${IA1}`, { key: p.readKey })).status === 200;
      }, 60_000);
      await eventually(async () => {
        const g = await get(p, '/api/v1/stats/', G);
        return g.total_actions === 4 && g.runs_by_status.failed === 1 && g.runs_by_status.completed === 1 && (await count('/api/v1/interventions?limit=1', G)) === 6 && (await count('/api/v1/approvals?status=expired', G)) === 1 && (await count('/api/v1/approvals?status=pending', G)) === 1;
      }, 60_000);
      gApproval = (await get(p, '/api/v1/approvals?status=pending', G)).approvals[0];
    }, 180_000);

    /** What the dashboard must say, from the REST API: the stats totals, pending approvals and interventions in 24 h. */
    const expectedDashboard = async (key = platform().readKey) => {
      const p = platform();
      const s = await get(p, '/api/v1/stats/', key);
      return {
        total_runs: s.total_runs,
        total_actions: s.total_actions,
        total_cost_usd: s.total_cost_usd,
        success_rate: s.success_rate,
        pending_approvals: (await get(p, '/api/v1/approvals?status=pending&limit=1', key)).total,
        interventions_24h: (await get(p, `/api/v1/interventions?limit=1&start_date=${encodeURIComponent(ago(DAY - 5_000))}`, key)).total,
      };
    };

    // ---------------------------------------------------------------------------------------------------------
    describe('the lists: the spec descriptors on every surface', () => {
      it('lists every tool; the seven spec tools have exactly its argument names, types, enums and required lists', async () => {
        const p = platform();
        const { tools } = await get(p, '/api/v1/mcp/tools');
        expect(tools.map((t: any) => t.name)).toEqual(expect.arrayContaining(ALL_TOOLS));
        for (const t of tools) {
          expect(Object.keys(t).sort()).toEqual(['changes_state', 'description', 'input_schema', 'name', 'title']);
          expect(t.description.length, t.name).toBeGreaterThan(40);
          expect(t.input_schema.type).toBe('object');
          expect(t.input_schema.properties).toEqual(expect.any(Object));
          // spec: "a JSON Schema object with type, properties, required": `required` is always there, [] when none.
          expect(t.input_schema.required, t.name).toEqual(expect.any(Array));
          for (const r of t.input_schema.required) expect(Object.keys(t.input_schema.properties), `${t.name}.required`).toContain(r);
        }
        expect(tools.find((t: any) => t.name === 'get_pending_approvals').input_schema.required).toEqual([]);
        expect(tools.filter((t: any) => t.changes_state).map((t: any) => t.name).sort()).toEqual([...WRITE_TOOLS].sort());
        for (const [name, spec] of Object.entries(SPEC_TOOLS)) {
          const schema = tools.find((t: any) => t.name === name).input_schema;
          expect(Object.keys(schema.properties).sort(), name).toEqual(Object.keys(spec.args).sort());
          expect([...schema.required].sort(), name).toEqual([...spec.required].sort());
          for (const [arg, type] of Object.entries(spec.args)) {
            const prop = schema.properties[arg];
            if (Array.isArray(type)) expect(prop, `${name}.${arg}`).toMatchObject({ type: 'string', enum: type });
            else if (type === 'string[]') expect(prop, `${name}.${arg}`).toMatchObject({ type: 'array', items: { type: 'string' } });
            else expect(prop.type, `${name}.${arg}`).toBe(type);
          }
        }
      });

      it('lists the five platform:// resources and three templates, each application/json', async () => {
        const body = await get(platform(), '/api/v1/mcp/resources');
        expect(body.resources.map((r: any) => r.uri)).toEqual(RESOURCE_URIS);
        expect(body.resource_templates.map((r: any) => r.uri_template)).toEqual(TEMPLATES);
        for (const r of body.resources) expect(r).toEqual({ uri: r.uri, name: expect.any(String), description: expect.any(String), mime_type: 'application/json' });
        for (const r of body.resource_templates) expect(r).toEqual({ uri_template: r.uri_template, name: expect.any(String), description: expect.any(String), mime_type: 'application/json' });
      });

      it('lists the four prompts with their arguments and required flags', async () => {
        const { prompts } = await get(platform(), '/api/v1/mcp/prompts');
        expect(prompts.map((x: any) => x.name)).toEqual(Object.keys(SPEC_PROMPTS));
        for (const x of prompts) {
          expect(x.arguments.map((a: any) => ({ name: a.name, required: a.required }))).toEqual(SPEC_PROMPTS[x.name]);
          for (const a of x.arguments) expect(a.description.length).toBeGreaterThan(5);
        }
      });

      it.each(MCP_SURFACES)('serves the same lists over %s: tools with the same input schemas, resources, templates and prompts', async (surface) => {
        const p = platform();
        const rest = { tools: (await get(p, '/api/v1/mcp/tools')).tools, ...(await get(p, '/api/v1/mcp/resources')), prompts: (await get(p, '/api/v1/mcp/prompts')).prompts };
        const c = await client(surface, p.readKey);
        const all = async (method: string, field: string) => {
          const items: any[] = [];
          let cursor: string | undefined;
          do {
            const page = await c[method](cursor ? { cursor } : undefined);
            items.push(...page[field]);
            cursor = page.nextCursor;
          } while (cursor);
          return items;
        };
        const tools = await all('listTools', 'tools');
        expect(tools.map((t: any) => t.name)).toEqual(rest.tools.map((t: any) => t.name));
        for (const t of tools) {
          const r = rest.tools.find((x: any) => x.name === t.name);
          expect(t).toMatchObject({ name: r.name, title: r.title, description: r.description, inputSchema: r.input_schema });
          expect(t.annotations).toMatchObject({ readOnlyHint: !r.changes_state, destructiveHint: r.changes_state });
        }
        expect(await all('listResources', 'resources')).toEqual(rest.resources.map((r: any) => ({ uri: r.uri, name: r.name, description: r.description, mimeType: r.mime_type })));
        expect(await all('listResourceTemplates', 'resourceTemplates')).toEqual(rest.resource_templates.map((r: any) => ({ uriTemplate: r.uri_template, name: r.name, description: r.description, mimeType: r.mime_type })));
        expect(await all('listPrompts', 'prompts')).toEqual(rest.prompts);
      });

      it.each(['tools', 'resources', 'prompts'])('GET /mcp/%s: the same body as /api/v1/mcp/…, an ETag and Cache-Control, 304 on If-None-Match', async (list) => {
        const p = platform();
        const get1 = await fetch(`${p.url}/api/v1/mcp/${list}`, { headers: { authorization: `Bearer ${p.readKey}` } });
        const get2 = await fetch(`${p.url}/mcp/${list}`, { headers: { authorization: `Bearer ${p.writeKey}` } });
        expect([get1.status, get2.status]).toEqual([200, 200]);
        const [text1, text2] = [await get1.text(), await get2.text()];
        expect(text2).toBe(text1);
        expect(Object.keys(JSON.parse(text1))).toEqual(list === 'resources' ? ['resources', 'resource_templates'] : [list]);
        const etag = get1.headers.get('etag')!;
        expect(etag).toMatch(/^"[^"]+"$/);
        expect(get2.headers.get('etag')).toBe(etag);
        expect(get1.headers.get('cache-control')).toMatch(/max-age=\d+/);
        expect(get2.headers.get('cache-control')).toBe(get1.headers.get('cache-control'));
        for (const path of [`/api/v1/mcp/${list}`, `/mcp/${list}`, `/mcp/${list}/`]) {
          const cached = await fetch(`${p.url}${path}`, { headers: { authorization: `Bearer ${p.readKey}`, 'if-none-match': etag } });
          expect(cached.status, path).toBe(304);
          expect(await cached.text()).toBe('');
          expect(cached.headers.get('etag')).toBe(etag);
          const stale = await fetch(`${p.url}${path}`, { headers: { authorization: `Bearer ${p.readKey}`, 'if-none-match': '"stale"' } });
          expect(stale.status, path).toBe(200);
          expect(await stale.text()).toBe(text1);
        }
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('the dashboard', () => {
      it('platform://stats/dashboard is exactly the six fields, matching GET /api/v1/stats/, pending approvals and interventions in 24 h, on every surface', async () => {
        const p = platform();
        const want = await expectedDashboard();
        expect(want.total_actions).toBeGreaterThan(EXPORT_LEDGER_INLINE_ROWS);
        for (const s of SURFACES) {
          expect(await resource(s, p.readKey, 'platform://stats/dashboard'), s).toEqual(want);
          expect(await ok(s, p.readKey, 'get_dashboard_stats'), s).toEqual(want);
        }
        expect(await expectedDashboard()).toEqual(want);
      });

      it('has the exact values of a known organisation (globex): 3 runs, 4 actions, 7.5 USD, success 0.5, 1 pending, 3 in 24 h', async () => {
        const p = platform();
        const want = { total_runs: 3, total_actions: 4, total_cost_usd: 7.5, success_rate: 0.5, pending_approvals: 1, interventions_24h: 3 };
        expect(await expectedDashboard(p.otherOrgWriteKey)).toEqual(want);
        for (const s of SURFACES) {
          expect(await resource(s, p.otherOrgWriteKey, 'platform://stats/dashboard'), s).toEqual(want);
          expect(await ok(s, p.otherOrgWriteKey, 'get_dashboard_stats'), s).toEqual(want);
        }
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('read tools, on every surface with a read key, against what REST reads', () => {
      it('list_runs filters by agent, status, min_cost and limit', async () => {
        const p = platform();
        for (const s of SURFACES) {
          const mine = await ok(s, p.readKey, 'list_runs', { agent_id: A });
          expect(mine).toEqual(await get(p, `/api/v1/runs?agent_id=${A}`));
          expect(mine.runs.map((r: any) => [r.id, r.status, r.cost_usd, r.action_count])).toEqual([
            [R2, 'failed', 2.25, 2],
            [R1, 'completed', 6, 3],
          ]);
          expect((await ok(s, p.readKey, 'list_runs', { agent_id: A, status: 'completed' })).runs.map((r: any) => r.id)).toEqual([R1]);
          expect((await ok(s, p.readKey, 'list_runs', { agent_id: A, min_cost: 3 })).runs.map((r: any) => r.id)).toEqual([R1]);
          expect(await ok(s, p.readKey, 'list_runs', { limit: 3 })).toEqual(await get(p, '/api/v1/runs?limit=3'));
          expect((await ok(s, p.readKey, 'list_runs', { status: 'failed', limit: 1000 })).total).toBe((await get(p, '/api/v1/runs?status=failed&limit=1')).total);
        }
      });

      it('get_run answers a run with its ledger entries oldest first', async () => {
        const p = platform();
        const want = await get(p, `/api/v1/runs/${R1}`);
        expect(want.actions.map((a: any) => [a.action_name, a.cost_usd])).toEqual([
          ['search', 1.25],
          ['search', 1.25],
          ['llm_call', 3.5],
        ]);
        for (const s of SURFACES) expect(await ok(s, p.readKey, 'get_run', { run_id: R1 }), s).toEqual(want);
      });

      it('get_agent_stats answers the agent stats: 2 runs, 5 actions, 8.25 USD', async () => {
        const p = platform();
        const want = await get(p, `/api/v1/agents/${A}/stats`);
        expect(want).toMatchObject({ agent_id: A, total_runs: 2, runs_by_status: { running: 0, completed: 1, failed: 1 }, total_actions: 5, total_cost_usd: 8.25, avg_cost_per_run_usd: 4.125, interventions: { total: 2 } });
        for (const s of SURFACES) expect(await ok(s, p.readKey, 'get_agent_stats', { agent_id: A }), s).toEqual(want);
      });

      it('get_pending_approvals answers the inbox with its total', async () => {
        const p = platform();
        const page = await get(p, '/api/v1/approvals?status=pending&limit=200');
        expect(page.approvals.map((a: any) => a.id)).toContain(`apr-${IA1}`);
        expect(page.total).toBeGreaterThanOrEqual(1);
        for (const s of SURFACES) expect(await ok(s, p.readKey, 'get_pending_approvals'), s).toEqual({ approvals: page.approvals, total: page.total, returned: page.approvals.length });
      });

      it('list_interventions takes the list filters (enum filters as lists), get_intervention one record', async () => {
        const p = platform();
        const mine = await get(p, `/api/v1/interventions?agent_id=${A}`);
        expect(mine.interventions.map((i: any) => i.id).sort()).toEqual([IA1, IA2].sort());
        const one = await get(p, `/api/v1/interventions/${IA1}`);
        expect(one).toMatchObject({ id: IA1, agent_id: A, outcome: 'escalated', risk_level: 'high', estimated_cost_usd: 40 });
        for (const s of SURFACES) {
          expect(await ok(s, p.readKey, 'list_interventions', { agent_id: A }), s).toEqual(mine);
          const filtered = await ok(s, p.readKey, 'list_interventions', { agent_id: A, outcome: ['blocked', 'warned'], risk_level: ['critical'], type: ['hard_block'] });
          expect(filtered.interventions.map((i: any) => i.id)).toEqual([IA2]);
          expect(await ok(s, p.readKey, 'list_interventions', { run_id: R2, skip: 1, limit: 1 })).toEqual(await get(p, `/api/v1/interventions?run_id=${R2}&skip=1&limit=1`));
          expect(await ok(s, p.readKey, 'get_intervention', { id: IA1 }), s).toEqual(one);
        }
      });

      it('get_intervention_stats answers the statistics object, all-time and for a period', async () => {
        const p = platform();
        const all = await get(p, '/api/v1/interventions/stats');
        expect(all.total_interventions).toBe(simulated.by_event_type['intervention.create'] + simulated.by_event_type['approval.request'] + 2);
        const period = await get(p, `/api/v1/interventions/stats?start_date=${dayOf(1)}&end_date=${dayOf(0)}`);
        for (const s of SURFACES) {
          expect(await ok(s, p.readKey, 'get_intervention_stats'), s).toEqual(all);
          expect(await ok(s, p.readKey, 'get_intervention_stats', { start_date: dayOf(1), end_date: dayOf(0) }), s).toEqual(period);
        }
      });

      it('list_policies and list_agents answer the pages REST answers', async () => {
        const p = platform();
        const policies = await get(p, '/api/v1/policies');
        expect(policies.total).toBe(6); // the simulation's
        const enabled = await get(p, '/api/v1/policies?enabled=true&limit=2&skip=1');
        const byName = await get(p, `/api/v1/policies?name=${encodeURIComponent('Budget guard')}`);
        expect(byName.total).toBe(1);
        const agents = await get(p, '/api/v1/agents');
        expect(agents.total).toBe(4);
        for (const s of SURFACES) {
          expect(await ok(s, p.readKey, 'list_policies'), s).toEqual(policies);
          expect(await ok(s, p.readKey, 'list_policies', { enabled: true, limit: 2, skip: 1 }), s).toEqual(enabled);
          expect(await ok(s, p.readKey, 'list_policies', { name: 'Budget guard' }), s).toEqual(byName);
          expect(await ok(s, p.readKey, 'list_agents'), s).toEqual(agents);
          expect(await ok(s, p.readKey, 'list_agents', { skip: 1, limit: 2 }), s).toEqual(await get(p, '/api/v1/agents?skip=1&limit=2'));
        }
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('export_ledger: inline up to the cap, a download URL above it', () => {
      it('answers agent A’s five entries inline as json, jsonl and csv, equal to GET /api/v1/ledger/export', async () => {
        const p = platform();
        const rest = (format: string) => fetch(`${p.url}/api/v1/ledger/export?format=${format}&agent_id=${A}`, { headers: { authorization: `Bearer ${p.readKey}` } });
        const json = (await (await rest('json')).json()) as any[];
        expect(json.map((e: any) => [e.run_id, e.action_name, e.cost_usd])).toEqual([
          [R1, 'search', 1.25],
          [R1, 'search', 1.25],
          [R1, 'llm_call', 3.5],
          [R2, 'llm_call', 2],
          [R2, 'send_email', 0.25],
        ]);
        const jsonl = await (await rest('jsonl')).text();
        const csv = await (await rest('csv')).text();
        for (const s of SURFACES) {
          expect(await ok(s, p.readKey, 'export_ledger', { format: 'json', agent_id: A }), s).toEqual({ inline: true, format: 'json', row_count: 5, entries: json });
          expect(await ok(s, p.readKey, 'export_ledger', { format: 'jsonl', agent_id: A }), s).toEqual({ inline: true, format: 'jsonl', row_count: 5, content: jsonl });
          expect(await ok(s, p.readKey, 'export_ledger', { format: 'csv', agent_id: A }), s).toEqual({ inline: true, format: 'csv', row_count: 5, content: csv });
          const period = await ok(s, p.readKey, 'export_ledger', { format: 'json', agent_id: A, start_date: dayOf(0), end_date: dayOf(0) });
          expect(period).toMatchObject({ inline: true, row_count: 2 });
          expect(period.entries.map((e: any) => e.action_name)).toEqual(['llm_call', 'send_email']);
        }
      });

      it(`answers exactly ${EXPORT_LEDGER_INLINE_ROWS} entries inline, and more as a download URL that GETs every entry, never a truncated list`, async () => {
        const p = platform();
        for (const s of SURFACES) {
          const atCap = await ok(s, p.readKey, 'export_ledger', { format: 'json', agent_id: BULK, start_date: dayOf(0) });
          expect(atCap).toMatchObject({ inline: true, format: 'json', row_count: EXPORT_LEDGER_INLINE_ROWS });
          expect(atCap.entries).toHaveLength(EXPORT_LEDGER_INLINE_ROWS);

          for (const format of ['json', 'csv'] as const) {
            const above = await ok(s, p.readKey, 'export_ledger', { format, agent_id: BULK });
            expect(above, s).toEqual({
              inline: false,
              format,
              row_count_at_least: EXPORT_LEDGER_INLINE_ROWS + 1,
              inline_cap: EXPORT_LEDGER_INLINE_ROWS,
              download_url: `/api/v1/ledger/export?format=${format}&agent_id=${BULK}`,
              message: expect.stringContaining(`more than ${EXPORT_LEDGER_INLINE_ROWS} entries`),
            });
            expect(above.message).toContain(above.download_url);
            expect(above).not.toHaveProperty('entries');
            const res = await fetch(`${p.url}${above.download_url}`, { headers: { authorization: `Bearer ${p.readKey}` } });
            expect(res.status).toBe(200);
            if (format === 'json') {
              const all = (await res.json()) as any[];
              expect(all).toHaveLength(EXPORT_LEDGER_INLINE_ROWS + 1);
              expect(all[0]).toMatchObject({ agent_id: BULK, action_name: 'old_step', run_id: BULK_OLD_RUN });
              expect(all.slice(1).map((e) => e.action_name)).toEqual(Array.from({ length: EXPORT_LEDGER_INLINE_ROWS }, (_, i) => `step_${i % 7}`));
            } else {
              const lines = (await res.text()).split('\r\n').filter(Boolean);
              expect(lines).toHaveLength(EXPORT_LEDGER_INLINE_ROWS + 2); // header + every entry
            }
          }
        }
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('resources and templates on every surface', () => {
      it('platform://runs/latest, approvals/pending and policies/active answer what REST reads', async () => {
        const p = platform();
        const latestId = (await get(p, '/api/v1/runs?limit=1')).runs[0].id;
        const latest = { run: await get(p, `/api/v1/runs/${encodeURIComponent(latestId)}`) };
        const pending = await get(p, '/api/v1/approvals?status=pending&limit=200');
        const active = await get(p, '/api/v1/policies?enabled=true&limit=1000');
        expect(active.total).toBe(6);
        for (const s of SURFACES) {
          expect(await resource(s, p.readKey, 'platform://runs/latest'), s).toEqual(latest);
          expect(await resource(s, p.readKey, 'platform://approvals/pending'), s).toEqual({ approvals: pending.approvals, total: pending.total });
          expect(await resource(s, p.readKey, 'platform://policies/active'), s).toEqual({ policies: active.policies, total: active.total });
        }
      });

      it('the templates: platform://runs/{run_id}, platform://interventions/{id}, platform://ledger/{date}', async () => {
        const p = platform();
        const run = await get(p, `/api/v1/runs/${R2}`);
        const intervention = await get(p, `/api/v1/interventions/${IA2}`);
        for (const s of SURFACES) {
          expect(await resource(s, p.readKey, `platform://runs/${R2}`), s).toEqual(run);
          expect(await resource(s, p.readKey, `platform://interventions/${IA2}`), s).toEqual(intervention);
          // Day -3: agent A's run R1 only; day -5: the bulk agent's old entry only; today: above the cap.
          const d3 = await resource(s, p.readKey, `platform://ledger/${dayOf(3)}`);
          expect(d3).toMatchObject({ date: dayOf(3), inline: true, format: 'json', row_count: 3 });
          expect(d3.entries.map((e: any) => [e.run_id, e.action_name])).toEqual([
            [R1, 'search'],
            [R1, 'search'],
            [R1, 'llm_call'],
          ]);
          const d5 = await resource(s, p.readKey, `platform://ledger/${dayOf(5)}`);
          expect(d5).toMatchObject({ date: dayOf(5), inline: true, row_count: 1, entries: [{ agent_id: BULK, action_name: 'old_step' }] });
          expect(await resource(s, p.readKey, `platform://ledger/${dayOf(0)}`)).toMatchObject({
            date: dayOf(0),
            inline: false,
            inline_cap: EXPORT_LEDGER_INLINE_ROWS,
            download_url: `/api/v1/ledger/export?format=json&start_date=${dayOf(0)}&end_date=${dayOf(0)}`,
          });
          expect(await resource(s, p.readKey, `platform://ledger/${dayOf(20)}`)).toEqual({ date: dayOf(20), inline: true, format: 'json', row_count: 0, entries: [] });
        }
      });

      it('GET /api/v1/mcp/resources/{uri} answers the same with the URI raw or percent-encoded', async () => {
        const p = platform();
        const uris = [...RESOURCE_URIS, `platform://runs/${R1}`, `platform://interventions/${IA1}`, `platform://ledger/${dayOf(3)}`];
        for (const uri of uris) {
          const encoded = await call(p, 'GET', `/api/v1/mcp/resources/${encodeURIComponent(uri)}`, { key: p.readKey });
          const raw = await call(p, 'GET', `/api/v1/mcp/resources/${uri}`, { key: p.readKey });
          expect([encoded.status, raw.status], uri).toEqual([200, 200]);
          expect(encoded.body.uri).toBe(uri);
          expect(stable(raw.body), uri).toEqual(stable(encoded.body));
        }
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('prompts on every surface', () => {
      it('analyze_agent_costs: totals, cost per run and the top actions of what was ingested, all time and for one day', async () => {
        const p = platform();
        const allTime = {
          agent_id: A,
          days: null,
          total_cost_usd: 8.25,
          total_actions: 5,
          total_runs: 2,
          avg_cost_per_run: 4.125,
          top_actions: [
            { action: 'llm_call', cost: 5.5, count: 2 },
            { action: 'search', cost: 2.5, count: 2 },
            { action: 'send_email', cost: 0.25, count: 1 },
          ],
        };
        const oneDay = {
          agent_id: A,
          days: 1,
          total_cost_usd: 2.25,
          total_actions: 2,
          total_runs: 1,
          avg_cost_per_run: 2.25,
          top_actions: [
            { action: 'llm_call', cost: 2, count: 1 },
            { action: 'send_email', cost: 0.25, count: 1 },
          ],
        };
        for (const s of SURFACES) {
          const r = await prompt(s, p.readKey, 'analyze_agent_costs', { agent_id: A });
          expect(r.details, s).toEqual(allTime);
          expect(r.text).toContain('$8.25');
          if (r.summary) expect(r.summary).toBe(`Agent ${A} spent $8.25 on 5 actions in 2 runs over all time ($4.13 per run); llm_call cost the most ($5.50 over 2 calls).`);
          expect((await prompt(s, p.readKey, 'analyze_agent_costs', { agent_id: A, days: 1 })).details, s).toEqual(oneDay);
        }
      });

      it('create_budget_policy: the agent’s spend, the runs over the budget and a create_policy draft', async () => {
        const p = platform();
        for (const s of SURFACES) {
          const r = await prompt(s, p.readKey, 'create_budget_policy', { agent_id: A, budget_usd: 5 });
          expect(r.details, s).toMatchObject({
            agent_id: A,
            budget_usd: 5,
            current_spend: { total_runs: 2, total_cost_usd: 8.25, avg_cost_per_run_usd: 4.125 },
            runs_over_budget: 1,
            examples_over_budget: [{ id: R1, agent_id: A, cost_usd: 6 }],
            suggested_policy: { enabled: true, run_budget: 5, name: expect.any(String) },
          });
          const org = await prompt(s, p.readKey, 'create_budget_policy', { budget_usd: 1000 });
          const stats = await get(p, '/api/v1/stats/');
          expect(org.details).toMatchObject({ agent_id: null, budget_usd: 1000, current_spend: { total_runs: stats.total_runs, total_cost_usd: stats.total_cost_usd }, runs_over_budget: 0 });
        }
      });

      it('review_pending_approvals: every pending approval, with the backlog', async () => {
        const p = platform();
        const pending = await get(p, '/api/v1/approvals?status=pending&limit=200');
        for (const s of SURFACES) {
          const r = await prompt(s, p.readKey, 'review_pending_approvals');
          expect(r.details.pending, s).toBe(pending.total);
          expect(r.details.shown).toBe(pending.approvals.length);
          // Oldest first.
          expect(r.details.approvals.map((a: any) => a.id)).toEqual(pending.approvals.map((a: any) => a.id).reverse());
          expect(r.details.oldest_pending.id).toBe(pending.approvals.at(-1).id);
        }
      });

      it('compliance_audit_report: the intervention statistics of the period with the controls in force', async () => {
        const p = platform();
        const stats = await get(p, `/api/v1/interventions/stats?start_date=${dayOf(7)}&end_date=${dayOf(0)}`);
        for (const s of SURFACES) {
          const r = await prompt(s, p.readKey, 'compliance_audit_report', { start_date: dayOf(7), end_date: dayOf(0) });
          expect(r.details.period).toEqual({ start_date: dayOf(7), end_date: dayOf(0) });
          // The statistics object of the period, its total_interventions as `total`.
          const { total_interventions, ...rest } = stats;
          expect(r.details.interventions).toEqual({ total: total_interventions, ...rest });
          expect(r.details.policies.active).toBe(6);
          expect(r.details.kill_switches).toEqual({ organization_engaged: false, engaged_agents: [] });
        }
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('write tools, on every surface with a write key, as REST then reads them', () => {
      it.each(SURFACES)('create_policy then update_policy over %s: a new policy, then version 2; a stale expected_version is a conflict', async (s) => {
        const p = platform();
        const name = `mcp ${s} ${uniq()}`;
        const created = await ok(s, p.writeKey, 'create_policy', { name, description: `from ${s}`, run_budget: 12.5, denied_actions: ['rm_rf'], rate_limits: { search: { max_calls: 10, window_seconds: 60 } } });
        expect(created).toMatchObject({ name, version: 1, enabled: true, run_budget: 12.5, denied_actions: ['rm_rf'], rate_limits: { search: { max_calls: 10, window_seconds: 60 } } });
        expect(await get(p, `/api/v1/policies/${created.id}`)).toEqual(created);
        const updated = await ok(s, p.writeKey, 'update_policy', { policy_id: created.id, expected_version: 1, run_budget: 20, description: null, denied_actions: ['rm_rf', 'sudo'] });
        expect(updated).toMatchObject({ id: created.id, version: 2, run_budget: 20, description: null, enabled: true, denied_actions: ['rm_rf', 'sudo'] });
        expect(await get(p, `/api/v1/policies/${created.id}`)).toEqual(updated);
        const stale = await tool(s, p.writeKey, 'update_policy', { policy_id: created.id, expected_version: 1, run_budget: 30 });
        expect(stale.code).toBe('conflict');
        expect((await get(p, `/api/v1/policies/${created.id}`)).run_budget).toBe(20);
        expect((await tool(s, p.writeKey, 'update_policy', { policy_id: `pol-nope-${uniq()}`, run_budget: 1 })).code).toBe('not_found');
      });

      it.each(SURFACES)('create_policy and update_policy over %s take action_budget, downgrades and guardrails; bad ones are invalid_arguments', async (s) => {
        const p = platform();
        const downgrades = [{ action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini' } }];
        const created = await ok(s, p.writeKey, 'create_policy', { name: `mcp guard ${s} ${uniq()}`, action_budget: 2, downgrades, guardrails: { pii: { mode: 'redact', categories: ['email'] } } });
        expect(created).toMatchObject({ version: 1, action_budget: 2, downgrades, guardrails: { pii: { mode: 'redact', categories: ['email'] } } });
        const updated = await ok(s, p.writeKey, 'update_policy', { policy_id: created.id, action_budget: null, guardrails: { loop: { threshold: 3, window_seconds: 60 } } });
        expect(updated).toMatchObject({ version: 2, action_budget: null, guardrails: { loop: { mode: 'block', threshold: 3, window_seconds: 60 } } });
        expect(updated.guardrails.pii).toBeUndefined();
        const bad = await tool(s, p.writeKey, 'create_policy', { name: 'bad guard', guardrails: { moderation: { threshold: 2 } } });
        expect(bad.code).toBe('invalid_arguments');
      });

      it.each(SURFACES)('create_policy and update_policy over %s take period_budgets and rate-limit scopes; a repeated (scope, period) is invalid_arguments', async (s) => {
        const p = platform();
        const day = { scope: 'agent', period: 'day', max_usd: 200 };
        const month = { scope: 'organization', period: 'month', max_usd: 5000 };
        const created = await ok(s, p.writeKey, 'create_policy', { name: `mcp fleet ${s} ${uniq()}`, period_budgets: [day], rate_limits: { send_email: { max_calls: 100, window_seconds: 60 }, '*': { max_calls: 1000, window_seconds: 60, scope: 'organization' } } });
        expect(created).toMatchObject({ version: 1, period_budgets: [day], rate_limits: { send_email: { max_calls: 100, window_seconds: 60, scope: 'agent' }, '*': { scope: 'organization' } } });
        const updated = await ok(s, p.writeKey, 'update_policy', { policy_id: created.id, period_budgets: [day, month], rate_limits: { send_email: { max_calls: 100, window_seconds: 60, scope: 'process' } } });
        expect(updated).toMatchObject({ version: 2, period_budgets: [day, month], rate_limits: { send_email: { scope: 'process' } } });
        expect(await get(p, `/api/v1/policies/${created.id}`)).toEqual(updated);
        const dup = await tool(s, p.writeKey, 'update_policy', { policy_id: created.id, period_budgets: [day, { ...day, max_usd: 1 }] });
        expect(dup.code).toBe('invalid_arguments');
        expect(dup.details.errors.map((e: any) => e.path)).toContain('arguments.period_budgets.1.period');
        expect((await get(p, `/api/v1/policies/${created.id}`)).version).toBe(2);
      });

      it.each(SURFACES)('approve_action and reject_action over %s set the intervention outcome; deciding twice is a conflict', async (s) => {
        const p = platform();
        const a = await escalate();
        const approved = await ok(s, p.writeKey, 'approve_action', { approval_id: a.approvalId, approver_email: 'jane@acme.test', notes: `via ${s}` });
        expect(approved).toMatchObject({ id: a.approvalId, status: 'approved', approver_email: 'jane@acme.test', notes: `via ${s}` });
        const i = await get(p, `/api/v1/interventions/${a.interventionId}`);
        expect(i.outcome).toBe('approved_after_review');
        expect(i.audit_trail.at(-1)).toMatchObject({ actor: 'approver:jane@acme.test', details: { approver_email: 'jane@acme.test', notes: `via ${s}` } });
        const again = await tool(s, p.writeKey, 'reject_action', { approval_id: a.approvalId, approver_email: 'bob@acme.test' });
        expect(again.code).toBe('conflict');

        const b = await escalate();
        expect(await ok(s, p.writeKey, 'reject_action', { approval_id: b.approvalId, approver_email: 'bob@acme.test' })).toMatchObject({ id: b.approvalId, status: 'rejected', approver_email: 'bob@acme.test', notes: null });
        expect((await get(p, `/api/v1/interventions/${b.interventionId}`)).outcome).toBe('rejected_after_review');
        expect((await tool(s, p.writeKey, 'approve_action', { approval_id: `apr-nope-${uniq()}`, approver_email: 'jane@acme.test' })).code).toBe('not_found');
      });

      it.each(SURFACES)('set_kill_switch over %s engages and releases an agent’s switch and the organisation’s', async (s) => {
        const p = platform();
        const agent = `ks-agent-${uniq()}`;
        expect((await call(p, 'POST', '/api/v1/agents', { key: p.writeKey, body: { agent_id: agent, name: 'kill switch drill' } })).status).toBe(201);
        expect(await ok(s, p.writeKey, 'set_kill_switch', { engaged: true, agent_id: agent, reason: `drill ${s}` })).toMatchObject({ scope: 'agent', agent_id: agent, engaged: true, reason: `drill ${s}` });
        expect((await get(p, '/api/v1/kill-switches')).agents).toEqual([expect.objectContaining({ agent_id: agent, engaged: true, reason: `drill ${s}` })]);
        expect(await ok(s, p.writeKey, 'set_kill_switch', { engaged: false, agent_id: agent })).toMatchObject({ scope: 'agent', agent_id: agent, engaged: false });
        expect((await get(p, '/api/v1/kill-switches')).agents).toEqual([]);

        expect(await ok(s, p.writeKey, 'set_kill_switch', { engaged: true, reason: 'org drill' })).toMatchObject({ scope: 'organization', agent_id: null, engaged: true, reason: 'org drill' });
        expect((await get(p, '/api/v1/kill-switches')).organization).toMatchObject({ engaged: true, reason: 'org drill' });
        expect(await ok(s, p.writeKey, 'set_kill_switch', { engaged: false })).toMatchObject({ scope: 'organization', engaged: false });
        expect((await get(p, '/api/v1/kill-switches')).organization.engaged).toBe(false);
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('managing the platform from an MCP client configured with only the URL and a key', () => {
      it.each(MCP_SURFACES)('over %s: list the pending approvals, approve one, create a policy, read the dashboard', async (surface) => {
        const p = platform();
        const { approvalId, interventionId } = await escalate({ risk_level: 'critical', reason: `flow ${surface}` });
        const c = await client(surface, p.writeKey);

        const inbox = await c.callTool({ name: 'get_pending_approvals', arguments: {} });
        expect(inbox.isError).toBeFalsy();
        expect(inbox.structuredContent.total).toBe((await get(p, '/api/v1/approvals?status=pending&limit=1')).total);
        expect(inbox.structuredContent.approvals.find((a: any) => a.id === approvalId)).toMatchObject({ status: 'pending', risk_level: 'critical', reason: `flow ${surface}` });

        const decided = await c.callTool({ name: 'approve_action', arguments: { approval_id: approvalId, approver_email: 'ops@acme.test', notes: 'checked by the on-call' } });
        expect(decided.isError).toBeFalsy();
        expect(decided.structuredContent).toMatchObject({ id: approvalId, status: 'approved' });
        expect((await get(p, `/api/v1/interventions/${interventionId}`)).outcome).toBe('approved_after_review');
        expect((await get(p, `/api/v1/approvals/${approvalId}`)).status).toBe('approved');

        const name = `Agent budget ${uniq()}`;
        const created = await c.callTool({ name: 'create_policy', arguments: { name, session_budget: 3, run_budget: 1.5 } });
        expect(created.isError).toBeFalsy();
        expect(await get(p, `/api/v1/policies/${created.structuredContent.id}`)).toMatchObject({ name, session_budget: 3, run_budget: 1.5, version: 1, enabled: true });

        const dashboard = await c.readResource({ uri: 'platform://stats/dashboard' });
        expect(JSON.parse(dashboard.contents[0].text)).toEqual(await expectedDashboard());
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('the compliance overview of a known organisation (globex)', () => {
      it('reflects policies, an engaged kill switch, the approval backlog, expired approvals, high-risk blocks and enrichment; then the release', async () => {
        const p = platform();
        const G = p.otherOrgWriteKey;
        const policy = await ok('mcp-2026-07-28', G, 'create_policy', { name: 'Globex budget', run_budget: 25 });
        expect((await call(p, 'POST', '/api/v1/policies', { key: G, body: { name: 'Globex draft', enabled: false } })).status).toBe(201);
        await ok('mcp-2025-11-25', G, 'set_kill_switch', { engaged: true, reason: 'incident-42' });
        await ok('rest', G, 'set_kill_switch', { engaged: true, agent_id: 'g-agent', reason: 'runaway' });

        const backlog = {
          pending: 1,
          oldest_pending: { id: gApproval.id, agent_id: 'g-agent', action_name: 'wire_transfer', risk_level: 'high', requested_at: gApproval.requested_at, expires_at: gApproval.expires_at },
          expired: 1,
        };
        const want = {
          status: 'attention',
          findings: [
            'The organisation kill switch is engaged (incident-42): every agent is stopped.',
            '1 agent kill switch is engaged.',
            `1 approval waits for a decision; the oldest since ${gApproval.requested_at}.`,
            '1 approval expired undecided.',
            '1 high-risk action was blocked in the last 24 hours.',
          ],
          policies: {
            active: 1,
            disabled: 1,
            active_policies: [{ id: policy.id, name: 'Globex budget', version: 1, session_budget: null, run_budget: 25, period_budgets: [], denied_actions: [], approval_required_actions: [], rate_limited_actions: [], agent_ids: [] }],
          },
          kill_switches: {
            organization: { engaged: true, reason: 'incident-42', changed_at: expect.any(String) },
            engaged_agents: [{ agent_id: 'g-agent', reason: 'runaway', changed_at: expect.any(String) }],
          },
          approvals: backlog,
          high_risk_blocks: { last_24h: 1, last_7d: 2 },
          enrichment: { total: 6, enriched: 0, pending: 0, failed: 0, skipped: 6, coverage: 0 },
        };
        const reads: any[] = [];
        for (const s of SURFACES) {
          const summary = await resource(s, G, 'platform://compliance/summary');
          expect(Date.parse(summary.generated_at)).toBeGreaterThan(Date.now() - 60_000);
          expect(summary.approvals.oldest_pending.age_ms).toBeGreaterThanOrEqual(0);
          expect(stable(summary), s).toEqual(want);
          reads.push(stable(summary));
        }
        expect(reads[1]).toEqual(reads[0]);
        expect(reads[2]).toEqual(reads[0]);

        // The audit report prompt sees the same controls.
        const stats = await get(p, '/api/v1/interventions/stats', G);
        expect(stats).toMatchObject({ total_interventions: 6, high_risk_blocks: 3 });
        const report = await prompt('rest', G, 'compliance_audit_report');
        expect(stable(report.details)).toMatchObject({
          period: { start_date: null, end_date: null },
          interventions: { total: 6, high_risk_blocks: 3, by_outcome: stats.by_outcome },
          policies: { active: 1, names: ['Globex budget'] },
          kill_switches: { organization_engaged: true, engaged_agents: ['g-agent'] },
          approvals: backlog,
        });
        expect(report.summary).toBe(`6 interventions over all time, 3 high-risk blocks, $${stats.cost_prevented_usd.toFixed(2)} prevented; 1 active policy, 1 pending and 1 expired approvals; organisation kill switch engaged.`);

        await ok('mcp-2026-07-28', G, 'set_kill_switch', { engaged: false, reason: 'resolved' });
        await ok('mcp-2025-11-25', G, 'set_kill_switch', { engaged: false, agent_id: 'g-agent' });
        const released = await resource('rest', G, 'platform://compliance/summary');
        expect(released.kill_switches).toMatchObject({ organization: { engaged: false, reason: 'resolved' }, engaged_agents: [] });
        expect(released.findings).toEqual(want.findings.slice(2));
      });
    });

    // ---------------------------------------------------------------------------------------------------------
    describe('bad input', () => {
      it('an unknown tool_name: 404 unknown_tool over REST, JSON-RPC -32602 over MCP', async () => {
        const p = platform();
        const r = await call(p, 'POST', '/api/v1/mcp/call', { key: p.readKey, body: { tool_name: 'drop_everything', arguments: {} } });
        expect(r.status).toBe(404);
        expect(r.body).toMatchObject({ success: false, data: null, error: { code: 'unknown_tool', message: expect.stringContaining('drop_everything') }, metadata: { execution_time_ms: expect.any(Number) } });
        for (const s of MCP_SURFACES) {
          const e = await rpcError(async () => (await client(s, p.readKey)).callTool({ name: 'drop_everything', arguments: {} }));
          expect(e.code, s).toBe(-32602);
          expect(e.message).toContain('drop_everything');
        }
      });

      it('a body that is not {tool_name, arguments}: 422', async () => {
        const p = platform();
        for (const body of [{}, { tool_name: 'list_runs', arguments: [] }, { tool_name: 'list_runs', colour: 'red' }]) {
          const r = await call(p, 'POST', '/api/v1/mcp/call', { key: p.readKey, body });
          expect(r.status, JSON.stringify(body)).toBe(422);
          expect(r.body.errors.length).toBeGreaterThan(0);
        }
      });

      it.each([
        ['list_runs', { status: 'paused' }, 'arguments.status', ['running', 'completed', 'failed']],
        ['export_ledger', { format: 'xml' }, 'arguments.format', ['json', 'jsonl', 'csv']],
        ['list_interventions', { outcome: ['maybe'] }, 'arguments.outcome', ['blocked', 'escalated', 'approved_after_review', 'rejected_after_review', 'modified', 'warned']],
      ])('%s with %j: 422 invalid_arguments naming %s and its allowed values; isError over MCP', async (name, args, path, allowed) => {
        const p = platform();
        for (const s of SURFACES) {
          const o = await tool(s, p.readKey, name, args);
          expect(o.code, s).toBe('invalid_arguments');
          expect(o.details.errors, s).toEqual([expect.objectContaining({ path, allowed })]);
          expect(o.message).toContain(path);
          expect(o.message).toContain(allowed.join(', '));
        }
      });

      it.each([
        ['get_agent_stats', {}, 'arguments.agent_id'],
        ['list_runs', { limit: 0 }, 'arguments.limit'],
        ['list_runs', { colour: 'red' }, 'arguments.colour'],
        ['get_run', { run_id: 42 }, 'arguments.run_id'],
        ['approve_action', { approval_id: 'apr-x', approver_email: 'not-an-email' }, 'arguments.approver_email'],
        ['create_policy', { run_budget: -1 }, 'arguments.name'],
        // Refused by the owning service rather than by the tool's schema: still named as the argument.
        ['get_intervention_stats', { start_date: 'yesterday' }, 'arguments.start_date'],
        ['export_ledger', { format: 'json', start_date: dayOf(1), end_date: dayOf(3) }, 'arguments.end_date'],
      ])('%s with %j: 422 invalid_arguments naming %s; isError over MCP', async (name, args, path) => {
        const p = platform();
        for (const s of SURFACES) {
          const o = await tool(s, p.writeKey, name, args);
          expect(o.code, s).toBe('invalid_arguments');
          expect(o.details.errors.map((e: any) => e.path), s).toContain(path);
          expect(o.message).toContain(path);
          expect(o.message, s).not.toMatch(/\b(query|body|path)\./);
        }
      });

      it('an invalid list cursor over MCP: JSON-RPC -32602', async () => {
        for (const s of MCP_SURFACES) {
          const c = await client(s, platform().readKey);
          for (const method of ['listTools', 'listResources', 'listResourceTemplates', 'listPrompts']) {
            expect((await rpcError(() => c[method]({ cursor: 'not-a-cursor' }))).code, `${s} ${method}`).toBe(-32602);
          }
        }
      });

      it('an unknown resource URI: 404 over REST (raw and encoded), -32602 with the uri over MCP', async () => {
        const p = platform();
        for (const uri of ['platform://nope', 'platform://stats/nope', 'file:///etc/passwd', `platform://runs/nope-${uniq()}`, `platform://interventions/nope-${uniq()}`, 'platform://ledger/2026-02-30', 'platform://ledger/yesterday']) {
          expect((await call(p, 'GET', `/api/v1/mcp/resources/${encodeURIComponent(uri)}`, { key: p.readKey })).status, uri).toBe(404);
          if (uri.includes('/')) expect((await call(p, 'GET', `/api/v1/mcp/resources/${uri}`, { key: p.readKey })).status, uri).toBe(404);
          for (const s of MCP_SURFACES) {
            const e = await rpcError(async () => (await client(s, p.readKey)).readResource({ uri }));
            expect(e.code, `${s} ${uri}`).toBe(-32602);
            expect(e.data).toEqual({ uri });
          }
        }
      });

      it('an unknown prompt: 404; a missing or invalid required prompt argument: 422; -32602 over MCP', async () => {
        const p = platform();
        const unknown = await call(p, 'POST', '/api/v1/mcp/prompts/write_my_essay', { key: p.readKey, body: { arguments: {} } });
        expect(unknown.status).toBe(404);
        const cases: Array<[string, Record<string, unknown>, string]> = [
          ['create_budget_policy', { agent_id: A }, 'budget_usd'],
          ['analyze_agent_costs', { days: 3 }, 'agent_id'],
          ['create_budget_policy', { budget_usd: 'lots' }, 'budget_usd'],
          ['analyze_agent_costs', { agent_id: A, days: 0 }, 'days'],
        ];
        for (const [name, args, field] of cases) {
          const r = await call(p, 'POST', `/api/v1/mcp/prompts/${name}`, { key: p.readKey, body: { arguments: args } });
          expect(r.status, `${name} ${JSON.stringify(args)}`).toBe(422);
          expect(r.body.errors.map((e: any) => e.path)).toEqual([`body.arguments.${field}`]);
        }
        for (const s of MCP_SURFACES) {
          const c = await client(s, p.readKey);
          expect((await rpcError(() => c.getPrompt({ name: 'write_my_essay', arguments: {} }))).code, s).toBe(-32602);
          for (const [name, args, field] of cases) {
            const e = await rpcError(() => c.getPrompt({ name, arguments: Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)])) }));
            expect(e.code, `${s} ${name}`).toBe(-32602);
            expect(e.message).toContain(field);
          }
        }
      });

      it('a read key calling a tool that changes state: 403 forbidden over REST, isError over MCP, and nothing changes', async () => {
        const p = platform();
        const policy = (await get(p, '/api/v1/policies?limit=1')).policies[0];
        const snapshot = async () => ({
          policies: (await get(p, '/api/v1/policies?limit=1')).total,
          policy: await get(p, `/api/v1/policies/${policy.id}`),
          approval: (await get(p, `/api/v1/approvals/apr-${IA1}`)).status,
          outcome: (await get(p, `/api/v1/interventions/${IA1}`)).outcome,
          switches: await get(p, '/api/v1/kill-switches'),
        });
        const before = await snapshot();
        expect(before).toMatchObject({ approval: 'pending', outcome: 'escalated', switches: { organization: { engaged: false }, agents: [] } });
        const calls: Array<[string, Record<string, unknown>]> = [
          ['create_policy', { name: 'not allowed', run_budget: 1 }],
          ['approve_action', { approval_id: `apr-${IA1}`, approver_email: 'reader@acme.test' }],
          ['reject_action', { approval_id: `apr-${IA1}`, approver_email: 'reader@acme.test' }],
          ['set_kill_switch', { engaged: true, reason: 'reader' }],
          ['set_kill_switch', { engaged: true, agent_id: A }],
          ['update_policy', { policy_id: policy.id, run_budget: 0.01, enabled: false }],
        ];
        for (const s of SURFACES) {
          for (const [name, args] of calls) {
            const o = await tool(s, p.readKey, name, args);
            expect(o.code, `${s} ${name}`).toBe('forbidden');
            expect(o.message).toMatch(/write key/);
          }
        }
        expect(await snapshot()).toEqual(before);
        expect(await p.streamEventTypes(`intervention-${IA1}`)).toEqual(['InterventionRecorded']);
      });

      it("another organisation's ids in the arguments: not found, nothing leaks, nothing changes", async () => {
        const p = platform();
        const G = p.otherOrgWriteKey;
        // What acme knows about these ids; a message may repeat the id it was given, nothing more.
        const secrets = [A, R1, R2, 'wire_transfer', 'drop_table', 'above the threshold', '8.25'];
        const leaked = (text: string, args: object) => secrets.filter((x) => !JSON.stringify(args).includes(x) && text.includes(x));
        for (const s of SURFACES) {
          for (const [name, args] of [
            ['get_run', { run_id: R1 }],
            ['get_intervention', { id: IA1 }],
            ['get_agent_stats', { agent_id: A }],
            ['approve_action', { approval_id: `apr-${IA1}`, approver_email: 'mallory@globex.test' }],
            ['reject_action', { approval_id: `apr-${IA1}`, approver_email: 'mallory@globex.test' }],
          ] as const) {
            const o = await tool(s, G, name, args);
            expect(o.code, `${s} ${name}`).toBe('not_found');
            expect(leaked(o.message, args), `${s} ${name}: ${o.message}`).toEqual([]);
          }
          expect(await ok(s, G, 'list_runs', { agent_id: A })).toMatchObject({ runs: [], total: 0 });
          expect(await ok(s, G, 'list_interventions', { agent_id: A })).toMatchObject({ interventions: [], total: 0 });
          expect(await ok(s, G, 'export_ledger', { format: 'json', agent_id: A })).toEqual({ inline: true, format: 'json', row_count: 0, entries: [] });
          expect((await ok(s, G, 'get_pending_approvals')).approvals.map((a: any) => a.id)).toEqual([gApproval.id]);
        }
        for (const uri of [`platform://runs/${R1}`, `platform://interventions/${IA1}`]) {
          const r = await call(p, 'GET', `/api/v1/mcp/resources/${encodeURIComponent(uri)}`, { key: G });
          expect(r.status, uri).toBe(404);
          expect(leaked(JSON.stringify(r.body), [uri])).toEqual([]);
          for (const s of MCP_SURFACES) {
            const e = await rpcError(async () => (await client(s, G)).readResource({ uri }));
            expect(e.code).toBe(-32602);
            expect(leaked(`${e.message} ${JSON.stringify(e.data)}`, [uri])).toEqual([]);
          }
        }
        expect((await call(p, 'POST', '/api/v1/mcp/prompts/analyze_agent_costs', { key: G, body: { arguments: { agent_id: A } } })).status).toBe(404);
        expect((await get(p, `/api/v1/approvals/apr-${IA1}`)).status).toBe('pending');
        expect(await p.streamEventTypes(`intervention-${IA1}`)).toEqual(['InterventionRecorded']);
      });

      describe('at the MCP endpoint: a proper JSON-RPC or HTTP 4xx error, never a 5xx', () => {
        const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
        /** POST `body` (text) to the MCP endpoint with the write key and `headers`. */
        const post = async (body: string, headers: Record<string, string> = {}) => {
          const res = await fetch(`${platform().url}/api/v1/mcp`, {
            method: 'POST',
            headers: { authorization: `Bearer ${platform().writeKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
            body,
          });
          const text = await res.text();
          return { status: res.status, contentType: res.headers.get('content-type'), text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
        };
        const modern = (method: string, id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: META } });
        const MODERN = { 'mcp-protocol-version': '2026-07-28' };

        it('a well-formed 2026-07-28 request is answered (the control case)', async () => {
          const r = await post(modern('tools/list'), { ...MODERN, 'mcp-method': 'tools/list' });
          expect(r.status).toBe(200);
          expect(r.json.result.tools.map((t: any) => t.name)).toEqual(expect.arrayContaining(ALL_TOOLS));
          expect(r.json.result.ttlMs).toBeGreaterThan(0);
          const discover = await post(modern('server/discover'), { ...MODERN, 'mcp-method': 'server/discover' });
          expect(discover.status).toBe(200);
          expect(discover.json.result.supportedVersions).toContain('2026-07-28');
          expect(Object.keys(discover.json.result.capabilities)).toEqual(expect.arrayContaining(['tools', 'resources', 'prompts']));
        });

        it('a JSON-RPC batch of 2026-07-28 requests: 400 with JSON-RPC -32600', async () => {
          const r = await post(`[${modern('tools/list', 1)},${modern('prompts/list', 2)}]`, MODERN);
          expect(r.status).toBe(400);
          expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batch/i) } });
        });

        // The SDK's legacy stateless leg would answer such a batch 200; the protocol layer refuses it first, since
        // 2025-06-18 and later revisions have no batching.
        it('a JSON-RPC batch under MCP-Protocol-Version 2025-11-25 (batching removed in 2025-06-18): 400 with JSON-RPC -32600', async () => {
          const r = await post('[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]', { 'mcp-protocol-version': '2025-11-25' });
          expect(r.status).toBe(400);
          expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batch/i) } });
        });

        it('a batch holding an initialize: 400 with JSON-RPC -32600', async () => {
          const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
          const r = await post(JSON.stringify([init, { jsonrpc: '2.0', id: 2, method: 'tools/list' }]));
          expect(r.status).toBe(400);
          expect(r.json.error.code).toBe(-32600);
        });

        it.each([
          ['truncated JSON', '{"jsonrpc":"2.0",', -32700],
          ['an empty body', '', -32700],
          ['not JSON at all', 'hello', -32700],
          ['JSON that is not JSON-RPC', '{"hello":1}', -32600],
        ])('a malformed request (%s): 400 with JSON-RPC %i', async (_what, body, code) => {
          const r = await post(body);
          expect(r.status).toBe(400);
          expect(r.contentType).toMatch(/^application\/json/);
          expect(r.json).toMatchObject({ jsonrpc: '2.0', error: { code } });
        });

        it('a wrong MCP-Protocol-Version: 400 with a JSON-RPC error, on the 2026-07-28 wire and on the legacy wire', async () => {
          const mismatch = await post(modern('tools/list'), { 'mcp-protocol-version': '1999-01-01', 'mcp-method': 'tools/list' });
          expect(mismatch.status).toBe(400);
          expect(mismatch.json.error.code).toBeLessThan(-32000);
          expect(mismatch.json.error.message).toContain('1999-01-01');
          const legacy = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { 'mcp-protocol-version': '1999-01-01' });
          expect(legacy.status).toBe(400);
          expect(legacy.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.stringMatching(/Unsupported protocol version: 1999-01-01/) } });
          const unknownModern = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }), { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' });
          expect(unknownModern.status).toBeGreaterThanOrEqual(400);
          expect(unknownModern.status).toBeLessThan(500);
          expect(unknownModern.json.error.code).toEqual(expect.any(Number));
        });

        it('a bad Origin (DNS rebinding): 403 with a JSON-RPC error; a localhost Origin is served', async () => {
          for (const origin of ['http://evil.example', 'https://attacker.test:8443', 'null']) {
            const r = await post(modern('tools/list'), { ...MODERN, 'mcp-method': 'tools/list', origin });
            expect(r.status, origin).toBe(403);
            expect(r.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.stringMatching(/origin/i) } });
          }
          const local = await post(modern('tools/list'), { ...MODERN, 'mcp-method': 'tools/list', origin: 'http://localhost:3000' });
          expect(local.status).toBe(200);
        });

        it('other methods and media types: 405 for GET and PUT, 415 for a body that is not JSON', async () => {
          const p = platform();
          for (const method of ['GET', 'PUT', 'DELETE']) {
            const res = await fetch(`${p.url}/api/v1/mcp`, { method, headers: { authorization: `Bearer ${p.writeKey}`, accept: 'application/json, text/event-stream' } });
            expect(res.status, method).toBe(405);
            expect(((await res.json()) as any).error.code).toEqual(expect.any(Number));
          }
          const r = await post(modern('tools/list'), { ...MODERN, 'content-type': 'text/plain' });
          expect(r.status).toBe(415);
          expect(r.json.error.code).toEqual(expect.any(Number));
        });
      });

      it('no key or an unknown key: 401 on /api/v1/mcp, /api/v1/mcp/* and the un-prefixed /mcp/* lists', async () => {
        const p = platform();
        const requests: Array<[string, string]> = [
          ['POST', '/api/v1/mcp'],
          ['GET', '/api/v1/mcp/tools'],
          ['GET', '/api/v1/mcp/resources'],
          ['GET', '/api/v1/mcp/prompts'],
          ['POST', '/api/v1/mcp/call'],
          ['GET', `/api/v1/mcp/resources/${encodeURIComponent('platform://stats/dashboard')}`],
          ['POST', '/api/v1/mcp/prompts/review_pending_approvals'],
          ['GET', '/mcp/tools'],
          ['GET', '/mcp/resources'],
          ['GET', '/mcp/prompts'],
        ];
        for (const [method, path] of requests) {
          for (const key of [undefined, 'agp_not_a_real_key_000']) {
            const r = await call(p, method, path, { key, body: method === 'POST' ? { tool_name: 'list_runs', arguments: {} } : undefined });
            expect(r.status, `${method} ${path} ${key ?? 'no key'}`).toBe(401);
            expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
          }
        }
      });
    });
  },
  { env: { AGP_APPROVAL_SWEEP_MS: '200' } },
);
