import { type ApprovalRequest, type CreateIntervention, type IngestEnvelope } from '@agp/contracts';
import { DEFAULT_APPROVAL_TTL_SECONDS } from './approval.js';

/** An ingest event parsed into the intervention it records, with the approval expiry it asks for. */
export type IngestedIntervention =
  | { success: true; data: CreateIntervention; approval_ttl_seconds: number }
  /** `issues`: why the type is not one of ours (for the log). */
  | { success: false; issues: unknown[] };

/**
 * The intervention an `approval.request` records: an `approval_required` record with outcome `escalated`, which
 * opens approval `apr-<id>`. Its `expires_in_seconds` overrides the platform's approval expiry.
 * Source: architecture §4 (Ingest, Approvals).
 */
export function interventionOfApprovalRequest(req: ApprovalRequest): CreateIntervention {
  // Copied key by key onto a fresh object: an object rest and a spread of it with fields added cost V8 ~14 µs per
  // event on a body JSON.parse made (see decideRecord).
  const out: Record<string, unknown> = {};
  for (const k in req) if (k !== 'expires_in_seconds') out[k] = req[k as keyof ApprovalRequest];
  out.type = 'approval_required';
  out.outcome = 'escalated';
  return out as CreateIntervention;
}

/**
 * The intervention one ingest event records, by its type: `intervention.create` bodies as they are,
 * `approval.request` bodies as an escalated `approval_required` intervention. The body is trusted: the ingest service
 * validated it with its type's schema before publishing, and the consumer checked the message's schema version
 * (`admitBySchema` in @agp/bus; docs/decisions.md, Consumers trust what the log carries). Any other type is refused.
 * @param defaultTtlSeconds AGP_APPROVAL_TTL_SECONDS (default 24 h), used unless the request gives its own.
 */
export function parseIngestedIntervention(ev: IngestEnvelope['events'][number], defaultTtlSeconds = DEFAULT_APPROVAL_TTL_SECONDS): IngestedIntervention {
  if (ev.type === 'approval.request') {
    const r = ev.body as ApprovalRequest;
    return { success: true, data: interventionOfApprovalRequest(r), approval_ttl_seconds: r.expires_in_seconds ?? defaultTtlSeconds };
  }
  if (ev.type !== 'intervention.create') return { success: false, issues: [{ path: ['type'], message: `not an interventions event type: ${ev.type}` }] };
  return { success: true, data: ev.body as CreateIntervention, approval_ttl_seconds: defaultTtlSeconds };
}
