/**
 * `GET /.well-known/agp-audit-keys`: the public keys that sign the audit trail's checkpoints, answered by the gateway
 * without credentials from the platform's database (`agp_tlog_keys`, read through the policies service's query
 * module; never a private key). The other audit-trail routes are forwarded to the policies service.
 * Source: docs/audit.md (Keys).
 */
import { listAuditKeys } from '@agp/policies/audit-keys';
import type { RouteHandler } from '../router.js';

/** GET /.well-known/agp-audit-keys: `{keys}`, the current key first, cacheable for a minute. */
export const getAuditKeys: RouteHandler = async ({ res, deps }) => {
  res.set('cache-control', 'public, max-age=60');
  return { body: await listAuditKeys(deps.database) };
};
