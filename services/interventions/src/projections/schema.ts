import { EVAL_HARNESS_RUN_ID, InterventionEvents, interventionStream, type InterventionRecord } from '@agp/contracts';
import { addColumn, alterColumnType, migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';
import { StatsDelta, contribution } from './interventionReadModel.js';

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
 * - `purpose` (`production` or `eval`, the record's `purpose`) is a column of `agp_interventions` and part of the key
 *   of every stats and totals table, so the figures of one purpose never read the other's; tables created before it
 *   are brought up to date by {@link addPurposeColumns}.
 * Indexes: one per selective filter, each ending in the sort key, so a filtered page is an index range scan.
 * Low-cardinality filters (type, outcome, risk_level, purpose) use the time index with a filter.
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
  enrichment text,
  purpose text NOT NULL DEFAULT 'production'
);
CREATE INDEX IF NOT EXISTS agp_interventions_org_ts ON agp_interventions (organization_id, ts DESC, id DESC);
CREATE INDEX IF NOT EXISTS agp_interventions_org_agent_ts ON agp_interventions (organization_id, agent_id, ts DESC);
CREATE INDEX IF NOT EXISTS agp_interventions_org_run_ts ON agp_interventions (organization_id, run_id, ts DESC) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agp_interventions_org_policy_ts ON agp_interventions (organization_id, policy_id, ts DESC) WHERE policy_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agp_interventions_org_action_ts ON agp_interventions (organization_id, action_name, ts DESC);
CREATE TABLE IF NOT EXISTS agp_intervention_stats_daily (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  day date NOT NULL,
  type text NOT NULL,
  outcome text NOT NULL,
  interventions bigint NOT NULL,
  cost_prevented_usd double precision NOT NULL,
  high_risk_blocks bigint NOT NULL,
  PRIMARY KEY (organization_id, purpose, day, type, outcome)
);
CREATE TABLE IF NOT EXISTS agp_intervention_stats_actions (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  day date NOT NULL,
  action_name text NOT NULL,
  blocked bigint NOT NULL,
  cost_prevented_usd double precision NOT NULL,
  PRIMARY KEY (organization_id, purpose, day, action_name)
);
CREATE TABLE IF NOT EXISTS agp_intervention_stats_policies (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  day date NOT NULL,
  policy_id text NOT NULL,
  policy_name text NOT NULL,
  triggered bigint NOT NULL,
  PRIMARY KEY (organization_id, purpose, day, policy_id)
);
CREATE TABLE IF NOT EXISTS agp_intervention_totals (
  organization_id text NOT NULL,
  purpose text NOT NULL DEFAULT 'production',
  total bigint NOT NULL,
  enriched bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, purpose)
);
`;

/**
 * Add the enrichment columns to read-model tables created before them, and fill them from the event
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

/** The stats and totals tables and their primary keys with `purpose` (see {@link READ_MODEL_DDL}). */
const PURPOSE_KEYS: ReadonlyArray<{ table: string; key: readonly string[] }> = [
  { table: 'agp_intervention_stats_daily', key: ['organization_id', 'purpose', 'day', 'type', 'outcome'] },
  { table: 'agp_intervention_stats_actions', key: ['organization_id', 'purpose', 'day', 'action_name'] },
  { table: 'agp_intervention_stats_policies', key: ['organization_id', 'purpose', 'day', 'policy_id'] },
  { table: 'agp_intervention_totals', key: ['organization_id', 'purpose'] },
];

/**
 * Bring tables created before interventions had a purpose up to date, in the migration's locked transaction, so they
 * hold what today's projection would have written (docs/decisions.md, Eval data):
 * 1. add `purpose` (default `production`) to `agp_interventions` and to each stats and totals table, where it is part
 *    of the primary key;
 * 2. mark as `eval` the records `purposeOf` calls eval without a stated purpose (a run id of the eval harness's shape,
 *    `EVAL_HARNESS_RUN_ID`), and give every stored record (`doc`) its `purpose` as the last field, as
 *    `recordFromRecorded` writes it (appended to the stored text, so the rest stays as it was);
 * 3. move the eval records' contribution to the stats and totals from `production` to `eval` with the projection's own
 *    deltas ({@link StatsDelta}), then drop the stats rows left with no count.
 * A no-op on later starts and on fresh databases (the DDL creates the columns).
 */
export async function addPurposeColumns(tx: SqlExecutor): Promise<void> {
  if (!(await addColumn(tx, 'agp_interventions', 'purpose', "text NOT NULL DEFAULT 'production'"))) return;
  for (const { table, key } of PURPOSE_KEYS) await addColumn(tx, table, 'purpose', "text NOT NULL DEFAULT 'production'", key);
  const { rows } = await tx.query<{ doc: InterventionRecord | string; enrichment: 'enriched' | 'failed' | null }>(
    `UPDATE agp_interventions SET purpose = 'eval' WHERE run_id ~ $1 RETURNING doc, enrichment`,
    [EVAL_HARNESS_RUN_ID.source],
  );
  await tx.query(`UPDATE agp_interventions SET doc = (left(doc::text, -1) || ',"purpose":' || to_json(purpose)::text || '}')::json`);
  if (rows.length === 0) return;
  const delta = new StatsDelta();
  for (const r of rows) {
    const record = (typeof r.doc === 'string' ? JSON.parse(r.doc) : r.doc) as Omit<InterventionRecord, 'purpose'>;
    const enrichment = r.enrichment ?? undefined;
    delta.add(contribution({ ...record, purpose: 'production' }), -1);
    delta.addTotal(record.organization_id, 'production', -1, enrichment);
    delta.add(contribution({ ...record, purpose: 'eval' }), 1);
    delta.addTotal(record.organization_id, 'eval', 1, enrichment);
  }
  await delta.flush(tx);
  await tx.query('DELETE FROM agp_intervention_stats_daily WHERE interventions = 0 AND high_risk_blocks = 0');
  await tx.query('DELETE FROM agp_intervention_stats_actions WHERE blocked = 0');
  await tx.query('DELETE FROM agp_intervention_stats_policies WHERE triggered = 0');
  await tx.query('DELETE FROM agp_intervention_totals WHERE total = 0 AND enriched = 0 AND failed = 0');
}

/** Create the read-model tables (idempotent), and bring tables of an earlier version up to date. */
export async function migrateReadModels(sql: Sql): Promise<void> {
  await migrateSchema(sql, READ_MODEL_DDL, async (tx) => {
    // `doc` was jsonb before the read path was tuned: json keeps the text as written, so a page is read without converting each
    // skipped row's jsonb back to text (1.44 -> 0.43 ms per page at skip 0..999, docs/decisions.md).
    await alterColumnType(tx, 'agp_interventions', 'doc', 'json');
    await addEnrichmentColumns(tx);
    await addPurposeColumns(tx);
  });
}
