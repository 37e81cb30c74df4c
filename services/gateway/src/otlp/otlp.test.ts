import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import protobuf from 'protobufjs';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeTraceRequest, encodeTraceResponse, OtlpDecodeError, otlpEncodingOf, type OtlpSpan } from './decode.js';
import { mapSpans, otlpEventId } from './mapping.js';
import { GENAI_PRICES_SOURCE, loadPriceDatabase, loadPriceTable, priceCall, priceOf, tokenCostUsd, type PriceTable } from './prices.js';

const TRACE = 'a'.repeat(32);
const NS = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z

/** A GenAI span of trace {@link TRACE}, started at `NS + from` ms and ended `ms` later. */
function span(spanId: string, attributes: Record<string, unknown>, o: Partial<OtlpSpan> = {}, from = 0, ms = 100): OtlpSpan {
  const start = NS + BigInt(from) * 1_000_000n;
  return { resource: { 'service.name': 'svc' }, scope: 's', traceId: TRACE, spanId, parentSpanId: '', name: String(attributes['gen_ai.operation.name'] ?? 'x'), kind: 1, startTimeUnixNano: start, endTimeUnixNano: start + BigInt(ms) * 1_000_000n, attributes, status: { code: 0, message: '' }, ...o };
}

const TABLE: PriceTable = { version: 'v-test', models: { 'gpt-4o': { input_usd_per_1m: 2.5, output_usd_per_1m: 10 }, 'gpt-4o-mini': { input_usd_per_1m: 0.15, output_usd_per_1m: 0.6 } } };

beforeAll(loadPriceDatabase);

describe('prices', () => {
  const at = new Date('2026-01-01T00:00:00Z');

  it('matches the operator table by exact name, else the longest entry of which it is a dated name, ignoring a provider prefix and case', () => {
    expect(priceOf(TABLE, 'gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(priceOf(TABLE, 'gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(priceOf(TABLE, 'openai/GPT-4o')?.model).toBe('gpt-4o');
    expect(priceOf(TABLE, 'gpt-4')).toBeNull();
    expect(priceOf(TABLE, 'gpt-4oo')).toBeNull();
    expect(priceOf({ version: 'v', models: { 'gpt-4o': TABLE.models['gpt-4o'] } }, 'gpt-4o-mini')).toBeNull();
  });

  it('prices tokens in USD per 1M, without float noise', () => {
    expect(tokenCostUsd({ input_usd_per_1m: 2.5, output_usd_per_1m: 10 }, 1000, 500)).toBe(0.0075);
    expect(tokenCostUsd({ input_usd_per_1m: 0.1, output_usd_per_1m: 0.2 }, 3, 3)).toBe(0.0000009);
  });

  it('names the installed price database version', () => {
    const installed = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../../node_modules/@pydantic/genai-prices/package.json'), 'utf8')) as { version: string };
    expect(GENAI_PRICES_SOURCE).toBe(`genai-prices@${installed.version}`);
  });

  it('prices from the price database by provider and model, dated names and tiers included, recording source and match', () => {
    expect(priceCall(null, { model: 'gpt-4o-2024-08-06', provider: 'openai', inputTokens: 1000, outputTokens: 500, at })).toEqual({
      cost_usd: 0.0075,
      pricing: { price_source: GENAI_PRICES_SOURCE, price_provider: 'openai', price_model: 'gpt-4o', input_usd_per_1m: 2.5, output_usd_per_1m: 10 },
    });
    const claude = priceCall(null, { model: 'claude-sonnet-4-5-20250929', provider: 'anthropic', inputTokens: 2000, outputTokens: 300, at });
    expect(claude.cost_usd).toBe(0.0105);
    expect(claude.pricing).toMatchObject({ price_provider: 'anthropic', price_model: 'claude-sonnet-4-5', input_usd_per_1m: { base: 3, tiers: [{ start: 200000, price: 6 }] } });
    // The semantic conventions' provider names (gcp.gemini) and a provider prefix on the model find the database's provider.
    expect(priceCall(null, { model: 'gemini-2.5-pro', provider: 'gcp.gemini', inputTokens: 1000, at }).pricing).toMatchObject({ price_provider: 'google', price_model: 'gemini-2.5-pro' });
    expect(priceCall(null, { model: 'openai/gpt-4o', inputTokens: 1000, at }).pricing).toMatchObject({ price_provider: 'openai', price_model: 'gpt-4o' });
    // Embeddings: input tokens only.
    expect(priceCall(null, { model: 'text-embedding-3-small', provider: 'openai', inputTokens: 1_000_000, at })).toMatchObject({ cost_usd: 0.02, pricing: { price_model: 'text-embedding-3-small', input_usd_per_1m: 0.02 } });
    // No token count: the match is recorded, no cost.
    expect(priceCall(null, { model: 'gpt-4o', provider: 'openai', at }).cost_usd).toBeUndefined();
  });

  it('lets the operator table win over the database, and falls back to the database for models the table lacks', () => {
    const mine: PriceTable = { version: 'contract-7', models: { 'gpt-4o': { input_usd_per_1m: 1, output_usd_per_1m: 4 } } };
    expect(priceCall(mine, { model: 'gpt-4o-2024-08-06', provider: 'openai', inputTokens: 1000, outputTokens: 500, at })).toEqual({
      cost_usd: 0.003,
      pricing: { price_source: 'AGP_OTLP_PRICE_TABLE', price_table_version: 'contract-7', price_model: 'gpt-4o', input_usd_per_1m: 1, output_usd_per_1m: 4 },
    });
    expect(priceCall(mine, { model: 'gpt-4o-mini', provider: 'openai', inputTokens: 1000, at }).pricing).toMatchObject({ price_source: GENAI_PRICES_SOURCE, price_model: 'gpt-4o-mini' });
  });

  it('gives an unknown model no cost and says where it looked', () => {
    expect(priceCall(TABLE, { model: 'acme-llm-9', provider: 'acme', inputTokens: 5, at })).toEqual({
      pricing: { price_source: `AGP_OTLP_PRICE_TABLE v-test or ${GENAI_PRICES_SOURCE}`, unpriced: `no price for model acme-llm-9 (provider acme) in AGP_OTLP_PRICE_TABLE v-test or ${GENAI_PRICES_SOURCE}` },
    });
    // A model the database does not offer at the named provider is not priced at another provider's price.
    expect(priceCall(null, { model: 'gpt-4o', provider: 'aws.bedrock', inputTokens: 5, at }).cost_usd).toBeUndefined();
  });
});

describe('mapping GenAI spans to ingest events', () => {
  it('files every span of a trace under the trace (run) and the resource service.name (agent); invoke_agent names the run and its session', () => {
    const { mapped, rejected } = mapSpans('acme', [
      span('0000000000000002', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' }, {}, 10),
      span('0000000000000001', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'conv-1' }, {}, 0, 500),
    ], TABLE);
    expect(rejected).toEqual([]);
    const events = mapped.flatMap((m) => m.events);
    expect(events.map((e) => e.type)).toEqual(['run.start', 'run.end', 'action.record']);
    expect(events.map((e) => (e.body as { run_id: string }).run_id)).toEqual([TRACE, TRACE, TRACE]);
    expect(events.map((e) => (e.body as { agent_id: string }).agent_id)).toEqual(['svc', 'svc', 'svc']);
    expect(events[0].body).toMatchObject({ name: 'helper', session_id: 'conv-1', metadata: { 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'conv-1', 'service.name': 'svc' } });
    expect(events[1].body).toMatchObject({ status: 'completed', ended_at: '2026-01-01T00:00:00.500Z' });
  });

  it('gives each span the same events whether it is exported alone, with its trace, or in another order', () => {
    const spans = [
      span('0000000000000001', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'conv-1' }, {}, 0, 500),
      span('0000000000000002', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' }, {}, 10),
      span('0000000000000003', { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 10 }, {}, 200),
    ];
    const together = mapSpans('acme', spans, TABLE).mapped.flatMap((m) => m.events);
    const apart = [...spans].reverse().flatMap((s) => mapSpans('acme', [s], TABLE).mapped.flatMap((m) => m.events));
    expect(new Set(apart.map((e) => JSON.stringify(e)))).toEqual(new Set(together.map((e) => JSON.stringify(e))));
    expect(apart).toHaveLength(4);
  });

  it('derives event ids from the organisation, trace and span: the same span gives the same id', () => {
    expect(otlpEventId('acme', TRACE, '01', 'action')).toBe(otlpEventId('acme', TRACE, '01', 'action'));
    expect(otlpEventId('acme', TRACE, '01', 'action')).not.toBe(otlpEventId('globex', TRACE, '01', 'action'));
    expect(otlpEventId('acme', TRACE, '01', 'run.start')).not.toBe(otlpEventId('acme', TRACE, '01', 'run.end'));
  });

  it('records a model call of an unpriced model without a cost, saying why', () => {
    const { mapped } = mapSpans('acme', [span('0000000000000003', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'acme-llm-9', 'gen_ai.usage.input_tokens': 5 })], TABLE);
    const body = mapped[0].events[0].body as Record<string, any>;
    expect(body.cost_usd).toBeUndefined();
    expect(body.outputs.pricing.unpriced).toBe(`no price for model acme-llm-9 in AGP_OTLP_PRICE_TABLE v-test or ${GENAI_PRICES_SOURCE}`);
  });

  it('maps an embeddings span to a priced action with its input tokens, and accepts create_agent without storing it', () => {
    const { mapped, rejected, ignored } = mapSpans('acme', [
      span('0000000000000004', { 'gen_ai.operation.name': 'embeddings', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'text-embedding-3-small', 'gen_ai.usage.input_tokens': 50_000, 'gen_ai.embeddings.dimension.count': 1536 }),
      span('0000000000000005', { 'gen_ai.operation.name': 'create_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.request.model': 'gpt-4o' }),
    ], null);
    expect(rejected).toEqual([]);
    expect(ignored).toBe(1);
    expect(mapped).toHaveLength(1);
    expect(mapped[0].events[0]).toMatchObject({
      type: 'action.record',
      body: {
        action_name: 'embeddings text-embedding-3-small',
        cost_usd: 0.001,
        inputs: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'text-embedding-3-small', 'gen_ai.embeddings.dimension.count': 1536 },
        outputs: { 'gen_ai.usage.input_tokens': 50_000, pricing: { price_source: GENAI_PRICES_SOURCE, price_provider: 'openai', price_model: 'text-embedding-3-small' } },
      },
    });
  });

  it("accepts the Vercel AI SDK's spans of one generateText call (invoke_agent, agent_step, chat, execute_tool): the run and its calls stored, the step not, nothing refused", () => {
    // The attributes @ai-sdk/otel 1.0 sets on each span kind (its OpenTelemetry integration for ai 7).
    const { mapped, rejected, ignored } = mapSpans('acme', [
      span('0000000000000011', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 12 }),
      span('0000000000000012', { 'gen_ai.operation.name': 'agent_step' }),
      span('0000000000000013', { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 12 }),
      span('0000000000000014', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': 'call_1' }),
    ], TABLE);
    expect(rejected).toEqual([]);
    expect(ignored).toBe(1);
    expect(mapped.flatMap((m) => m.events.map((e) => [e.type, (e.body as { action_name?: string }).action_name]))).toEqual([
      ['run.start', undefined],
      ['run.end', undefined],
      ['action.record', 'chat gpt-4o'],
      ['action.record', 'lookup_order'],
    ]);
  });

  it('refuses a span with bad usage, bad times or ids, an unmapped operation or no service.name, and ignores spans without gen_ai attributes', () => {
    const { mapped, rejected, ignored } = mapSpans('acme', [
      span('0000000000000004', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': -1 }),
      span('0000000000000005', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' }, { endTimeUnixNano: NS - 1n }),
      span('0000000000000000', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' }),
      span('0000000000000006', { 'gen_ai.operation.name': 'rerank', 'gen_ai.request.model': 'x' }),
      span('0000000000000007', { 'gen_ai.request.model': 'gpt-4o' }),
      span('0000000000000008', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' }, { resource: {} }),
      span('0000000000000009', { 'gen_ai.operation.name': 'invoke_agent' }, { resource: { 'service.name': 'x'.repeat(300) } }),
      span('000000000000000a', { 'http.request.method': 'GET' }),
    ], TABLE);
    expect(mapped).toEqual([]);
    expect(ignored).toBe(1);
    expect(rejected.map((r) => r.reason)).toEqual([
      'gen_ai.usage.input_tokens must be a non-negative integer (got -1)',
      'endTimeUnixNano is before startTimeUnixNano',
      'spanId must be 8 bytes, not all zero',
      'gen_ai.operation.name "rerank" is not mapped; mapped: invoke_agent, execute_tool, chat, text_completion, generate_content, embeddings; accepted and not stored: create_agent, agent_step',
      'has gen_ai.* attributes but no gen_ai.operation.name',
      'names no agent: the resource has no service.name',
      expect.stringMatching(/^run\.start body\.agent_id: .*; run\.end body\.agent_id: /),
    ]);
  });
});

describe('OTLP encodings', () => {
  it('knows protobuf and JSON content types only', () => {
    expect(otlpEncodingOf('application/x-protobuf')).toBe('protobuf');
    expect(otlpEncodingOf('application/json; charset=utf-8')).toBe('json');
    expect(otlpEncodingOf('text/plain')).toBeNull();
    expect(otlpEncodingOf(undefined)).toBeNull();
  });

  it('decodes OTLP JSON ids, times and attribute values', () => {
    const body = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] }, scopeSpans: [{ scope: { name: 'sc' }, spans: [{ traceId: TRACE.toUpperCase(), spanId: '0102030405060708', name: 'n', startTimeUnixNano: '1767225600000000000', endTimeUnixNano: 1767225600000000, attributes: [{ key: 'i', value: { intValue: '42' } }, { key: 'a', value: { arrayValue: { values: [{ stringValue: 'x' }, { boolValue: true }] } } }], status: { code: 2, message: 'boom' } }] }] }] };
    const [s] = decodeTraceRequest(Buffer.from(JSON.stringify(body)), 'json');
    expect(s).toMatchObject({ resource: { 'service.name': 'svc' }, scope: 'sc', traceId: TRACE, spanId: '0102030405060708', parentSpanId: '', startTimeUnixNano: NS, endTimeUnixNano: 1767225600000000n, attributes: { i: 42, a: ['x', true] }, status: { code: 2, message: 'boom' } });
    expect(() => decodeTraceRequest(Buffer.from('{"resourceSpans":[{"scopeSpans":3}]}'), 'json')).toThrow(OtlpDecodeError);
    expect(() => decodeTraceRequest(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), 'protobuf')).toThrow(/^malformed protobuf/);
  });

  it('encodes a partial success the OpenTelemetry exporters decode, and full success as an empty message', () => {
    const answer = ProtobufTraceSerializer.deserializeResponse(new Uint8Array(encodeTraceResponse({ rejectedSpans: 2, errorMessage: 'why' }, 'protobuf')));
    expect(Number(answer.partialSuccess?.rejectedSpans)).toBe(2);
    expect(answer.partialSuccess?.errorMessage).toBe('why');
    expect(encodeTraceResponse({ rejectedSpans: 0, errorMessage: '' }, 'protobuf').length).toBe(0);
    expect(JSON.parse(encodeTraceResponse({ rejectedSpans: 1, errorMessage: 'x' }, 'json').toString())).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: 'x' } });
  });

  it('decodes with the descriptor generated from the vendored opentelemetry-proto files (scripts/otlp-proto.mjs)', () => {
    const dir = resolve(import.meta.dirname, '../../proto');
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => resolve(dir, target);
    root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
    root.resolveAll();
    const committed = JSON.parse(readFileSync(resolve(import.meta.dirname, 'otlp-trace.proto.json'), 'utf8'));
    expect(JSON.parse(JSON.stringify(root.toJSON({ keepComments: false })))).toEqual(committed);
  });
});

describe('AGP_OTLP_PRICE_TABLE', () => {
  it('reads the operator’s file, and refuses a file that is not a price table, naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agp-prices-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(TABLE));
    expect(loadPriceTable(good)).toEqual(TABLE);
    expect(loadPriceTable(undefined)).toBeNull();
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ version: 'v', models: { 'gpt-4o': { input_usd_per_1m: -1, output_usd_per_1m: 1 } } }));
    expect(() => loadPriceTable(bad)).toThrow(/^AGP_OTLP_PRICE_TABLE: .*bad\.json is not a price table: models\.gpt-4o\.input_usd_per_1m: /);
    expect(() => loadPriceTable(join(dir, 'missing.json'))).toThrow(/^AGP_OTLP_PRICE_TABLE: cannot read .*missing\.json as JSON/);
  });
});
