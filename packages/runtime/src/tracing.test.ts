import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, reply, type FakeLlm } from '../../../test/support/fake-llm.js';
import { startMemoryTracing, type MemoryTracing } from '../../../test/support/spans.js';
import { completeJson, ProviderError } from './llm.js';
import { activeTraceIds, startTracing, tracingConfigured } from './tracing.js';

describe('tracingConfigured', () => {
  it('is on only with an OTLP endpoint and without OTEL_SDK_DISABLED=true', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_SERVICE_NAME: 'agp' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' })).toBe(true);
  });

  it('starts nothing when off', async () => {
    await expect(startTracing('agp', {})).resolves.toBeUndefined();
  });
});

describe('spans of the runtime (in-memory exporter)', () => {
  let tracing: MemoryTracing;
  let llm: FakeLlm;
  beforeAll(async () => {
    tracing = startMemoryTracing();
    llm = await startFakeLlm();
  });
  afterAll(async () => {
    await llm.close();
    await tracing.stop();
  });

  it('log lines get the active span’s trace_id and span_id, and nothing outside a span', () => {
    expect(activeTraceIds()).toEqual({});
    const span = trace.getTracer('test').startSpan('work');
    const ids = context.with(trace.setSpan(context.active(), span), () => activeTraceIds());
    span.end();
    expect(ids).toEqual({ trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
  });

  it('a model call is a GenAI CLIENT span with the model and token usage, without the messages', async () => {
    tracing.reset();
    const settings = { apiKey: 'k', baseURL: llm.url, model: 'gpt-test', timeoutMs: 5000 };
    await completeJson(settings, [{ role: 'user', content: 'genai-span-ok secret text' }], { maxRequests: 1 });
    const [span] = tracing.spans().filter((s) => s.name === 'chat gpt-test');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 10,
      'server.address': '127.0.0.1',
      'agp.llm.requests': 1,
    });
    expect(JSON.stringify(span.attributes)).not.toContain('secret text');
  });

  it('a failed model call marks its span failed with error.type', async () => {
    tracing.reset();
    llm.script('genai-span-fail', reply.status(400));
    const settings = { apiKey: 'k', baseURL: llm.url, model: 'gpt-test', timeoutMs: 5000 };
    await expect(completeJson(settings, [{ role: 'user', content: 'genai-span-fail' }], { maxRequests: 1 })).rejects.toBeInstanceOf(ProviderError);
    const [span] = tracing.spans().filter((s) => s.name === 'chat gpt-test');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toMatchObject({ 'error.type': '400', 'agp.llm.requests': 1 });
  });
});
