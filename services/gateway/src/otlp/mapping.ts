/**
 * From OpenTelemetry GenAI spans to ingest events: an agent's trace becomes a run, its tool calls and model calls
 * ledger actions with durations, statuses, token usage and a cost (prices.ts). The events then take the
 * normal ingest path (the `ingest.batch` message), so dedupe, durability and the read models are those of
 * `POST /api/v1/ingest`. Follows the GenAI semantic conventions {@link GENAI_SEMCONV_VERSION} (status: Development).
 * Source: docs/ingest.md (OTLP trace ingest, the mapping table); spec §Ingest, §Runs.
 */
import { createHash } from 'node:crypto';
import { INGEST_BODY_SCHEMAS, type IngestEvent, type IngestEventType } from '@agp/contracts';
import { OTLP_STATUS, type OtlpSpan } from './decode.js';
import { priceCall, type PriceTable } from './prices.js';

/** The version of the OpenTelemetry GenAI semantic conventions the mapping follows. */
export const GENAI_SEMCONV_VERSION = '1.37.0';

/** `gen_ai.operation.name` values of model calls that become ledger actions with token usage and cost. */
export const MODEL_OPERATIONS = ['chat', 'text_completion', 'generate_content', 'embeddings'] as const;
/** Every `gen_ai.operation.name` the mapping turns into events. */
export const MAPPED_OPERATIONS = ['invoke_agent', 'execute_tool', ...MODEL_OPERATIONS] as const;
/**
 * `gen_ai.operation.name` values accepted and not stored:
 * - `create_agent` records that a program created an agent definition at a provider (an OpenAI assistant, a Bedrock
 *   agent), not work done in a run (docs/decisions.md, OTLP trace ingest: create_agent);
 * - `agent_step` is one step of an agent's loop as the Vercel AI SDK's OpenTelemetry integration (`@ai-sdk/otel`)
 *   traces it (`step <n>`, under its `invoke_agent` span): it groups that step's `chat` and `execute_tool` spans,
 *   which are mapped themselves, so storing it would count their work twice (docs/decisions.md, OTLP trace ingest:
 *   the AI SDK's spans).
 */
export const IGNORED_OPERATIONS = ['create_agent', 'agent_step'] as const;

/** The events one span becomes (stored all or none), in the order they are sent. */
export interface SpanEvents {
  span: OtlpSpan;
  events: IngestEvent[];
}

/** A span the mapping refuses, with why (reported in the export's partial success). */
export interface SpanRejection {
  span: OtlpSpan;
  reason: string;
}

/** What an export's spans become. */
export interface MappedExport {
  /** Spans that become events, by their start time (earliest first). */
  mapped: SpanEvents[];
  rejected: SpanRejection[];
  /**
   * Spans accepted with nothing stored: those without any `gen_ai.*` attribute (an agent's HTTP or database spans)
   * and those of an {@link IGNORED_OPERATIONS} operation.
   */
  ignored: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** ISO 8601 UTC (ms) of a Unix time in ns. */
const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();

/**
 * The client event id of part `part` of a span: `otlp-` and 40 hex digits of SHA-256 over the organisation, trace id,
 * span id and part, so the same span exported twice gives the same ids (stored once). Pure.
 */
export function otlpEventId(org: string, traceId: string, spanId: string, part: 'action' | 'run.start' | 'run.end'): string {
  return `otlp-${createHash('sha256').update(`${org}\u0000${traceId}\u0000${spanId}\u0000${part}`).digest('hex').slice(0, 40)}`;
}

/** A non-negative integer token count, undefined when absent. @throws Error naming the attribute when it is not one. */
function tokens(s: OtlpSpan, key: string): number | undefined {
  const v = s.attributes[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`${key} must be a non-negative integer (got ${JSON.stringify(v)})`);
  return v;
}

/** Attributes of `s` named in `keys` that are present, under their semantic-convention names. */
function pick(s: OtlpSpan, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => s.attributes[k] !== undefined).map((k) => [k, s.attributes[k]]));
}

/**
 * The run and agent of a span, from the span alone, so that the events of a trace are the same whichever of its
 * spans arrive first, together or in separate exports: the run is the trace (its id, 32 hex digits), the agent the
 * resource's `service.name` (the deployed agent program; every span its SDK exports carries it). Null when the
 * resource has no `service.name`. The agent's own name (`gen_ai.agent.name`) names the run (run.start `name`), and the
 * conversation (`gen_ai.conversation.id`) is the run's `session_id`: both arrive with the `invoke_agent` span, in
 * whichever export. Source: docs/ingest.md (OTLP trace ingest, Run); docs/decisions.md (OTLP trace ingest: export order).
 */
export function runOf(s: OtlpSpan): { runId: string; agentId: string } | null {
  const agentId = str(s.resource['service.name']);
  return agentId ? { runId: s.traceId, agentId } : null;
}

function byStart(a: OtlpSpan, b: OtlpSpan): number {
  const x = a.startTimeUnixNano ?? 0n;
  const y = b.startTimeUnixNano ?? 0n;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** An ingest event of `type` for part `part` of span `s`. */
function event(org: string, s: OtlpSpan, part: 'action' | 'run.start' | 'run.end', type: IngestEventType, timestamp: string, body: Record<string, unknown>): IngestEvent {
  return { id: otlpEventId(org, s.traceId, s.spanId, part), type, timestamp, body };
}

/**
 * The events of one GenAI span (see the mapping table in docs/ingest.md), from the span alone. Null for a span of an
 * {@link IGNORED_OPERATIONS} operation.
 * @throws Error whose message is the reason the span is refused (a missing or bad attribute, bad ids or times).
 */
function spanEvents(org: string, s: OtlpSpan, prices: PriceTable | null): IngestEvent[] | null {
  const op = str(s.attributes['gen_ai.operation.name']);
  if (!op) throw new Error('has gen_ai.* attributes but no gen_ai.operation.name');
  if ((IGNORED_OPERATIONS as readonly string[]).includes(op)) return null;
  if (!(MAPPED_OPERATIONS as readonly string[]).includes(op)) throw new Error(`gen_ai.operation.name "${op}" is not mapped; mapped: ${MAPPED_OPERATIONS.join(', ')}; accepted and not stored: ${IGNORED_OPERATIONS.join(', ')}`);
  if (!/^[\da-f]{32}$/.test(s.traceId) || /^0+$/.test(s.traceId)) throw new Error('traceId must be 16 bytes, not all zero');
  if (!/^[\da-f]{16}$/.test(s.spanId) || /^0+$/.test(s.spanId)) throw new Error('spanId must be 8 bytes, not all zero');
  if (!s.startTimeUnixNano || !s.endTimeUnixNano) throw new Error('startTimeUnixNano and endTimeUnixNano are required');
  if (s.endTimeUnixNano < s.startTimeUnixNano) throw new Error('endTimeUnixNano is before startTimeUnixNano');
  const run = runOf(s);
  if (!run) throw new Error('names no agent: the resource has no service.name');
  const failed = s.status.code === OTLP_STATUS.error;
  const error = failed ? (s.status.message || str(s.attributes['error.type']) || 'span status ERROR') : undefined;
  const start = iso(s.startTimeUnixNano);
  const end = iso(s.endTimeUnixNano);
  const ids = { 'otlp.trace_id': s.traceId, 'otlp.span_id': s.spanId };
  const base = { run_id: run.runId, agent_id: run.agentId };

  if (op === 'invoke_agent') {
    const name = str(s.attributes['gen_ai.agent.name']) ?? s.name;
    const conversation = str(s.attributes['gen_ai.conversation.id']);
    const metadata = { source: 'otlp', ...ids, 'service.name': run.agentId, ...pick(s, ['gen_ai.agent.id', 'gen_ai.agent.name', 'gen_ai.agent.description', 'gen_ai.conversation.id', 'gen_ai.provider.name', 'gen_ai.request.model']) };
    return [
      event(org, s, 'run.start', 'run.start', start, { ...base, ...(name ? { name: name.slice(0, 256) } : {}), ...(conversation && conversation.length <= 256 ? { session_id: conversation } : {}), started_at: start, metadata }),
      event(org, s, 'run.end', 'run.end', end, { ...base, status: failed ? 'failed' : 'completed', ended_at: end, ...(error ? { error } : {}) }),
    ];
  }

  const duration_ms = Number(s.endTimeUnixNano - s.startTimeUnixNano) / 1e6;
  const action = { ...base, status: failed ? 'error' : 'success', duration_ms, timestamp: start, ...(error ? { error } : {}) };
  if (op === 'execute_tool') {
    const tool = str(s.attributes['gen_ai.tool.name']);
    if (!tool) throw new Error('execute_tool span without gen_ai.tool.name');
    const inputs = { 'gen_ai.operation.name': op, ...pick(s, ['gen_ai.tool.name', 'gen_ai.tool.call.id', 'gen_ai.tool.type', 'gen_ai.tool.description', 'gen_ai.tool.call.arguments', 'gen_ai.agent.name', 'gen_ai.conversation.id']), ...ids };
    const outputs = pick(s, ['gen_ai.tool.call.result']);
    return [event(org, s, 'action', 'action.record', start, { ...action, action_name: tool, inputs, ...(Object.keys(outputs).length ? { outputs } : {}) })];
  }

  const model = str(s.attributes['gen_ai.request.model']) ?? str(s.attributes['gen_ai.response.model']);
  if (!model) throw new Error(`${op} span without gen_ai.request.model or gen_ai.response.model`);
  const embeddings = op === 'embeddings';
  const input = tokens(s, 'gen_ai.usage.input_tokens');
  const output = embeddings ? undefined : tokens(s, 'gen_ai.usage.output_tokens');
  const { cost_usd, pricing } = priceCall(prices, { model, provider: str(s.attributes['gen_ai.provider.name']), inputTokens: input, outputTokens: output, at: new Date(start) });
  const asked = embeddings
    ? ['gen_ai.provider.name', 'gen_ai.request.model', 'gen_ai.embeddings.dimension.count', 'gen_ai.request.encoding_formats', 'gen_ai.agent.name', 'gen_ai.conversation.id']
    : ['gen_ai.provider.name', 'gen_ai.request.model', 'gen_ai.request.max_tokens', 'gen_ai.request.temperature', 'gen_ai.agent.name', 'gen_ai.conversation.id'];
  const gave = embeddings
    ? ['gen_ai.response.model', 'gen_ai.usage.input_tokens']
    : ['gen_ai.response.model', 'gen_ai.response.id', 'gen_ai.response.finish_reasons', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens'];
  const inputs = { 'gen_ai.operation.name': op, ...pick(s, asked), ...ids };
  const outputs = { ...pick(s, gave), pricing };
  return [event(org, s, 'action', 'action.record', start, { ...action, action_name: `${op} ${model}`.slice(0, 256), inputs, outputs, ...(cost_usd !== undefined ? { cost_usd } : {}) })];
}

/**
 * Map the spans of one export for organisation `org`: each span becomes its events, is refused with a reason, or is
 * ignored (no `gen_ai.*` attribute at all, or an {@link IGNORED_OPERATIONS} operation). A span's events depend on that
 * span alone (never on the other spans of the export), so a trace gives the same events whether its spans come in one
 * export or several, in any order. The events of a span of more than one event are checked against their ingest
 * body schemas here, so such a span is sent whole or refused whole; a single event is checked by the ingest service
 * (once, not twice: docs/decisions.md, OTLP trace ingest). `prices` is the operator's table (null: the price database
 * alone). Pure.
 */
export function mapSpans(org: string, spans: OtlpSpan[], prices: PriceTable | null): MappedExport {
  const out: MappedExport = { mapped: [], rejected: [], ignored: 0 };
  for (const s of [...spans].sort(byStart)) {
    if (!Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.'))) {
      out.ignored++;
      continue;
    }
    try {
      const events = spanEvents(org, s, prices);
      if (!events) {
        out.ignored++;
        continue;
      }
      // A span of one event is checked by the ingest service, whose per-event refusal becomes the span's; a span of
      // two (run.start and run.end) is checked here first, so that neither is stored without the other.
      const bad = (events.length > 1 ? events : []).flatMap((e) => {
        const r = INGEST_BODY_SCHEMAS[e.type].safeParse(e.body);
        return r.success ? [] : r.error.issues.map((i) => `${e.type} body.${i.path.join('.')}: ${i.message}`);
      });
      if (bad.length) throw new Error(bad.join('; '));
      out.mapped.push({ span: s, events });
    } catch (err) {
      out.rejected.push({ span: s, reason: (err as Error).message });
    }
  }
  return out;
}
