/**
 * The SDK's framework adapters for AI agent loops, each run with the real framework package against a real embedded
 * platform (one per file) and a scripted model:
 * - `@agp/sdk/ai`: `generateText` of the Vercel AI SDK with the framework's own test model (`MockLanguageModelV4`)
 *   scripted to call tools. An allowed tool runs and its ledger entry is stored; a denied tool never runs and the
 *   model's next prompt holds the framework's refusal (`execution-denied` with the platform's reason); a downgraded
 *   tool runs with the modified arguments; an escalated tool waits for a human, and the rejection is the refusal.
 * - `@agp/sdk/openai-agents`: `run()` of the OpenAI Agents SDK with `OpenAIChatCompletionsModel` and the `openai`
 *   client talking to the project's loopback chat-completions server (test/support/fake-llm.ts) scripted to call
 *   tools. The same three cases, the refusal being the tool input guardrail's `rejectContent` that the next request
 *   carries as the tool message; and an escalation rejected in the console.
 * Source: docs/sdk.md §Framework adapters.
 */
import { Agent, OpenAIChatCompletionsModel, RunContext, Runner, tool as agentTool } from '@openai/agents';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Governor } from '@agp/sdk';
import { governTools, isBlockedOutput } from '@agp/sdk/ai';
import { GUARDRAIL_NAME, governAgent, governTool } from '@agp/sdk/openai-agents';
import { reply, startFakeLlm, type FakeLlm } from '../support/fake-llm.js';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';

let p: BootedPlatform;
let llm: FakeLlm;
const govs: Governor[] = [];
const uniq = () => Math.random().toString(36).slice(2, 10);

beforeAll(async () => {
  [p, llm] = await Promise.all([bootEmbedded(), startFakeLlm()]);
}, 120_000);
afterAll(async () => {
  for (const g of govs.splice(0)) await g.close({ timeoutMs: 2000 }).catch(() => undefined);
  await Promise.all([p?.stop(), llm?.close()]);
});
/** The approval the agent's escalation opened, once it is pending. */
async function pendingApproval(agentId: string) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/approvals?status=pending&agent_id=${agentId}`, { key: p.readKey });
    return r.body.total === 1 ? r.body.approvals[0] : null;
  });
}

/** A fresh agent governed by one policy (created through the API), and its connected governor. */
async function governed(policy: Record<string, unknown>) {
  const agentId = `adapter-${uniq()}`;
  const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `adapter-${agentId}`, agent_ids: [agentId], ...policy } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const gov = await Governor.connect({ url: p.url, key: p.writeKey, agentId, onReportError: () => undefined });
  govs.push(gov);
  return { agentId, gov, policyId: r.body.id as string };
}
/** The run's ledger entries once `n` are stored. */
async function ledger(runId: string, n: number) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/runs/${encodeURIComponent(runId)}`, { key: p.readKey });
    return r.status === 200 && r.body.actions.length >= n ? (r.body.actions as any[]) : null;
  });
}
/** The agent's interventions once `n` are stored. */
async function interventions(agentId: string, n: number) {
  return eventually(async () => {
    const r = await call(p, 'GET', `/api/v1/interventions?agent_id=${encodeURIComponent(agentId)}`, { key: p.readKey });
    return r.status === 200 && r.body.total >= n ? (r.body.interventions as any[]) : null;
  });
}

describe('@agp/sdk/ai (Vercel AI SDK v7)', () => {
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
  /** A model response calling the given tools. */
  const toolCalls = (...calls: Array<[id: string, name: string, input: object]>) => ({
    content: calls.map(([toolCallId, toolName, input]) => ({ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) })),
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
    usage,
    warnings: [],
  });
  const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });
  /** The tool results the model received in its prompt of call `i`, by tool name. */
  const toolResultsIn = (model: MockLanguageModelV4, i: number) =>
    Object.fromEntries(
      model.doGenerateCalls[i].prompt
        .filter((m) => m.role === 'tool')
        .flatMap((m) => m.content)
        .flatMap((part) => (part.type === 'tool-result' ? [[part.toolName, part.output] as const] : [])),
    ) as Record<string, any>;

  it('allowed tools run and are recorded; a denied tool never runs and the model gets the refusal; a downgrade runs with the modified arguments', async () => {
    const { agentId, gov, policyId } = await governed({ denied_actions: ['delete_account'], downgrades: [{ action: 'refund_payment', argument: 'amount', max: 100 }] });
    const run = gov.startRun();
    const executed: Array<[string, unknown]> = [];
    const tools = governTools(
      run,
      {
        lookup_order: tool({ description: 'Find an order', inputSchema: z.object({ order: z.string() }), execute: async ({ order }) => (executed.push(['lookup_order', order]), { order, status: 'shipped' }) }),
        delete_account: tool({ description: 'Delete a user account', inputSchema: z.object({ user: z.string() }), execute: async ({ user }) => (executed.push(['delete_account', user]), 'deleted') }),
        refund_payment: tool({
          description: 'Refund an invoice',
          inputSchema: z.object({ invoice: z.string(), amount: z.number() }),
          execute: async (args) => (executed.push(['refund_payment', args]), `refunded ${args.amount}`),
        }),
      },
      { actOptions: (name) => ({ estimatedCostUsd: name === 'refund_payment' ? 0.02 : 0.001, intent: `model asked for ${name}` }) },
    );
    const model = new MockLanguageModelV4({
      doGenerate: [
        toolCalls(['c1', 'lookup_order', { order: 'o-1' }], ['c2', 'delete_account', { user: 'u-7' }], ['c3', 'refund_payment', { invoice: 'inv_1', amount: 250 }]),
        text('Order o-1 is shipped; I could not delete the account; refunded 100.'),
      ],
    });
    const result = await generateText({ model, tools, prompt: 'Help customer u-7', stopWhen: stepCountIs(3) });

    expect(executed).toEqual([
      ['lookup_order', 'o-1'],
      ['refund_payment', { invoice: 'inv_1', amount: 100 }],
    ]);
    expect(model.doGenerateCalls).toHaveLength(2);
    // What the model read in its next step: the framework's own refusal for the denied call, normal results otherwise.
    const seen = toolResultsIn(model, 1);
    expect(seen.lookup_order).toEqual({ type: 'json', value: { order: 'o-1', status: 'shipped' } });
    expect(seen.refund_payment).toEqual({ type: 'text', value: 'refunded 100' });
    expect(seen.delete_account.type).toBe('execution-denied');
    expect(seen.delete_account.reason).toContain('delete_account');
    expect(seen.delete_account.reason).toMatch(/denied/);
    // The application sees the decision as the tool's output.
    const denied = result.steps[0].toolResults.find((r) => r.toolName === 'delete_account');
    expect(isBlockedOutput(denied?.output)).toBe(true);
    expect(denied?.output).toMatchObject({ blocked: true, decision: { decision: 'block', policy_id: policyId } });

    await run.end({ status: 'completed' });
    await gov.close();
    const entries = await ledger(run.runId, 3);
    expect(entries).toHaveLength(3); // one entry per call, all delivered by close()
    expect(Object.fromEntries(entries.map((e) => [e.action_name, [e.status, e.inputs]]))).toEqual({
      lookup_order: ['success', { order: 'o-1' }],
      delete_account: ['blocked', { user: 'u-7' }],
      refund_payment: ['success', { invoice: 'inv_1', amount: 100 }],
    });
    expect(entries.find((e) => e.action_name === 'lookup_order').outputs).toEqual({ order: 'o-1', status: 'shipped' });
    const recs = await interventions(agentId, 2);
    expect(recs.find((r) => r.action_name === 'refund_payment')).toMatchObject({ type: 'downgrade', outcome: 'modified', original_inputs: { invoice: 'inv_1', amount: 250 }, modified_inputs: { invoice: 'inv_1', amount: 100 }, agent_intent: 'model asked for refund_payment' });
    expect(recs.find((r) => r.action_name === 'delete_account')).toMatchObject({ type: 'hard_block', outcome: 'blocked', policy_id: policyId, run_id: run.runId });
  });

  it('an escalated tool waits for the human; the rejection reaches the model as the refusal, and nothing ran', async () => {
    const { agentId, gov } = await governed({ approval_required_actions: ['wire_transfer'] });
    const run = gov.startRun();
    let ran = false;
    const tools = governTools(run, {
      wire_transfer: tool({ description: 'Send money', inputSchema: z.object({ iban: z.string(), amount: z.number() }), execute: async () => ((ran = true), 'sent') }),
    });
    const model = new MockLanguageModelV4({ doGenerate: [toolCalls(['w1', 'wire_transfer', { iban: 'DE89370400440532013000', amount: 5000 }]), text('The transfer was not approved.')] });
    const pending = generateText({ model, tools, prompt: 'Pay the supplier', stopWhen: stepCountIs(3) });
    const approval = await pendingApproval(agentId);
    expect(model.doGenerateCalls).toHaveLength(1); // the loop waits for the human
    const rej = await call(p, 'POST', `/api/v1/approvals/${approval.id}/reject`, { key: p.writeKey, body: { approver_email: 'cfo@example.com', notes: 'not this month' } });
    expect(rej.status).toBe(200);
    await pending;
    expect(ran).toBe(false);
    const seen = toolResultsIn(model, 1);
    expect(seen.wire_transfer.type).toBe('execution-denied');
    expect(seen.wire_transfer.reason).toContain('rejected by cfo@example.com: not this month');
    expect((await ledger(run.runId, 1))[0]).toMatchObject({ action_name: 'wire_transfer', status: 'blocked' });
  });
});

describe('@agp/sdk/openai-agents (OpenAI Agents SDK)', () => {
  const runner = new Runner({ tracingDisabled: true });
  const model = () => new OpenAIChatCompletionsModel(new OpenAI({ apiKey: 'sk-loopback', baseURL: llm.url, maxRetries: 0 }), 'gpt-loopback');
  /** The tool messages of the model's request `i` for `marker`, by call id. */
  const toolMessagesIn = (marker: string, i: number) =>
    Object.fromEntries((llm.callsFor(marker)[i].body.messages as any[]).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])) as Record<string, string>;

  it('allowed tools run and are recorded; a denied tool never runs and the model gets the guardrail refusal; a downgrade runs with the modified arguments', async () => {
    const { agentId, gov, policyId } = await governed({ denied_actions: ['delete_account'], downgrades: [{ action: 'refund_payment', argument: 'amount', max: 100 }] });
    const gRun = gov.startRun();
    const executed: Array<[string, unknown]> = [];
    const agent = new Agent({
      name: 'support',
      instructions: 'Help the customer.',
      model: model(),
      tools: [
        agentTool({ name: 'lookup_order', description: 'Find an order', parameters: z.object({ order: z.string() }), execute: async ({ order }) => (executed.push(['lookup_order', order]), JSON.stringify({ order, status: 'shipped' })) }),
        agentTool({ name: 'delete_account', description: 'Delete a user account', parameters: z.object({ user: z.string() }), execute: async ({ user }) => (executed.push(['delete_account', user]), 'deleted') }),
        agentTool({ name: 'refund_payment', description: 'Refund an invoice', parameters: z.object({ invoice: z.string(), amount: z.number() }), execute: async (args) => (executed.push(['refund_payment', args]), `refunded ${args.amount}`) }),
      ],
    });
    const marker = `oa-${uniq()}`;
    llm.script(marker, reply.toolCalls(['c1', 'lookup_order', { order: 'o-1' }], ['c2', 'delete_account', { user: 'u-7' }], ['c3', 'refund_payment', { invoice: 'inv_1', amount: 250 }]), reply.ok('Order o-1 is shipped; the account stays; refunded 100.'));
    const result = await runner.run(governAgent(gRun, agent, { actOptions: (name) => ({ intent: `model asked for ${name}` }) }), `Help customer u-7 (${marker})`);

    expect(result.finalOutput).toBe('Order o-1 is shipped; the account stays; refunded 100.');
    expect(executed.sort((a, b) => a[0].localeCompare(b[0]))).toEqual([
      ['lookup_order', 'o-1'],
      ['refund_payment', { invoice: 'inv_1', amount: 100 }],
    ]);
    expect(llm.callsFor(marker)).toHaveLength(2);
    // What the model read in its next request: the guardrail's refusal as the denied call's output.
    const seen = toolMessagesIn(marker, 1);
    expect(JSON.parse(seen.c1)).toEqual({ order: 'o-1', status: 'shipped' });
    expect(seen.c3).toBe('refunded 100');
    expect(seen.c2).toContain('delete_account');
    expect(seen.c2).toMatch(/^Tool call delete_account was not executed: .*denied/);
    const rejected = result.toolInputGuardrailResults.filter((r) => r.guardrail.name === GUARDRAIL_NAME && r.output.behavior.type === 'rejectContent');
    expect(rejected).toHaveLength(1);
    expect(rejected[0].output.outputInfo).toMatchObject({ decision: { decision: 'block', policy_id: policyId } });

    expect(result.toolInputGuardrailResults.filter((r) => r.guardrail.name === GUARDRAIL_NAME).map((r) => r.output.behavior.type).sort()).toEqual(['allow', 'allow', 'rejectContent']);
    await gRun.end({ status: 'completed' });
    await gov.close();
    const entries = await ledger(gRun.runId, 3);
    expect(entries).toHaveLength(3); // one run.act per call: the guardrail's, handed over to invoke
    expect(Object.fromEntries(entries.map((e) => [e.action_name, [e.status, e.inputs]]))).toEqual({
      lookup_order: ['success', { order: 'o-1' }],
      delete_account: ['blocked', { user: 'u-7' }],
      refund_payment: ['success', { invoice: 'inv_1', amount: 100 }],
    });
    expect(entries.find((e) => e.action_name === 'refund_payment').outputs).toBe('refunded 100');
    const recs = await interventions(agentId, 2);
    expect(recs.find((r) => r.action_name === 'refund_payment')).toMatchObject({ type: 'downgrade', outcome: 'modified', original_inputs: { invoice: 'inv_1', amount: 250 }, modified_inputs: { invoice: 'inv_1', amount: 100 }, agent_intent: 'model asked for refund_payment' });
    expect(recs.find((r) => r.action_name === 'delete_account')).toMatchObject({ type: 'hard_block', policy_id: policyId, run_id: gRun.runId });
  });

  it('a call that reaches invoke without the guardrail is governed there: the refusal is its output, nothing ran', async () => {
    const { gov } = await governed({ denied_actions: ['delete_account'] });
    const gRun = gov.startRun();
    let ran = false;
    const governed_ = governTool(gRun, agentTool({ name: 'delete_account', description: 'Delete a user account', parameters: z.object({ user: z.string() }), execute: async () => ((ran = true), 'deleted') }));
    const out = await governed_.invoke(new RunContext(), JSON.stringify({ user: 'u-1' }), { toolCall: { type: 'function_call', callId: 'direct-1', name: 'delete_account', arguments: JSON.stringify({ user: 'u-1' }) } });
    expect(ran).toBe(false);
    expect(out).toMatch(/^Tool call delete_account was not executed: /);
    await gov.close();
    expect((await ledger(gRun.runId, 1))[0]).toMatchObject({ action_name: 'delete_account', status: 'blocked', inputs: { user: 'u-1' } });
  });

  it('an escalated tool waits in the guardrail for the human; the rejection is the refusal, and nothing ran', async () => {
    const { agentId, gov } = await governed({ approval_required_actions: ['wire_transfer'] });
    const gRun = gov.startRun();
    let ran = false;
    const agent = new Agent({
      name: 'payments',
      instructions: 'Pay suppliers.',
      model: model(),
      tools: [agentTool({ name: 'wire_transfer', description: 'Send money', parameters: z.object({ iban: z.string(), amount: z.number() }), execute: async () => ((ran = true), 'sent') })],
    });
    const marker = `oa-${uniq()}`;
    llm.script(marker, reply.toolCalls(['w1', 'wire_transfer', { iban: 'DE89370400440532013000', amount: 5000 }]), reply.ok('The transfer was not approved.'));
    const pending = runner.run(governAgent(gRun, agent), `Pay the supplier (${marker})`);
    const approval = await pendingApproval(agentId);
    expect(llm.callsFor(marker)).toHaveLength(1); // the run waits for the human
    expect((await call(p, 'POST', `/api/v1/approvals/${approval.id}/reject`, { key: p.writeKey, body: { approver_email: 'cfo@example.com', notes: 'not this month' } })).status).toBe(200);
    expect((await pending).finalOutput).toBe('The transfer was not approved.');
    expect(ran).toBe(false);
    expect(toolMessagesIn(marker, 1).w1).toContain('rejected by cfo@example.com: not this month');
    expect((await ledger(gRun.runId, 1))[0]).toMatchObject({ action_name: 'wire_transfer', status: 'blocked' });
  });
});
