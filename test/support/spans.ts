import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** An in-memory tracer provider registered globally for one test file (W3C propagation, async-hooks context). */
export interface MemoryTracing {
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** Forget the spans ended so far. */
  reset(): void;
  /** Unregister the provider (the API is back to its no-op tracer, context manager and propagator). */
  stop(): Promise<void>;
}

/**
 * Register a tracer provider that keeps every ended span in memory (the SDK's own `InMemorySpanExporter` behind a
 * `SimpleSpanProcessor`): what a test asserts is what an exporter would have sent. Call `stop()` in `afterAll`.
 */
export function startMemoryTracing(): MemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
