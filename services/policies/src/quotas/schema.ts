import { migrateSchema, type Sql } from '@agp/eventstore';

/**
 * Tables of the fleet-wide quotas (the policies service alone reads and writes them); every row carries its
 * organisation, and every statement filters by it. Amounts are `numeric` (USD or calls, exact in decimal, so sums of
 * 0.01 USD land on 1 exactly); times are ms since the Unix epoch.
 * - `agp_quota_counters`: one row per (organisation, policy, limit, scope key, window start): `limit_value` is the
 *   policy's value when the row was last touched; `committed` = Σ over active leases of max(held, spent) + Σ over
 *   ended leases of spent; `spent` and `overshoot` (spent past held) summed over every lease. `window_start` is 0 and
 *   `window_end` null for run and session budgets (no window).
 * - `agp_quota_leases`: one row per lease: its holder, counter, `held` and `spent`, the last report's `seq`, its
 *   status (`active`, `released`, `expired`) and `expires_ms`.
 * Both tables are updated on every grant and report, so they are laid out for PostgreSQL's heap-only (HOT) updates:
 * room left in each page (`fillfactor`), and no index on a column a grant changes: the counters have only their
 * primary key (the list sorts by `updated_at` without an index), and the leases' counter index is partial, on the
 * active ones (a lease's status changes once; ended leases leave it). With the counters' `updated_at` index and the
 * leases' status in the counter index, every update added index entries and a shared counter's lookups walked the
 * dead ones: PostgreSQL's CPU per grant on one shared counter was 2.9–3.4 ms, now about 0.6 ms (docs/performance.md).
 * Source: docs/api.md (Quotas); docs/decisions.md (Leases, not a check per action).
 */
export const QUOTAS_DDL = `
CREATE TABLE IF NOT EXISTS agp_quota_counters (
  organization_id text NOT NULL,
  policy_id text NOT NULL,
  limit_name text NOT NULL,
  scope_key text NOT NULL,
  window_start bigint NOT NULL,
  window_end bigint,
  unit text NOT NULL,
  limit_value numeric NOT NULL,
  committed numeric NOT NULL DEFAULT 0,
  spent numeric NOT NULL DEFAULT 0,
  overshoot numeric NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, policy_id, limit_name, scope_key, window_start)
) WITH (fillfactor = 50);
ALTER TABLE agp_quota_counters SET (fillfactor = 50);
DROP INDEX IF EXISTS agp_quota_counters_org_updated;
CREATE TABLE IF NOT EXISTS agp_quota_leases (
  lease_id text PRIMARY KEY,
  organization_id text NOT NULL,
  holder text NOT NULL,
  policy_id text NOT NULL,
  limit_name text NOT NULL,
  scope_key text NOT NULL,
  window_start bigint NOT NULL,
  held numeric NOT NULL,
  spent numeric NOT NULL,
  seq bigint NOT NULL,
  status text NOT NULL,
  expires_ms bigint NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
) WITH (fillfactor = 80);
ALTER TABLE agp_quota_leases SET (fillfactor = 80);
DROP INDEX IF EXISTS agp_quota_leases_counter;
CREATE INDEX IF NOT EXISTS agp_quota_leases_active ON agp_quota_leases (organization_id, policy_id, limit_name, scope_key, window_start) WHERE status = 'active';
`;

/** Create the quota tables (idempotent; under the schema migration lock). */
export async function migrateQuotas(sql: Sql): Promise<void> {
  await migrateSchema(sql, QUOTAS_DDL);
}
