/**
 * The agent SDK's `agp.act` span: an agent process (test/support/sdk-tracing-agent.ts) with the OpenTelemetry SDK's
 * in-memory exporter registered as its tracer provider acts against the embedded platform and prints the spans it
 * ended. Each `run.act` is a span, child of the caller's active span, carrying the decision span attributes the
 * platform's `policy.decide` spans carry (source `sdk`, tool, agent, decision, rule, policy id, intervention type) and
 * never an argument value; the action's own spans are its children; a stopped action is not an error; a failing one
 * is, without its message. Without a provider the SDK makes no span (every other SDK test runs so), and without
 * `@opentelemetry/api` installed it governs the same, with no span (test/e2e/sdk-package.test.ts).
 * Source: docs/operations.md (The agent SDK's `agp.act` span); docs/sdk.md (Tracing).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { call, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';
import { TRACED_SECRET, type PrintedSpan } from '../support/sdk-tracing-agent.js';

let p: BootedPlatform;
const uniq = () => Math.random().toString(36).slice(2, 10);
/** The agents of the four scenarios, each with its policy's id. */
const agents: Record<'allow' | 'block' | 'pii' | 'throws', { id: string; policyId: string }> = {} as never;
let printed: { outcomes: Record<string, any>; spans: PrintedSpan[] };

/** A fresh agent with one policy (`body`, scoped to it). */
async function agentWith(body: Record<string, unknown>): Promise<{ id: string; policyId: string }> {
  const id = `trace-${uniq()}`;
  const r = await call(p, 'POST', '/api/v1/policies', { key: p.writeKey, body: { name: `tracing ${id}`, agent_ids: [id], ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id, policyId: (r.body as { id: string }).id };
}

beforeAll(async () => {
  p = await bootEmbedded();
  agents.allow = await agentWith({ denied_actions: ['drop_table'] });
  agents.block = await agentWith({ denied_actions: ['drop_table'] });
  agents.pii = await agentWith({ guardrails: { pii: { mode: 'block', categories: ['email'] } } });
  agents.throws = await agentWith({ denied_actions: ['drop_table'] });
  // The agent runs in a process of its own, as an agent does: its tracer provider is its own, and its exit closes its connections.
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/sdk-tracing-agent.ts', p.url, p.writeKey, agents.allow.id, agents.block.id, agents.pii.id, agents.throws.id], { cwd: REPO_ROOT, timeout: 90_000 });
  printed = JSON.parse(stdout);
}, 120_000);
afterAll(async () => {
  await p?.stop();
});

/** The `agp.act` span of `agent` (exactly one). */
function actOf(agent: string): PrintedSpan {
  const found = printed.spans.filter((s) => s.name === 'agp.act' && s.attributes['gen_ai.agent.id'] === agent);
  expect(found).toHaveLength(1);
  return found[0];
}
const subject = (tool: string, agent: string) => ({ 'agp.decision.source': 'sdk', 'gen_ai.tool.name': tool, 'gen_ai.agent.id': agent });

it('an allowed act is a span under the caller’s active span, with the decision attributes; the action’s spans are its children', () => {
  expect(printed.outcomes.allow).toBe(`sent to ${TRACED_SECRET}`);
  const span = actOf(agents.allow.id);
  expect(span).toMatchObject({ kind: SpanKind.INTERNAL, scope: '@agp/sdk', traceId: printed.outcomes.caller.traceId, parentSpanId: printed.outcomes.caller.spanId });
  expect(span.attributes).toEqual({ ...subject('send_email', agents.allow.id), 'agp.decision': 'allow' });
  expect(span.status.code).toBe(SpanStatusCode.UNSET);
  expect(printed.spans.find((s) => s.name === 'smtp.send')?.parentSpanId).toBe(span.spanId);
});

it('a blocked act carries decision, rule, policy id and intervention type, and is not marked failed', () => {
  expect(printed.outcomes.block).toBe('ActionBlockedError');
  const span = actOf(agents.block.id);
  expect(span.parentSpanId).toBeNull();
  expect(span.attributes).toEqual({
    ...subject('drop_table', agents.block.id),
    'agp.decision': 'block',
    'agp.decision.rule': 'denied_action',
    'agp.decision.policy_id': agents.block.policyId,
    'agp.decision.intervention_type': 'hard_block',
  });
  expect(span.status.code).toBe(SpanStatusCode.UNSET);
});

it('a PII block names the guardrail’s decision and policy', () => {
  expect(printed.outcomes.pii).toBe('pii_blocked');
  expect(actOf(agents.pii.id).attributes).toEqual({
    ...subject('post_reply', agents.pii.id),
    'agp.decision': 'pii_blocked',
    'agp.decision.rule': 'pii_guardrail',
    'agp.decision.policy_id': agents.pii.policyId,
    'agp.decision.intervention_type': 'pii_blocked',
  });
});

it('an action that throws marks its span failed with the error type only (its message may quote the arguments)', () => {
  expect(printed.outcomes.throws).toBe('RangeError');
  const span = actOf(agents.throws.id);
  expect(span.attributes).toEqual({ ...subject('lookup', agents.throws.id), 'agp.decision': 'allow', 'error.type': 'RangeError' });
  expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
  expect(span.events).toEqual([]);
});

it('no span carries an argument value, a matched text or an error message', () => {
  expect(printed.spans.length).toBeGreaterThanOrEqual(6);
  expect(JSON.stringify(printed.spans)).not.toContain('ann.secret');
});
