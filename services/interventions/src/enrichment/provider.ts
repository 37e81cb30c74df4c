import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { histogram } from '@agp/runtime';
import type { ChatMessage } from './prompt.js';

/** Provider settings (AGP_LLM_* in packages/runtime/src/config.ts). */
export interface ProviderSettings {
  apiKey: string;
  /** e.g. `https://api.openai.com/v1`; absent means the openai package's default. */
  baseURL?: string;
  model: string;
  /** Per-request timeout, in ms. */
  timeoutMs: number;
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

const latency = histogram('agp_enrichment_provider_latency_seconds', 'Latency of each chat-completions HTTP request of the enrichment worker, by HTTP status (`error` when no response).', ['status'], [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);

/**
 * Ask an OpenAI-compatible chat-completions endpoint for a JSON object (`response_format: json_object`)
 * through the official `openai` package. The SDK retries timeouts, connection errors, 408, 409, 429 and 5xx
 * with exponential backoff (0.5 s doubling up to 8 s, up to 25% jitter) and honours `Retry-After` /
 * `retry-after-ms`; `maxRequests` bounds the HTTP requests of this call, retries included.
 * Every request's latency goes to `agp_enrichment_provider_latency_seconds`.
 * @throws ProviderError when no answer came back.
 */
export async function complete(settings: ProviderSettings, messages: ChatMessage[], maxRequests: number, signal?: AbortSignal): Promise<Completion> {
  let requests = 0;
  const client = new OpenAI({
    apiKey: settings.apiKey,
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    timeout: settings.timeoutMs,
    maxRetries: Math.max(0, maxRequests - 1),
    // Counts requests (an attempt is one HTTP request) and times each one; the SDK keeps its retry logic.
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      requests += 1;
      const end = latency.startTimer();
      try {
        const res = await fetch(url, init);
        end({ status: String(res.status) });
        return res;
      } catch (err) {
        end({ status: 'error' });
        throw err;
      }
    },
  });
  try {
    const res = await client.chat.completions.create(
      { model: settings.model, messages, response_format: { type: 'json_object' } },
      signal ? { signal } : undefined,
    );
    return { content: res.choices[0]?.message?.content ?? null, requests };
  } catch (err) {
    if (err instanceof APIUserAbortError) throw new ProviderError('aborted', requests, true, true, { cause: err });
    const status = err instanceof APIError ? err.status : undefined;
    const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    const message = `${status ? `provider answered ${status}` : 'provider unreachable'}: ${(err as Error).message}`.slice(0, 1000);
    throw new ProviderError(message, Math.max(requests, 1), retryable, false, { cause: err });
  }
}
