import { ApprovalRequestSchema, CreateInterventionSchema, type ApprovalRequest, type CreateIntervention, type IngestEnvelope } from '@agp/contracts';
import { DEFAULT_APPROVAL_TTL_SECONDS } from './approval.js';

/** An ingest event parsed into the intervention it records, with the approval expiry it asks for. */
export type IngestedIntervention =
  | { success: true; data: CreateIntervention; approval_ttl_seconds: number }
  /** `issues`: zod's issues, or why the type is not one of ours (for the log). */
  | { success: false; issues: unknown[] };

/**
 * The intervention an `approval.request` records: an `approval_required` record with outcome `escalated`, which
 * opens approval `apr-<id>`. Its `expires_in_seconds` overrides the platform's approval expiry.
 * Source: architecture §4 (Ingest, Approvals).
 */
export function interventionOfApprovalRequest(req: ApprovalRequest): CreateIntervention {
  const { expires_in_seconds: _ttl, ...fields } = req;
  return { ...fields, type: 'approval_required', outcome: 'escalated' };
}

/**
 * Parse one ingest event for the interventions service, by its type: `intervention.create` bodies as they
 * are, `approval.request` bodies as an escalated `approval_required` intervention.
 * @param defaultTtlSeconds AGP_APPROVAL_TTL_SECONDS (default 24 h), used unless the request gives its own.
 */
export function parseIngestedIntervention(ev: IngestEnvelope['events'][number], defaultTtlSeconds = DEFAULT_APPROVAL_TTL_SECONDS): IngestedIntervention {
  if (ev.type === 'approval.request') {
    const r = ApprovalRequestSchema.safeParse(ev.body);
    if (!r.success) return { success: false, issues: r.error.issues };
    return { success: true, data: interventionOfApprovalRequest(r.data), approval_ttl_seconds: r.data.expires_in_seconds ?? defaultTtlSeconds };
  }
  if (ev.type !== 'intervention.create') return { success: false, issues: [{ path: ['type'], message: `not an interventions event type: ${ev.type}` }] };
  const r = CreateInterventionSchema.safeParse(ev.body);
  if (!r.success) return { success: false, issues: r.error.issues };
  return { success: true, data: r.data, approval_ttl_seconds: defaultTtlSeconds };
}
