import { checkpointPosition, migrateSchema, type Sql, type SqlExecutor } from '@agp/eventstore';

/**
 * The enrichment queue: one row per intervention waiting for (or in) an enrichment run. The subscription
 * inserts rows in its checkpoint transaction; workers claim due rows with a lease (`FOR UPDATE SKIP LOCKED`,
 * so several interventions replicas never claim the same row) and delete them when the run ends. Only the
 * interventions service reads it.
 * - `force`: an on-demand re-run (POST /api/v1/interventions/{id}/enrich): runs even if already enriched.
 * - `generation`: bumped when a re-run is requested while a run holds the row, so that run's completion
 *   leaves the row (released) for the requested re-run instead of deleting it.
 * - `lease_until`: null when due; a claimed row whose lease passed (its process died) is claimed again.
 */
export const ENRICHMENT_JOBS_DDL = `
CREATE TABLE IF NOT EXISTS agp_enrichment_jobs (
  intervention_id text PRIMARY KEY,
  organization_id text NOT NULL,
  force boolean NOT NULL DEFAULT false,
  generation integer NOT NULL DEFAULT 0,
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz
);
CREATE INDEX IF NOT EXISTS agp_enrichment_jobs_enqueued ON agp_enrichment_jobs (enqueued_at)
`;


/** A claimed job. */
export interface EnrichmentJob {
  intervention_id: string;
  organization_id: string;
  force: boolean;
  generation: number;
}

/** Create the queue table (idempotent, safe when several processes start at once). */
export async function migrateJobs(sql: Sql): Promise<void> {
  await migrateSchema(sql, ENRICHMENT_JOBS_DDL);
}

/**
 * Queue one job per intervention (inside the subscription's transaction). An intervention already queued
 * keeps its row, so a replayed InterventionRecorded never queues it twice.
 */
export async function enqueueJobs(tx: SqlExecutor, jobs: Array<{ intervention_id: string; organization_id: string }>): Promise<void> {
  if (jobs.length === 0) return;
  await tx.query(
    `INSERT INTO agp_enrichment_jobs (intervention_id, organization_id)
     SELECT x.intervention_id, x.organization_id FROM jsonb_to_recordset($1::jsonb) AS x(intervention_id text, organization_id text)
     ON CONFLICT (intervention_id) DO NOTHING`,
    [JSON.stringify(jobs)],
  );
}

/** Queue an on-demand re-run: a new row, or the existing one marked `force` and due again after its current run. */
export async function enqueueRerun(sql: SqlExecutor, interventionId: string, organizationId: string): Promise<void> {
  await sql.query(
    `INSERT INTO agp_enrichment_jobs (intervention_id, organization_id, force) VALUES ($1, $2, true)
     ON CONFLICT (intervention_id) DO UPDATE SET force = true, generation = agp_enrichment_jobs.generation + 1`,
    [interventionId, organizationId],
  );
}

/** Claim up to `limit` due jobs, oldest first, leasing them for `leaseMs`. */
export async function claimJobs(sql: Sql, limit: number, leaseMs: number): Promise<EnrichmentJob[]> {
  const { rows } = await sql.query<EnrichmentJob>(
    `UPDATE agp_enrichment_jobs SET lease_until = now() + $2::integer * interval '1 millisecond'
      WHERE intervention_id IN (
        SELECT intervention_id FROM agp_enrichment_jobs
         WHERE lease_until IS NULL OR lease_until < now()
         ORDER BY enqueued_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING intervention_id, organization_id, force, generation`,
    [limit, leaseMs],
  );
  return rows;
}

/**
 * End a job's run: delete its row, unless a re-run was requested meanwhile (generation moved): then the
 * row is released (due at once) and keeps `force`.
 */
export async function finishJob(sql: Sql, job: EnrichmentJob): Promise<void> {
  const { rows } = await sql.query<{ intervention_id: string }>(
    `DELETE FROM agp_enrichment_jobs WHERE intervention_id = $1 AND generation = $2 RETURNING intervention_id`,
    [job.intervention_id, job.generation],
  );
  if (rows.length === 0) await releaseJob(sql, job.intervention_id, 0);
}

/** Hand a job back without finishing it (process stopping, or a store error): due again after `delayMs`. */
export async function releaseJob(sql: Sql, interventionId: string, delayMs: number): Promise<void> {
  await sql.query(`UPDATE agp_enrichment_jobs SET lease_until = CASE WHEN $2::integer > 0 THEN now() + $2::integer * interval '1 millisecond' END WHERE intervention_id = $1`, [
    interventionId,
    delayMs,
  ]);
}

/** Queue depth and the age of the oldest job in seconds (0 when empty), for the queue-lag gauges. */
export async function queueLag(sql: Sql): Promise<{ pending: number; oldestSeconds: number }> {
  const { rows } = await sql.query<{ pending: string | number; oldest: string | number | null }>(
    `SELECT count(*) AS pending, extract(epoch FROM now() - min(enqueued_at)) AS oldest FROM agp_enrichment_jobs`,
  );
  return { pending: Number(rows[0]?.pending ?? 0), oldestSeconds: Math.max(0, Number(rows[0]?.oldest ?? 0)) };
}

/** Whether the intervention has a queued or running job, and the enrichment subscription's checkpoint (0 before it has one). */
export async function jobState(sql: Sql, interventionId: string, checkpointName: string): Promise<{ queued: boolean; checkpoint: bigint }> {
  const [{ rows }, checkpoint] = await Promise.all([
    sql.query<{ queued: boolean }>('SELECT EXISTS (SELECT 1 FROM agp_enrichment_jobs WHERE intervention_id = $1) AS queued', [interventionId]),
    checkpointPosition(sql, checkpointName),
  ]);
  return { queued: Boolean(rows[0]?.queued), checkpoint: checkpoint ?? 0n };
}
