/**
 * The spans of messages between AGP's parts, by the OpenTelemetry messaging semantic conventions
 * (`messaging.system`, `messaging.operation.type`, `messaging.destination.name`):
 * - {@link withSendSpan}: a request/reply call (CLIENT span `send <subject>`); the reply's server span
 *   (`process <subject>`, wire.ts) is its child through the `traceparent` the request carries;
 * - {@link withPublishSpan}: an append to the ingest log (PRODUCER span `send <subject>`), whose `traceparent` the
 *   message carries and the events it causes keep in their metadata;
 * - {@link withConsumeSpan}: a batch of ingest messages settled by a consumer (CONSUMER span `process <consumer>`),
 *   linked to each message's producer span;
 * - {@link withProjectionSpan}: a batch of stored events applied by a projection (`project <name>`), linked to the
 *   `traceparent` of each event that has one;
 * - {@link tracedDecision}: a policy decision (`policy.decide`: its decision, rule, policy, intervention type, tool and agent).
 * With no tracer provider registered (tracing off: `startTracing` in @agp/runtime) every span is the API's no-op span,
 * no context is injected, and a `traceparent` the caller already carries passes through unchanged.
 * Source: architecture §5 (operations), docs/operations.md (Tracing).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type SpanContext } from '@opentelemetry/api';
import { decisionAttributes, decisionSubjectAttributes, type DecisionSpanFacts, type DecisionSpanSource, type DecisionSubject } from '@agp/contracts';
import { counter } from '@agp/runtime';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';

/** The tracer of the bus's spans (instrumentation scope `agp.bus`). */
export const busTracer = trace.getTracer('agp.bus');

/** `messaging.system` of AGP's messages: NATS in distributed mode (the in-process transport and log stand in for it). */
export const MESSAGING_SYSTEM = 'nats';

/** The `traceparent` of the span active in `ctx` (W3C trace context), or undefined when no propagator or span is set. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The span context a W3C `traceparent` names, or undefined when it names none (missing, malformed, tracing off). */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  if (!traceparent) return undefined;
  return trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
}

/** Mark `span` failed (status ERROR, the error recorded) when `err` is a server-side failure (5xx or no status). */
function fail(span: Span, err: unknown): void {
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && status < 500) return;
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
}

/** Run `fn` inside `span` made active, ending it after; a thrown error marks it failed ({@link fail}) and is rethrown. */
async function within<T>(span: Span, fn: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (err) {
    fail(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Send a request/reply message inside a CLIENT span `send <subject>` (child of the active span, else of the span
 * `traceparent` names).
 * @param fn sends the request; it gets the `traceparent` to carry: the new span's, or `traceparent` (the caller's)
 *   unchanged when tracing is off.
 * @throws what `fn` throws (the span is marked failed for a 5xx or an error without a status).
 */
export function withSendSpan<T>(subject: string, traceparent: string | undefined, fn: (traceparent: string | undefined) => Promise<T>): Promise<T> {
  const parent = parentFor(traceparent);
  const span = busTracer.startSpan(`send ${subject}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': MESSAGING_SYSTEM, 'messaging.operation.type': 'send', 'messaging.destination.name': subject } }, parent);
  return context.with(parent, () => within(span, async () => fn(traceparentOf() ?? traceparent)));
}

/** The parent of a new span: the active context when a span is active, else the one `traceparent` names (if any). */
function parentFor(traceparent: string | undefined): Context {
  const active = context.active();
  return trace.getSpan(active) || !traceparent ? active : propagation.extract(active, { traceparent });
}

/**
 * Publish an ingest-log message inside a PRODUCER span `send <subject>` (child of the active span, else of the span
 * `traceparent` names).
 * @param fn publishes; it gets the `traceparent` the message is to carry (the new span's, or `traceparent` unchanged
 *   when tracing is off).
 * @throws what `fn` throws.
 */
export function withPublishSpan<T>(subject: string, traceparent: string | undefined, attributes: Attributes, fn: (traceparent: string | undefined) => Promise<T>): Promise<T> {
  const parent = parentFor(traceparent);
  const span = busTracer.startSpan(
    `send ${subject}`,
    { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': MESSAGING_SYSTEM, 'messaging.operation.type': 'send', 'messaging.destination.name': subject, ...attributes } },
    parent,
  );
  return context.with(parent, () => within(span, async () => fn(traceparentOf() ?? traceparent)));
}

/**
 * The links to the producers named by `traceparents` (duplicates removed), and the parent to use: the producer's
 * context when every one of them is in the same trace (a batch from one request continues its trace), else none
 * (a new trace, linked to each).
 */
function producerLinks(traceparents: Array<string | undefined>): { links: Link[]; parent: Context } {
  const seen = new Set<string>();
  const links: Link[] = [];
  for (const tp of traceparents) {
    const sc = spanContextOf(tp);
    if (!sc || seen.has(sc.spanId)) continue;
    seen.add(sc.spanId);
    links.push({ context: sc });
  }
  const traces = new Set(links.map((l) => l.context.traceId));
  const parent = traces.size === 1 ? trace.setSpanContext(ROOT_CONTEXT, links[0].context) : ROOT_CONTEXT;
  return { links, parent };
}

/**
 * Settle a batch of ingest messages inside a CONSUMER span `process <consumer>` linked to each message's producer
 * span (the `traceparent` its payload carries); the batch's database work (pg spans) are its children.
 * @param traceparents one per message (undefined for a message without one).
 * @throws what `fn` throws.
 */
export function withConsumeSpan<T>(consumer: string, subjectFilter: string, traceparents: Array<string | undefined>, fn: () => Promise<T>): Promise<T> {
  const { links, parent } = producerLinks(traceparents);
  const span = busTracer.startSpan(
    `process ${consumer}`,
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'messaging.system': MESSAGING_SYSTEM,
        'messaging.operation.type': 'process',
        'messaging.destination.name': subjectFilter,
        'messaging.consumer.group.name': consumer,
        'messaging.batch.message_count': traceparents.length,
      },
    },
    parent,
  );
  return context.with(trace.setSpan(parent, span), () => within(span, fn));
}

/**
 * Apply a batch of stored events in a projection inside an INTERNAL span `project <name>` linked to the `traceparent`
 * of each event that has one (its metadata's), so a request's trace shows where its events were applied.
 * @throws what `fn` throws.
 */
export function withProjectionSpan<T>(projection: string, traceparents: Array<string | undefined>, fn: () => Promise<T>): Promise<T> {
  const { links, parent } = producerLinks(traceparents);
  const span = busTracer.startSpan(`project ${projection}`, { kind: SpanKind.INTERNAL, links, attributes: { 'agp.projection': projection, 'agp.events': traceparents.length } }, parent);
  return context.with(trace.setSpan(parent, span), () => within(span, fn));
}

/**
 * The same projection with its handler run inside {@link withProjectionSpan} (`project <name>`, linked to each event's
 * `traceparent`): what a catch-up subscription and an inline apply (in the append's transaction) both run, so a
 * request's trace shows where its events were applied either way. `P` is any projection shape whose handler takes the
 * events first (a catch-up subscription's options, an `InlineProjection`).
 */
export function tracedProjection<P extends { name: string; handler: (events: StoredEvent[], tx: SqlExecutor) => Promise<void> }>(p: P): P {
  return { ...p, handler: (events: StoredEvent[], tx: SqlExecutor) => withProjectionSpan(p.name, events.map((e) => e.metadata?.traceparent), () => p.handler(events, tx)) };
}

/** Where a decision was taken: the decision API (`policies.evaluate`) or a counterfactual evaluation (replay). */
export type DecisionSource = Exclude<DecisionSpanSource, 'sdk'>;

const decisions = counter('agp_policy_decisions_total', 'Policy decisions taken, by where (evaluate: the decision API; counterfactual: replay) and decision', ['source', 'decision']);

/**
 * Take a policy decision (`decide` of @agp/policy-engine, passed as `fn`) about `subject` inside an INTERNAL span
 * `policy.decide` (child of the active span) that carries the decision span attributes of @agp/contracts
 * (`agp.decision.source`, `gen_ai.tool.name`, `gen_ai.agent.id`, then `agp.decision`, `agp.decision.rule`,
 * `agp.decision.policy_id`, `agp.decision.intervention_type`, null values left out; the agent SDK's `agp.act` span
 * carries the same), and count it in `agp_policy_decisions_total{source, decision}`. The action's arguments never
 * reach the span (no PII in traces).
 * @returns what `fn` returns.
 * @throws what `fn` throws (the span is marked failed).
 */
export function tracedDecision<T extends DecisionSpanFacts>(source: DecisionSource, subject: DecisionSubject, fn: () => T): T {
  const span = busTracer.startSpan('policy.decide', DECIDE_SPAN);
  const recording = span.isRecording();
  if (recording) span.setAttributes(decisionSubjectAttributes(source, subject));
  try {
    const d = fn();
    if (recording) span.setAttributes(decisionAttributes(d));
    decisions.inc({ source, decision: d.decision });
    return d;
  } catch (err) {
    fail(span, err);
    throw err;
  } finally {
    span.end();
  }
}
const DECIDE_SPAN = { kind: SpanKind.INTERNAL };
