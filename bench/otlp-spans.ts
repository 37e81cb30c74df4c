/**
 * The spans of the OTLP benchmarks (bench/otlp.ts, bench/otlp-cpu.ts): 510 GenAI spans of 102 agent runs, each an
 * `invoke_agent` span, two `chat` spans with usage and `gen_ai.provider.name` (openai, `gpt-4o-2024-08-06`, 1,200 in
 * and 300 out) and two `execute_tool` spans, recorded by the OpenTelemetry SDK (2.x) under the resource
 * `service.name=bench-agent`, so the serializers encode them as an exporter would.
 */
import { context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** Record the benchmark's 510 spans and return them (the tracer provider is shut down). */
export async function benchSpans(): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'bench-agent' }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('bench');
  for (let r = 0; r < 102; r++) {
    const root = tracer.startSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' } });
    const parent = trace.setSpan(context.active(), root);
    for (let i = 0; i < 2; i++) tracer.startSpan('chat gpt-4o', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-2024-08-06', 'gen_ai.usage.input_tokens': 1200, 'gen_ai.usage.output_tokens': 300 } }, parent).end();
    for (let i = 0; i < 2; i++) tracer.startSpan('execute_tool lookup_order', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': `call_${i}` } }, parent).end();
    root.end();
  }
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}
