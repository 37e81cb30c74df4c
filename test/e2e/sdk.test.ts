/**
 * The agent SDK (`@agp/sdk`, from source: the repository resolves it to packages/sdk/src) against a real embedded platform over HTTP: allow, block (throw and
 * `onBlocked: 'return'`), warn, escalate approved and rejected through the approvals API (resumed by the push channel:
 * the fallback poll is set to a minute), a kill switch engaged through the API blocking the next act (20 trials) and a
 * policy PATCH applying through the push channel (the snapshot poll set to a minute), the agent registered by connect (the registry
 * and its kill switch know it at once), a run's cost counting only what ran, a garbled push channel (dropped, resumed, polled), the platform unreachable after a snapshot (acts go on
 * under the cached policies; every report arrives afterwards, counted), bad arguments (TypeError naming the field),
 * fail modes without a snapshot, and an answer the SDK does not understand (fails closed naming the server's version).
 * Source: docs/sdk.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer, connect as tcpConnect, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionBlockedError, ApprovalRejectedError, Governor } from '@agp/sdk';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { describeModes } from '../support/modes.js';

/** The platform of the mode being run (set by each mode's first hook). */
let p: BootedPlatform;
const govs: Governor[] = [];
const uniq = () => Math.random().toString(36).slice(2, 10);

/** Connect a governor for a fresh agent (tracked for cleanup). */
async function connect(over: Partial<Parameters<typeof Governor.connect>[0]> = {}) {
  const gov = await Governor.connect({ url: p.url, key: p.writeKey, agentId: `sdk-${uniq()}`, onReportError: () => undefined, ...over });
  govs.push(gov);
  return gov;
}
/** Create a policy through the API. */
async function policy(body: Record<string, unknown>) {
  const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `sdk-${uniq()}`, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string };
}
/** The run's ledger entries, once `n` are stored. */
async function ledger(runId: string, n: number) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${encodeURIComponent(runId)}`, { key: p.readKey });
    return r.status === 200 && r.body.actions.length >= n ? (r.body.actions as any[]) : null;
  });
}
/** A fresh agent whose policy requires approval for `action`, its connected governor and a run. */
async function gated(action: string, over: Partial<Parameters<typeof Governor.connect>[0]> = {}) {
  const agentId = `sdk-${uniq()}`;
  await policy({ agent_ids: [agentId], approval_required_actions: [action] });
  const gov = await connect({ agentId, ...over });
  return { agentId, gov, run: gov.startRun() };
}
/** The agent's pending approvals (newest first), once `n` are listed. */
async function pendingApprovals(agentId: string, n = 1) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/approvals?status=pending&agent_id=${agentId}`, { key: p.readKey });
    return r.body.total === n ? (r.body.approvals as any[]) : null;
  });
}
/** The agent's interventions, once `n` are stored. */
async function interventions(agentId: string, n: number) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${encodeURIComponent(agentId)}&limit=1000`, { key: p.readKey });
    return r.status === 200 && r.body.total >= n ? (r.body.interventions as any[]) : null;
  });
}

describeModes('@agp/sdk', (platform, mode) => {
  beforeAll(() => {
    p = platform();
  });
  afterAll(async () => {
    for (const g of govs.splice(0)) await g.close({ timeoutMs: 2000 }).catch(() => undefined);
  });

  describe('run.act against the live platform', () => {
    it('allow: executes, and records the ledger entry with inputs, outputs, estimated and actual cost, duration and status', async () => {
      const gov = await connect();
      const run = gov.startRun({ sessionId: 'sess-1' });
      const out = await run.act(
        'lookup_invoice',
        { invoice: 'inv_1' },
        async (args, ctx) => {
          ctx.reportCost(0.013);
          return { found: args.invoice, total: 42 };
        },
        { estimatedCostUsd: 0.02, intent: 'find the invoice' },
      );
      expect(out).toEqual({ found: 'inv_1', total: 42 });
      await run.end({ status: 'completed' });
      await gov.close();
      const [entry] = await ledger(run.runId, 1);
      expect(entry).toMatchObject({ action_name: 'lookup_invoice', status: 'success', inputs: { invoice: 'inv_1' }, outputs: { found: 'inv_1', total: 42 }, cost_usd: 0.02, actual_cost_usd: 0.013, agent_id: gov.agentId });
      expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
      const r = await eventually(async () => {
        const res = await call(p, 'GET', `/api/v1/runs/${run.runId}`, { key: p.readKey });
        return res.body.status === 'completed' ? res.body : null;
      });
      expect(r.status).toBe('completed');
    });

    it('block: throws ActionBlockedError with the decision, records the intervention with every field; onBlocked return gives {blocked, decision}', async () => {
      const gov = await connect();
      const pol = await policy({ agent_ids: [gov.agentId], denied_actions: ['drop_table'] });
      await gov.close();
      const gov2 = await connect({ agentId: gov.agentId });
      const run = gov2.startRun();
      let ran = false;
      const err = await run.act('drop_table', { table: 'users' }, () => (ran = true), { estimatedCostUsd: 3, intent: 'clean up' }).catch((e) => e);
      expect(err).toBeInstanceOf(ActionBlockedError);
      expect(ran).toBe(false);
      expect(err.decision).toMatchObject({ decision: 'block', intervention_type: 'hard_block', policy_id: pol.id, policy_name: pol.name, risk_level: 'high', cost_prevented_usd: 3 });
      expect(err.decision.reason).toContain('drop_table');
      const returned = await run.act('drop_table', { table: 'orders' }, () => (ran = true), { onBlocked: 'return' });
      expect(returned).toMatchObject({ blocked: true, decision: { decision: 'block', policy_id: pol.id } });
      expect(ran).toBe(false);
      await gov2.close();
      const recs = await interventions(gov.agentId, 2);
      const rec = recs.find((r) => r.original_inputs.table === 'users');
      expect(rec).toMatchObject({
        type: 'hard_block', outcome: 'blocked', action_name: 'drop_table', agent_id: gov.agentId, run_id: run.runId, policy_id: pol.id, policy_name: pol.name,
        risk_level: 'high', estimated_cost_usd: 3, cost_prevented_usd: 3, agent_intent: 'clean up', original_inputs: { table: 'users' }, modified_inputs: null,
      });
      expect(rec.reason).toContain('denied');
      const entries = await ledger(run.runId, 2);
      expect(entries.map((e) => e.status)).toEqual(['blocked', 'blocked']);
    });

    it('warn: executes and records a warning intervention (run budget past 80%)', async () => {
      const agentId = `sdk-${uniq()}`;
      await policy({ agent_ids: [agentId], run_budget: 10 });
      const gov = await connect({ agentId });
      const run = gov.startRun();
      expect(await run.act('search', { q: 'a' }, () => 'ok', { estimatedCostUsd: 9 })).toBe('ok');
      await gov.close();
      const [rec] = await interventions(agentId, 1);
      expect(rec).toMatchObject({ type: 'warning', outcome: 'warned', action_name: 'search', run_id: run.runId, estimated_cost_usd: 9, cost_prevented_usd: 0 });
      expect((await ledger(run.runId, 1))[0]).toMatchObject({ status: 'success', outputs: 'ok' });
    });

    it('rate_limited and budget_exceeded from the run state the SDK keeps (executed calls, spend with actual costs)', async () => {
      const agentId = `sdk-${uniq()}`;
      await policy({ agent_ids: [agentId], rate_limits: { poll: { max_calls: 2, window_seconds: 60 } }, run_budget: 1 });
      const gov = await connect({ agentId, onBlocked: 'return' });
      const run = gov.startRun();
      expect(await run.act('poll', {}, () => 'a')).toBe('a');
      expect(await run.act('poll', {}, () => 'b')).toBe('b');
      expect(await run.act('poll', {}, () => 'c')).toMatchObject({ blocked: true, decision: { decision: 'rate_limited', intervention_type: 'rate_limited' } });
      // Estimated 0.9, actually 0.1: the run has spent 0.1, so 0.8 more fits and 0.95 more does not.
      expect(await run.act('llm', {}, (_a, ctx) => (ctx.reportCost(0.1), 'x'), { estimatedCostUsd: 0.9 })).toBe('x');
      const over = await run.act('llm', {}, () => 'y', { estimatedCostUsd: 0.95 });
      expect(over).toMatchObject({ blocked: true, decision: { decision: 'budget_exceeded', cost_prevented_usd: 0.95 } });
      await gov.close();
      // Three interventions: the rate limit, the 80 % budget warning of the 0.9 estimate, the budget.
      const types = (await interventions(agentId, 3)).map((r) => r.type).sort();
      expect(types).toEqual(['budget_exceeded', 'rate_limited', 'warning']);
    });

    it('escalate: waits for the human; approved through the API, then executes; the approval is bound to the exact arguments', async () => {
      // The approval's fallback poll is a minute away: resuming sooner shows the push channel woke it.
      const { agentId, gov, run } = await gated('wire_transfer', { approvalPollMs: 60_000 });
      let ran: unknown = null;
      const pending = run.act('wire_transfer', { to: 'acme', amount: 950 }, (a) => (ran = a) && 'sent', { estimatedCostUsd: 1, intent: 'pay the supplier' });
      const [approval] = await pendingApprovals(agentId);
      expect(approval).toMatchObject({ action_name: 'wire_transfer', original_inputs: { to: 'acme', amount: 950 }, agent_intent: 'pay the supplier', run_id: run.runId });
      expect(ran).toBeNull();
      let ranAt = 0;
      void pending.then(() => (ranAt = performance.now()));
      const t0 = performance.now();
      const ok = await call(p, 'POST', `/api/v1/approvals/${approval.id}/approve`, { key: p.writeKey, body: { approver_email: 'cfo@example.com' } });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(await pending).toBe('sent');
      // Woken by the push channel's approval.decided. How fast is `pnpm bench sdk`'s to measure (row d), not a test's.
      console.log(`[sdk ${mode}] approve -> escalated act resumed: ${(ranAt - t0).toFixed(1)} ms`);
      expect(ranAt - t0).toBeLessThan(30_000);
      expect(ran).toEqual({ to: 'acme', amount: 950 });
      await gov.close();
    });

    it('escalate rejected → ApprovalRejectedError, nothing executed', async () => {
      const { agentId, gov, run } = await gated('delete_account');
      let ran = false;
      const pending = run.act('delete_account', { id: 7 }, () => (ran = true)).catch((e) => e);
      const [approval] = await pendingApprovals(agentId);
      await call(p, 'POST', `/api/v1/approvals/${approval.id}/reject`, { key: p.writeKey, body: { approver_email: 'sec@example.com', notes: 'no' } });
      const err = await pending;
      expect(err).toBeInstanceOf(ApprovalRejectedError);
      expect(err).toMatchObject({ status: 'rejected', approvalId: approval.id, approver: { email: 'sec@example.com', notes: 'no' } });
      expect(ran).toBe(false);
      // A call nobody decides times out.
      const timedOut = await run.act('delete_account', { id: 8 }, () => (ran = true), { approvalTimeoutMs: 300 }).catch((e) => e);
      expect(timedOut).toMatchObject({ name: 'ApprovalRejectedError', status: 'timeout' });
      expect(ran).toBe(false);
      await gov.close();
    });

    it('approving one call never approves another, even with the same arguments', async () => {
      const { agentId, gov, run } = await gated('pay');
      let ran = 0;
      const calls = [1, 2].map(() => run.act('pay', { amount: 5 }, () => ++ran).catch((e) => e));
      const approvals = await pendingApprovals(agentId, 2);
      await call(p, 'POST', `/api/v1/approvals/${approvals[0].id}/approve`, { key: p.writeKey, body: { approver_email: 'a@example.com' } });
      await eventually(async () => ran === 1);
      await new Promise((s) => setTimeout(s, 300));
      expect(ran).toBe(1);
      await call(p, 'POST', `/api/v1/approvals/${approvals[1].id}/reject`, { key: p.writeKey, body: { approver_email: 'a@example.com' } });
      const results = await Promise.all(calls);
      expect(results.filter((r) => r === 1)).toHaveLength(1);
      expect(results.find((r) => r !== 1)).toMatchObject({ name: 'ApprovalRejectedError', status: 'rejected', approvalId: approvals[1].id });
      expect(ran).toBe(1);
      await gov.close();
    });

    it('push channel: a kill switch engaged through the API blocks the next act of a connected agent (20 trials); a policy PATCH applies through it', async () => {
      // The snapshot poll is a minute away: a change seen sooner came through the push channel. How fast is
      // `pnpm bench sdk`'s to measure (row c), not a test's.
      const gov = await connect({ pollIntervalMs: 60_000, actions: [{ name: 'send_email', parameters: { type: 'object' } }, { name: 'drop_table', parameters: { type: 'object' } }] });
      await eventually(async () => (await call(p, 'GET', `/api/v1/agents/${gov.agentId}`, { key: p.readKey })).status === 200);
      await eventually(async () => gov.status().channel.state === 'connected');
      const run = gov.startRun();
      /** ms from just before `write` until an act of `action` is (blocked=true) or is not (false) stopped. */
      const until = async (write: () => Promise<{ status: number }>, action: string, blocked: boolean) => {
        const t0 = performance.now();
        const r = await write();
        expect(r.status).toBe(200);
        for (;;) {
          const res = await run.act(action, {}, () => 1, { onBlocked: 'return' });
          if ((typeof res === 'object') === blocked) return performance.now() - t0;
          if (performance.now() - t0 > 5000) throw new Error(`${action} not ${blocked ? 'blocked' : 'allowed'} within 5 s`);
          await new Promise((s) => setTimeout(s, 2));
        }
      };
      const ks = (engaged: boolean) => () => call(p, 'PUT', `/api/v1/kill-switches/agents/${gov.agentId}`, { key: p.writeKey, body: { engaged, reason: 'runaway' } });
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        times.push(await until(ks(true), 'send_email', true));
        await until(ks(false), 'send_email', false);
        await new Promise((s) => setTimeout(s, Math.random() * 100));
      }
      const blocked = await run.act('send_email', {}, () => 1, { onBlocked: 'return' });
      expect(blocked).toBe(1);
      const sorted = [...times].sort((a, b) => a - b);
      const pct = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
      console.log(`[sdk ${mode}] kill switch PUT -> next act blocked: p50 ${pct(0.5).toFixed(1)} ms, p99 ${pct(0.99).toFixed(1)} ms over 20 trials`);
      expect(times).toHaveLength(20);
      await call(p, 'PUT', `/api/v1/kill-switches/agents/${gov.agentId}`, { key: p.writeKey, body: { engaged: true, reason: 'runaway' } });
      await eventually(async () => typeof (await run.act('send_email', {}, () => 1, { onBlocked: 'return' })) === 'object');
      const last = await run.act('send_email', {}, () => 1, { onBlocked: 'return' });
      expect(last).toMatchObject({ blocked: true, decision: { decision: 'block', rule: 'agent_kill_switch', risk_level: 'critical' } });
      await ks(false)();
      // A policy PATCH: the agent's deny list gains an action.
      const pol = await policy({ agent_ids: [gov.agentId], denied_actions: ['drop_table'] });
      await eventually(async () => gov.status().policies === 1);
      const took = await until(() => call(p, 'PATCH', `/api/v1/policies/${pol.id}`, { key: p.writeKey, body: { denied_actions: ['drop_table', 'send_email'] } }), 'send_email', true);
      console.log(`[sdk ${mode}] policy PATCH -> next act blocked: ${took.toFixed(1)} ms`);
      expect(took).toBeLessThan(30_000);
      expect(gov.status().channel).toMatchObject({ state: 'connected', drops: 0 });
      await gov.close();
    });

    it('bad arguments: a TypeError naming the field, before any decision; unknown actions too', async () => {
      const gov = await connect({
        actions: [{ name: 'refund_payment', parameters: { type: 'object', properties: { invoice: { type: 'string' }, amount: { type: 'number', maximum: 1000 } }, required: ['invoice', 'amount'], additionalProperties: false } }],
      });
      const run = gov.startRun();
      await expect(run.act('refund_payment', { invoice: 'i', amount: 'lots' }, () => 1)).rejects.toThrow(/amount: must be number/);
      await expect(run.act('refund_payment', { amount: 5 }, () => 1)).rejects.toThrow(/invoice: is required/);
      await expect(run.act('refund_payment', { invoice: 'i', amount: 5, note: 'x' }, () => 1)).rejects.toThrow(TypeError);
      await expect(run.act('refund_paymnt', { invoice: 'i', amount: 5 }, () => 1)).rejects.toThrow(/unknown action "refund_paymnt"/);
      await expect(run.act('refund_payment', [] as any, () => 1)).rejects.toThrow(/plain object/);
      await expect(run.act('refund_payment', { invoice: 'i', amount: 5 }, () => 1, { estimatedCostUsd: -1 })).rejects.toThrow(/estimatedCostUsd/);
      const free = await connect();
      await expect(free.startRun().act('count', { n: 5n }, () => 1)).rejects.toThrow(/n is a bigint/);
      await expect(free.startRun().act('count', { nested: { f: () => 1 } }, () => 1)).rejects.toThrow(/JSON data/);
      expect(() => gov.startRun({ sessionId: 'x'.repeat(300) })).toThrow(/sessionId/);
      expect(await run.act('refund_payment', { invoice: 'i', amount: 5 }, () => 'ok')).toBe('ok');
      await gov.close();
      const entries = await ledger(run.runId, 1);
      expect(entries).toHaveLength(1);
    });

    it('connect registers the agent before it returns, with or without actions: the registry and its kill switch know it at once', async () => {
      const bare = await connect({ agent: { name: 'Bare bot' } });
      const got = await call(p, 'GET', `/api/v1/agents/${bare.agentId}`, { key: p.readKey });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body).toMatchObject({ agent_id: bare.agentId, name: 'Bare bot', actions: [] });
      const ks = await call(p, 'PUT', `/api/v1/kill-switches/agents/${bare.agentId}`, { key: p.writeKey, body: { engaged: true, reason: 'stop it' } });
      expect(ks.status, JSON.stringify(ks.body)).toBe(200);
      const actions = [{ name: 'refund_payment', risk_level: 'high' as const, typical_cost_usd: 0.02 }];
      const full = await connect({ actions });
      const reg = await call(p, 'GET', `/api/v1/agents/${full.agentId}`, { key: p.readKey });
      expect(reg.status).toBe(200);
      expect(reg.body.actions).toMatchObject(actions);
      // Connecting again without actions leaves the registered definition as it is.
      await full.close();
      await connect({ agentId: full.agentId });
      expect((await call(p, 'GET', `/api/v1/agents/${full.agentId}`, { key: p.readKey })).body.actions).toMatchObject(actions);
    });

    it("a run's cost counts what ran: three executed actions of 0.02 USD and a blocked one cost 0.06; the blocked one's 0.02 is prevented", async () => {
      const agentId = `sdk-${uniq()}`;
      await policy({ agent_ids: [agentId], denied_actions: ['send_wire'] });
      const gov = await connect({ agentId, onBlocked: 'return' });
      const run = gov.startRun();
      for (let i = 0; i < 3; i++) expect(await run.act('lookup', { i }, () => i, { estimatedCostUsd: 0.02 })).toBe(i);
      expect(await run.act('send_wire', { amount: 1 }, () => 'sent', { estimatedCostUsd: 0.02 })).toMatchObject({ blocked: true });
      await run.end({ status: 'completed' });
      await gov.close();
      expect(await ledger(run.runId, 4)).toHaveLength(4);
      const r = await eventually(async () => {
        const res = await call(p, 'GET', `/api/v1/runs/${run.runId}`, { key: p.readKey });
        return res.body.status === 'completed' && res.body.actions.length === 4 ? res.body : null;
      });
      expect(r.cost_usd).toBeCloseTo(0.06, 9);
      const [blocked] = await interventions(agentId, 1);
      expect(blocked).toMatchObject({ action_name: 'send_wire', run_id: run.runId, cost_prevented_usd: 0.02 });
    });

    it('a report the platform can never take is set aside, counted and passed to onReportError, never silently dropped', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agp-sdk-rej-'));
      const errors: string[] = [];
      const gov = await connect({ spoolDir: dir, onReportError: (m) => errors.push(m) });
      const run = gov.startRun();
      // 6 MB of arguments: its ledger entry is over the ingest limit (5 MiB per request).
      expect(await run.act('upload', { blob: 'z'.repeat(6_000_000) }, () => 'stored')).toBe('stored');
      expect(await run.act('small', { n: 1 }, () => 1)).toBe(1);
      const closed = await gov.close();
      expect(closed.pending).toBe(0);
      expect(gov.status().reports.rejected).toBe(1);
      expect(errors.join('\n')).toMatch(/too large|refused/);
      const rejected = readFileSync(join(dir, 'rejected.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(rejected).toHaveLength(1);
      expect(rejected[0].event.body.action_name).toBe('upload');
      expect((await ledger(run.runId, 1)).map((e) => e.action_name)).toEqual(['small']);
      rmSync(dir, { recursive: true, force: true });
    });
  });

  describe('fail modes', () => {
    /** A loopback TCP proxy in front of the platform that can be cut (connections reset, new ones refused). */
    let proxy: { url: string; cut(): void; restore(): Promise<void>; close(): Promise<void> };
    beforeAll(async () => {
      const target = new URL(p.url);
      const sockets = new Set<Socket>();
      let server: TcpServer;
      let port = 0;
      const listen = () =>
        new Promise<void>((resolve) => {
          server = createTcpServer((client) => {
            const upstream = tcpConnect(Number(target.port), target.hostname);
            sockets.add(client).add(upstream);
            client.pipe(upstream).pipe(client);
            const drop = () => {
              client.destroy();
              upstream.destroy();
              sockets.delete(client);
              sockets.delete(upstream);
            };
            client.on('error', drop).on('close', drop);
            upstream.on('error', drop).on('close', drop);
          });
          server.listen(port, '127.0.0.1', () => {
            port = (server.address() as AddressInfo).port;
            resolve();
          });
        });
      await listen();
      proxy = {
        url: `http://127.0.0.1:${port}`,
        cut() {
          server.close();
          for (const s of sockets) s.destroy();
          sockets.clear();
        },
        restore: listen,
        async close() {
          this.cut();
        },
      };
    });
    afterAll(() => proxy?.close());

    it('the platform unreachable after a snapshot: acts go on under the cached policies, and every report arrives afterwards (counted)', async () => {
      const agentId = `sdk-${uniq()}`;
      const pol = await policy({ agent_ids: [agentId], denied_actions: ['rm_rf'] });
      const gov = await connect({ url: proxy.url, agentId, pollIntervalMs: 200 });
      expect(gov.status()).toMatchObject({ snapshotLoaded: true, failingClosed: false, policies: 1 });
      const run = gov.startRun();
      proxy.cut();
      const N = 30;
      const t0 = performance.now();
      for (let i = 0; i < N; i++) expect(await run.act('step', { i }, () => i)).toBe(i);
      // act never waits on the network: 30 governed actions with the platform gone take milliseconds.
      expect(performance.now() - t0).toBeLessThan(500);
      const blocked = await run.act('rm_rf', { path: '/' }, () => 'ran', { onBlocked: 'return' });
      expect(blocked).toMatchObject({ blocked: true, decision: { policy_id: pol.id } });
      await new Promise((s) => setTimeout(s, 700));
      const st = gov.status();
      expect(st.snapshotLoaded).toBe(true);
      expect(st.stalenessMs).toBeGreaterThan(400);
      expect(st.lastError).toBeTruthy();
      expect(st.reports.pending).toBeGreaterThanOrEqual(N + 2);
      await run.end({ status: 'completed' });
      await proxy.restore();
      const closed = await gov.close({ timeoutMs: 20_000 });
      expect(closed.pending).toBe(0);
      const entries = await ledger(run.runId, N + 1);
      expect(entries.filter((e) => e.action_name === 'step')).toHaveLength(N);
      expect(entries.filter((e) => e.status === 'blocked')).toHaveLength(1);
      expect(await interventions(agentId, 1)).toHaveLength(1);
    });

    it('maxStaleness turns a stale snapshot into closed', async () => {
      const gov = await connect({ url: proxy.url, maxStaleness: 300, pollIntervalMs: 100 });
      const run = gov.startRun();
      expect(await run.act('x', {}, () => 1)).toBe(1);
      proxy.cut();
      await new Promise((s) => setTimeout(s, 600));
      const err = await run.act('x', {}, () => 1).catch((e) => e);
      expect(err).toBeInstanceOf(ActionBlockedError);
      expect(err.decision.reason).toMatch(/past maxStaleness 300 ms/);
      expect(gov.status().failingClosed).toBe(true);
      await proxy.restore();
      await eventually(async () => !gov.status().failingClosed);
      expect(await run.act('x', {}, () => 2)).toBe(2);
    });

    it('no snapshot ever loaded: failMode closed blocks, open allows', async () => {
      const dead = 'http://127.0.0.1:9'; // discard port: connection refused
      const closed = await Governor.connect({ url: dead, key: p.writeKey, agentId: 'sdk-dead', onReportError: () => undefined });
      const err = await closed.startRun().act('x', {}, () => 1).catch((e) => e);
      expect(err).toBeInstanceOf(ActionBlockedError);
      expect(err.decision.reason).toMatch(/no policy snapshot .* failMode is closed/);
      const open = await Governor.connect({ url: dead, key: p.writeKey, agentId: 'sdk-dead', failMode: 'open', onReportError: () => undefined });
      expect(await open.startRun().act('x', {}, () => 1)).toBe(1);
      // Memory-only: what could not be delivered is reported lost, never silently.
      await expect(open.close({ timeoutMs: 200 })).rejects.toThrow(/not delivered .* lost/);
      await expect(closed.close({ timeoutMs: 200 })).rejects.toThrow(/lost/);
    });

    it('a push channel that speaks SSE badly never crashes the agent: each stream is dropped, resumed with Last-Event-ID, and the snapshot is polled', async () => {
      const agentId = 'sdk-garbled';
      let engaged = false;
      const seen = { streams: 0, lastEventIds: [] as Array<string | undefined>, polls: 0, notModified: 0 };
      const server: Server = createServer((req, res) => {
        if (req.url === `/api/v1/agents/${agentId}/governance`) {
          seen.polls++;
          const body = JSON.stringify({ agent_id: agentId, policies: [], kill_switches: { organization: { engaged, reason: engaged ? 'stop' : null }, agents: [] } });
          const etag = `"${engaged ? 'on' : 'off'}"`;
          res.setHeader('etag', etag);
          if (req.headers['if-none-match'] === etag) {
            seen.notModified++;
            res.statusCode = 304;
            return res.end();
          }
          res.setHeader('content-type', 'application/json');
          return res.end(body);
        }
        if (req.url === `/api/v1/agents/${agentId}/governance/events`) {
          const n = seen.streams++;
          seen.lastEventIds.push(req.headers['last-event-id'] as string | undefined);
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          // In turn: a data line that is not JSON; a good `ready`, an event name the SDK does not know (ignored), then
          // the end of the stream; bytes that never end a line.
          if (n % 3 === 0) return res.end('event: ready\ndata: {not json\n\n');
          if (n % 3 === 1) return res.end(`id: 7\nevent: ready\ndata: ${JSON.stringify({ agent_id: agentId, position: '7' })}\n\nevent: surprise\ndata: {}\n\n`);
          return res.end('\u0000\u0001garbage without a newline');
        }
        res.statusCode = 404;
        res.end('{}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      try {
        const gov = await Governor.connect({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: 'agp_x', agentId, pollIntervalMs: 100, onReportError: () => undefined });
        const run = gov.startRun();
        await eventually(async () => seen.streams >= 4 && gov.status().channel.state === 'polling');
        expect(await run.act('x', {}, () => 1)).toBe(1);
        expect(gov.status()).toMatchObject({ snapshotLoaded: true, failingClosed: false, channel: { state: 'polling' } });
        expect(gov.status().channel.lastError).toMatch(/not JSON|ended|line/);
        // The stream that got as far as `ready` (id 7) is resumed from it.
        expect(seen.lastEventIds.slice(2)).toContain('7');
        // Polling goes on (a 304 while nothing changed), and applies a kill switch.
        await eventually(async () => seen.notModified >= 3);
        engaged = true;
        await eventually(async () => typeof (await run.act('x', {}, () => 1, { onBlocked: 'return' })) === 'object');
        expect(await run.act('x', {}, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { rule: 'organization_kill_switch' } });
        await gov.close({ timeoutMs: 100 }).catch(() => undefined);
        expect(gov.status().channel.state).toBe('closed');
      } finally {
        server.close();
        server.closeAllConnections();
      }
    });

    it('connected, but the refetch a policy.changed asks for fails: the snapshot is not fresh (maxStaleness applies) until a retry works', async () => {
      const agentId = 'sdk-refetch';
      let healthy = true;
      // The push stream, to send policy.changed once the agent is connected with a fresh snapshot (a timer after the
      // stream opened could fire before the refetch the ready event asks for, on a busy machine).
      const streams: ServerResponse[] = [];
      const server: Server = createServer((req, res) => {
        if (req.url === `/api/v1/agents/${agentId}/governance`) {
          if (!healthy) {
            res.statusCode = 503;
            return res.end('{}');
          }
          res.setHeader('content-type', 'application/json');
          return res.end(JSON.stringify({ agent_id: agentId, policies: [], kill_switches: { organization: { engaged: false, reason: null }, agents: [] } }));
        }
        if (req.url === `/api/v1/agents/${agentId}/governance/events`) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`id: 1\nevent: ready\ndata: ${JSON.stringify({ agent_id: agentId, position: '1' })}\n\n`);
          streams.push(res);
          return;
        }
        res.statusCode = 404;
        res.end('{}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      try {
        const gov = await Governor.connect({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: 'agp_x', agentId, maxStaleness: 300, pollIntervalMs: 1000, onReportError: () => undefined });
        const run = gov.startRun();
        await eventually(async () => gov.status().channel.state === 'connected' && gov.status().stalenessMs === 0);
        expect(await run.act('x', {}, () => 1)).toBe(1);
        healthy = false;
        const change = { policy_id: 'pol-1', version: 2, change: 'updated', fields: ['denied_actions'], agent_ids: [], actor: 'a@example.com', at: new Date().toISOString() };
        streams[streams.length - 1].write(`id: 2\nevent: policy.changed\ndata: ${JSON.stringify(change)}\n\n`);
        await eventually(async () => (gov.status().stalenessMs ?? 0) > 0);
        await new Promise((s) => setTimeout(s, 500));
        expect(gov.status().stalenessMs).toBeGreaterThan(300);
        const err = await run.act('x', {}, () => 1).catch((e) => e);
        expect(err).toBeInstanceOf(ActionBlockedError);
        expect(err.decision.reason).toMatch(/past maxStaleness 300 ms .*503/);
        expect(gov.status().channel.state).toBe('connected');
        healthy = true;
        await eventually(async () => gov.status().stalenessMs === 0);
        expect(await run.act('x', {}, () => 2)).toBe(2);
        await gov.close({ timeoutMs: 100 }).catch(() => undefined);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });

    it('an answer the SDK does not understand fails closed, naming the server version', async () => {
      const server: Server = createServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        if (req.url?.startsWith('/api/v1/openapi.json')) return res.end(JSON.stringify({ info: { version: '9.9.9' } }));
        if (req.url === '/api/v1/agents/sdk-odd/governance') return res.end(JSON.stringify({ agent_id: 'sdk-odd', policies: 'not a list', kill_switches: { organization: { engaged: false, reason: null }, agents: [] } }));
        res.statusCode = 404;
        res.end('{}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      try {
        const gov = await Governor.connect({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: 'agp_x', agentId: 'sdk-odd', failMode: 'open', onReportError: () => undefined });
        const err = await gov.startRun().act('x', {}, () => 1).catch((e) => e);
        expect(err).toBeInstanceOf(ActionBlockedError);
        expect(err.decision.reason).toMatch(/not understood by @agp\/sdk .* \(server version 9\.9\.9\)/);
        await gov.close({ timeoutMs: 100 }).catch(() => undefined);
      } finally {
        server.close();
      }
    });
  });
});
