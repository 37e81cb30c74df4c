import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, eventually, expectProblem, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';
import { Receiver, type Received } from '../support/webhook-receiver.js';

const uniq = () => Math.random().toString(36).slice(2, 10);
const BASE = '/api/v1/webhooks';

const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const parsed = (g: Received) => JSON.parse(g.body) as { type: string; data: any; organization_id: string };

/**
 * Alerts from real activity, in both run modes, to a real receiver verifying every delivery with `standardwebhooks`:
 * `budget.threshold` from the fleet-wide budget counters (the decision API's reserving decisions draw from them),
 * once per percentage per budget and period and filtered by `budget_thresholds`; `block_rate.spike` from ingested
 * ledger entries, once per spike; a policy's `auto_kill_switch` engaging the agent's kill switch as the rule (sent as
 * `kill_switch.changed`), which a person releases. Source: docs/notifications.md (Alerts; Automatic kill switch).
 */
describeModes(
  'alerts and the automatic kill switch',
  (platform) => {
    const subscribe = async (p: BootedPlatform, path: string, events: string[], extra: Record<string, unknown> = {}) => {
      const r = await call(p, 'POST', BASE, { key: p.adminKey, body: { url: `${receiver.url}${path}`, events, ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      receiver.secrets.set(path, [r.body.secret]);
      return r.body as { id: string; secret: string };
    };
    /** Ingest one run of `agent` with `blocked` blocked and `ok` successful ledger entries. */
    const ledger = async (p: BootedPlatform, agent: string, blocked: number, ok: number) => {
      const run = `run-${uniq()}`;
      const now = new Date().toISOString();
      const ev = (type: string, body: Record<string, unknown>) => ({ id: `ev-${uniq()}`, type, timestamp: now, body });
      const batch = [
        ev('run.start', { run_id: run, agent_id: agent, started_at: now }),
        ...Array.from({ length: blocked + ok }, (_, i) => ev('action.record', { run_id: run, agent_id: agent, action_name: 'send_email', status: i < blocked ? 'blocked' : 'success', timestamp: now })),
      ];
      const r = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch } });
      expect(r.status, JSON.stringify(r.body)).toBe(207);
      expect(r.body.errors).toEqual([]);
    };
    const delivered = (p: BootedPlatform, hook: string, n: number) =>
      eventually(async () => {
        const r = await call(p, 'GET', `${BASE}/${hook}/deliveries`, { key: p.adminKey });
        return r.body.total === n && r.body.deliveries.every((d: { status: string }) => d.status === 'delivered') ? r.body.deliveries : null;
      }, 20_000);

    it('refuses a bad auto_kill_switch and a bad block_rate rule with 422 naming each field, writing nothing', async () => {
      const p = platform();
      const totals = async () => [(await call(p, 'GET', '/api/v1/policies', { key: p.readKey })).body.total, (await call(p, 'GET', BASE, { key: p.adminKey })).body.total];
      const before = await totals();
      const bad = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `akb-${uniq()}`, auto_kill_switch: { block_rate: 1.5, window_seconds: 5, min_actions: 0 } } });
      expectProblem(bad, 422, ['body.auto_kill_switch.block_rate', 'body.auto_kill_switch.window_seconds', 'body.auto_kill_switch.min_actions']);
      const extra = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `akb-${uniq()}`, auto_kill_switch: { block_rate: 0.5, speed: 1 } } });
      expectProblem(extra, 422, ['body.auto_kill_switch.speed']);
      const hook = await call(p, 'POST', BASE, { key: p.adminKey, body: { url: `${receiver.url}/bad`, events: ['block_rate.spike'], filter: { block_rate: { threshold: 0, window_seconds: 1e9 } } } });
      expectProblem(hook, 422, ['body.filter.block_rate.threshold', 'body.filter.block_rate.window_seconds']);
      const thresholds = await call(p, 'POST', BASE, { key: p.adminKey, body: { url: `${receiver.url}/bad`, events: ['budget.threshold'], filter: { budget_thresholds: [75] } } });
      expectProblem(thresholds, 422, ['body.filter.budget_thresholds']);
      expect(await totals()).toEqual(before);
      // The same field through the platform's MCP tools.
      const tool = (tool_name: string, args: Record<string, unknown>) => call(p, 'POST', '/api/v1/mcp/call', { key: p.writeKey, body: { tool_name, arguments: args } });
      const made = await tool('create_policy', { name: `akb-tool-${uniq()}`, auto_kill_switch: { block_rate: 0.9 } });
      expect(made.body).toMatchObject({ success: true, data: { auto_kill_switch: { block_rate: 0.9, window_seconds: 300, min_actions: 50 } } });
      const cleared = await tool('update_policy', { policy_id: made.body.data.id, auto_kill_switch: null });
      expect(cleared.body).toMatchObject({ success: true, data: { version: 2, auto_kill_switch: null } });
    });

    it('sends budget.threshold once per percentage of a period budget, as each subscription filters it', async () => {
      const p = platform();
      const all = `/budget-all-${uniq()}`;
      const top = `/budget-100-${uniq()}`;
      const agent = `budget-agent-${uniq()}`;
      const allHook = await subscribe(p, all, ['budget.threshold']);
      const topHook = await subscribe(p, top, ['budget.threshold'], { filter: { budget_thresholds: [100], agent_ids: [agent] } });
      const policy = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `budget-${uniq()}`, agent_ids: [agent], period_budgets: [{ scope: 'agent', period: 'day', max_usd: 10 }] } });
      expect(policy.status).toBe(201);
      const spend = (usd: number) => call(p, 'POST', '/api/v1/policies/evaluate', { key: p.writeKey, body: { agent_id: agent, action_name: 'buy', estimated_cost_usd: usd, reserve: true } });
      expect((await spend(3)).body.decision).toBe('allow'); // 30 %
      expect((await spend(3)).body.decision).toBe('allow'); // 60 %: passes 50
      expect((await spend(4)).body.decision).toBe('allow'); // 100 %: passes 80 and 100
      expect((await spend(1)).body.decision).toBe('budget_exceeded'); // nothing drawn, nothing sent
      const allLog = await delivered(p, allHook.id, 3);
      const topLog = await delivered(p, topHook.id, 1);
      const mine = receiver.at(all).map(parsed).filter((e) => e.data.policy_id === policy.body.id);
      expect(mine.map((e) => e.data.threshold_percent).sort()).toEqual([100, 50, 80]);
      for (const g of receiver.at(all)) expect(g.verifiedWith).toEqual([allHook.secret]);
      expect(mine.find((e) => e.data.threshold_percent === 50)!.data).toMatchObject({ limit: 'period_budget:agent:day', scope_key: agent, agent_id: agent, limit_usd: 10, spent_usd: 6, window_start: expect.any(String), window_end: expect.any(String) });
      expect(mine.find((e) => e.data.threshold_percent === 100)!.data.spent_usd).toBe(10);
      expect(receiver.at(top).map(parsed).map((e) => [e.type, e.data.threshold_percent])).toEqual([['budget.threshold', 100]]);
      expect(new Set([...allLog, ...topLog].map((d: { id: string }) => d.id)).size).toBe(4);
    });

    it('sends block_rate.spike when an agent’s share of blocked ledger entries passes the rule, once per spike', async () => {
      const p = platform();
      const path = `/spike-${uniq()}`;
      const agent = `spiky-${uniq()}`;
      const calm = `calm-${uniq()}`;
      const hook = await subscribe(p, path, ['block_rate.spike'], { filter: { block_rate: { threshold: 0.5, window_seconds: 600, min_actions: 10 } } });
      await ledger(p, calm, 2, 18); // 10 %: no spike
      await ledger(p, agent, 4, 4); // 50 % of 8: too few, and not above
      await ledger(p, agent, 6, 0); // 10 of 14: a spike
      const log = await delivered(p, hook.id, 1);
      await ledger(p, agent, 3, 0); // still spiking: not sent again
      await ledger(p, calm, 1, 5);
      // Time for the later ledger entries to be counted before asserting nothing more was sent.
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await call(p, 'GET', `${BASE}/${hook.id}/deliveries`, { key: p.adminKey })).body.total).toBe(1);
      const got = receiver.at(path);
      expect(got).toHaveLength(1);
      expect(got[0].verifiedWith).toEqual([hook.secret]);
      expect(got[0].headers['webhook-id']).toBe(log[0].id);
      expect(parsed(got[0])).toMatchObject({ type: 'block_rate.spike', data: { agent_id: agent, stopped: 10, decisions: 14, window_seconds: 600, threshold: 0.5, min_actions: 10 } });
      expect(parsed(got[0]).data.block_rate).toBeCloseTo(10 / 14, 5);
    });

    it('engages the agent’s kill switch as the auto_kill_switch rule (sent as kill_switch.changed); a person releases it', async () => {
      const p = platform();
      const path = `/autokill-${uniq()}`;
      const agent = `runaway-${uniq()}`;
      const hook = await subscribe(p, path, ['kill_switch.changed'], { filter: { agent_ids: [agent] } });
      const policy = await call(p, 'POST', '/api/v1/policies', {
        key: p.writeKey,
        body: { name: `auto-kill-${uniq()}`, agent_ids: [agent], denied_actions: ['drop_table'], auto_kill_switch: { block_rate: 0.5, window_seconds: 300, min_actions: 6 } },
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      expect(policy.body.auto_kill_switch).toEqual({ block_rate: 0.5, window_seconds: 300, min_actions: 6 });
      expect((await call(p, 'GET', `/api/v1/policies/${policy.body.id}`, { key: p.readKey })).body.auto_kill_switch).toEqual({ block_rate: 0.5, window_seconds: 300, min_actions: 6 });
      // A plain evaluate is a read: counts nothing, however many stop.
      for (let i = 0; i < 8; i++) expect((await call(p, 'POST', '/api/v1/policies/evaluate', { key: p.writeKey, body: { agent_id: agent, action_name: 'drop_table' } })).body.decision).toBe('block');
      await new Promise((r) => setTimeout(r, 300));
      expect((await call(p, 'GET', `/api/v1/agents/${agent}/governance`, { key: p.readKey })).body.kill_switches.agents).toEqual([]);
      // Governing decisions: 2 allowed and 3 blocked reserving decisions, then 2 blocked ledger entries: 5 of 7 stopped.
      const enforce = (action: string) => call(p, 'POST', '/api/v1/policies/evaluate', { key: p.writeKey, body: { agent_id: agent, action_name: action, reserve: true } });
      for (const a of ['read', 'read', 'drop_table', 'drop_table', 'drop_table']) await enforce(a);
      await ledger(p, agent, 2, 0);
      const engaged = await eventually(async () => {
        const r = await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey });
        return r.body.agents.find((s: { agent_id: string }) => s.agent_id === agent) ?? null;
      }, 20_000);
      expect(engaged).toMatchObject({ engaged: true, changed_by: `rule:auto_kill_switch:${policy.body.id}`, actor_name: policy.body.name });
      expect(engaged.reason).toContain('auto_kill_switch');
      expect(engaged.reason).toContain(policy.body.id);
      expect((await enforce('read')).body.decision).toBe('block'); // the switch stops it now
      await delivered(p, hook.id, 1);
      expect(parsed(receiver.at(path)[0])).toMatchObject({ type: 'kill_switch.changed', data: { scope: 'agent', agent_id: agent, engaged: true, changed_by: `rule:auto_kill_switch:${policy.body.id}` } });
      expect(receiver.at(path)[0].verifiedWith).toEqual([hook.secret]);
      // A person releases it; the decisions that tripped it do not trip it again.
      const released = await call(p, 'PUT', `/api/v1/kill-switches/agents/${agent}`, { key: p.writeKey, body: { engaged: false, reason: 'looked into it' } });
      expect(released.body).toMatchObject({ engaged: false });
      expect((await enforce('read')).body.decision).toBe('allow');
      await new Promise((r) => setTimeout(r, 500));
      const after = await call(p, 'GET', '/api/v1/kill-switches', { key: p.readKey });
      expect(after.body.agents.find((s: { agent_id: string }) => s.agent_id === agent)).toBeUndefined();
    });
  },
  {
    env: {
      AGP_OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      AGP_SECRETS_KEY: randomBytes(32).toString('base64'),
      AGP_WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300,300,500,1000,2000,4000,8000,15000',
      AGP_WEBHOOK_POLL_MS: '50',
    },
  },
);
