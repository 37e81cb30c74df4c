import { ReplayEvents, type ReplaySubmittedData, type ProjectionName } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';

/** Name (and checkpoint key) of the projection. */
export const REPLAY_READ_MODEL = 'replay-read-model' satisfies ProjectionName;

/** Event types it applies. */
export const REPLAY_READ_MODEL_EVENT_TYPES = Object.values(ReplayEvents);

/**
 * Apply a batch of ReplaySubmitted events inside the subscription's transaction (its checkpoint commits with these
 * writes): one row per submission, written with one statement. A submission never changes, so a row already there (a
 * replay of the projection) is left as it is. Source: architecture §3 (Projections).
 */
export async function applyReplayEvents(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const rows = events
    .filter((e) => e.type === ReplayEvents.Submitted)
    .map((e) => {
      const { divergence_details, ...doc } = e.data as unknown as ReplaySubmittedData;
      return { org: e.metadata.organization_id, seq: String(e.global_position), doc, details: divergence_details };
    });
  if (rows.length === 0) return;
  const col = <T>(f: (r: (typeof rows)[number]) => T) => rows.map(f);
  await tx.query(
    `INSERT INTO agp_replay_submissions (organization_id, id, run_id, seq, submitted_at, status, actions_replayed, divergences, cost_savings, doc, details)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[], $6::text[], $7::bigint[], $8::bigint[], $9::numeric[], $10::json[], $11::json[])
     ON CONFLICT (organization_id, id) DO NOTHING`,
    [
      col((r) => r.org),
      col((r) => r.doc.id),
      col((r) => r.doc.run_id),
      col((r) => r.seq),
      col((r) => r.doc.submitted_at),
      col((r) => r.doc.status),
      col((r) => r.doc.actions_replayed),
      col((r) => r.doc.divergences),
      col((r) => String(r.doc.cost_savings)),
      col((r) => JSON.stringify(r.doc)),
      col((r) => JSON.stringify(r.details)),
    ],
  );
}
