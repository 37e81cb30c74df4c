/**
 * The LangChain and MCP adapters of the agent SDK (`@agp/sdk/langchain`, `@agp/sdk/mcp`) with the real framework
 * packages against a real embedded platform (one per file; the SDK's behaviour in both run modes is covered by
 * sdk.test.ts):
 * - a LangChain v1 `createAgent` loop driven by LangChain's own scripted test model (`fakeModel`), with
 *   `governanceMiddleware(run)`: allowed tools run and their ledger entries are stored, a denied tool never runs and the
 *   model receives the refusal `ToolMessage`, a downgraded call runs with the capped argument, escalated calls wait
 *   for the approvals API (one approved and run, one rejected and refused), arguments the registered schema rejects
 *   reach the model as LangChain's tool-input error, and an idempotent repeat gets the first result without running;
 * - an MCP `Client` connected to an `McpServer` over the SDK's in-memory transport, governed with
 *   `governMcpClient(run, client)` and driven by a scripted loop: the same three decisions, a raw `tools/call` request,
 *   a server-side tool error recorded with status `error`, and arguments the registered schema rejects.
 * Source: docs/sdk.md §Framework adapters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AIMessage, HumanMessage, ToolMessage, createAgent, fakeModel, tool } from 'langchain';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Governor } from '@agp/sdk';
import { governanceMiddleware } from '@agp/sdk/langchain';
import { GOVERNANCE_META_KEY, governMcpClient } from '@agp/sdk/mcp';
import { refusalText } from '@agp/sdk/mcp';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';

let p: BootedPlatform;
const govs: Governor[] = [];
const uniq = () => Math.random().toString(36).slice(2, 10);

beforeAll(async () => {
  p = await bootEmbedded();
}, 120_000);
afterAll(async () => {
  for (const g of govs.splice(0)) await g.close({ timeoutMs: 2000 }).catch(() => undefined);
  await p?.stop();
});

/** A fresh agent with a policy (`body`), and its connected governor (the snapshot already holds the policy). */
async function governedAgent(body: Record<string, unknown>, over: Partial<Parameters<typeof Governor.connect>[0]> = {}) {
  const agentId = `ad-${uniq()}`;
  const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `ad-${uniq()}`, agent_ids: [agentId], ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const gov = await Governor.connect({ url: p.url, key: p.writeKey, agentId, onReportError: () => undefined, ...over });
  govs.push(gov);
  return { agentId, gov, policy: r.body as { id: string; name: string } };
}
/** The run's ledger entries once `n` are stored, by action name. */
async function ledger(runId: string, n: number) {
  const actions = await eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${encodeURIComponent(runId)}`, { key: p.readKey });
    return r.status === 200 && r.body.actions.length >= n ? (r.body.actions as any[]) : null;
  });
  return actions;
}
/** The agent's interventions once `n` are stored. */
async function interventions(agentId: string, n: number) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${encodeURIComponent(agentId)}`, { key: p.readKey });
    return r.status === 200 && r.body.total >= n ? (r.body.interventions as any[]) : null;
  });
}
/** The shop policy: `delete_order` denied, `refund` amounts capped at 100 USD. */
const SHOP_POLICY = { denied_actions: ['delete_order'], downgrades: [{ action: 'refund', argument: 'amount', max: 100 }] };

describe('@agp/sdk/langchain: governanceMiddleware in a createAgent loop', () => {
  it('allowed tools run and are recorded; a denied tool never runs and the model gets the refusal; a downgrade runs with the capped argument', async () => {
    const { agentId, gov, policy } = await governedAgent(SHOP_POLICY);
    const run = gov.startRun();
    const executed: Array<[string, Record<string, unknown>]> = [];
    const tools = [
      tool(async (a: { id: string }) => (executed.push(['lookup_order', a]), `order ${a.id}: 2 items, 80 USD`), { name: 'lookup_order', description: 'Look up an order', schema: z.object({ id: z.string() }) }),
      tool(async (a: { id: string }) => (executed.push(['delete_order', a]), `deleted ${a.id}`), { name: 'delete_order', description: 'Delete an order', schema: z.object({ id: z.string() }) }),
      tool(async (a: { order: string; amount: number }) => (executed.push(['refund', a]), `refunded ${a.amount} USD on ${a.order}`), {
        name: 'refund',
        description: 'Refund an order',
        schema: z.object({ order: z.string(), amount: z.number() }),
      }),
    ];
    const model = fakeModel()
      .respondWithTools([
        { name: 'lookup_order', args: { id: 'o-1' }, id: 'call-lookup' },
        { name: 'delete_order', args: { id: 'o-1' }, id: 'call-delete' },
        { name: 'refund', args: { order: 'o-1', amount: 500 }, id: 'call-refund' },
      ])
      .respond(new AIMessage('Looked up o-1 and refunded what policy allows.'));
    const agent = createAgent({ model, tools, middleware: [governanceMiddleware(run)] });
    const out = await agent.invoke({ messages: [new HumanMessage('Refund order o-1 in full and delete it')] });
    expect(out.messages.at(-1)?.content).toBe('Looked up o-1 and refunded what policy allows.');

    // What the model received on its second turn: one ToolMessage per call.
    expect(model.callCount).toBe(2);
    const seen = new Map(model.calls[1].messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).tool_call_id, m as ToolMessage]));
    expect(seen.get('call-lookup')).toMatchObject({ content: 'order o-1: 2 items, 80 USD' });
    expect(seen.get('call-lookup')!.status).not.toBe('error');
    const refusal = seen.get('call-delete')!;
    expect(refusal.status).toBe('error');
    expect(refusal.content).toMatch(/^Tool call delete_order was not executed: .*delete_order/);
    expect(refusal.artifact).toMatchObject({ governance: { decision: 'block', policy_id: policy.id } });
    expect(seen.get('call-refund')).toMatchObject({ content: 'refunded 100 USD on o-1' });

    // The tools that ran, with the arguments they ran with.
    expect(executed.map(([n]) => n).sort()).toEqual(['lookup_order', 'refund']);
    expect(executed.find(([n]) => n === 'refund')![1]).toEqual({ order: 'o-1', amount: 100 });

    // The platform's ledger and interventions.
    await gov.close();
    const entries = await ledger(run.runId, 3);
    const byName = Object.fromEntries(entries.map((e) => [e.action_name, e]));
    expect(byName.lookup_order).toMatchObject({ status: 'success', inputs: { id: 'o-1' }, outputs: 'order o-1: 2 items, 80 USD', agent_id: agentId });
    expect(byName.delete_order).toMatchObject({ status: 'blocked', inputs: { id: 'o-1' } });
    expect(byName.refund).toMatchObject({ status: 'success', inputs: { order: 'o-1', amount: 100 }, outputs: 'refunded 100 USD on o-1' });
    const recs = await interventions(agentId, 2);
    expect(recs.find((r) => r.action_name === 'delete_order')).toMatchObject({ type: 'hard_block', run_id: run.runId, policy_id: policy.id });
    expect(recs.find((r) => r.action_name === 'refund')).toMatchObject({ type: 'downgrade', original_inputs: { order: 'o-1', amount: 500 }, modified_inputs: { order: 'o-1', amount: 100 } });
  });

  it('escalated calls wait for a human: the approved one runs, the rejected one reaches the model as a refusal', async () => {
    const { agentId, gov } = await governedAgent({ approval_required_actions: ['pay'] });
    const run = gov.startRun();
    const paid: unknown[] = [];
    const pay = tool(async (a: { to: string; amount: number }) => (paid.push(a), `paid ${a.amount} USD to ${a.to}`), { name: 'pay', description: 'Pay a supplier', schema: z.object({ to: z.string(), amount: z.number() }) });
    const model = fakeModel()
      .respondWithTools([
        { name: 'pay', args: { to: 'acme', amount: 10 }, id: 'call-acme' },
        { name: 'pay', args: { to: 'mallory', amount: 990 }, id: 'call-mallory' },
      ])
      .respond(new AIMessage('done'));
    const agent = createAgent({ model, tools: [pay], middleware: [governanceMiddleware(run, { actOptions: (c) => ({ intent: `pay ${String(c.args.to)}` }) })] });
    const invoked = agent.invoke({ messages: [new HumanMessage('Pay both invoices')] });
    // Decide each approval as it appears (whether the agent runs the two calls at once or one after the other).
    const decided = new Set<string>();
    while (decided.size < 2) {
      const pending = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/approvals?status=pending&agent_id=${agentId}`, { key: p.readKey });
        return (r.body.approvals as any[]).filter((a) => !decided.has(a.id))[0] ?? null;
      });
      // Nothing was paid before the human approved.
      if (pending.original_inputs.to === 'acme') expect(paid).toEqual([]);
      const verdict = pending.original_inputs.to === 'acme' ? 'approve' : 'reject';
      const r = await call(p, 'POST', `/api/v1/approvals/${pending.id}/${verdict}`, { key: p.writeKey, body: { approver_email: 'cfo@example.com', notes: verdict === 'reject' ? 'unknown payee' : undefined } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      decided.add(pending.id);
    }
    await invoked;
    expect(paid).toEqual([{ to: 'acme', amount: 10 }]);
    const seen = new Map(model.calls[1].messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).tool_call_id, m as ToolMessage]));
    expect(seen.get('call-acme')).toMatchObject({ content: 'paid 10 USD to acme' });
    expect(seen.get('call-mallory')!.status).toBe('error');
    expect(seen.get('call-mallory')!.content).toMatch(/^Tool call pay was not executed: approval apr-\S+ rejected by cfo@example.com: unknown payee/);
    await gov.close();
    const entries = await ledger(run.runId, 2);
    expect(entries.map((e) => [e.inputs.to, e.status]).sort()).toEqual([
      ['acme', 'success'],
      ['mallory', 'blocked'],
    ]);
  });
  it('arguments the registered schema rejects reach the model as LangChain\'s tool-input error; an idempotent repeat gets the first result without running', async () => {
    const { agentId, gov } = await governedAgent(
      { guardrails: { idempotency: { actions: ['charge'], ttl_seconds: 600 } } },
      { actions: [{ name: 'charge', parameters: { type: 'object', properties: { card: { type: 'string' }, amount: { type: 'number' } }, required: ['card', 'amount'] } }] },
    );
    const run = gov.startRun();
    let charges = 0;
    const charge = tool(async (a: { card: string; amount: number }) => `charged ${a.amount} USD to ${a.card} (#${++charges})`, {
      name: 'charge',
      description: 'Charge a card',
      schema: z.object({ card: z.string(), amount: z.any() }),
    });
    const model = fakeModel()
      .respondWithTools([{ name: 'charge', args: { card: 'c-1', amount: 'lots' }, id: 'call-bad' }])
      .respondWithTools([{ name: 'charge', args: { card: 'c-1', amount: 5 }, id: 'call-first' }])
      .respondWithTools([{ name: 'charge', args: { card: 'c-1', amount: 5 }, id: 'call-again' }])
      .respond(new AIMessage('charged once'));
    await createAgent({ model, tools: [charge], middleware: [governanceMiddleware(run)] }).invoke({ messages: [new HumanMessage('Charge c-1 5 USD')] });
    const toolMessage = (turn: number) => model.calls[turn].messages.filter((m) => ToolMessage.isInstance(m)).at(-1) as ToolMessage;
    expect(toolMessage(1)).toMatchObject({ tool_call_id: 'call-bad', status: 'error' });
    expect(toolMessage(1).content).toContain('invalid arguments for charge: amount: must be number');
    expect(toolMessage(2)).toMatchObject({ tool_call_id: 'call-first', content: 'charged 5 USD to c-1 (#1)' });
    expect(toolMessage(3)).toMatchObject({ tool_call_id: 'call-again', content: 'charged 5 USD to c-1 (#1)' });
    expect(charges).toBe(1);
    await gov.close();
    const recs = await interventions(agentId, 1);
    expect(recs).toMatchObject([{ type: expect.any(String), action_name: 'charge', run_id: run.runId, context: { guardrail: 'idempotency' } }]);
    expect((await ledger(run.runId, 1)).map((e) => [e.status, e.inputs])).toEqual([['success', { card: 'c-1', amount: 5 }]]);
  });
});

describe('@agp/sdk/mcp: governMcpClient on an MCP client', () => {
  it('a scripted loop over a real MCP server: allowed calls run and are recorded, denied ones come back as isError refusals, downgrades run capped', async () => {
    const { agentId, gov, policy } = await governedAgent(SHOP_POLICY, {
      actions: [
        { name: 'lookup_order', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
        { name: 'delete_order' },
        { name: 'refund' },
        { name: 'flaky' },
      ],
    });
    const run = gov.startRun();
    const executed: Array<[string, Record<string, unknown>]> = [];
    const server = new McpServer({ name: 'shop', version: '1.0.0' });
    const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
    server.registerTool('lookup_order', { description: 'Look up an order', inputSchema: { id: z.string() } }, async (a) => (executed.push(['lookup_order', a]), text(`order ${a.id}: 2 items`)));
    server.registerTool('delete_order', { description: 'Delete an order', inputSchema: { id: z.string() } }, async (a) => (executed.push(['delete_order', a]), text(`deleted ${a.id}`)));
    server.registerTool('refund', { description: 'Refund an order', inputSchema: { order: z.string(), amount: z.number() } }, async (a) => (executed.push(['refund', a]), text(`refunded ${a.amount} USD`)));
    server.registerTool('flaky', { description: 'Fails', inputSchema: {} }, async () => (executed.push(['flaky', {}]), { ...text('upstream timed out'), isError: true }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    // A custom refusal takes (toolName, decision), as in every adapter.
    const client = governMcpClient(run, new Client({ name: 'support-agent', version: '1.0.0' }), { refusal: (toolName, decision) => `${refusalText(toolName, decision)} [${decision.decision}]` });
    await client.connect(clientSide);

    // The scripted "model": each step is a tool call; what it reads back is the call's result.
    const script = [
      { name: 'lookup_order', arguments: { id: 'o-7' } },
      { name: 'delete_order', arguments: { id: 'o-7' } },
      { name: 'refund', arguments: { order: 'o-7', amount: 250 } },
      { name: 'flaky', arguments: {} },
      { name: 'lookup_order', arguments: { id: 7 } },
    ];
    const transcript: Array<{ tool: string; result: CallToolResult }> = [];
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['delete_order', 'flaky', 'lookup_order', 'refund']);
    for (const step of script) transcript.push({ tool: step.name, result: (await client.callTool(step)) as CallToolResult });
    // A raw tools/call request is governed too.
    const raw = await client.request({ method: 'tools/call', params: { name: 'delete_order', arguments: { id: 'o-8' } } }, CallToolResultSchema);

    const [lookup, del, refund, flaky, badArgs] = transcript.map((t) => t.result);
    expect(lookup).toEqual(text('order o-7: 2 items'));
    expect(del.isError).toBe(true);
    expect(del.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Tool call delete_order was not executed: .*delete_order.* \[block\]$/) }]);
    expect(del._meta?.[GOVERNANCE_META_KEY]).toMatchObject({ decision: 'block', policy_id: policy.id });
    expect(refund).toEqual(text('refunded 100 USD'));
    expect(flaky).toEqual({ ...text('upstream timed out'), isError: true });
    expect(badArgs.isError).toBe(true);
    expect((badArgs.content[0] as { text: string }).text).toMatch(/invalid arguments for lookup_order: id: must be string/);
    expect(raw).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('delete_order was not executed') }] });
    // The server ran exactly the allowed calls, the refund capped.
    expect(executed).toEqual([
      ['lookup_order', { id: 'o-7' }],
      ['refund', { order: 'o-7', amount: 100 }],
      ['flaky', {}],
    ]);

    await client.close();
    await gov.close();
    const entries = await ledger(run.runId, 5);
    expect(entries.map((e) => [e.action_name, e.status, e.inputs])).toEqual(
      expect.arrayContaining([
        ['lookup_order', 'success', { id: 'o-7' }],
        ['delete_order', 'blocked', { id: 'o-7' }],
        ['refund', 'success', { order: 'o-7', amount: 100 }],
        ['flaky', 'error', {}],
        ['delete_order', 'blocked', { id: 'o-8' }],
      ]),
    );
    expect(entries).toHaveLength(5);
    expect(entries.find((e) => e.action_name === 'lookup_order').outputs).toEqual(text('order o-7: 2 items'));
    expect(entries.find((e) => e.action_name === 'flaky').error).toContain('upstream timed out');
    const recs = await interventions(agentId, 3);
    expect(recs.filter((r) => r.type === 'hard_block')).toHaveLength(2);
    expect(recs.find((r) => r.type === 'downgrade')).toMatchObject({ action_name: 'refund', original_inputs: { order: 'o-7', amount: 250 }, modified_inputs: { order: 'o-7', amount: 100 } });
  });
});
