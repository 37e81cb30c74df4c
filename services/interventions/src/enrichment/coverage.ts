import { InterventionEvents, type EnrichmentCoverage } from '@agp/contracts';
import { checkpointPosition, type EventStore, type SqlExecutor } from '@agp/eventstore';

/** Events read per page of the log past the enrichment checkpoint. */
const LAG_PAGE = 1000;

/**
 * The organisation's live interventions by enrichment status (`interventions.enrichment-coverage`), each counted as
 * `EnrichmentWorker.status` reports it on the detail: `pending` when a job is queued or running; else the latest
 * enrichment outcome (`enriched` / `failed`, the read model's `enrichment` column); else `pending` when `enabled` and
 * the enrichment subscription's checkpoint (`checkpointName`) is before the record's InterventionRecorded; else
 * `skipped`. Source: spec §Enrichment (enrichment_status); architecture §3.
 *
 * Reads the counts of `agp_intervention_totals` (O(1): one row per purpose; every purpose counts), the organisation's
 * queued jobs joined to their records (O(queue)) and, with enrichment on, the InterventionRecorded events past the
 * checkpoint through the event store's port (`readAll` with a type filter: O(the subscription's lag), near zero when
 * it keeps up), whose records are then looked up by primary key; never a stream or every record. The counts come from
 * one statement, so one snapshot. A record whose run ends between the reads may show as pending until the read model
 * applies its outcome, as the detail would have shown a moment before.
 */
export async function enrichmentCoverage(db: SqlExecutor, store: Pick<EventStore, 'readAll'>, org: string, opts: { enabled: boolean; checkpointName: string }): Promise<EnrichmentCoverage> {
  // The records the subscription has not reached: their InterventionRecorded events past the checkpoint.
  const unreachedIds: string[] = [];
  if (opts.enabled) {
    let from = (await checkpointPosition(db, opts.checkpointName)) ?? 0n;
    for (;;) {
      const page = await store.readAll(from, LAG_PAGE, [InterventionEvents.Recorded]);
      for (const e of page) if (e.metadata.organization_id === org) unreachedIds.push(String(e.data.id));
      if (page.length < LAG_PAGE) break;
      from = page[page.length - 1].global_position;
    }
  }
  // Of those, the live records with no enrichment outcome and no job: pending with a key.
  const unreached =
    unreachedIds.length === 0
      ? '0'
      : `(SELECT count(*) FROM agp_interventions i
           WHERE i.id = ANY($2::text[]) AND i.organization_id = $1 AND i.enrichment IS NULL
             AND NOT EXISTS (SELECT 1 FROM agp_enrichment_jobs j WHERE j.intervention_id = i.id))`;
  const { rows } = await db.query<{ total: string | null; enriched: string | null; failed: string | null; queued: string; queued_enriched: string; queued_failed: string; unreached: string }>(
    `SELECT t.total, t.enriched, t.failed, q.queued, q.queued_enriched, q.queued_failed, ${unreached} AS unreached
       FROM (SELECT count(*) AS queued, count(*) FILTER (WHERE i.enrichment = 'enriched') AS queued_enriched, count(*) FILTER (WHERE i.enrichment = 'failed') AS queued_failed
               FROM agp_enrichment_jobs j JOIN agp_interventions i ON i.id = j.intervention_id AND i.organization_id = j.organization_id
              WHERE j.organization_id = $1) AS q
       LEFT JOIN (SELECT sum(total) AS total, sum(enriched) AS enriched, sum(failed) AS failed FROM agp_intervention_totals WHERE organization_id = $1) AS t ON true`,
    unreachedIds.length === 0 ? [org] : [org, [...new Set(unreachedIds)]],
  );
  const r = rows[0];
  const n = (v: string | null | undefined) => Number(v ?? 0);
  const total = n(r.total);
  const pending = n(r.queued) + n(r.unreached);
  const enriched = n(r.enriched) - n(r.queued_enriched);
  const failed = n(r.failed) - n(r.queued_failed);
  return { total, enriched, pending, failed, skipped: total - pending - enriched - failed };
}
