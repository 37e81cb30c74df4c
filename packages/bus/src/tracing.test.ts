import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsRegistry } from '@agp/runtime';
import { startMemoryTracing, type MemoryTracing } from '../../../test/support/spans.js';
import { spanContextOf, tracedDecision, traceparentOf, withConsumeSpan, withProjectionSpan, withPublishSpan, withSendSpan } from './tracing.js';
import { wireEndpoint } from './wire.js';

const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const silent = { error: () => undefined };
const block = { decision: 'block', rule: 'blocked_action', policy_id: 'pol-1', intervention_type: 'hard_block' };
const SUBJECT = { agent_id: 'billing-bot', action_name: 'send_email', arguments: { email: 'ann@example.com' } };

/** The value of `agp_policy_decisions_total` for `labels`. */
async function decisionsCounted(labels: Record<string, string>): Promise<number> {
  const metric = (await metricsRegistry.getSingleMetric('agp_policy_decisions_total')?.get())?.values ?? [];
  return metric.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
}

describe('bus spans with tracing off (no tracer provider)', () => {
  it('sends the caller’s traceparent unchanged and still counts decisions', async () => {
    await expect(withSendSpan('policies.get', CALLER, async (tp) => tp)).resolves.toBe(CALLER);
    await expect(withPublishSpan('agp.ingested.acme.stats', undefined, {}, async (tp) => tp)).resolves.toBeUndefined();
    expect(spanContextOf(CALLER)).toBeUndefined();
    const before = await decisionsCounted({ source: 'evaluate', decision: 'block' });
    expect(tracedDecision('evaluate', SUBJECT, () => block)).toBe(block);
    expect(await decisionsCounted({ source: 'evaluate', decision: 'block' })).toBe(before + 1);
  });
});

describe('bus spans (in-memory exporter)', () => {
  let tracing: MemoryTracing;
  beforeAll(() => {
    tracing = startMemoryTracing();
  });
  afterAll(() => tracing.stop());
  const named = (name: string) => tracing.spans().filter((s) => s.name === name);

  it('a request/reply call is a CLIENT span whose traceparent parents the service’s SERVER span', async () => {
    tracing.reset();
    const endpoint = wireEndpoint('policies.get', () => ({}), silent);
    // A body the row refuses: the reply is a 422 problem, which does not mark either span failed.
    const reply = await withSendSpan('policies.get', CALLER, (traceparent) => endpoint({ ctx: { organization_id: 'acme', scope: 'read', key_id: 'k', key_name: null, correlation_id: 'c', traceparent }, body: { nope: 1 } } as never));
    expect(reply).toMatchObject({ ok: false, problem: { status: 422 } });
    const [client] = named('send policies.get');
    const [server] = named('process policies.get');
    expect(client.kind).toBe(SpanKind.CLIENT);
    expect(client.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(client.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(client.attributes).toMatchObject({ 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': 'policies.get' });
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
    expect(server.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'agp.service': 'policies' });
    expect([client.status.code, server.status.code]).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);
  });

  it('a failed send marks its span failed for a 5xx and rethrows', async () => {
    tracing.reset();
    const down = Object.assign(new Error('no responders'), { status: 503 });
    await expect(withSendSpan('stats.get', undefined, async () => Promise.reject(down))).rejects.toBe(down);
    expect(named('send stats.get')[0].status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'no responders' });
  });

  it('a consumer batch from one request continues its trace and links to the producer; a mixed batch is linked only', async () => {
    tracing.reset();
    const first = await withPublishSpan('agp.ingested.acme.interventions', CALLER, { 'messaging.batch.message_count': 1 }, async (tp) => tp);
    const second = await withPublishSpan('agp.ingested.acme.interventions', undefined, {}, async (tp) => tp);
    const [p1, p2] = named('send agp.ingested.acme.interventions');
    expect(p1.kind).toBe(SpanKind.PRODUCER);
    expect(first).toBe(`00-${p1.spanContext().traceId}-${p1.spanContext().spanId}-01`);
    await withConsumeSpan('interventions-ingest', 'agp.ingested.*.interventions', [first, undefined], async () => {
      // Work inside the batch (a query) is the consumer span's child.
      trace.getTracer('test').startSpan('pg.query').end();
    });
    await withConsumeSpan('interventions-ingest', 'agp.ingested.*.interventions', [first, second, first], async () => undefined);
    const [one, mixed] = named('process interventions-ingest');
    expect(one.kind).toBe(SpanKind.CONSUMER);
    expect(one.parentSpanContext?.spanId).toBe(p1.spanContext().spanId);
    expect(one.links.map((l) => l.context.spanId)).toEqual([p1.spanContext().spanId]);
    expect(one.attributes).toMatchObject({ 'messaging.consumer.group.name': 'interventions-ingest', 'messaging.batch.message_count': 2 });
    expect(named('pg.query')[0].parentSpanContext?.spanId).toBe(one.spanContext().spanId);
    expect(mixed.parentSpanContext).toBeUndefined();
    expect(mixed.links.map((l) => l.context.spanId)).toEqual([p1.spanContext().spanId, p2.spanContext().spanId]);
  });

  it('a projection batch links to each event’s traceparent', async () => {
    tracing.reset();
    await withProjectionSpan('interventions-read-model', [CALLER, undefined, 'not-a-traceparent'], async () => undefined);
    const [span] = named('project interventions-read-model');
    expect(span.links.map((l) => l.context.spanId)).toEqual(['00f067aa0ba902b7']);
    expect(span.attributes).toMatchObject({ 'agp.projection': 'interventions-read-model', 'agp.events': 3 });
  });

  it('a policy decision is a span with its decision, rule, policy, intervention type, tool and agent, never the arguments', async () => {
    tracing.reset();
    const parent = trace.getTracer('test').startSpan('process policies.evaluate');
    context.with(trace.setSpan(context.active(), parent), () => tracedDecision('evaluate', SUBJECT, () => ({ ...block, modified_inputs: { email: 'ann@example.com' } })));
    tracedDecision('counterfactual', SUBJECT, () => ({ decision: 'allow', rule: null, policy_id: null, intervention_type: null }));
    parent.end();
    const [decided, allowed] = named('policy.decide');
    expect(decided.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    const subject = { 'gen_ai.tool.name': 'send_email', 'gen_ai.agent.id': 'billing-bot' };
    expect(decided.attributes).toEqual({ 'agp.decision.source': 'evaluate', ...subject, 'agp.decision': 'block', 'agp.decision.rule': 'blocked_action', 'agp.decision.policy_id': 'pol-1', 'agp.decision.intervention_type': 'hard_block' });
    expect(allowed.attributes).toEqual({ 'agp.decision.source': 'counterfactual', ...subject, 'agp.decision': 'allow' });
    // The arguments (and the modified inputs) reach no span.
    expect(JSON.stringify(tracing.spans().map((s) => s.attributes))).not.toContain('ann@example.com');
    expect(traceparentOf()).toBeUndefined();
  });
});
