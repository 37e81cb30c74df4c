import { histogram } from '@agp/runtime';
import { completeJson, type ChatMessage, type Completion, type ProviderSettings } from '@agp/runtime/llm';

export { ProviderError, type Completion, type ProviderSettings } from '@agp/runtime/llm';

const latency = histogram('agp_enrichment_provider_latency_seconds', 'Latency of each chat-completions HTTP request of the enrichment worker, by HTTP status (`error` when no response).', ['status'], [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);

/**
 * Ask the provider for the enrichment's JSON object through the platform's client (`completeJson` in
 * `@agp/runtime/llm`: the `openai` SDK's retries, `maxRequests` bounding the HTTP requests of this call, retries
 * included). Every request's latency goes to `agp_enrichment_provider_latency_seconds`.
 * @throws ProviderError when no answer came back.
 */
export function complete(settings: ProviderSettings, messages: ChatMessage[], maxRequests: number, signal?: AbortSignal): Promise<Completion> {
  return completeJson(settings, messages, { maxRequests, latency, ...(signal ? { signal } : {}) });
}
