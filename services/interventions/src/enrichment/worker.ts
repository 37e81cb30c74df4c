import type { RequestContext } from '@agp/runtime';
import type { InterventionsDeps } from '../service.js';

/**
 * The enrichment worker: a catch-up subscriber on InterventionRecorded that asks a language model for
 * plain-English `reason`, `agent_intent`, `risk_level` and `suggested_rewrite` and appends
 * InterventionEnriched with the originals. Source: issue #4; platform-api.md (Enrichment).
 */
export class EnrichmentWorker {
  constructor(private readonly deps: InterventionsDeps) {}

  /** Start the subscription and the worker pool (logs once and does nothing without AGP_LLM_API_KEY). */
  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  /** POST /api/v1/interventions/{id}/enrich: re-run enrichment on demand. */
  async enrich(_ctx: RequestContext, _body: unknown): Promise<unknown> {
    throw new Error('enrichment: not built yet');
  }
}
