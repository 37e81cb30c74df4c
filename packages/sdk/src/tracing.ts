/**
 * The `agp.act` span: each `run.act` of an agent that uses OpenTelemetry (a tracer provider registered globally, e.g.
 * by `@opentelemetry/sdk-node`) is an INTERNAL span, child of the caller's active span, carrying the decision span
 * attributes the platform's `policy.decide` spans carry (@agp/contracts `DECISION_SPAN_ATTRIBUTES`: source `sdk`, the
 * tool and agent, the decision, rule, policy id and intervention type; never the arguments). The action's function
 * runs with the span active, so the spans it makes are its children.
 *
 * `@opentelemetry/api` is an optional peer dependency: {@link loadTracing} imports it once (`Governor.connect` awaits
 * it); when it is not installed every function here does nothing. With the API but no tracer provider registered,
 * `startSpan` answers the API's no-op span and nothing more is done (measured in docs/performance.md, `pnpm bench sdk`).
 * Source: docs/operations.md (Tracing); docs/sdk.md.
 */
import type { Attributes, Link, Span, SpanContext, Tracer } from '@opentelemetry/api';
import { decisionAttributes, decisionSubjectAttributes, type DecisionSpanFacts } from '@agp/contracts';

type Api = typeof import('@opentelemetry/api');

/** The API once loaded; null when it is not installed (or not loaded yet). */
let api: Api | null = null;
/** The SDK's tracer (instrumentation scope `@agp/sdk`): the API's proxy, which follows a provider registered later. */
let tracer: Tracer | null = null;
let loading: Promise<void> | null = null;

/**
 * Import `@opentelemetry/api` once, if it is installed (resolves either way; never rejects).
 * @param version the SDK's version, the tracer's instrumentation scope version.
 */
export function loadTracing(version: string): Promise<void> {
  loading ??= import('@opentelemetry/api').then(
    (m) => {
      api = m;
      tracer = m.trace.getTracer('@agp/sdk', version);
    },
    () => undefined,
  );
  return loading;
}

/** One `agp.act` span, recording (sampled in). */
export class ActSpan {
  /** {@link traceparent}, once computed ('' when the span is recording but not sampled). */
  private tp: string | undefined;

  constructor(private readonly span: Span) {}

  /**
   * The W3C `traceparent` of this span (`00-<trace id>-<span id>-<flags>`), which the reports of its act keep (in the
   * spool too) so the `agp.report` span that sends them links to it; undefined when the span is not sampled (recorded
   * only): a link to a span that is never exported would lead nowhere.
   */
  get traceparent(): string | undefined {
    if (this.tp === undefined) {
      const sc = this.span.spanContext();
      this.tp = (sc.traceFlags & SAMPLED) === SAMPLED ? `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags.toString(16).padStart(2, '0')}` : '';
    }
    return this.tp || undefined;
  }

  /** Record the decision `act` acts on (a later one, after an approval, replaces it and sets `agp.decision.approved`). */
  decided(d: DecisionSpanFacts, approved: boolean): void {
    this.span.setAttributes(decisionAttributes(d));
    if (approved) this.span.setAttribute('agp.decision.approved', true);
  }

  /**
   * Run `fn` with this span active (its spans are this span's children).
   * @returns what `fn` returns; @throws what it throws.
   */
  run<T>(fn: () => T): T {
    const a = api as Api;
    return a.context.with(a.trace.setSpan(a.context.active(), this.span), fn);
  }

  /**
   * Mark the span failed: status ERROR and `error.type` (the error's name). The message is left out: an error of the
   * agent's function may quote the arguments.
   */
  failed(err: unknown): void {
    const type = err instanceof Error ? err.name : typeof err;
    this.span.setAttribute('error.type', type);
    this.span.setStatus({ code: (api as Api).SpanStatusCode.ERROR });
  }

  /** End the span. */
  end(): void {
    this.span.end();
  }
}

const ACT_SPAN_OPTIONS = { kind: 0 /* SpanKind.INTERNAL */ };
/** `TraceFlags.SAMPLED`. */
const SAMPLED = 1;

/**
 * Open the `agp.act` span of one action (child of the active span), with its source, tool and agent set.
 * @returns the span, or null when there is nothing to record: the API is not installed, no tracer provider is
 *   registered, or the span is sampled out (its no-op span is ended at once).
 */
export function startActSpan(agentId: string, actionName: string): ActSpan | null {
  if (tracer === null) return null;
  const span = tracer.startSpan('agp.act', ACT_SPAN_OPTIONS);
  if (!span.isRecording()) {
    span.end();
    return null;
  }
  span.setAttributes(decisionSubjectAttributes('sdk', { agent_id: agentId, action_name: actionName }));
  return new ActSpan(span);
}

/**
 * Most links of one `agp.report` span: the OpenTelemetry SDK's default span link limit (`OTEL_SPAN_LINK_COUNT_LIMIT`,
 * 128). A batch of reports from more acts links to the first 128 (the oldest) and counts the others in
 * `agp.report.links_dropped`.
 */
export const REPORT_SPAN_MAX_LINKS = 128;

/** A W3C `traceparent` of version 00: trace id, span id, flags (lower-case hex). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Send one batch of reports inside an `agp.report` span: the messaging "send" of a batch (semantic conventions:
 * kind CLIENT, since each report's creation context is its act's span, not this one; `messaging.operation.type`
 * `send`, `messaging.batch.message_count`), a root span LINKED to the `agp.act` span of each report that has one (at
 * most {@link REPORT_SPAN_MAX_LINKS}, one per act however many reports it made). `send` runs with the span active and
 * gets the headers that carry its context (the global propagator's `traceparent`, `tracestate`), so the platform's
 * request span is its child.
 * With no tracer provider (or no `@opentelemetry/api`) no span is made and `send` gets no headers; a span sampled out
 * still passes its context on (its flags tell the platform not to record either).
 * @param traceparents the `traceparent` of each report's `agp.act` span, undefined for a report without one (a run's
 *   start or end, or an act that was not traced); a malformed one (an edited spool file) is skipped.
 * @param send posts the batch with the extra headers.
 * @returns what `send` resolves with. @throws what `send` throws (the span is then marked failed: `error.type` is the
 *   HTTP status, or the error's name).
 */
export async function withReportSpan<T>(traceparents: ReadonlyArray<string | undefined>, send: (headers: Record<string, string> | undefined) => Promise<T>): Promise<T> {
  if (tracer === null) return send(undefined);
  const a = api as Api;
  const links: Link[] = [];
  const seen = new Set<string>();
  let dropped = 0;
  for (const tp of traceparents) {
    if (tp === undefined || seen.has(tp)) continue;
    const m = TRACEPARENT.exec(tp);
    if (m === null) continue;
    seen.add(tp);
    if (links.length === REPORT_SPAN_MAX_LINKS) {
      dropped++;
      continue;
    }
    const sc: SpanContext = { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true };
    if (a.trace.isSpanContextValid(sc)) links.push({ context: sc });
  }
  const attributes: Attributes = { 'messaging.operation.type': 'send', 'messaging.operation.name': 'send', 'messaging.batch.message_count': traceparents.length };
  if (dropped > 0) attributes['agp.report.links_dropped'] = dropped;
  const span = tracer.startSpan('agp.report', { kind: 2 /* SpanKind.CLIENT */, links, attributes }, a.ROOT_CONTEXT);
  if (!a.trace.isSpanContextValid(span.spanContext())) {
    // No tracer provider: the API's no-op span, nothing to pass on.
    span.end();
    return send(undefined);
  }
  const ctx = a.trace.setSpan(a.ROOT_CONTEXT, span);
  const headers: Record<string, string> = {};
  a.propagation.inject(ctx, headers);
  try {
    return await a.context.with(ctx, () => send(headers));
  } catch (err) {
    const status = (err as { status?: unknown } | null)?.status;
    span.setAttribute('error.type', typeof status === 'number' ? String(status) : err instanceof Error ? err.name : typeof err);
    span.setStatus({ code: a.SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
