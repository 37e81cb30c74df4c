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
import type { Span, Tracer } from '@opentelemetry/api';
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
  constructor(private readonly span: Span) {}

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
