/**
 * The platform's language-model client: any OpenAI-compatible chat-completions endpoint through the official `openai`
 * package, configured by AGP_LLM_API_KEY, AGP_LLM_BASE_URL, AGP_LLM_MODEL and AGP_LLM_TIMEOUT_MS (config.ts).
 * Enrichment (services/interventions) and the semantic scenario pass (services/evals) both call {@link completeJson}.
 *
 * Imported as `@agp/runtime/llm`, not from the package root, and `openai` itself is loaded on the first call: a
 * process that never asks a model (every one without a key, the CLI) does not load it.
 * Source: architecture §4 (LLM); docs/ingest.md (Enrichment); docs/scenario-format.md (What the generator writes).
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Histogram } from 'prom-client';
import { DEFAULT_LLM_MODEL, DEFAULT_LLM_TIMEOUT_MS, type EnvOf, type llmEnv } from './config.js';

/** Where and how to ask the model. */
export interface ProviderSettings {
  apiKey: string;
  /** e.g. `https://api.openai.com/v1`; absent means the openai package's default. */
  baseURL?: string;
  model: string;
  /** Per-request timeout, in ms. */
  timeoutMs: number;
}

/** One chat message as the chat-completions API takes it. */
export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** The content of one answer and how many HTTP requests it took (the SDK's retries included). */
export interface Completion {
  content: string | null;
  requests: number;
}

/**
 * A call to the provider that failed after the SDK's own retries, with the requests it made and whether
 * trying again later could help (timeouts, connection errors, 408/409/429/5xx) or not (other 4xx).
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly requests: number,
    readonly retryable: boolean,
    readonly aborted: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

/** The AGP_LLM_* settings {@link llmSettings} reads (`llmEnv` in config.ts). */
export type LlmEnv = Partial<EnvOf<typeof llmEnv>>;

/**
 * The provider settings of `env`, or null when no AGP_LLM_API_KEY is configured (the callers then skip the model and
 * say so). Model and timeout default to {@link DEFAULT_LLM_MODEL} and {@link DEFAULT_LLM_TIMEOUT_MS}.
 */
export function llmSettings(env: LlmEnv): ProviderSettings | null {
  if (!env.AGP_LLM_API_KEY) return null;
  return {
    apiKey: env.AGP_LLM_API_KEY,
    ...(env.AGP_LLM_BASE_URL ? { baseURL: env.AGP_LLM_BASE_URL } : {}),
    model: env.AGP_LLM_MODEL ?? DEFAULT_LLM_MODEL,
    timeoutMs: env.AGP_LLM_TIMEOUT_MS ?? DEFAULT_LLM_TIMEOUT_MS,
  };
}

/** Options of {@link completeJson}. */
export interface CompleteOptions {
  /** Most HTTP requests of this call, the SDK's retries included (≥ 1). */
  maxRequests: number;
  /** Aborts the call (a {@link ProviderError} with `aborted: true`). */
  signal?: AbortSignal;
  /** Observes each HTTP request's latency in seconds, labelled by `status` (the HTTP status, or `error`). */
  latency?: Histogram<string>;
  /** Sent as the request's `seed` (best-effort determinism on providers that honour it). */
  seed?: number;
}

/**
 * Ask an OpenAI-compatible chat-completions endpoint for a JSON object (`response_format: json_object`) through the
 * official `openai` package. The SDK retries timeouts, connection errors, 408, 409, 429 and 5xx with exponential
 * backoff (0.5 s doubling up to 8 s, up to 25% jitter) and honours `Retry-After` / `retry-after-ms`;
 * `opts.maxRequests` bounds the HTTP requests of this call, retries included. The answer's content is returned
 * unparsed: checking it is the caller's (a zod schema).
 * The call is a CLIENT span `chat <model>` by the GenAI semantic conventions (`gen_ai.operation.name`,
 * `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.usage.input_tokens` and
 * `output_tokens`, `gen_ai.response.finish_reasons`; `error.type` on failure). Messages and answers are not recorded.
 * @throws ProviderError when no answer came back (after the retries, on a non-retryable 4xx, or when aborted).
 */
export async function completeJson(settings: ProviderSettings, messages: ChatMessage[], opts: CompleteOptions): Promise<Completion> {
  const { default: OpenAI, APIError, APIUserAbortError } = await import('openai');
  let requests = 0;
  const client = new OpenAI({
    apiKey: settings.apiKey,
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    timeout: settings.timeoutMs,
    maxRetries: Math.max(0, opts.maxRequests - 1),
    // Counts requests (an attempt is one HTTP request) and times each one; the SDK keeps its retry logic.
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      requests += 1;
      const end = opts.latency?.startTimer();
      try {
        const res = await fetch(url, init);
        end?.({ status: String(res.status) });
        return res;
      } catch (err) {
        end?.({ status: 'error' });
        throw err;
      }
    },
  });
  const span = tracer.startSpan(`chat ${settings.model}`, { kind: SpanKind.CLIENT, attributes: genAiRequestAttributes(settings) });
  try {
    const res = await client.chat.completions.create(
      { model: settings.model, messages, response_format: { type: 'json_object' }, ...(opts.seed !== undefined ? { seed: opts.seed } : {}) },
      opts.signal ? { signal: opts.signal } : undefined,
    );
    if (span.isRecording()) {
      span.setAttributes({
        'gen_ai.response.model': res.model,
        'gen_ai.response.finish_reasons': res.choices.map((c) => c.finish_reason ?? 'unknown'),
        'agp.llm.requests': requests,
        ...(res.usage ? { 'gen_ai.usage.input_tokens': res.usage.prompt_tokens, 'gen_ai.usage.output_tokens': res.usage.completion_tokens } : {}),
      });
    }
    return { content: res.choices[0]?.message?.content ?? null, requests };
  } catch (err) {
    const failure = providerError(err, requests, APIError, APIUserAbortError);
    span.setAttributes({ 'error.type': failure.aborted ? 'aborted' : err instanceof APIError && err.status ? String(err.status) : 'unreachable', 'agp.llm.requests': failure.requests });
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    throw failure;
  } finally {
    span.end();
  }
}

/** The tracer of the model calls (instrumentation scope `agp.llm`). */
const tracer = trace.getTracer('agp.llm');

/** The GenAI request attributes of a call to `settings`' provider (`server.address` from its base URL, when set). */
function genAiRequestAttributes(settings: ProviderSettings): Record<string, string | number> {
  let server: Record<string, string | number> = {};
  try {
    if (settings.baseURL) {
      const u = new URL(settings.baseURL);
      server = { 'server.address': u.hostname, ...(u.port ? { 'server.port': Number(u.port) } : {}) };
    }
  } catch {
    /* an unparsable base URL: the SDK will fail the call, the span says so */
  }
  return { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': settings.model, ...server };
}

/** The {@link ProviderError} of what the SDK threw after `requests` requests. */
function providerError(err: unknown, requests: number, APIError: abstract new (...args: never[]) => { status?: number }, APIUserAbortError: abstract new (...args: never[]) => object): ProviderError {
  if (err instanceof APIUserAbortError) return new ProviderError('aborted', requests, true, true, { cause: err });
  const status = err instanceof APIError ? err.status : undefined;
  const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  const message = `${status ? `provider answered ${status}` : 'provider unreachable'}: ${(err as Error).message}`.slice(0, 1000);
  return new ProviderError(message, Math.max(requests, 1), retryable, false, { cause: err });
}
