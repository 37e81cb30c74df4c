import { EvalRunEvents, type EvalRunSubmittedData, type ProjectionName } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';

/** Name (and checkpoint key) of the projection. */
export const EVALS_READ_MODEL = 'evals-read-model' satisfies ProjectionName;

/** Event types it applies. */
export const EVALS_READ_MODEL_EVENT_TYPES = Object.values(EvalRunEvents);

/**
 * Apply a batch of EvalRunSubmitted events inside the subscription's transaction (its checkpoint commits with these
 * writes): one row per run, written with one statement. A run never changes, so a row already there (a replay) is left
 * as it is. Source: architecture §3 (Projections).
 */
export async function applyEvalRunEvents(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const rows = events
    .filter((e) => e.type === EvalRunEvents.Submitted)
    .map((e) => {
      const { scenarios, ...doc } = e.data as unknown as EvalRunSubmittedData;
      return { org: e.metadata.organization_id, seq: String(e.global_position), doc, scenarios };
    });
  if (rows.length === 0) return;
  const col = <T>(f: (r: (typeof rows)[number]) => T) => rows.map(f);
  await tx.query(
    `INSERT INTO agp_eval_runs (organization_id, id, seq, suite, agent_id, branch, commit_sha, created_at, grade, block_rate, correctness_rate, ci_status, doc, scenarios)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::text[], $10::float8[], $11::float8[], $12::text[], $13::json[], $14::json[])
     ON CONFLICT (organization_id, id) DO NOTHING`,
    [
      col((r) => r.org),
      col((r) => r.doc.id),
      col((r) => r.seq),
      col((r) => r.doc.suite),
      col((r) => r.doc.agent_id),
      col((r) => r.doc.branch),
      col((r) => r.doc.commit_sha),
      col((r) => r.doc.created_at),
      col((r) => r.doc.summary.grade),
      col((r) => r.doc.summary.block_rate),
      col((r) => r.doc.summary.correctness_rate),
      col((r) => r.doc.summary.ci_status),
      col((r) => JSON.stringify(r.doc)),
      col((r) => JSON.stringify(r.scenarios)),
    ],
  );
}
