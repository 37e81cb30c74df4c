/**
 * The `agp.report` span of one ingest request (`withReportSpan`), with the OpenTelemetry SDK's in-memory exporter as
 * the tracer provider: a root CLIENT span linked once to each act span named by the reports' `traceparent`s (at most
 * 128, the rest counted; malformed ones skipped), whose context the request's headers carry; a failed request marks it
 * failed. Before any provider is registered: no span and no headers. Source: docs/sdk.md (Tracing).
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, expect, it } from 'vitest';
import { startMemoryTracing, type MemoryTracing } from '../../../test/support/spans.js';
import { loadTracing, REPORT_SPAN_MAX_LINKS, withReportSpan } from '../src/tracing.js';

let tracing: MemoryTracing | undefined;
afterAll(async () => {
  await tracing?.stop();
});

const spanId = (i: number) => i.toString(16).padStart(16, '0');
const tp = (i: number) => `00-${'ab'.repeat(16)}-${spanId(i + 1)}-01`;

it('with no tracer provider registered: no span, no headers', async () => {
  await loadTracing('test');
  const got = await withReportSpan([tp(0), undefined], async (headers) => headers);
  expect(got).toBeUndefined();
});

it('links each act once, at most 128, and passes its own context in the headers', async () => {
  tracing = startMemoryTracing();
  // 130 acts, each with two reports (an intervention and a ledger entry), a report without an act, a malformed one.
  const tps: Array<string | undefined> = [];
  for (let i = 0; i < REPORT_SPAN_MAX_LINKS + 2; i++) tps.push(tp(i), tp(i));
  tps.push(undefined, '00-not-a-traceparent-01');
  const headers = await withReportSpan(tps, async (h) => h);
  const [span] = tracing.spans();
  expect(span).toMatchObject({ name: 'agp.report', kind: SpanKind.CLIENT, parentSpanContext: undefined });
  expect(span.attributes).toEqual({ 'messaging.operation.type': 'send', 'messaging.operation.name': 'send', 'messaging.batch.message_count': tps.length, 'agp.report.links_dropped': 2 });
  expect(span.links.map((l) => l.context.spanId)).toEqual(Array.from({ length: REPORT_SPAN_MAX_LINKS }, (_, i) => spanId(i + 1)));
  expect(span.links[0].context).toMatchObject({ traceId: 'ab'.repeat(16), traceFlags: 1 });
  expect(headers).toEqual({ traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01` });
});

it('a request that fails marks its span failed with the HTTP status (or the error name) and rethrows', async () => {
  tracing!.reset();
  const refused = Object.assign(new Error('503 Service Unavailable'), { status: 503 });
  await expect(withReportSpan([tp(0)], () => Promise.reject(refused))).rejects.toBe(refused);
  await expect(withReportSpan([tp(0)], () => Promise.reject(new TypeError('fetch failed')))).rejects.toThrow('fetch failed');
  const spans = tracing!.spans();
  expect(spans.map((s) => [s.attributes['error.type'], s.status.code])).toEqual([
    ['503', SpanStatusCode.ERROR],
    ['TypeError', SpanStatusCode.ERROR],
  ]);
});
