/**
 * The AGP support agent example: a customer-support agent built with the Vercel AI SDK (`ai`: `generateText` and
 * tools), its tools governed by `@agp/sdk/ai` (`governTools(run, tools)`: every tool call goes through `run.act`),
 * against a running platform (`npm run quickstart`). The language model is the AI SDK's own scripted test model
 * (`MockLanguageModelV4` from `ai/test`), so the example needs no model key and always makes the same tool calls; put
 * a real model (e.g. `openai('gpt-4o-mini')` of `@ai-sdk/openai`) in its place and nothing else changes.
 * Run it from the repository root:
 *
 *   npm run example:support-agent                     # waits for you to approve close_account in the console
 *   npm run example:support-agent -- --auto-approve   # approves it through the API with the same key, unattended
 *
 * It creates the four policies it needs (scoped to its own agent, `support-agent-example`; see ./policies.ts), then
 * plays a scripted support conversation in which the agent's tool calls meet every decision the platform makes:
 * allow, warn, block, approval (escalate: the call waits for a human), downgrade, budget, PII, loop and idempotent
 * replay. A stopped call reaches the model as the framework's refusal (`execution-denied` with the platform's reason),
 * and the model answers the customer accordingly. It prints one line per decision and, at the end, the console page
 * where the interventions show.
 * It exits 0 when every decision came as the script expects, 1 otherwise (e.g. a policy was edited in the console).
 *
 * Settings (environment):
 * - `AGP_URL`: the platform. Default `http://127.0.0.1:8080`, where the quickstart listens.
 * - `AGP_KEY`: a write key. Default: the write key the quickstart's first start printed and saved to
 *   `first-run-keys.json` in its data folder (`AGP_DATA_DIR`, default `.agp/data` in the repository).
 * - `AGP_AGENT_ID`: the agent's id. Default `support-agent-example`.
 * Flags: `--auto-approve` (approve the escalated call through `POST /api/v1/approvals/{id}/approve` with AGP_KEY).
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage, type StepResult, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { Governor, type DecisionEvent, type GovernanceDecision } from '@agp/sdk';
import { governTools, isBlockedOutput } from '@agp/sdk/ai';
import { ensurePolicies, supportPolicies } from './policies.js';
import { ACTIONS, TOOLS, ran } from './tools.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const autoApprove = process.argv.includes('--auto-approve');
const url = (process.env.AGP_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const agentId = process.env.AGP_AGENT_ID || 'support-agent-example';

/** AGP_KEY, else the write key the quickstart saved on its first start. */
function writeKey(): { key: string; from: string } {
  if (process.env.AGP_KEY) return { key: process.env.AGP_KEY, from: 'AGP_KEY' };
  const dataDir = process.env.AGP_DATA_DIR ? resolve(process.env.AGP_DATA_DIR) : join(repoRoot, '.agp/data');
  const file = join(dataDir, 'first-run-keys.json');
  if (!existsSync(file)) {
    console.error(`No key: set AGP_KEY to a write key, or start the platform with \`npm run quickstart\` (its first start saves its keys to ${file}).`);
    process.exit(1);
  }
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { write?: string };
  if (!saved.write) {
    console.error(`${file} holds no write key; set AGP_KEY to a write key.`);
    process.exit(1);
  }
  const shown = relative(process.cwd(), file);
  return { key: saved.write, from: isAbsolute(shown) || shown.startsWith('..') ? file : shown };
}
const { key, from } = writeKey();

/** The platform's REST API with the write key: parsed JSON, or an Error naming the status and the problem. */
async function api(method: string, path: string, body?: unknown): Promise<any> {
  let res: Response;
  try {
    res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new Error(`cannot reach AGP at ${url} (${(err as Error).cause ?? err}); start it with \`npm run quickstart\` or set AGP_URL`);
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

// ── Output: one line per decision ─────────────────────────────────────────────────────────────────────────────
const LABEL: Record<string, string> = {
  allow: 'allow', warn: 'warn', block: 'block', escalate: 'approval', downgrade: 'downgrade', budget_exceeded: 'budget',
  pii_blocked: 'pii', loop_detected: 'loop', idempotent_replay: 'replay', content_blocked: 'moderation', rate_limited: 'rate limit',
};
const line = (label: string, action: string, text: string) => console.log(`  ${label.padEnd(10)} ${action.padEnd(25)} ${text}`);
/** `{a: 1, b: 'x'}` as `a=1 b=x` (one level). */
const short = (v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.entries(v)
        .map(([k, x]) => `${k}=${typeof x === 'string' ? x : JSON.stringify(x)}`)
        .join(' ')
    : JSON.stringify(v);

/** The decisions of the call being made (filled by `onDecision`); calls are made one at a time. */
let decisions: DecisionEvent[] = [];
/** What each call's first decision was, for the summary: [expected, got]. */
const seen: Array<{ action: string; expected: string; got: string }> = [];

/** `onDecision`: remember the decision; an escalation says at once that it waits, and how to approve it. */
function onDecision(e: DecisionEvent): void {
  decisions.push(e);
  if (e.decision.decision === 'escalate' && !e.approved) {
    line('approval', e.action_name, autoApprove ? 'waiting for a human… (--auto-approve approves it through the API)' : `waiting for a human: approve it in the console at ${url}/approvals (sign in with the write key)`);
    if (autoApprove) void approveThroughApi(e.run_id, e.action_name);
  }
}

/** --auto-approve: find the run's pending approval of `action` and approve it, as a reviewer would in the console. */
async function approveThroughApi(runId: string, action: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const page = await api('GET', `/api/v1/approvals?status=pending&agent_id=${encodeURIComponent(agentId)}&limit=100`);
    const approval = (page.approvals as any[]).find((a) => a.run_id === runId && a.action_name === action);
    if (approval) {
      await api('POST', `/api/v1/approvals/${approval.id}/approve`, { approver_email: 'auto-approve@support-agent.example', notes: 'approved by the example (--auto-approve)' });
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The tool calls that really ran (their `toolCallId`), so a replayed result is told from an executed one. */
const executed = new Set<string>();
/** What the script expects of each tool call, in order. */
const expectations: string[] = [];

/**
 * `onStepEnd` of `generateText`: the step's tool call (the script makes one per step) as one line: what the platform
 * decided and what happened. A stopped call's output is `{blocked: true, decision}`; the model got the refusal.
 */
function printStep(step: StepResult<ToolSet>): void {
  for (const r of step.toolResults) {
    const first = decisions[0]?.decision as GovernanceDecision | undefined;
    const got = first?.decision ?? 'none';
    const expected = expectations.shift() ?? 'none';
    seen.push({ action: r.toolName, expected, got });
    const input = r.input as Record<string, unknown>;
    let outcome: string;
    if (isBlockedOutput(r.output)) outcome = `not executed: ${r.output.decision.reason} (the model got the refusal)`;
    else if (executed.has(r.toolCallId)) outcome = `executed → ${short(r.output)}`;
    else outcome = `not executed again: the first call's result → ${short(r.output)}`;
    let note = '';
    if (got === 'warn') note = ` (warning: ${first!.reason})`;
    if (got === 'downgrade') {
      const changed = Object.keys(input).filter((k) => JSON.stringify(input[k]) !== JSON.stringify(first!.modified_inputs?.[k]));
      note = ` (downgraded: ${changed.map((k) => `${k} ${JSON.stringify(input[k])} → ${JSON.stringify(first!.modified_inputs?.[k])}`).join(', ')})`;
    }
    if (got === 'escalate' && decisions.length > 1) note = ' (approved by a human; kill switches and policies checked again)';
    line(got === 'escalate' && decisions.length > 1 ? 'approved' : LABEL[got] ?? got, r.toolName, `${outcome}${note}${got === expected ? '' : `   ✗ expected ${expected}`}`);
  }
  decisions = [];
}

/** One call the scripted model makes: the decision the script expects (the example's policies make it so), the tool and its input. */
type ScriptedCall = [expected: string, tool: string, input: Record<string, unknown>];

/** The scripted model's answer for a step: one tool call, or the final text of the turn. */
const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 0, text: 0, reasoning: undefined } };
let callSeq = 0;
const callTool = ([, toolName, input]: ScriptedCall) => ({
  content: [{ type: 'tool-call' as const, toolCallId: `call-${++callSeq}`, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const say = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });

/** The conversation so far (what a real model would be sent). */
const messages: ModelMessage[] = [];

/**
 * One customer turn: `generateText` with the governed tools and a model scripted to make `calls` one step at a time,
 * then answer `answer`. Prints the customer's message, one line per tool call, and the agent's answer.
 */
async function turn(tools: ToolSet, customerSays: string, calls: ScriptedCall[], answer: string): Promise<void> {
  console.log(`customer: ${customerSays}`);
  expectations.push(...calls.map(([expected]) => expected));
  const model = new MockLanguageModelV4({ doGenerate: [...calls.map(callTool), say(answer)] });
  messages.push({ role: 'user', content: customerSays });
  const result = await generateText({
    model,
    system: 'You are a customer support agent for an online shop. Use the tools; never promise what a tool refused.',
    messages,
    tools,
    stopWhen: stepCountIs(calls.length + 1),
    onStepEnd: printStep,
  });
  messages.push(...result.response.messages);
  console.log(`agent:    ${result.text}`);
}

// ── The run ──────────────────────────────────────────────────────────────────────────────────────────────────
console.log(`AGP support agent example → ${url}, agent ${agentId}, key from ${from}${autoApprove ? ', --auto-approve' : ''}`);
try {
  const ensured = await ensurePolicies(api, supportPolicies(agentId));
  console.log(`policies: ${ensured.map((p) => `"${p.name}" ${p.action}`).join('; ')}`);
  // The agent's governance snapshot serves them once the platform's read model has them (a moment, in distributed mode).
  for (let i = 0; ; i++) {
    const snap = await api('GET', `/api/v1/agents/${encodeURIComponent(agentId)}/governance`);
    const ids = new Set((snap.policies as Array<{ id: string }>).map((p) => p.id));
    if (ensured.every((p) => ids.has(p.id))) break;
    if (i > 100) throw new Error('the governance snapshot does not list the example policies after 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}

const gov = await Governor.connect({
  url,
  key,
  agentId,
  actions: ACTIONS, // registers the agent and its tools; act checks arguments against their JSON Schemas
  agent: { name: 'Support agent (example)', description: 'Answers customers about orders, refunds and accounts (examples/support-agent).', framework: 'none (run.act)' },
  onDecision,
  approvalTimeoutMs: autoApprove ? 60_000 : 600_000,
});
const run = gov.startRun({ name: 'support conversation', sessionId: `support-${Date.now()}` });
console.log(`run ${run.runId}\n`);

// The agent's tools as the AI SDK defines them (JSON Schemas from the registered actions), governed by the platform.
const tools = governTools(
  run,
  Object.fromEntries(
    ACTIONS.map((a) => [
      a.name,
      tool({
        description: a.description,
        inputSchema: jsonSchema<Record<string, unknown>>(a.parameters as Parameters<typeof jsonSchema>[0]),
        execute: async (input: Record<string, unknown>, { toolCallId }: { toolCallId: string }) => {
          executed.add(toolCallId);
          return TOOLS[a.name](input);
        },
      }),
    ]),
  ),
  // Per call: what the agent meant (recorded as agent_intent), and a confirmation email's idempotency key.
  { actOptions: (name, input) => ({ intent: `answer the customer (${name})`, ...(name === 'send_email' ? { idempotencyKey: `email:${input.to}:${input.subject}` } : {}) }) },
);

const email = { to: 'jane.doe@example.com', subject: 'Your refund for order A-1001', body: 'Hi Jane, we refunded 100 USD for order A-1001. Ticket T-4711.' };
await turn(tools, 'Hi, where is my order A-1001?', [['allow', 'lookup_order', { order_id: 'A-1001' }]], 'Order A-1001 has shipped with DHL and should arrive in 2 days.');
await turn(tools, 'Please call me back on +44 20 7946 0958.', [['warn', 'add_ticket_note', { ticket_id: 'T-4711', note: 'Customer asks for a call back on +44 20 7946 0958.' }]], 'I noted your number; a colleague will call you back.');
await turn(tools, 'You charged my card 4111 1111 1111 1111 twice!', [['pii_blocked', 'add_ticket_note', { ticket_id: 'T-4711', note: 'Customer says card 4111 1111 1111 1111 was charged twice.' }]], 'Sorry about that. Please never share your card number; I have not stored it.');
// The refund is capped, then the agent confirms by email and (say, after a timeout) sends the same email again: sent once.
await turn(
  tools,
  'Refund all 250 USD, now.',
  [
    ['downgrade', 'issue_refund', { order_id: 'A-1001', amount: 250, reason: 'duplicate charge' }],
    ['allow', 'send_email', email],
    ['idempotent_replay', 'send_email', email],
  ],
  'I refunded 100 USD, the most I can refund myself, and emailed you the confirmation.',
);
await turn(
  tools,
  'Is ticket T-4711 resolved yet? … And now? … Now? … NOW?',
  [1, 2, 3, 4].map((i): ScriptedCall => [i < 4 ? 'allow' : 'loop_detected', 'check_ticket_status', { ticket_id: 'T-4711' }]),
  'It is still waiting on the warehouse; checking again right now will not change that.',
);
await turn(tools, 'Just delete all my data!', [['block', 'delete_customer_data', { customer_id: 'C-1042' }]], 'I am not allowed to delete customer data; I can ask our privacy team.');
await turn(tools, 'Then close my account.', [['escalate', 'close_account', { customer_id: 'C-1042', reason: 'customer request' }]], 'Your account is closed.');
await turn(tools, 'I want a specialist to call me.', [['budget_exceeded', 'book_specialist_callback', { customer_id: 'C-1042', topic: 'refund' }]], 'I cannot book a paid specialist callback; a colleague will follow up by email.');

await run.end({ status: 'completed' });
await gov.close(); // delivers every report to the platform

const wrong = seen.filter((s) => s.got !== s.expected);
const kinds = [...new Set(seen.map((s) => s.got))];
console.log(`\n${seen.length} tool calls, decisions: ${kinds.map((k) => LABEL[k] ?? k).join(', ')}. Systems reached: ${short(ran)}.`);
console.log(`The console shows this agent's interventions: ${url}/interventions?agent_id=${encodeURIComponent(agentId)}`);
console.log(`and the run with its ledger: ${url}/runs/${encodeURIComponent(run.runId)}`);
if (wrong.length > 0) {
  console.error(`\n${wrong.length} decision(s) differ from the script (${wrong.map((w) => `${w.action}: expected ${w.expected}, got ${w.got}`).join('; ')}). Were the example's policies edited, or does an organisation-wide policy apply to ${agentId}?`);
  process.exit(1);
}
