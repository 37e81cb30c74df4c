/**
 * The SDK with no platform: `Governor` and `Run` against the in-memory transport (./memory-platform.ts), for every
 * decision kind (allow, block, escalate approved and rejected, rate limit, budget and its warning, downgrade, kill
 * switch, idempotent replay, the PII, loop and moderation guardrails with their context, fail closed), what each reports (a blocked action's ledger
 * entry carries no cost), the registration at connect, the spool's bound, and the push channel: reconnects resumed
 * with Last-Event-ID, and an event name the SDK does not know ignored with the stream kept open.
 * Source: docs/sdk.md.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ActionBlockedError, ApprovalRejectedError, Governor, type DecisionEvent, type GovernorOptions } from '../src/index.js';
import { MemoryPlatform, policyRecord, until } from './memory-platform.js';

const govs: Governor[] = [];
afterEach(async () => {
  for (const g of govs.splice(0)) await g.close({ timeoutMs: 200 }).catch(() => undefined);
});

/** A platform with `policies`, and a governor connected to it whose push channel is live. */
async function connected(policies: Array<Record<string, unknown>> = [], over: Partial<GovernorOptions> = {}) {
  const p = new MemoryPlatform();
  p.policies = policies;
  const decisions: DecisionEvent[] = [];
  const gov = await Governor.connect({ url: 'http://agp.test', key: 'agp_test', agentId: p.agentId, fetch: p.fetch, flushIntervalMs: 5, onReportError: () => undefined, onDecision: (e) => decisions.push(e), ...over });
  govs.push(gov);
  await until(() => p.streams.length === 1);
  p.stream.send('ready', { agent_id: p.agentId, position: '1' }, '1');
  await until(() => gov.status().channel.state === 'connected');
  return { p, gov, run: gov.startRun({ runId: 'run-1' }), decisions };
}

/** Deliver every report, then the platform's stored reports of `type`. */
async function delivered(gov: Governor, p: MemoryPlatform, type: string) {
  await until(() => gov.status().reports.pending === 0);
  return p.reportsOf(type);
}

describe('Governor against an in-memory platform', () => {
  it('allow: runs the action and records its ledger entry with the estimate and the actual cost', async () => {
    const { p, gov, run } = await connected();
    const out = await run.act('lookup', { q: 'inv_1' }, (args, ctx) => {
      ctx.reportCost(0.013);
      return { found: args.q };
    }, { estimatedCostUsd: 0.02 });
    expect(out).toEqual({ found: 'inv_1' });
    const [entry] = await delivered(gov, p, 'action.record');
    expect(entry.body).toMatchObject({ run_id: 'run-1', agent_id: p.agentId, action_name: 'lookup', status: 'success', cost_usd: 0.02, actual_cost_usd: 0.013, outputs: { found: 'inv_1' } });
    expect(p.reportsOf('intervention.create')).toHaveLength(0);
  });

  it('block: not run; the intervention holds the prevented cost and the blocked ledger entry no cost', async () => {
    const pol = policyRecord({ denied_actions: ['drop_table'] });
    const { p, gov, run } = await connected([pol]);
    let ran = false;
    const err = await run.act('drop_table', { t: 'users' }, () => (ran = true), { estimatedCostUsd: 3 }).catch((e) => e);
    expect(err).toBeInstanceOf(ActionBlockedError);
    expect(ran).toBe(false);
    expect(err.decision).toMatchObject({ decision: 'block', intervention_type: 'hard_block', policy_id: pol.id, cost_prevented_usd: 3 });
    expect(await run.act('drop_table', { t: 'x' }, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'block' } });
    const [ledger] = await delivered(gov, p, 'action.record');
    expect(ledger.body.status).toBe('blocked');
    expect(ledger.body).not.toHaveProperty('cost_usd');
    expect(p.reportsOf('intervention.create')[0].body).toMatchObject({ type: 'hard_block', outcome: 'blocked', estimated_cost_usd: 3, cost_prevented_usd: 3, original_inputs: { t: 'users' } });
  });

  it('a run whose three executed actions cost 0.06 USD and one blocked records 0.06 USD of ledger cost', async () => {
    const { p, gov, run } = await connected([policyRecord({ denied_actions: ['send_wire'] })]);
    for (let i = 0; i < 3; i++) await run.act('lookup', { i }, () => i, { estimatedCostUsd: 0.02 });
    await run.act('send_wire', {}, () => 0, { estimatedCostUsd: 0.02, onBlocked: 'return' });
    const entries = await delivered(gov, p, 'action.record');
    expect(entries).toHaveLength(4);
    expect(entries.reduce((s, e) => s + ((e.body.cost_usd as number | undefined) ?? 0), 0)).toBeCloseTo(0.06, 9);
  });

  it('escalate approved: the push channel wakes the wait (the fallback poll is a minute away), then it runs', async () => {
    const { p, run, decisions } = await connected([policyRecord({ approval_required_actions: ['refund'] })], { approvalPollMs: 60_000 });
    const pending = run.act('refund', { amount: 5 }, () => 'refunded');
    await until(() => p.approvals.size === 1);
    const [id] = p.approvals.keys();
    p.approvals.get(id)!.status = 'approved';
    p.stream.send('approval.decided', { approval_id: id, intervention_id: id.slice(4), agent_id: p.agentId, status: 'approved', decided_by: 'ops@example.com', notes: null, at: new Date().toISOString() }, '2');
    expect(await pending).toBe('refunded');
    expect(decisions.map((d) => [d.decision.decision, d.approved])).toEqual([
      ['escalate', false],
      // Decided again after the approval (kill switches and policies still apply): still escalate, now approved.
      ['escalate', true],
    ]);
  });

  it('escalate rejected: ApprovalRejectedError with the approver, nothing run', async () => {
    const { p, run } = await connected([policyRecord({ approval_required_actions: ['refund'] })], { approvalPollMs: 20 });
    let ran = false;
    const pending = run.act('refund', { amount: 5 }, () => (ran = true)).catch((e) => e);
    await until(() => p.approvals.size === 1);
    const a = [...p.approvals.values()][0];
    a.status = 'rejected';
    a.notes = 'no';
    const err = await pending;
    expect(err).toBeInstanceOf(ApprovalRejectedError);
    expect(err).toMatchObject({ status: 'rejected', approver: { email: 'ops@example.com', notes: 'no' } });
    expect(ran).toBe(false);
  });

  it('rate limit: the third call in the window is rate_limited', async () => {
    const { run } = await connected([policyRecord({ rate_limits: { search: { max_calls: 2, window_seconds: 60 } } })]);
    await run.act('search', {}, () => 1);
    await run.act('search', {}, () => 1);
    expect(await run.act('search', {}, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'rate_limited', intervention_type: 'rate_limited' } });
  });

  it('budget: a warning past 80 % of the run budget, then budget_exceeded; spend counts the actual cost', async () => {
    const { p, gov, run, decisions } = await connected([policyRecord({ run_budget: 0.045 })]);
    await run.act('call', {}, () => 1, { estimatedCostUsd: 0.02 });
    await run.act('call', {}, () => 1, { estimatedCostUsd: 0.02 });
    expect(await run.act('call', {}, () => 1, { estimatedCostUsd: 0.02, onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'budget_exceeded' } });
    expect(decisions.map((d) => d.decision.decision)).toEqual(['allow', 'warn', 'budget_exceeded']);
    // A reported actual cost replaces the estimate in the run's spend.
    const cheap = gov.startRun();
    for (let i = 0; i < 5; i++) await cheap.act('call', {}, (_a, ctx) => ctx.reportCost(0.001), { estimatedCostUsd: 0.02 });
    const types = (await delivered(gov, p, 'intervention.create')).map((r) => r.body.type);
    expect(types).toEqual(['warning', 'budget_exceeded']);
  });

  it('downgrade: runs with the modified arguments and records both', async () => {
    const { p, gov, run } = await connected([policyRecord({ downgrades: [{ action: 'refund', argument: 'amount', max: 100 }] })]);
    expect(await run.act('refund', { amount: 500 }, (args) => args.amount)).toBe(100);
    const [i] = await delivered(gov, p, 'intervention.create');
    expect(i.body).toMatchObject({ type: 'downgrade', outcome: 'modified', original_inputs: { amount: 500 }, modified_inputs: { amount: 100 } });
  });

  it('kill switch: a kill_switch.changed pushed on the channel blocks the next act at once', async () => {
    const { p, run } = await connected();
    expect(await run.act('x', {}, () => 1)).toBe(1);
    p.stream.send('kill_switch.changed', { scope: 'organization', agent_id: null, engaged: true, reason: 'incident', changed_by: 'key:1', at: new Date().toISOString() }, '2');
    await new Promise((r) => setTimeout(r, 20));
    expect(await run.act('x', {}, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'block', rule: 'organization_kill_switch' } });
  });

  it('idempotent replay: the repeat answers the first result without running, with the guardrail context', async () => {
    const { p, gov, run } = await connected([policyRecord({ guardrails: { idempotency: { actions: ['charge'], ttl_seconds: 60 } } })]);
    let runs = 0;
    const charge = () => ({ charged: ++runs });
    expect(await run.act('charge', { amount: 1 }, charge)).toEqual({ charged: 1 });
    expect(await run.act('charge', { amount: 1 }, charge)).toEqual({ charged: 1 });
    expect(await run.act('charge', { amount: 2 }, charge)).toEqual({ charged: 2 });
    // An explicit idempotency key is the key, whatever the arguments.
    expect(await run.act('charge', { amount: 3 }, charge, { idempotencyKey: 'k' })).toEqual({ charged: 3 });
    expect(await run.act('charge', { amount: 4 }, charge, { idempotencyKey: 'k' })).toEqual({ charged: 3 });
    expect(runs).toBe(3);
    const replays = await delivered(gov, p, 'intervention.create');
    expect(replays.map((r) => r.body.type)).toEqual(['idempotent_replay', 'idempotent_replay']);
    expect(replays[1].body.context).toMatchObject({ guardrail: 'idempotency', idempotency_key: 'k' });
  });

  it('a guardrail: pii_blocked with its context; a loop is loop_detected', async () => {
    const { p, gov, run } = await connected([policyRecord({ guardrails: { pii: { mode: 'block' }, loop: { mode: 'block', threshold: 2, window_seconds: 60 } } })]);
    expect(await run.act('email', { to: 'jane.doe@example.com' }, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'pii_blocked' } });
    await run.act('poll', { n: 1 }, () => 1);
    await run.act('poll', { n: 1 }, () => 1);
    expect(await run.act('poll', { n: 1 }, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'loop_detected' } });
    const [pii] = await delivered(gov, p, 'intervention.create');
    expect(pii.body).toMatchObject({ type: 'pii_blocked', context: { guardrail: 'pii', fields: ['to'] } });
  });

  it("moderation: content_blocked from the provider's scores; a provider that fails makes the guardrail fail closed", async () => {
    const pol = policyRecord({ guardrails: { moderation: { mode: 'block', threshold: 0.5 } } });
    const asked: string[][] = [];
    const { run } = await connected([pol], { moderation: { moderate: async (texts) => (asked.push(texts), texts.map((t) => ({ violence: t.includes('hurt') ? 0.9 : 0.01 }))) } });
    expect(await run.act('reply', { text: 'hello' }, () => 'sent')).toBe('sent');
    expect(await run.act('reply', { text: 'I will hurt you' }, () => 'sent', { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'content_blocked', context: { guardrail: 'moderation' } } });
    expect(asked).toEqual([['hello'], ['I will hurt you']]);
    const failing = await connected([pol], { moderation: { moderate: async () => Promise.reject(new Error('provider down')) } });
    expect(await failing.run.act('reply', { text: 'hello' }, () => 'sent', { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { decision: 'block', rule: 'moderation_guardrail', reason: expect.stringMatching(/provider down/) } });
  });

  it('fail modes: no snapshot blocks under closed and allows under open', async () => {
    for (const failMode of ['closed', 'open'] as const) {
      const p = new MemoryPlatform();
      p.snapshotStatus = 503;
      const gov = await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: p.agentId, fetch: p.fetch, failMode, onReportError: () => undefined });
      govs.push(gov);
      const r = await gov.startRun().act('x', {}, () => 'ran', { onBlocked: 'return' });
      if (failMode === 'closed') expect(r).toMatchObject({ blocked: true, decision: { decision: 'block', rule: null } });
      else expect(r).toBe('ran');
    }
  });
});

describe('connect registers the agent before it returns', () => {
  it('without actions: an unknown agent is registered; a known one is left as it is', async () => {
    const p = new MemoryPlatform();
    const gov = await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: p.agentId, fetch: p.fetch, agent: { name: 'Billing' }, onReportError: () => undefined });
    govs.push(gov);
    expect(p.agents.get(p.agentId)).toMatchObject({ agent_id: p.agentId, name: 'Billing' });
    p.agents.set('known', { agent_id: 'known', actions: [{ name: 'a' }] });
    const q = new MemoryPlatform('known');
    Object.assign(q, { agents: p.agents });
    govs.push(await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: 'known', fetch: q.fetch, onReportError: () => undefined }));
    expect(q.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/agents')).toHaveLength(0);
    expect(p.agents.get('known')).toMatchObject({ actions: [{ name: 'a' }] });
  });

  it('with actions: the definition is registered; a platform that is away gets it through the spool', async () => {
    const p = new MemoryPlatform();
    const actions = [{ name: 'refund', typical_cost_usd: 0.01 }];
    govs.push(await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: p.agentId, fetch: p.fetch, actions, onReportError: () => undefined }));
    expect(p.agents.get(p.agentId)).toMatchObject({ actions });
    const down = new MemoryPlatform('away');
    const failing = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      if (String(input).endsWith('/api/v1/agents')) return new Response('{}', { status: 503 });
      return down.fetch(input, init);
    }) as typeof fetch;
    const gov = await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: 'away', fetch: failing, actions, flushIntervalMs: 5, onReportError: () => undefined });
    govs.push(gov);
    const [reg] = await delivered(gov, down, 'agent.register');
    expect(reg.body).toMatchObject({ agent_id: 'away', actions });
  });
});

describe('registration when the platform is away or refuses', () => {
  it('without actions, a registration the platform could not take is tried again in the background until it is done', async () => {
    const p = new MemoryPlatform();
    let down = true;
    const flaky = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      if (down && String(input).includes('/api/v1/agents/agent-1') && !String(input).includes('/governance')) return new Response('{}', { status: 503 });
      return p.fetch(input, init);
    }) as typeof fetch;
    const gov = await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: p.agentId, fetch: flaky, onReportError: () => undefined });
    govs.push(gov);
    expect(p.agents.has(p.agentId)).toBe(false);
    down = false;
    await until(() => p.agents.has(p.agentId), 4000);
  });

  it('a key the registry refuses (403) fails connect, naming the answer', async () => {
    const p = new MemoryPlatform();
    const readOnly = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      if (init?.method === 'POST' && String(input).endsWith('/api/v1/agents')) return new Response(JSON.stringify({ type: 'about:blank', title: 'Forbidden', status: 403, detail: 'a read key cannot write' }), { status: 403, headers: { 'content-type': 'application/problem+json' } });
      return p.fetch(input, init);
    }) as typeof fetch;
    await expect(Governor.connect({ url: 'http://agp.test', key: 'k', agentId: p.agentId, fetch: readOnly, actions: [{ name: 'a' }], onReportError: () => undefined })).rejects.toThrow(/refused the key .*403 Forbidden/);
  });
});

describe('the spool bound', () => {
  it('at maxSpoolBytes acts wait for a slow platform\'s acknowledgements (backpressure), none refused, every report delivered', async () => {
    const { p, gov, run } = await connected([], { maxSpoolBytes: 2000, spoolStallMs: 5000 });
    p.ingestDelayMs = 40;
    // In sequence, then 40 at once (they queue behind each other and go on in arrival order).
    const order: number[] = [];
    for (let i = 0; i < 30; i++) expect(await run.act('x', { i }, () => 'ok')).toBe('ok');
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => run.act('y', { i }, () => (order.push(i), 'ok'))));
    expect(all.every((r) => r === 'ok')).toBe(true);
    expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(gov.status()).toMatchObject({ refusedSpoolFull: 0 });
    expect(gov.status().reports.waited).toBeGreaterThan(0);
    const entries = await delivered(gov, p, 'action.record');
    expect(entries).toHaveLength(70);
  });

  it('a platform that acknowledges nothing: a waiting act is refused after spoolStallMs (fail closed, counted); once delivered acts run again', async () => {
    const { p, gov, run } = await connected([], { maxSpoolBytes: 2000, spoolStallMs: 150 });
    p.ingestDown = true;
    let refused: unknown = null;
    let at = 0;
    for (let i = 0; i < 50 && refused === null; i++) {
      at = Date.now();
      const r = await run.act('x', { i }, () => 'ok', { onBlocked: 'return' });
      if (r !== 'ok') refused = r;
    }
    expect(Date.now() - at).toBeGreaterThanOrEqual(140);
    expect(refused).toMatchObject({ blocked: true, decision: { decision: 'block', reason: expect.stringMatching(/spool is full .*acknowledged nothing for 150 ms/) } });
    expect(gov.status()).toMatchObject({ refusedSpoolFull: 1, spool: { full: true } });
    // Stalled: the next act is refused at once.
    const t0 = Date.now();
    expect(await run.act('x', {}, () => 'ok', { onBlocked: 'return' })).toMatchObject({ blocked: true });
    expect(Date.now() - t0).toBeLessThan(100);
    p.ingestDown = false;
    await until(() => !gov.status().spool.full, 5000);
    expect(await run.act('x', {}, () => 'ok')).toBe('ok');
  });

  it('an act waiting for room when the governor closes is refused, naming the close', async () => {
    const { p, gov, run } = await connected([], { maxSpoolBytes: 2000, spoolStallMs: 60_000 });
    p.ingestDown = true;
    const results: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      results.push(run.act('x', { i }, () => 'ok', { onBlocked: 'return' }));
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(gov.status().reports.waited).toBeGreaterThan(0);
    await gov.close({ timeoutMs: 50 }).catch(() => undefined);
    const settled = await Promise.all(results);
    expect(settled.filter((r) => r !== 'ok').length).toBeGreaterThan(0);
    expect(settled.find((r) => r !== 'ok')).toMatchObject({ blocked: true, decision: { reason: expect.stringMatching(/governor is closing/) } });
  });
});

describe('the push channel', () => {
  it('a stream that ends is reconnected with Last-Event-ID; the snapshot counts as fresh again once it is live', async () => {
    const { p, gov } = await connected([], { pollIntervalMs: 20 });
    p.stream.send('policy.changed', { policy_id: 'pol-x', version: 1, change: 'disabled', fields: [], agent_ids: [], actor: 'a', at: new Date().toISOString() }, '5');
    await new Promise((r) => setTimeout(r, 20));
    p.stream.end();
    await until(() => p.streams.length === 2);
    expect(p.stream.lastEventId).toBe('5');
    expect(gov.status().channel).toMatchObject({ state: 'reconnecting', drops: 1 });
    p.stream.send('ready', { agent_id: p.agentId, position: '5' }, '5');
    await until(() => gov.status().channel.state === 'connected');
    expect(gov.status()).toMatchObject({ stalenessMs: 0, channel: { connects: 2, drops: 1 } });
  });

  it('a platform without a push channel is polled: three failures in a row → polling, and a change still applies', async () => {
    const p = new MemoryPlatform();
    p.streamStatus = 503;
    const gov = await Governor.connect({ url: 'http://agp.test', key: 'k', agentId: p.agentId, fetch: p.fetch, pollIntervalMs: 20, onReportError: () => undefined });
    govs.push(gov);
    await until(() => gov.status().channel.state === 'polling', 5000);
    p.killSwitches.organization = { engaged: true, reason: 'stop' };
    p.changed();
    const run = gov.startRun();
    await until(() => gov.status().lastError === null && p.requests.filter((r) => r.path.endsWith('/governance')).length > 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(await run.act('x', {}, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { rule: 'organization_kill_switch' } });
  });

  it('an event name the SDK does not know is ignored: the stream stays open and later events still apply', async () => {
    const { p, gov, run } = await connected();
    p.stream.send('agent.renamed', { anything: true }, '2');
    p.stream.raw('event: another.new.kind\ndata: not even json\n\n');
    await new Promise((r) => setTimeout(r, 30));
    expect(gov.status().channel).toMatchObject({ state: 'connected', connects: 1, drops: 0, lastError: null });
    expect(p.streams).toHaveLength(1);
    expect(p.stream.aborted).toBe(false);
    p.stream.send('kill_switch.changed', { scope: 'agent', agent_id: p.agentId, engaged: true, reason: 'stop', changed_by: 'key:1', at: new Date().toISOString() }, '3');
    await new Promise((r) => setTimeout(r, 20));
    expect(await run.act('x', {}, () => 1, { onBlocked: 'return' })).toMatchObject({ blocked: true, decision: { rule: 'agent_kill_switch' } });
  });
});
