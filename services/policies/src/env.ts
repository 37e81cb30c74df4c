/**
 * The policies service's settings: what its process (distributed mode) validates at start, and the part the embedded
 * platform composes with the other services'. Source: docs/configuration.md.
 */
import { z } from 'zod';
import { DEFAULT_QUOTA_LEASE_TTL_MS } from '@agp/contracts';
import { serviceProcessEnv } from '@agp/bus';
import { outboundEnv, secretsEnv, type EnvOf } from '@agp/runtime';

/**
 * The policies service's own settings (both modes): the fleet-wide quotas' lease TTL; the outbound address check's
 * allow list and the secrets keys, read where registered MCP servers are checked and their headers sealed.
 */
export const policiesSettings = {
  ...outboundEnv,
  ...secretsEnv,
  /**
   * How long a quota lease lasts without renewal, in ms: a holder that stops renewing (crashed, partitioned) gives its
   * unspent quota back this long after its last renewal; a lease never outlives its window. @default 15000
   */
  AGP_QUOTA_LEASE_TTL_MS: z.coerce.number().int().min(100).max(3_600_000).default(DEFAULT_QUOTA_LEASE_TTL_MS),
};

/** The policies service's settings, parsed. */
export type PoliciesSettings = EnvOf<typeof policiesSettings>;

/** The policies process of distributed mode (ops port 9463). */
export const policiesEnvSchema = z.object({ ...serviceProcessEnv(9463), ...policiesSettings });
