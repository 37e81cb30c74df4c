/**
 * The stats service's settings: what its process (distributed mode) validates at start, and the part the embedded
 * platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { serviceProcessEnv } from '@agp/bus';
import { answerCacheEnv, type EnvOf } from '@agp/runtime';

/** The stats service's own settings (both modes): the answer cache. */
export const statsSettings = { ...answerCacheEnv };

/** The stats service's settings, parsed. */
export type StatsSettings = EnvOf<typeof statsSettings>;

/** The stats process of distributed mode (ops port 9464). */
export const statsEnvSchema = z.object({ ...serviceProcessEnv(9464), ...statsSettings });
