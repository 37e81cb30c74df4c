import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDistributed, type DistributedRun } from '../support/distributed.js';
import { call, eventually } from '../support/http.js';
import { infra, skipIntegration } from '../support/infra.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startEmbeddedProcess, stopQuickstart } from '../support/quickstart.js';

// Trace export end to end: each mode runs as a user runs it (the built dist/main.js launchers) with the standard
// OTEL_* variables pointing at a loopback OTLP/HTTP receiver (distributed mode exports JSON, embedded mode protobuf), and one `POST /api/v1/ingest/` must arrive as one trace
// with the right parent/child links: gateway HTTP server span → request/reply client span → ingest's server span →
// ingest log producer span → the interventions consumer span (child of and linked to the producer) → its database work.

const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
/** The standard variables that turn export on: protobuf (the default) or JSON (`http/json`), exported every 100 ms. */
const otelEnv = (receiver: OtlpReceiver, protocol: 'http/protobuf' | 'http/json') => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', ...(protocol === 'http/json' ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}) });

/** Send one ingest request that continues trace `traceId`, and wait until its event is visible. */
async function ingestOne(p: { url: string }, writeKey: string, readKey: string, traceId: string): Promise<void> {
  const agent = `otel-agent-${traceId.slice(0, 8)}`;
  const event = { id: `otel-${traceId}`, type: 'intervention.create', timestamp: new Date().toISOString(), body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: agent } };
  const res = await call(p, 'POST', '/api/v1/ingest/', { key: writeKey, body: { batch: [event] }, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
  expect(res.status).toBe(207);
  await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: readKey })).body.interventions?.[0]);
}

/** The spans of `traceId` once the consumer's and the read model's spans and `more` are in. */
function traceOf(receiver: OtlpReceiver, traceId: string, more: (spans: ReceivedSpan[]) => boolean = () => true): Promise<ReceivedSpan[]> {
  return eventually(async () => {
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const names = new Set(spans.map((s) => s.name));
    return names.has('process interventions-ingest') && names.has('project interventions-read-model') && more(spans) ? spans : undefined;
  }, 20_000);
}

/** The one span named `name` of `service` in `spans`. */
function one(spans: ReceivedSpan[], service: string, name: string | RegExp): ReceivedSpan {
  const found = spans.filter((s) => s.service === service && (typeof name === 'string' ? s.name === name : name.test(s.name)));
  expect(found.map((s) => s.name), `${service} ${name} in ${spans.map((s) => `${s.service}:${s.name}`).join(', ')}`).toHaveLength(1);
  return found[0];
}

/** Assert the chain from the gateway's HTTP span to the interventions consumer; returns the consumer span. */
function expectIngestChain(spans: ReceivedSpan[], services: { gateway: string; ingest: string; interventions: string }): ReceivedSpan {
  const http = one(spans, services.gateway, 'POST /api/v1/ingest');
  expect(http).toMatchObject({ kind: SPAN_KIND.server, scope: 'agp.http' });
  expect(http.attributes).toMatchObject({ 'http.route': '/api/v1/ingest', 'http.response.status_code': 207, 'http.request.method': 'POST', 'url.path': '/api/v1/ingest/', 'url.scheme': 'http', 'network.protocol.version': '1.1' });
  expect(http.attributes['agp.request_id']).toEqual(expect.any(String));
  const send = one(spans, services.gateway, 'send ingest.raw');
  expect(send).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: http.spanId });
  expect(send.attributes).toMatchObject({ 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': 'ingest.raw' });
  const served = one(spans, services.ingest, 'process ingest.raw');
  expect(served).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: send.spanId });
  const produced = one(spans, services.ingest, /^send .*\.ingested\.acme\.interventions$/);
  expect(produced).toMatchObject({ kind: SPAN_KIND.producer, parentSpanId: served.spanId });
  const consumed = one(spans, services.interventions, 'process interventions-ingest');
  expect(consumed).toMatchObject({ kind: SPAN_KIND.consumer, parentSpanId: produced.spanId, links: [{ traceId: produced.traceId, spanId: produced.spanId }] });
  expect(consumed.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.consumer.group.name': 'interventions-ingest', 'messaging.batch.message_count': 1 });
  // The read model applies the stored event in a span linked to the producer (the traceparent the event keeps).
  const projected = spans.find((s) => s.service === services.interventions && s.name === 'project interventions-read-model');
  expect(projected?.links).toContainEqual({ traceId: produced.traceId, spanId: produced.spanId });
  return consumed;
}

/**
 * Assert that the consumer's database writes are database client spans (`pg.query:…`) of scope `scope` under
 * `consumed`, with `db.system.name` postgresql and the statement's text, and no argument value (the ingested action name).
 */
function expectDatabaseSpans(spans: ReceivedSpan[], consumed: ReceivedSpan, scope: string): void {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const under = (s: ReceivedSpan, ancestor: string): boolean => s.parentSpanId === ancestor || (byId.has(s.parentSpanId) && under(byId.get(s.parentSpanId)!, ancestor));
  const queries = spans.filter((s) => s.scope === scope && s.name.startsWith('pg.query') && s.service === consumed.service && under(s, consumed.spanId));
  expect(queries.length).toBeGreaterThan(0);
  for (const q of queries) {
    expect(q.kind).toBe(SPAN_KIND.client);
    expect(q.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.query.text': expect.any(String) });
  }
  expect(JSON.stringify(queries.map((q) => q.attributes))).not.toContain('delete_records');
}

describe.skipIf(skipIntegration())('trace export (distributed)', () => {
  let receiver: OtlpReceiver;
  let run: DistributedRun | undefined;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    run = await startDistributed({
      adminDatabaseUrl: infra().databaseUrl,
      natsUrl: infra().natsUrl,
      dbPrefix: 'agp_otel',
      readyTimeoutMs: 150_000,
      env: { AGP_INIT_ORG: 'acme', AGP_INIT_WRITE_KEY: 'agp_otel_write_key_001', AGP_INIT_READ_KEY: 'agp_otel_read_key_0001', ...otelEnv(receiver, 'http/json') },
    });
  }, 240_000);
  afterAll(async () => {
    await run?.stop();
    await receiver?.close();
  });

  it('exports one trace per ingest request: gateway, ingest, the log, interventions and PostgreSQL', async () => {
    const traceId = randomBytes(16).toString('hex');
    await ingestOne(run!, 'agp_otel_write_key_001', 'agp_otel_read_key_0001', traceId);
    const spans = await traceOf(receiver, traceId, (s) => s.some((x) => x.service === 'agp-interventions' && x.scope === '@opentelemetry/instrumentation-pg'));
    const consumed = expectIngestChain(spans, { gateway: 'agp-gateway', ingest: 'agp-ingest', interventions: 'agp-interventions' });
    // The consumer's writes are PostgreSQL spans (the maintained pg instrumentation) under it, without argument values.
    expectDatabaseSpans(spans, consumed, '@opentelemetry/instrumentation-pg');
    expect(receiver.encodings).toMatchObject({ protobuf: 0 });
  });
});

describe('trace export (embedded)', () => {
  let receiver: OtlpReceiver;
  let child: ChildProcess | undefined;
  let url = '';
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    ({ child, url } = await startEmbeddedProcess({ AGP_INIT_ORG: 'acme', AGP_INIT_WRITE_KEY: 'agp_otel_write_key_001', AGP_INIT_READ_KEY: 'agp_otel_read_key_0001', ...otelEnv(receiver, 'http/protobuf') }));
  }, 120_000);
  afterAll(async () => {
    if (child) await stopQuickstart(child);
    await receiver?.close();
  });

  it('exports the same trace shape from one process (service.name agp), in protobuf by default, its database statements included', async () => {
    const traceId = randomBytes(16).toString('hex');
    await ingestOne({ url }, 'agp_otel_write_key_001', 'agp_otel_read_key_0001', traceId);
    const spans = await traceOf(receiver, traceId, (s) => s.some((x) => x.scope === 'agp.pglite'));
    const consumed = expectIngestChain(spans, { gateway: 'agp', ingest: 'agp', interventions: 'agp' });
    // The embedded database's statements are the same database client spans as PostgreSQL's in distributed mode.
    expectDatabaseSpans(spans, consumed, 'agp.pglite');
    expect(receiver.encodings).toMatchObject({ json: 0 });
  });

  it('the MCP endpoint, which reads its own body, sends its bus message under the request\'s server span', async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await call({ url }, 'POST', '/api/v1/mcp', {
      key: 'agp_otel_write_key_001',
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'otel-e2e', version: '1.0.0' } } },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(200);
    const spans = await eventually(async () => {
      const got = receiver.spans.filter((s) => s.traceId === traceId);
      return got.some((s) => s.name === 'send mcp.http') && got.some((s) => s.kind === SPAN_KIND.server && s.scope === 'agp.http') ? got : undefined;
    }, 20_000);
    const http = one(spans, 'agp', /^POST \/api\/v1\/mcp/);
    expect(one(spans, 'agp', 'send mcp.http')).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: http.spanId });
  });

  it('a decision API call exports its policy.decide span: the decision, rule, policy, intervention type, tool and agent, never the arguments', async () => {
    const agent = `otel-decide-${randomBytes(4).toString('hex')}`;
    const secret = 'ann.secret@example.com';
    const policy = await call({ url }, 'POST', '/api/v1/policies', { key: 'agp_otel_write_key_001', body: { name: `otel ${agent}`, agent_ids: [agent], denied_actions: ['delete_records'] } });
    expect(policy.status).toBe(201);
    const traceId = randomBytes(16).toString('hex');
    const res = await call({ url }, 'POST', '/api/v1/policies/evaluate', {
      key: 'agp_otel_write_key_001',
      body: { agent_id: agent, action_name: 'delete_records', arguments: { owner: secret } },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(res.body).toMatchObject({ decision: 'block' });
    const spans = await eventually(async () => {
      const got = receiver.spans.filter((s) => s.traceId === traceId);
      return got.some((s) => s.name === 'policy.decide') ? got : undefined;
    }, 20_000);
    const decided = one(spans, 'agp', 'policy.decide');
    expect(decided).toMatchObject({ kind: SPAN_KIND.internal, scope: 'agp.bus' });
    expect(decided.attributes).toEqual({
      'agp.decision.source': 'evaluate',
      'gen_ai.tool.name': 'delete_records',
      'gen_ai.agent.id': agent,
      'agp.decision': 'block',
      'agp.decision.rule': 'denied_action',
      'agp.decision.policy_id': policy.body.id,
      'agp.decision.intervention_type': 'hard_block',
    });
    // Its parent is the request's span (the process span of policies.evaluate, under the gateway's HTTP span).
    expect(spans.find((s) => s.spanId === decided.parentSpanId)?.name).toBe('process policies.evaluate');
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(secret);
  });
});
