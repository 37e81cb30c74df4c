import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import protobuf from 'protobufjs';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, encodeTraceResponse, OtlpDecodeError, otlpEncodingOf, type OtlpSpan } from './decode.js';
import { mapSpans, otlpEventId } from './mapping.js';
import { PriceTableSchema, SHIPPED_PRICE_TABLE, loadPriceTable, priceOf, tokenCostUsd, type PriceTable } from './prices.js';

const TRACE = 'a'.repeat(32);
const NS = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z

/** A GenAI span of trace {@link TRACE}, started at `NS + from` ms and ended `ms` later. */
function span(spanId: string, attributes: Record<string, unknown>, o: Partial<OtlpSpan> = {}, from = 0, ms = 100): OtlpSpan {
  const start = NS + BigInt(from) * 1_000_000n;
  return { resource: { 'service.name': 'svc' }, scope: 's', traceId: TRACE, spanId, parentSpanId: '', name: String(attributes['gen_ai.operation.name'] ?? 'x'), kind: 1, startTimeUnixNano: start, endTimeUnixNano: start + BigInt(ms) * 1_000_000n, attributes, status: { code: 0, message: '' }, ...o };
}

const TABLE: PriceTable = { version: 'v-test', models: { 'gpt-4o': { input_usd_per_1m: 2.5, output_usd_per_1m: 10 }, 'gpt-4o-mini': { input_usd_per_1m: 0.15, output_usd_per_1m: 0.6 } } };

describe('the price table', () => {
  it('ships a versioned table of OpenAI and Anthropic models', () => {
    expect(PriceTableSchema.parse(SHIPPED_PRICE_TABLE).version).toMatch(/\S/);
    expect(priceOf(SHIPPED_PRICE_TABLE, 'gpt-4o')?.model).toBe('gpt-4o');
    expect(priceOf(SHIPPED_PRICE_TABLE, 'claude-sonnet-4-5-20250929')?.model).toBe('claude-sonnet-4-5');
    expect(priceOf(SHIPPED_PRICE_TABLE, 'claude-3-5-haiku-20241022')?.model).toBe('claude-3-5-haiku');
  });

  it('matches the exact name, else the longest dated prefix, ignoring a provider prefix and case', () => {
    expect(priceOf(TABLE, 'gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(priceOf(TABLE, 'gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(priceOf(TABLE, 'openai/GPT-4o')?.model).toBe('gpt-4o');
    expect(priceOf(TABLE, 'gpt-4')).toBeNull();
    expect(priceOf(TABLE, 'gpt-4oo')).toBeNull();
  });

  it('prices tokens in USD per 1M, without float noise', () => {
    expect(tokenCostUsd({ input_usd_per_1m: 2.5, output_usd_per_1m: 10 }, 1000, 500)).toBe(0.0075);
    expect(tokenCostUsd({ input_usd_per_1m: 0.1, output_usd_per_1m: 0.2 }, 3, 3)).toBe(0.0000009);
  });
});

describe('mapping GenAI spans to ingest events', () => {
  it('gives a run the agent of its invoke_agent span and the trace’s conversation id, for every span of it', () => {
    const { mapped, rejected } = mapSpans('acme', [
      span('0000000000000002', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' }, {}, 10),
      span('0000000000000001', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'conv-1' }, {}, 0, 500),
    ], TABLE);
    expect(rejected).toEqual([]);
    const events = mapped.flatMap((m) => m.events);
    expect(events.map((e) => e.type)).toEqual(['run.start', 'run.end', 'action.record']);
    expect(events.map((e) => (e.body as { run_id: string; agent_id: string }).run_id)).toEqual(['conv-1', 'conv-1', 'conv-1']);
    expect(events.map((e) => (e.body as { agent_id: string }).agent_id)).toEqual(['helper', 'helper', 'helper']);
    expect(events[1].body).toMatchObject({ status: 'completed', ended_at: '2026-01-01T00:00:00.500Z' });
  });

  it('derives event ids from the organisation, trace and span: the same span gives the same id', () => {
    expect(otlpEventId('acme', TRACE, '01', 'action')).toBe(otlpEventId('acme', TRACE, '01', 'action'));
    expect(otlpEventId('acme', TRACE, '01', 'action')).not.toBe(otlpEventId('globex', TRACE, '01', 'action'));
    expect(otlpEventId('acme', TRACE, '01', 'run.start')).not.toBe(otlpEventId('acme', TRACE, '01', 'run.end'));
  });

  it('records a model call of an unpriced model without a cost, saying why', () => {
    const { mapped } = mapSpans('acme', [span('0000000000000003', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'mistral-large', 'gen_ai.usage.input_tokens': 5 })], TABLE);
    const body = mapped[0].events[0].body as Record<string, any>;
    expect(body.cost_usd).toBeUndefined();
    expect(body.outputs.pricing).toEqual({ price_table_version: 'v-test', unpriced: 'no price for model mistral-large in price table v-test' });
  });

  it('refuses a span with bad usage, bad times or ids, or an unmapped operation, and ignores spans without gen_ai attributes', () => {
    const { mapped, rejected, ignored } = mapSpans('acme', [
      span('0000000000000004', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': -1 }),
      span('0000000000000005', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' }, { endTimeUnixNano: NS - 1n }),
      span('0000000000000000', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' }),
      span('0000000000000006', { 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'x' }),
      span('0000000000000007', { 'gen_ai.request.model': 'gpt-4o' }),
      span('0000000000000008', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'x'.repeat(300) }, { traceId: 'b'.repeat(32) }),
      span('0000000000000009', { 'http.request.method': 'GET' }),
    ], TABLE);
    expect(mapped).toEqual([]);
    expect(ignored).toBe(1);
    expect(rejected.map((r) => r.reason)).toEqual([
      'gen_ai.usage.input_tokens must be a non-negative integer (got -1)',
      'endTimeUnixNano is before startTimeUnixNano',
      'spanId must be 8 bytes, not all zero',
      'gen_ai.operation.name "embeddings" is not mapped; mapped: invoke_agent, execute_tool, chat, text_completion, generate_content',
      'has gen_ai.* attributes but no gen_ai.operation.name',
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
  it('replaces the shipped table with the operator’s file, and refuses a file that is not a price table, naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agp-prices-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(TABLE));
    expect(loadPriceTable(good)).toEqual(TABLE);
    expect(loadPriceTable(undefined)).toBe(SHIPPED_PRICE_TABLE);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ version: 'v', models: { 'gpt-4o': { input_usd_per_1m: -1, output_usd_per_1m: 1 } } }));
    expect(() => loadPriceTable(bad)).toThrow(/^AGP_OTLP_PRICE_TABLE: .*bad\.json is not a price table: models\.gpt-4o\.input_usd_per_1m: /);
    expect(() => loadPriceTable(join(dir, 'missing.json'))).toThrow(/^AGP_OTLP_PRICE_TABLE: cannot read .*missing\.json as JSON/);
  });
});
