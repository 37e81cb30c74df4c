/**
 * OTLP trace ingest end to end, in both run modes: a program instrumented with the OpenTelemetry JS SDK (2.x tracer
 * provider, the official OTLP/HTTP protobuf and JSON exporters 0.2xx) emits GenAI spans as agent frameworks do (an
 * `invoke_agent` span, `chat` spans with token usage, `execute_tool` spans, a plain HTTP span) and exports them to a
 * running AGP with the bearer write key; the runs (one per trace, of the agent the resource's `service.name` names),
 * ledger actions, costs (from an operator price table given with AGP_OTLP_PRICE_TABLE, else the price database) and
 * agent stats show them. The same rows result whatever the export order (children before their agent span, the agent
 * span first, one span per export); the same export twice is stored once; spans missing attributes are answered in
 * partial success with the reason; malformed, oversized and wrongly typed bodies are refused.
 * Source: docs/ingest.md (OTLP trace ingest).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { context, SpanStatusCode, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { describeModes } from '../support/modes.js';
import { call, eventually, type BootedPlatform } from '../support/http.js';

const PATH = '/api/v1/otlp/v1/traces';

/** The operator's price table (AGP_OTLP_PRICE_TABLE): USD per 1M tokens. */
const PRICES = {
  version: 'test-prices-7',
  models: { 'gpt-4o': { input_usd_per_1m: 2.5, output_usd_per_1m: 10 }, 'claude-sonnet-4-5': { input_usd_per_1m: 3, output_usd_per_1m: 15 } },
};
/** 1000 in + 500 out at gpt-4o prices; 2000 in + 300 out at claude-sonnet-4-5 prices (the dated model name). */
const GPT_COST = 0.0075;
const CLAUDE_COST = 0.0105;

/** A tracer provider of the agent program `agent` (its `service.name`) that exports with `exporter` (batched, flushed by the caller) and keeps every span in memory. */
function program(exporter: SpanExporter, agent: string) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': agent }),
    spanProcessors: [new BatchSpanProcessor(exporter), new SimpleSpanProcessor(memory)],
  });
  return { tracer: provider.getTracer('support-agent-program', '1.0.0'), memory, provider };
}

/** The agent's own name (`gen_ai.agent.name` of its `invoke_agent` span): the run's name. */
const AGENT_NAME = 'Support';

/** How {@link agentRun} ends its spans: the agent span last (as a run does), or first; `between` runs in between. */
interface RunOrder {
  conversation?: string;
  rootFirst?: boolean;
  between?: () => Promise<void>;
}

/**
 * One agent run as the agent frameworks' instrumentations record it (GenAI semantic conventions 1.37.0): the agent
 * span, two model calls with usage, a tool call that succeeds and one that fails, and an HTTP client span of the tool.
 * Times are fixed from `t0` (ms) so durations are known. The children end (and so are exported by the batch processor)
 * before the agent span, with `between` (e.g. a forced flush: a run longer than the batch delay) in between; or, with
 * `rootFirst`, the agent span ends first. Returns the trace id.
 */
async function agentRun(tracer: Tracer, t0: number, order: RunOrder = {}): Promise<string> {
  const { conversation, rootFirst, between } = order;
  const root = tracer.startSpan(`invoke_agent ${AGENT_NAME}`, {
    startTime: t0,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': AGENT_NAME, 'gen_ai.provider.name': 'openai', ...(conversation ? { 'gen_ai.conversation.id': conversation } : {}) },
  });
  const parent = trace.setSpan(context.active(), root);
  const children: Array<() => void> = [];
  const child = (name: string, from: number, to: number, attributes: Attributes, error?: string) => {
    const span = tracer.startSpan(name, { startTime: t0 + from, attributes }, parent);
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    children.push(() => span.end(t0 + to));
  };
  child('chat gpt-4o', 10, 810, { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06', 'gen_ai.usage.input_tokens': 1000, 'gen_ai.usage.output_tokens': 500 });
  child('execute_tool lookup_order', 820, 940, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': 'call_1' });
  child('GET', 830, 930, { 'http.request.method': 'GET', 'url.full': 'https://orders.example/api/orders/42' });
  child('execute_tool issue_refund', 950, 1000, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'issue_refund' }, 'refund service down');
  child('chat claude-sonnet-4-5', 1010, 1510, { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'claude-sonnet-4-5-20250929', 'gen_ai.usage.input_tokens': 2000, 'gen_ai.usage.output_tokens': 300 });
  const endRoot = () => root.end(t0 + 1600);
  const [first, second] = rootFirst ? [[endRoot], children] : [children, [endRoot]];
  first.forEach((end) => end());
  await between?.();
  second.forEach((end) => end());
  return root.spanContext().traceId;
}

/** The run `runId` once it has `actions` actions, with them. */
function runWithActions(p: BootedPlatform, runId: string, actions: number): Promise<any> {
  return eventually(async () => {
    const res = await call(p, 'GET', `/api/v1/runs/${encodeURIComponent(runId)}`, { key: p.readKey });
    return res.status === 200 && res.body.action_count === actions && res.body.status !== 'running' ? res.body : undefined;
  }, 30_000);
}

/** Assert the run recorded from {@link agentRun}: agent, name, times, status, the four actions, their costs and prices. */
function expectAgentRun(run: any, agent: string): void {
  expect(run).toMatchObject({ agent_id: agent, name: AGENT_NAME, status: 'completed', duration_ms: 1600, action_count: 4 });
  expect(run.cost_usd).toBeCloseTo(GPT_COST + CLAUDE_COST, 10);
  const by = Object.fromEntries(run.actions.map((a: any) => [a.action_name, a]));
  expect(Object.keys(by).sort()).toEqual(['chat claude-sonnet-4-5-20250929', 'chat gpt-4o', 'issue_refund', 'lookup_order']);
  expect(by['chat gpt-4o']).toMatchObject({ status: 'success', duration_ms: 800, cost_usd: GPT_COST, actual_cost_usd: null });
  expect(by['chat gpt-4o'].inputs).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.provider.name': 'openai' });
  expect(by['chat gpt-4o'].outputs).toMatchObject({
    'gen_ai.response.model': 'gpt-4o-2024-08-06',
    'gen_ai.usage.input_tokens': 1000,
    'gen_ai.usage.output_tokens': 500,
    pricing: { price_source: 'AGP_OTLP_PRICE_TABLE', price_table_version: PRICES.version, price_model: 'gpt-4o', input_usd_per_1m: 2.5, output_usd_per_1m: 10 },
  });
  expect(by['chat claude-sonnet-4-5-20250929']).toMatchObject({ status: 'success', duration_ms: 500, cost_usd: CLAUDE_COST });
  expect(by['chat claude-sonnet-4-5-20250929'].outputs.pricing).toMatchObject({ price_table_version: PRICES.version, price_model: 'claude-sonnet-4-5' });
  expect(by.lookup_order).toMatchObject({ status: 'success', duration_ms: 120, cost_usd: null, error: null });
  expect(by.lookup_order.inputs).toMatchObject({ 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': 'call_1' });
  expect(by.issue_refund).toMatchObject({ status: 'error', duration_ms: 50, error: 'refund service down' });
}

/** An OTLP JSON span (hex ids, times in ns as strings) for hand-written export bodies. */
function jsonSpan(traceId: string, name: string, attributes: Record<string, string | number>) {
  const start = BigInt(Date.now()) * 1_000_000n;
  return {
    traceId,
    spanId: randomBytes(8).toString('hex'),
    name,
    kind: 1,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 25_000_000n),
    attributes: Object.entries(attributes).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: v } : { stringValue: v } })),
    status: {},
  };
}

const jsonExport = (service: string, spans: unknown[]) => ({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ scope: { name: 'hand-written' }, spans }] }] });

describeModes(
  'OTLP trace ingest',
  (platform, mode) => {
    const exporterOptions = (p: BootedPlatform) => ({ url: p.url + PATH, headers: { Authorization: `Bearer ${p.writeKey}` } });

    it('turns an SDK program’s protobuf export (gzip) into a run with its actions, durations, statuses and priced costs', async () => {
      const p = platform();
      const agent = `support-agent-${mode}-${randomBytes(3).toString('hex')}`;
      const exporter = new ProtobufExporter({ ...exporterOptions(p), compression: CompressionAlgorithm.GZIP });
      const { tracer, memory, provider } = program(exporter, agent);
      const traceId = await agentRun(tracer, Date.now() - 60_000);
      await provider.forceFlush();
      const run = await runWithActions(p, traceId, 4);
      expectAgentRun(run, agent);
      const stats = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
      expect(stats.status).toBe(200);
      expect(stats.body).toMatchObject({ total_runs: 1, total_actions: 4 });
      expect(stats.body.total_cost_usd).toBeCloseTo(GPT_COST + CLAUDE_COST, 10);

      // The same spans exported again, as the exporter's serializer encodes them: answered in full, stored once.
      const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans() as ReadableSpan[])!);
      for (let i = 0; i < 2; i++) {
        const again = await fetch(p.url + PATH, { method: 'POST', headers: { authorization: `Bearer ${p.writeKey}`, 'content-type': 'application/x-protobuf' }, body });
        expect(again.status).toBe(200);
        expect(again.headers.get('content-type')).toMatch(/^application\/x-protobuf/);
        expect(ProtobufTraceSerializer.deserializeResponse(new Uint8Array(await again.arrayBuffer())).partialSuccess?.rejectedSpans ?? 0).toEqual(0);
      }
      // A later run of the same agent becomes visible after the re-sent spans were processed (one ordered log).
      const later = await agentRun(tracer, Date.now() - 30_000);
      await provider.forceFlush();
      await runWithActions(p, later, 4);
      expectAgentRun(await runWithActions(p, traceId, 4), agent);
      const after = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
      expect(after.body).toMatchObject({ total_runs: 2, total_actions: 8 });
      expect(after.body.total_cost_usd).toBeCloseTo(2 * (GPT_COST + CLAUDE_COST), 10);
      const runs = await call(p, 'GET', `/api/v1/runs?agent_id=${agent}`, { key: p.readKey });
      expect(runs.body.runs.map((r: any) => r.id).sort()).toEqual([traceId, later].sort());
      await provider.shutdown();
    });

    it('turns an OTLP/HTTP JSON export, configured by the standard OTEL_* variables, into a run of its trace (the conversation is its session)', async () => {
      const p = platform();
      const agent = `json-agent-${mode}-${randomBytes(3).toString('hex')}`;
      const conversation = `conv-${randomBytes(6).toString('hex')}`;
      // As docs/operations.md says: the base endpoint (the exporter appends /v1/traces) and the percent-encoded header.
      const saved = { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, headers: process.env.OTEL_EXPORTER_OTLP_HEADERS };
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${p.url}/api/v1/otlp`;
      process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer%20${p.writeKey}`;
      let exporter: JsonExporter;
      try {
        exporter = new JsonExporter();
      } finally {
        for (const [name, value] of [['OTEL_EXPORTER_OTLP_ENDPOINT', saved.endpoint], ['OTEL_EXPORTER_OTLP_HEADERS', saved.headers]] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      const { tracer, provider } = program(exporter, agent);
      const traceId = await agentRun(tracer, Date.now() - 60_000, { conversation });
      await provider.forceFlush();
      expectAgentRun(await runWithActions(p, traceId, 4), agent);
      expect((await call(p, 'GET', `/api/v1/runs/${conversation}`, { key: p.readKey })).status).toBe(404);
      await provider.shutdown();
    });

    it('stores the same run and actions whatever the export order: all at once, children first (a run longer than the batch delay), agent span first, one span per export', async () => {
      const p = platform();
      const agent = `ordered-agent-${mode}-${randomBytes(3).toString('hex')}`;
      const t0 = Date.now() - 90_000;
      const exporter = new ProtobufExporter(exporterOptions(p));
      const batched = program(exporter, agent);
      const flush = () => batched.provider.forceFlush();
      const together = await agentRun(batched.tracer, t0);
      await flush();
      const childrenFirst = await agentRun(batched.tracer, t0, { between: flush });
      await flush();
      const rootFirst = await agentRun(batched.tracer, t0, { rootFirst: true, between: flush });
      await flush();
      // Every span its own export, as the SDK's simple processor sends them: the agent span first, then each child.
      const single = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': agent }), spanProcessors: [new SimpleSpanProcessor(new ProtobufExporter(exporterOptions(p)))] });
      const oneByOne = await agentRun(single.getTracer('support-agent-program', '1.0.0'), t0, { rootFirst: true });
      await single.forceFlush();

      const traces = [together, childrenFirst, rootFirst, oneByOne];
      const runs = [];
      for (const id of traces) runs.push(await runWithActions(p, id, 4));
      // The rows of each run, its trace and span ids (and the ledger ids derived from them) left out: all equal.
      const rows = runs.map((run, i) =>
        JSON.parse(JSON.stringify(run, (k, v) => (k === 'id' || k === 'otlp.span_id' ? undefined : v)).replaceAll(traces[i], '<trace>'), (k, v) =>
          k === 'actions' ? [...v].sort((a: any, b: any) => a.action_name.localeCompare(b.action_name)) : v,
        ),
      );
      for (const r of rows.slice(1)) expect(r).toEqual(rows[0]);
      expectAgentRun(runs[1], agent);
      const stats = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/agents/${agent}/stats`, { key: p.readKey });
        return r.body?.total_actions === 16 ? r.body : undefined;
      }, 30_000);
      expect(stats).toMatchObject({ total_runs: 4, total_actions: 16, runs_by_status: { completed: 4 } });
      expect(stats.total_cost_usd).toBeCloseTo(4 * (GPT_COST + CLAUDE_COST), 10);
      await Promise.all([batched.provider.shutdown(), single.shutdown()]);
    });

    it('answers partial success naming each span it cannot map (JSON, gzip), stores the others and ignores plain spans', async () => {
      const p = platform();
      const traceId = randomBytes(16).toString('hex');
      const service = `partial-${mode}-${randomBytes(3).toString('hex')}`;
      const spans = [
        jsonSpan(traceId, 'execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' }),
        jsonSpan(traceId, 'execute_tool', { 'gen_ai.operation.name': 'execute_tool' }),
        jsonSpan(traceId, 'chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 10 }),
        jsonSpan(traceId, 'create_agent helper', { 'gen_ai.operation.name': 'create_agent', 'gen_ai.agent.name': 'helper' }),
        jsonSpan(traceId, 'embeddings text-embedding-3-small', { 'gen_ai.operation.name': 'embeddings', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'text-embedding-3-small', 'gen_ai.usage.input_tokens': 50_000 }),
        jsonSpan(traceId, 'rerank', { 'gen_ai.operation.name': 'rerank', 'gen_ai.request.model': 'rerank-v3' }),
        jsonSpan(traceId, 'SELECT orders', { 'db.system.name': 'postgresql' }),
        // A step of the Vercel AI SDK's agent loop (@ai-sdk/otel): accepted, not stored (its calls are spans of their own).
        jsonSpan(traceId, 'step 1', { 'gen_ai.operation.name': 'agent_step' }),
      ];
      const res = await fetch(p.url + PATH, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.writeKey}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify(jsonExport(service, spans))),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = (await res.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
      expect(answer.partialSuccess.rejectedSpans).toBe('3');
      expect(answer.partialSuccess.errorMessage).toContain(`span ${spans[1].spanId} "execute_tool": execute_tool span without gen_ai.tool.name`);
      expect(answer.partialSuccess.errorMessage).toContain(`span ${spans[2].spanId} "chat": chat span without gen_ai.request.model or gen_ai.response.model`);
      expect(answer.partialSuccess.errorMessage).toContain(`span ${spans[5].spanId} "rerank": gen_ai.operation.name "rerank" is not mapped`);
      expect(answer.partialSuccess.errorMessage).not.toContain('create_agent helper');
      expect(answer.partialSuccess.errorMessage).not.toContain('SELECT orders');
      expect(answer.partialSuccess.errorMessage).not.toContain('step 1');
      // The mapped spans are stored, of the agent named by the resource's service.name; the embeddings call priced by
      // the price database (the operator's table does not hold the model); create_agent and agent_step are accepted, not stored.
      const run = await eventually(async () => {
        const r = await call(p, 'GET', `/api/v1/runs/${traceId}`, { key: p.readKey });
        return r.body?.action_count === 2 ? r.body : undefined;
      }, 30_000);
      const by = Object.fromEntries(run.actions.map((a: any) => [a.action_name, a]));
      expect(run).toMatchObject({ agent_id: service, action_count: 2 });
      expect(by.search).toMatchObject({ status: 'success', duration_ms: 25 });
      expect(by['embeddings text-embedding-3-small']).toMatchObject({ status: 'success', cost_usd: 0.001 });
      expect(by['embeddings text-embedding-3-small'].outputs).toEqual({ 'gen_ai.usage.input_tokens': 50_000, pricing: { price_source: expect.stringMatching(/^genai-prices@\d/), price_provider: 'openai', price_model: 'text-embedding-3-small', input_usd_per_1m: 0.02 } });
    });

    it('refuses malformed protobuf and JSON (400), a body over 5 MiB after gunzip (413) and other content types (415), writing nothing', async () => {
      const p = platform();
      const before = await p.eventCount();
      const post = (body: Buffer | string, type: string, more: Record<string, string> = {}) =>
        fetch(p.url + PATH, { method: 'POST', headers: { authorization: `Bearer ${p.writeKey}`, 'content-type': type, ...more }, body });
      const malformed = await post(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), 'application/x-protobuf');
      expect(malformed.status).toBe(400);
      expect(malformed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await malformed.json()) as { detail: string }).detail).toMatch(/^malformed protobuf ExportTraceServiceRequest/);
      const badJson = await post('{"resourceSpans": [', 'application/json');
      expect(badJson.status).toBe(400);
      expect(((await badJson.json()) as { detail: string }).detail).toMatch(/^malformed JSON/);
      const notExport = await post('{"resourceSpans": 7}', 'application/json');
      expect(notExport.status).toBe(400);
      expect(((await notExport.json()) as { detail: string }).detail).toContain('body.resourceSpans');
      const big = await post(Buffer.alloc(5 * 1024 * 1024 + 1, 0x0a), 'application/x-protobuf');
      expect(big.status).toBe(413);
      const bomb = await post(gzipSync(Buffer.alloc(6 * 1024 * 1024)), 'application/x-protobuf', { 'content-encoding': 'gzip' });
      expect(bomb.status).toBe(413);
      const text = await post('hello', 'text/plain');
      expect(text.status).toBe(415);
      expect(((await text.json()) as { detail: string }).detail).toContain('application/x-protobuf or application/json');
      const readKey = await fetch(p.url + PATH, { method: 'POST', headers: { authorization: `Bearer ${p.readKey}`, 'content-type': 'application/json' }, body: '{}' });
      expect(readKey.status).toBe(403);
      expect(await p.eventCount()).toBe(before);
    });
  },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'agp-otlp-prices-'));
    writeFileSync(join(dir, 'prices.json'), JSON.stringify(PRICES));
    return { env: { AGP_OTLP_PRICE_TABLE: join(dir, 'prices.json') } };
  },
);
