import { createRequire } from 'node:module';
import { ROOT_CONTEXT, TraceFlags, context, trace } from '@opentelemetry/api';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { AlwaysOnSampler, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgSpansOnlyUnderRecordingParent } from './tracing.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// A sampler that records under an unsampled parent (not parent-based), so the instrumentation's own choice is what
// the test sees: unpatched it makes a recorded span under a sampled-out request, patched it makes none.
describe('pg spans under a sampled-out request (real PostgreSQL)', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ sampler: new AlwaysOnSampler(), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const instrumentation = new PgInstrumentation({ requireParentSpan: true });
  let client: Client;
  const unsampled = trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.NONE, isRemote: true });
  const pgSpansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId && s.instrumentationScope.name.includes('pg'));

  beforeAll(async () => {
    provider.register();
    instrumentation.setTracerProvider(provider);
    // Required (not imported) after the instrumentation is enabled, so that its require hook patches this copy.
    const pg = createRequire(import.meta.url)('pg') as typeof import('pg');
    client = new pg.Client(DATABASE_URL);
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    instrumentation.disable();
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  it('without the change, a query under a non-recording span is still a span (the instrumentation ignores sampling)', async () => {
    await context.with(trace.setSpan(ROOT_CONTEXT, unsampled), () => client.query('SELECT 1'));
    expect(pgSpansOf(unsampled.spanContext().traceId).length).toBeGreaterThan(0);
  });

  it('with it, a query under a non-recording span makes no span, and one under a recording span still does', async () => {
    pgSpansOnlyUnderRecordingParent();
    exporter.reset();
    await context.with(trace.setSpan(ROOT_CONTEXT, unsampled), () => client.query('SELECT 2'));
    expect(pgSpansOf(unsampled.spanContext().traceId)).toEqual([]);

    const request = trace.getTracer('test').startSpan('request');
    await context.with(trace.setSpan(ROOT_CONTEXT, request), () => client.query('SELECT 3'));
    request.end();
    const [span] = pgSpansOf(request.spanContext().traceId);
    expect(span.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(span.attributes['db.query.text'] ?? span.attributes['db.statement']).toBe('SELECT 3');
  });
});
