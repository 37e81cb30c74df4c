import { InterventionEvents, interventionStream } from '@agp/contracts';
import { alterColumnType, migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';

/**
 * Read-model tables of the interventions service (it alone reads them).
 * - `agp_interventions`: the list read model; `doc` is the record as the API returns it (json: the text as written,
 *   returned without conversion), the other
 *   columns exist for filtering and ordering.
 * - `agp_intervention_stats_daily`: counts per organisation, UTC day, type and outcome.
 * - `agp_intervention_stats_actions` / `_policies`: per day, for the top-N lists.
 * - `agp_intervention_totals`: the organisation's live record count (the unfiltered list's `total`), and how many of
 *   them are `enriched` / `failed` (the latest enrichment event), for `interventions.enrichment-coverage`.
 * - `agp_interventions.enrichment`: the record's latest enrichment outcome, `enriched` / `failed` (null: none yet).
 * Indexes: one per selective filter, each ending in the sort key, so a filtered page is an index range scan.
 * Low-cardinality filters (type, outcome, risk_level) use the time index with a filter.
 */
export const READ_MODEL_DDL = `
CREATE TABLE IF NOT EXISTS agp_interventions (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  type text NOT NULL,
  outcome text NOT NULL,
  action_name text NOT NULL,
  agent_id text NOT NULL,
  run_id text,
  policy_id text,
  risk_level text,
  ts timestamptz NOT NULL,
  doc json NOT NULL,
  enrichment text
);
CREATE INDEX IF NOT EXISTS agp_interventions_org_ts ON agp_interventions (organization_id, ts DESC, id DESC);
CREATE INDEX IF NOT EXISTS agp_interventions_org_agent_ts ON agp_interventions (organization_id, agent_id, ts DESC);
CREATE INDEX IF NOT EXISTS agp_interventions_org_run_ts ON agp_interventions (organization_id, run_id, ts DESC) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agp_interventions_org_policy_ts ON agp_interventions (organization_id, policy_id, ts DESC) WHERE policy_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agp_interventions_org_action_ts ON agp_interventions (organization_id, action_name, ts DESC);
CREATE TABLE IF NOT EXISTS agp_intervention_stats_daily (
  organization_id text NOT NULL,
  day date NOT NULL,
  type text NOT NULL,
  outcome text NOT NULL,
  interventions bigint NOT NULL,
  cost_prevented_usd double precision NOT NULL,
  high_risk_blocks bigint NOT NULL,
  PRIMARY KEY (organization_id, day, type, outcome)
);
CREATE TABLE IF NOT EXISTS agp_intervention_stats_actions (
  organization_id text NOT NULL,
  day date NOT NULL,
  action_name text NOT NULL,
  blocked bigint NOT NULL,
  cost_prevented_usd double precision NOT NULL,
  PRIMARY KEY (organization_id, day, action_name)
);
CREATE TABLE IF NOT EXISTS agp_intervention_stats_policies (
  organization_id text NOT NULL,
  day date NOT NULL,
  policy_id text NOT NULL,
  policy_name text NOT NULL,
  triggered bigint NOT NULL,
  PRIMARY KEY (organization_id, day, policy_id)
);
CREATE TABLE IF NOT EXISTS agp_intervention_totals (
  organization_id text PRIMARY KEY,
  total bigint NOT NULL,
  enriched bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0
);
`;

/**
 * Add the enrichment columns (issue #12) to read-model tables created before them, and fill them from the event
 * store: each record's latest InterventionEnriched / InterventionEnrichmentFailed, then the per-organisation counts.
 * A no-op once `agp_interventions.enrichment` exists (always, on a database created with them). The fill reads the
 * enrichment events once (one scan of `agp_events`); events the projection has not applied yet only move a record to
 * the status it already has, so the counts stay exact. For use as {@link migrateSchema}'s `then` step.
 */
export async function addEnrichmentColumns(tx: SqlExecutor): Promise<void> {
  const { rows } = await tx.query(
    "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'agp_interventions' AND column_name = 'enrichment'",
  );
  if (rows.length) return;
  await tx.query('ALTER TABLE agp_interventions ADD COLUMN enrichment text');
  await tx.query('ALTER TABLE agp_intervention_totals ADD COLUMN IF NOT EXISTS enriched bigint NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS failed bigint NOT NULL DEFAULT 0');
  await tx.query(
    `UPDATE agp_interventions i SET enrichment = l.status
       FROM (SELECT DISTINCT ON (stream_id) stream_id, organization_id, CASE WHEN event_type = $1 THEN 'enriched' ELSE 'failed' END AS status
               FROM agp_events WHERE event_type IN ($1, $2) ORDER BY stream_id, stream_version DESC) AS l
      WHERE l.stream_id = $3 || i.id AND l.organization_id = i.organization_id`,
    [InterventionEvents.Enriched, InterventionEvents.EnrichmentFailed, interventionStream('')],
  );
  await tx.query(
    `UPDATE agp_intervention_totals t SET enriched = c.enriched, failed = c.failed
       FROM (SELECT organization_id, count(*) FILTER (WHERE enrichment = 'enriched') AS enriched, count(*) FILTER (WHERE enrichment = 'failed') AS failed
               FROM agp_interventions WHERE enrichment IS NOT NULL GROUP BY organization_id) AS c
      WHERE t.organization_id = c.organization_id`,
  );
}

/** Create the read-model tables (idempotent), and bring tables of an earlier version up to date. */
export async function migrateReadModels(sql: Sql): Promise<void> {
  await migrateSchema(sql, READ_MODEL_DDL, async (tx) => {
    // `doc` was jsonb until issue #11: json keeps the text as written, so a page is read without converting each
    // skipped row's jsonb back to text (1.44 -> 0.43 ms per page at skip 0..999, docs/decisions.md).
    await alterColumnType(tx, 'agp_interventions', 'doc', 'json');
    await addEnrichmentColumns(tx);
  });
}
