/**
 * The policies service's settings: what its process (distributed mode) validates at start. It has none of its own: the
 * settings every service process reads. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { serviceProcessEnv } from '@agp/bus';

/** The policies process of distributed mode (ops port 9463). */
export const policiesEnvSchema = z.object(serviceProcessEnv(9463));
