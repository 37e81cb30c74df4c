/**
 * The evals service's settings: what its process (distributed mode) validates at start, and the part the embedded
 * platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { serviceProcessEnv } from '@agp/bus';
import { llmEnv, type EnvOf } from '@agp/runtime';

/** The evals service's own settings (both modes): the language model of the semantic scenario pass. */
export const evalsSettings = { ...llmEnv };

/** The evals service's settings, parsed. */
export type EvalsSettings = EnvOf<typeof evalsSettings>;

/** The evals process of distributed mode (ops port 9466). */
export const evalsEnvSchema = z.object({ ...serviceProcessEnv(9466), ...evalsSettings });
