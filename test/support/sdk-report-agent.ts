/**
 * An agent process for test/e2e/sdk-report-tracing.test.ts (run with `node --import tsx`), in one of four modes:
 *   traced  — the OpenTelemetry SDK's in-memory exporter registered as its tracer provider; one run acts twice:
 *             `lookup` (allowed: one ledger report) and `drop_table` (denied by the agent's policy: an intervention and
 *             a ledger report, both from one act), then closes (every report delivered);
 *   spool   — traced likewise, with a durable spool and a flush interval of ten minutes: acts once (`lookup`), then
 *             closes without waiting, so the reports stay in the spool;
 *   resend  — traced by a provider of its own, opens the same spool and closes once the reports left there are sent;
 *   untraced — no tracer provider, only the W3C propagator registered and a caller's span context active: acts once.
 * On stdout: one JSON document `{spans}`, each ended span's name, kind, ids, parent span id, attributes and links.
 * Usage: sdk-report-agent.ts <mode> <url> <key> <agent> [spoolDir]
 */
import { context, propagation, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Governor } from '../../packages/sdk/src/index.js';
import { startMemoryTracing } from './spans.js';

/** One ended span as the agent prints it. */
export interface PrintedReportSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string; traceFlags: number }>;
}

/** The caller's span context the untraced agent has active (as if extracted from a request it serves). */
export const UNTRACED_CALLER = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };

async function main(): Promise<void> {
  const [mode, url, key, agentId, spoolDir] = process.argv.slice(2);
  const tracing = mode === 'untraced' ? null : startMemoryTracing();
  if (tracing === null) propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const gov = await Governor.connect({ url, key, agentId, onReportError: () => undefined, ...(spoolDir ? { spoolDir } : {}), ...(mode === 'spool' ? { flushIntervalMs: 600_000 } : {}) });
  if (mode === 'traced') {
    const run = gov.startRun();
    await run.act('lookup', { q: 'a' }, () => 'found');
    await run.act('drop_table', { table: 't' }, () => 'dropped', { onBlocked: 'return' });
    await run.end();
  } else if (mode === 'spool') {
    await gov.startRun().act('lookup', { q: 'b' }, () => 'found');
  } else if (mode === 'untraced') {
    const caller = trace.setSpanContext(context.active(), { ...UNTRACED_CALLER, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    await context.with(caller, () => gov.startRun().act('lookup', { q: 'c' }, () => 'found'));
  }
  const { pending } = await gov.close({ timeoutMs: mode === 'spool' ? 0 : 20_000 });
  if (mode === 'spool' ? pending === 0 : pending !== 0) throw new Error(`${mode}: ${pending} report(s) pending after close`);
  const spans: PrintedReportSpan[] = (tracing?.spans() ?? []).map((s) => ({
    name: s.name,
    kind: s.kind,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId ?? null,
    attributes: { ...s.attributes },
    links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, traceFlags: l.context.traceFlags })),
  }));
  await tracing?.stop();
  process.stdout.write(JSON.stringify({ spans }));
}

// Run as a script only: the test imports this module for its types.
if (process.argv[1]?.endsWith('sdk-report-agent.ts')) await main();
