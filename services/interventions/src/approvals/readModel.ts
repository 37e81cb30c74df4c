import { ApprovalRecordSchema, InterventionEvents, approvalId, orderKeys, orderedJson, type ApprovalRecord, type ListApprovalsQuery, type ProjectionName } from '@agp/contracts';
import { ERASURE_EVENT_TYPE, eraseApprovals, splitErasures } from '../projections/erasures.js';
import { WhereClause, pageWithTotal, type SqlExecutor, type StoredEvent } from '@agp/eventstore';
import { rawJson, type RawJson } from '@agp/runtime';
import { evolveApproval } from './approval.js';

/** Name (and checkpoint key) of the approvals projection. */
export const APPROVALS_PROJECTION = 'approvals-read-model' satisfies ProjectionName;

/** Event types it applies: the ones that open, change or remove an approval. */
export const APPROVALS_EVENT_TYPES: string[] = [InterventionEvents.Recorded, InterventionEvents.Enriched, InterventionEvents.ApprovalGiven, InterventionEvents.OutcomeChanged, InterventionEvents.Deleted, ERASURE_EVENT_TYPE];

/**
 * `agp_approvals`: one row per approval, `doc` the record as the API returns it; the other columns exist for
 * filtering, ordering and the expiry sweep. Indexes: the inbox by status, agent and run (each ending in the
 * sort key), and a partial index on `expires_at` of pending approvals for the sweeper.
 */
export const APPROVALS_DDL = `
CREATE TABLE IF NOT EXISTS agp_approvals (
  id text PRIMARY KEY,
  intervention_id text NOT NULL UNIQUE,
  organization_id text NOT NULL,
  status text NOT NULL,
  agent_id text NOT NULL,
  run_id text,
  requested_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS agp_approvals_org_req ON agp_approvals (organization_id, requested_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS agp_approvals_org_status_req ON agp_approvals (organization_id, status, requested_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS agp_approvals_org_agent_req ON agp_approvals (organization_id, agent_id, requested_at DESC);
CREATE INDEX IF NOT EXISTS agp_approvals_org_run_req ON agp_approvals (organization_id, run_id, requested_at DESC) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agp_approvals_pending_expiry ON agp_approvals (expires_at) WHERE status = 'pending';
`;

/**
 * Fields added to the record after approvals were first stored, with the value a row stored before them reads:
 * `actor` and `actor_name` (who decided) are null on those rows; such an approval needed one approval by anyone
 * (`approvals_required` 1, `separation_of_duties` false), lists no `approvals` and no `decided_by`. Applied when a row is
 * read, so no rewrite of the table.
 */
const LATER_FIELDS = { actor: null, actor_name: null, approvals_required: 1, separation_of_duties: false, approvals: [], decided_by: null } as const;
/** {@link LATER_FIELDS} under a stored document, in SQL (`doc` wins where it has them). */
const DOC_SQL = `('${JSON.stringify(LATER_FIELDS)}'::jsonb || doc)`;

const parseDoc = (doc: unknown): ApprovalRecord => ({ ...LATER_FIELDS, ...((typeof doc === 'string' ? JSON.parse(doc) : doc) as ApprovalRecord) });

/**
 * Apply a batch of intervention events to `agp_approvals` inside the subscription's transaction (its
 * checkpoint commits with these writes). Rows touched by non-Recorded events are read with one query; every
 * change is folded in memory with {@link evolveApproval} and written with one upsert and one delete.
 * Records that never were escalated cost nothing but the fold.
 * @param ttlSeconds expiry for records without `approval_expires_at`.
 */
export async function applyApprovalEvents(batch: StoredEvent[], tx: SqlExecutor, ttlSeconds: number): Promise<void> {
  const { erasures, others: events } = splitErasures(batch);
  await applyApprovalChanges(events, tx, ttlSeconds);
  // After the batch's other events, in the same transaction.
  await eraseApprovals(erasures, tx);
}

/** {@link applyApprovalEvents} of the intervention events of a batch. */
async function applyApprovalChanges(events: StoredEvent[], tx: SqlExecutor, ttlSeconds: number): Promise<void> {
  const idOf = (e: StoredEvent) => String((e.data as { id?: unknown }).id ?? '');
  const lookup = [...new Set(events.filter((e) => e.type !== InterventionEvents.Recorded).map(idOf))];
  const current = new Map<string, ApprovalRecord | null>();
  if (lookup.length) {
    const { rows } = await tx.query<{ doc: unknown }>('SELECT doc FROM agp_approvals WHERE intervention_id = ANY($1::text[]) FOR UPDATE', [lookup]);
    for (const r of rows) {
      const a = parseDoc(r.doc);
      current.set(a.intervention_id, a);
    }
  }
  const changed = new Set<string>();
  for (const e of events) {
    const id = idOf(e);
    const prev = current.get(id) ?? null;
    const next = evolveApproval(prev, e, ttlSeconds);
    if (next === prev) continue;
    current.set(id, next);
    changed.add(id);
  }
  const upserts = [...changed].map((id) => current.get(id)).filter((a): a is ApprovalRecord => !!a);
  const deletes = [...changed].filter((id) => !current.get(id)).map(approvalId);
  if (upserts.length) {
    // ONE JSON array with each record nested as `doc` (one parse as jsonb, no per-row document string and no
    // array-literal escaping of it: docs/decisions.md, Set-based statements on the write path).
    await tx.query(
      `INSERT INTO agp_approvals (id, intervention_id, organization_id, status, agent_id, run_id, requested_at, expires_at, doc)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, intervention_id text, organization_id text, status text, agent_id text, run_id text, requested_at timestamptz, expires_at timestamptz, doc jsonb)
       ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, expires_at = EXCLUDED.expires_at, doc = EXCLUDED.doc`,
      [JSON.stringify(upserts.map((a) => ({ id: a.id, intervention_id: a.intervention_id, organization_id: a.organization_id, status: a.status, agent_id: a.agent_id, run_id: a.run_id, requested_at: a.requested_at, expires_at: a.expires_at, doc: a })))],
      { prepare: true },
    );
  }
  if (deletes.length) await tx.query('DELETE FROM agp_approvals WHERE id = ANY($1::text[])', [deletes]);
}

/**
 * One page of approvals of an organisation, newest first (requested_at, then id), as JSON text
 * `{approvals, total, skip, limit}`. Filters compose with AND; several statuses match any of them.
 */
export async function listApprovalsJson(db: SqlExecutor, org: string, q: ListApprovalsQuery): Promise<RawJson> {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(org)}`);
  if (q.status) w.and(`status = ANY(${w.param(q.status)}::text[])`);
  if (q.agent_id) w.and(`agent_id = ${w.param(q.agent_id)}`);
  if (q.run_id) w.and(`run_id = ${w.param(q.run_id)}`);
  const page = await pageWithTotal<{ doc: string }>(db, { select: `${DOC_SQL}::text AS doc`, from: 'agp_approvals', where: String(w), params: w.params, orderBy: 'requested_at DESC, id DESC', limit: q.limit, skip: q.skip });
  return rawJson(`{"approvals":[${page.rows.map((r) => orderedJson(ApprovalRecordSchema, r.doc)).join(',')}],"total":${page.total},"skip":${q.skip},"limit":${q.limit}}`);
}

/** One approval of an organisation, or null (unknown, deleted intervention, or another organisation's). */
export async function getApproval(db: SqlExecutor, org: string, id: string): Promise<ApprovalRecord | null> {
  const { rows } = await db.query<{ doc: unknown }>('SELECT doc FROM agp_approvals WHERE id = $1 AND organization_id = $2', [id, org]);
  return rows[0] ? orderKeys(ApprovalRecordSchema, parseDoc(rows[0].doc)) : null;
}

/** Intervention ids of pending approvals due at `now` (ISO 8601 UTC), soonest first, across organisations (the sweeper). */
export async function dueApprovals(db: SqlExecutor, now: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ intervention_id: string }>(
    `SELECT intervention_id FROM agp_approvals WHERE status = 'pending' AND expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => r.intervention_id);
}
