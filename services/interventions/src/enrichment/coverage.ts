import { InterventionEvents, type EnrichmentCoverage } from '@agp/contracts';
import type { SqlExecutor } from '@agp/eventstore';

/**
 * The organisation's live interventions by enrichment status (`interventions.enrichment-coverage`), each counted as
 * `EnrichmentWorker.status` reports it on the detail: `pending` when a job is queued or running; else the latest
 * enrichment outcome (`enriched` / `failed`, the read model's `enrichment` column); else `pending` when `enabled` and
 * the enrichment subscription's checkpoint (`checkpointName`) is before the record's InterventionRecorded; else
 * `skipped`. Source: docs/decisions.md (Enrichment: enrichment_status).
 *
 * Reads the counts of `agp_intervention_totals` (O(1): one row per purpose; every purpose counts), the organisation's queued jobs joined to their records
 * (O(queue)) and, with enrichment on, the InterventionRecorded events past the checkpoint, each looked up by primary
 * key (O(the subscription's lag), near zero when it keeps up); never a stream or every record. The checkpoint is read
 * first so the planner sees its value (an index range, not a guessed third of `agp_events`); the counts then come
 * from one statement, so one snapshot. A record whose run ends between the two reads may show as pending until the
 * read model applies its outcome, as the detail would have shown a moment before.
 */
export async function enrichmentCoverage(db: SqlExecutor, org: string, opts: { enabled: boolean; checkpointName: string }): Promise<EnrichmentCoverage> {
  const checkpoint = opts.enabled ? ((await db.query<{ position: string }>('SELECT position::text AS position FROM agp_checkpoints WHERE name = $1', [opts.checkpointName])).rows[0]?.position ?? '0') : null;
  // Live records with no enrichment outcome and no job that the subscription has not reached: pending with a key.
  // The record lookup is a scalar subquery so it stays a primary-key probe per event (never a join over the org's records).
  const unreached =
    checkpoint === null
      ? '0'
      : `(SELECT count(*) FROM agp_events e
           WHERE e.global_position > $2::bigint AND e.event_type = $3 AND e.organization_id = $1
             AND (SELECT i.enrichment IS NULL FROM agp_interventions i WHERE i.id = e.data->>'id' AND i.organization_id = $1)
             AND NOT EXISTS (SELECT 1 FROM agp_enrichment_jobs j WHERE j.intervention_id = e.data->>'id'))`;
  const { rows } = await db.query<{ total: string | null; enriched: string | null; failed: string | null; queued: string; queued_enriched: string; queued_failed: string; unreached: string }>(
    `SELECT t.total, t.enriched, t.failed, q.queued, q.queued_enriched, q.queued_failed, ${unreached} AS unreached
       FROM (SELECT count(*) AS queued, count(*) FILTER (WHERE i.enrichment = 'enriched') AS queued_enriched, count(*) FILTER (WHERE i.enrichment = 'failed') AS queued_failed
               FROM agp_enrichment_jobs j JOIN agp_interventions i ON i.id = j.intervention_id AND i.organization_id = j.organization_id
              WHERE j.organization_id = $1) AS q
       LEFT JOIN (SELECT sum(total) AS total, sum(enriched) AS enriched, sum(failed) AS failed FROM agp_intervention_totals WHERE organization_id = $1) AS t ON true`,
    checkpoint === null ? [org] : [org, checkpoint, InterventionEvents.Recorded],
  );
  const r = rows[0];
  const n = (v: string | null | undefined) => Number(v ?? 0);
  const total = n(r.total);
  const pending = n(r.queued) + n(r.unreached);
  const enriched = n(r.enriched) - n(r.queued_enriched);
  const failed = n(r.failed) - n(r.queued_failed);
  return { total, enriched, pending, failed, skipped: total - pending - enriched - failed };
}
