/**
 * The ingest service's settings: what its process (distributed mode) validates at start. It has none of its own: the
 * settings every service process reads. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { serviceProcessEnv } from '@agp/bus';

/** The ingest process of distributed mode (ops port 9462). */
export const ingestEnvSchema = z.object(serviceProcessEnv(9462));
