/**
 * OpenTelemetry trace export for every AGP process (the embedded platform and each distributed service).
 *
 * Off unless configured: {@link tracingConfigured} is true only when `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set and `OTEL_SDK_DISABLED` is not `true`. When it is off nothing of the SDK
 * is loaded (it is imported dynamically here only), and the spans AGP opens through `@opentelemetry/api` are the
 * API's no-op spans. When it is on, {@link startTracing} starts the Node SDK (`@opentelemetry/sdk-node`, 2.x line) with
 * the standard variables only (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_PROTOCOL`, ...;
 * docs/configuration.md lists them), the PostgreSQL (`pg`) instrumentation, and the OTLP exporter (HTTP, protobuf by
 * default, JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`). Traces only: AGP's metrics stay on Prometheus
 * (`/metrics`). HTTP server spans are AGP's own (`httpServerSpan`, ./http-span.ts), not the HTTP instrumentation's: it
 * costs a sampled-out request as much as a recorded one. No AGP process makes an outgoing HTTP request through
 * `node:http` (the enrichment model call goes through `fetch` and has its own span), so nothing needs the
 * instrumentation's client side either.
 *
 * The instrumentation patches `pg` as it loads, so tracing must start before the application's modules are
 * imported: each process's `dist/main.js` is a small launcher (`launcher.ts`) that calls {@link startTracing} and then
 * imports the application bundle `dist/app.js`. Source: architecture §5 (operations), docs/operations.md (Tracing).
 */
import { createRequire } from 'node:module';
import { SpanKind, SpanStatusCode, context, isSpanContextValid, trace, type Attributes } from '@opentelemetry/api';

/** The environment variables tracing reads (the OpenTelemetry SDK's standard ones). */
export type TracingEnv = Record<string, string | undefined>;

/**
 * True when trace export is configured: an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and `OTEL_SDK_DISABLED` is not `true` (case-insensitive, as the SDK reads it).
 */
export function tracingConfigured(env: TracingEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** A started tracing SDK. */
export interface Tracing {
  /** Export the spans still buffered and stop the SDK (call on shutdown; resolves even when the collector is down). */
  shutdown(): Promise<void>;
}

/**
 * Start trace export for this process when {@link tracingConfigured}, else do nothing and load nothing.
 * @param serviceName the `service.name` resource attribute when `OTEL_SERVICE_NAME` does not set one, e.g.
 *   `agp-gateway`, `agp` (embedded).
 * @returns the started SDK, or undefined when tracing is off.
 * Errors while exporting never throw: the SDK reports them through its diagnostic logger and drops the spans.
 */
export async function startTracing(serviceName: string, env: TracingEnv = process.env): Promise<Tracing | undefined> {
  if (!tracingConfigured(env)) return undefined;
  const [{ NodeSDK }, { PgInstrumentation }] = await Promise.all([import('@opentelemetry/sdk-node'), import('@opentelemetry/instrumentation-pg')]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || serviceName,
    instrumentations: [
      // A span per query, its text without values (`enhancedDatabaseReporting` stays off: no arguments in traces).
      new PgInstrumentation({ requireParentSpan: true }),
    ],
    // Traces only: metrics stay on Prometheus, logs on stdout/stderr (with trace_id and span_id, see logger.ts).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  pgSpansOnlyUnderRecordingParent();
  return { shutdown: () => sdk.shutdown().catch(() => undefined) };
}

/**
 * Make the pg instrumentation skip a query (no span, no wrapped callback, no attributes) unless the active span is
 * recording, instead of only when no span is active (its `requireParentSpan`). A request sampled out runs under a
 * non-recording span, under which every query span would be sampled out too (the parent-based sampler), yet built
 * all the same: ~40 ms of CPU per 20,000 ingested events in ingest and in interventions (docs/performance.md, the
 * cost of tracing). The instrumentation has no option for it (its hooks run after the span is started), so its one
 * predicate, `shouldSkipInstrumentation` of its `utils` module (instrumentation-pg 0.76, read on every query and
 * connect), is replaced; if a later version no longer has it, nothing is changed and every query is traced.
 * Called by {@link startTracing}; idempotent. Has no effect on spans other than the pg instrumentation's.
 */
export function pgSpansOnlyUnderRecordingParent(): void {
  const utils = createRequire(import.meta.url)('@opentelemetry/instrumentation-pg/build/src/utils.js') as {
    shouldSkipInstrumentation?: (config: { requireParentSpan?: boolean }) => boolean;
  };
  if (typeof utils.shouldSkipInstrumentation !== 'function') return;
  utils.shouldSkipInstrumentation = (config) => config.requireParentSpan === true && !trace.getSpan(context.active())?.isRecording();
}

/**
 * The ids of the span active in the current context, for log lines (`trace_id`, `span_id`, lowercase hex), or an
 * empty object when no sampled span is active (tracing off, or the request sampled out).
 */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const sc = trace.getSpan(context.active())?.spanContext();
  if (!sc || !isSpanContextValid(sc) || !(sc.traceFlags & 1)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/** Scope of the database client spans of the embedded database (PGlite); the `pg` driver's are the pg instrumentation's. */
export const DB_SPAN_SCOPE = 'agp.pglite';

/**
 * The operation of a statement as the pg instrumentation names it: its first word in upper case, without a trailing
 * `;` (`SELECT`, `INSERT`, `BEGIN`). Pure.
 */
export function statementOperation(text: string): string {
  const trimmed = text.trim();
  const space = trimmed.search(/\s/);
  const word = (space === -1 ? trimmed : trimmed.slice(0, space)).toUpperCase();
  return word.endsWith(';') ? word.slice(0, -1) : word;
}

/**
 * Run database statement `text` in a database client span of the shape the pg instrumentation
 * (`@opentelemetry/instrumentation-pg` 0.76) gives a `pg` query, so that a trace reads the same whichever database
 * serves it: name `pg.query:<OPERATION> <database>`, kind CLIENT, `db.system.name` `postgresql`, `db.namespace` the
 * database, `db.query.text` the statement's text. Never the parameter values (as the instrumentation without
 * `enhancedDatabaseReporting`). A failure sets the span's status to ERROR with the error's message and `error.type` its
 * SQLSTATE (`code`) when it has one, and is rethrown. As {@link pgSpansOnlyUnderRecordingParent} for `pg`: no span
 * unless the active span is recording (tracing off, no request, or a request sampled out cost one context lookup).
 * Used by the embedded database's adapter (`createPgliteSql` of `@agp/eventstore`). Source: docs/operations.md (Tracing).
 * @param database the database's name (`db.namespace`).
 */
export function dbStatementSpan<T>(database: string, text: string, fn: () => Promise<T>): Promise<T> {
  if (!trace.getSpan(context.active())?.isRecording()) return fn();
  const attributes: Attributes = { 'db.system.name': 'postgresql', 'db.namespace': database, 'db.query.text': text };
  return trace.getTracer(DB_SPAN_SCOPE).startActiveSpan(`pg.query:${statementOperation(text)} ${database}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (typeof code === 'string') span.setAttribute('error.type', code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
