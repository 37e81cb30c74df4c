/**
 * Erasure in the interventions service's read models: an `AuditRecordsErased` event (an erasure request of one agent
 * or run, or a retention run of the policies service) removes the personal data of the interventions it names
 * (`intervention_ids`) and of their approvals — the values of the intervention fields the audit trail commits (`AUDIT_COMMITTED_FIELDS`: description,
 * reason, intent, blast radius, inputs, guardrail context, suggested rewrite) and an approval's notes, reasons and
 * comments — leaving ids, types, outcomes, amounts and times. Applied by the list read model's and the approvals read
 * model's own projections, so their position moves and no cached answer outlives it. The stored events were erased by
 * the policies service before the event was written, so a rebuild from the store gives the same rows.
 * Source: docs/audit.md (Erasure).
 */
import { AuditTrailEvents, type AuditRecordsErasedData } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';

/** The event type the two read models also subscribe to. */
export const ERASURE_EVENT_TYPE = AuditTrailEvents.RecordsErased;

/** Split a batch into erasure events and the others. */
export function splitErasures(events: StoredEvent[]): { erasures: StoredEvent[]; others: StoredEvent[] } {
  const erasures = events.filter((e) => e.type === ERASURE_EVENT_TYPE);
  return { erasures, others: erasures.length ? events.filter((e) => e.type !== ERASURE_EVENT_TYPE) : events };
}

/** An intervention record's erased values, merged over its document (every field stays, as the API answers it). */
const ERASED_INTERVENTION = { description: null, blast_radius: null, reason: null, agent_intent: null, original_inputs: {}, modified_inputs: null, remediation_payload: { suggested_rewrite: null } };
/** An approval's erased values. */
const ERASED_APPROVAL = { reason: null, agent_intent: null, original_inputs: {}, notes: null, decision_reason: null };

/** The interventions an erasure event covers (by id, in the event's organisation). */
const coveredIds = (e: StoredEvent) => (e.data as unknown as AuditRecordsErasedData).intervention_ids ?? [];

/** Apply erasure events to `agp_interventions` (in the projection's transaction). */
export async function eraseInterventions(erasures: StoredEvent[], tx: SqlExecutor): Promise<void> {
  for (const e of erasures) {
    const ids = coveredIds(e);
    if (!ids.length) continue;
    await tx.query(`UPDATE agp_interventions SET doc = ((doc::jsonb - 'context') || $3::jsonb)::json WHERE organization_id = $1 AND id = ANY($2::text[])`, [
      e.metadata.organization_id,
      ids,
      JSON.stringify(ERASED_INTERVENTION),
    ]);
  }
}

/** Apply erasure events to `agp_approvals` (in the projection's transaction): also each approval given's comment. */
export async function eraseApprovals(erasures: StoredEvent[], tx: SqlExecutor): Promise<void> {
  for (const e of erasures) {
    const ids = coveredIds(e);
    if (!ids.length) continue;
    await tx.query(
      `UPDATE agp_approvals SET doc = (doc || $3::jsonb) || jsonb_build_object('approvals',
         COALESCE((SELECT jsonb_agg(a || '{"comment":null}'::jsonb) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc->'approvals') = 'array' THEN doc->'approvals' ELSE '[]'::jsonb END) a), '[]'::jsonb))
       WHERE organization_id = $1 AND intervention_id = ANY($2::text[])`,
      [e.metadata.organization_id, ids, JSON.stringify(ERASED_APPROVAL)],
    );
  }
}
