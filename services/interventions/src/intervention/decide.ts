import {
  BLOCKING_OUTCOMES,
  InterventionEvents,
  type CreateIntervention,
  type GuardrailContext,
  type InterventionDeletedData,
  type InterventionRecordedData,
} from '@agp/contracts';
import { NotFoundError } from '@agp/runtime';
import type { InterventionState } from './intervention.js';

/** Command metadata: time and ids come in, never from the clock inside the decider (the style guide). */
export interface CommandMeta {
  /** Current time, ISO 8601 UTC. */
  now: string;
  /** Platform-issued id for a new record (UUIDv7). */
  id: string;
  organization_id: string;
  /**
   * For an escalated record: seconds until its approval expires (AGP_APPROVAL_TTL_SECONDS, or an
   * `approval.request`'s `expires_in_seconds`). Sets `approval_expires_at` = now + this.
   */
  approval_ttl_seconds?: number;
}

/**
 * Mask a matched string so personal data never lands in the store: keep the first and last two characters
 * of strings longer than 6, the first one of shorter ones. Text that already contains `*` is taken as masked.
 * Characters are code points: a masked string never holds half of a surrogate pair, which PostgreSQL cannot store.
 * Source: spec §Guardrail context payload: matched_text is partly masked.
 */
export function maskMatchedText(text: string): string {
  if (text.includes('*') || text.length === 0) return text;
  const chars = Array.from(text);
  if (chars.length <= 6) return chars[0] + '*'.repeat(chars.length - 1);
  return chars.slice(0, 2).join('') + '*'.repeat(chars.length - 4) + chars.slice(-2).join('');
}

/** The guardrail context with every matched_text masked. */
export function maskContext(ctx: GuardrailContext): GuardrailContext {
  if (ctx.guardrail === 'pii' || ctx.guardrail === 'moderation') {
    return { ...ctx, matches: ctx.matches.map((m) => ({ ...m, matched_text: maskMatchedText(m.matched_text) })) } as GuardrailContext;
  }
  return ctx;
}

/**
 * Cost prevented, in USD: as given, else the estimated cost for blocking outcomes (blocked,
 * rejected_after_review), else 0. Decision recorded in docs/decisions.md.
 */
export function costPrevented(body: CreateIntervention): number {
  if (body.cost_prevented_usd !== undefined) return body.cost_prevented_usd;
  return (BLOCKING_OUTCOMES as readonly string[]).includes(body.outcome) ? (body.estimated_cost_usd ?? 0) : 0;
}

/**
 * RecordIntervention: a validated creation body becomes the InterventionRecorded event data.
 * Source: spec §Intervention record, architecture §4 (Required fields on create).
 */
export function decideRecord(
  body: CreateIntervention,
  meta: CommandMeta,
  source: InterventionRecordedData['source'],
  ingestEventId?: string,
): InterventionRecordedData {
  // Copied onto a fresh object with Object.assign. Not `{ ...rest, id, … }` after an object rest: on bodies that
  // JSON.parse made, V8 took ~14 µs per event for that (a spread copy keeps the source object's layout and every
  // field added to it goes the slow way), against ~1 µs for this (docs/decisions.md, The consuming side). The stored
  // data's key order carries no meaning.
  const data: InterventionRecordedData = Object.assign({}, body, {
    id: meta.id,
    timestamp: body.timestamp ? new Date(body.timestamp).toISOString() : meta.now,
    created_at: meta.now,
    cost_prevented_usd: costPrevented(body),
    source,
  });
  if (body.context) data.context = maskContext(body.context);
  if (ingestEventId !== undefined) data.ingest_event_id = ingestEventId;
  if (body.outcome === 'escalated' && meta.approval_ttl_seconds !== undefined) {
    data.approval_expires_at = new Date(Date.parse(meta.now) + meta.approval_ttl_seconds * 1000).toISOString();
  }
  return data;
}

/**
 * DeleteIntervention: allowed once on an existing record of the caller's organisation.
 * @throws NotFoundError when the stream is empty, deleted, or another organisation's (never revealed).
 */
export function decideDelete(state: InterventionState | null, organizationId: string): { type: string; data: InterventionDeletedData } {
  if (!state || state.deleted || state.record.organization_id !== organizationId) throw new NotFoundError('intervention not found');
  return { type: InterventionEvents.Deleted, data: { id: state.record.id } };
}
