/**
 * The interventions service's settings: what its process (distributed mode) validates at start, and the part the
 * embedded platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { serviceProcessEnv } from '@agp/bus';
import { answerCacheEnv, llmEnv, type EnvOf } from '@agp/runtime';
import { DEFAULT_APPROVAL_TTL_SECONDS } from './approvals/approval.js';

/** Enrichment calls in flight at once per process, when AGP_ENRICHMENT_CONCURRENCY is unset. */
export const DEFAULT_ENRICHMENT_CONCURRENCY = 4;
/** Provider requests per record before `enrichment_status: failed`, when AGP_ENRICHMENT_MAX_ATTEMPTS is unset. */
export const DEFAULT_ENRICHMENT_MAX_ATTEMPTS = 5;
/** How often pending approvals are checked for expiry when AGP_APPROVAL_SWEEP_MS is unset, in ms. */
export const DEFAULT_APPROVAL_SWEEP_MS = 1000;

/** The interventions service's own settings (both modes): the language model, enrichment, approvals, the answer cache. */
export const interventionsSettings = {
  ...llmEnv,
  ...answerCacheEnv,
  /** Most enrichment calls in flight at once, per interventions process. @default 4 */
  AGP_ENRICHMENT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(DEFAULT_ENRICHMENT_CONCURRENCY),
  /** Attempts per intervention before it is marked `enrichment_status: failed`. @default 5 */
  AGP_ENRICHMENT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(DEFAULT_ENRICHMENT_MAX_ATTEMPTS),
  /** How long an approval stays pending before it expires to rejected_after_review (reason `expired`), in seconds. @default 86400 (24 h) */
  AGP_APPROVAL_TTL_SECONDS: z.coerce.number().int().min(1).default(DEFAULT_APPROVAL_TTL_SECONDS),
  /** How often the interventions service looks for pending approvals past their expiry, in ms. @default 1000 */
  AGP_APPROVAL_SWEEP_MS: z.coerce.number().int().min(10).max(3_600_000).default(DEFAULT_APPROVAL_SWEEP_MS),
};

/** The interventions service's settings, parsed. */
export type InterventionsSettings = EnvOf<typeof interventionsSettings>;

/** The interventions process of distributed mode (ops port 9461). */
export const interventionsEnvSchema = z.object({ ...serviceProcessEnv(9461), ...interventionsSettings });
