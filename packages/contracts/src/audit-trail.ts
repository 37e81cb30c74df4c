import { z } from 'zod';
import { NextCursorSchema, OpaqueIdSchema, paginationShape } from './common.js';
import { AUDIT_EVENT_TYPES } from './audit-log.js';
import { InterventionEvents } from './events.js';
import { KillSwitchEvents } from './policy.js';

/**
 * The verifiable audit trail: every governance record of an organisation is a leaf of its own RFC 9162 Merkle tree
 * (SHA-256), in the order the records were stored; signed tree heads (checkpoints, C2SP signed-note, Ed25519) commit to
 * the tree; inclusion and consistency proofs let anyone check, with the public keys of `/.well-known/agp-audit-keys`,
 * that a record is in the log and that the log only ever appended. Hashes travel as base64 (standard alphabet, padded),
 * as in the signed note. Source: docs/audit.md.
 */

/** The version of the leaf serialisation (the leaf's `v`) of a record without committed fields. */
export const AUDIT_LEAF_VERSION = 1;

/**
 * The version of a leaf whose record holds salted commitments (`{"$commitment": "<base64>"}`) in place of the
 * values of its {@link AUDIT_COMMITTED_FIELDS}. Leaves logged before commitments existed stay version 1.
 */
export const AUDIT_LEAF_VERSION_COMMITTED = 2;

/** Audit trail events: an erasure of personal data (a request, or the organisation's retention), itself a leaf. */
export const AuditTrailEvents = { RecordsErased: 'AuditRecordsErased' } as const;

/** Stream id of one erasure (`audit-erasure-<id>`). */
export const auditErasureStream = (id: string) => `audit-erasure-${id}`;

/**
 * The event types that become leaves: every administrative change of the audit log (policy versions, kill-switch
 * changes, agent registrations, MCP servers, API keys, members and roles, and their deletions) and the interventions
 * with their outcome changes, approvals and deletions.
 */
export const AUDIT_LEAF_EVENT_TYPES: readonly string[] = [
  ...Object.keys(AUDIT_EVENT_TYPES),
  InterventionEvents.Recorded,
  InterventionEvents.OutcomeChanged,
  InterventionEvents.ApprovalGiven,
  InterventionEvents.Deleted,
  AuditTrailEvents.RecordsErased,
];

/**
 * The fields that can hold personal data, per event type: JSON Pointers (RFC 6901) into the leaf's record. In a
 * version 2 leaf each such field present in the event is replaced by `{"$commitment": base64 SHA-256(salt ||
 * canonicalJson(value))}` with its own random 32-byte salt, kept beside the leaf; erasure and retention delete the
 * value (from the event store and the read models) and the salt, and the commitment keeps the tree verifying.
 * Chosen: what people and agents wrote or sent (an intervention's description, reason, intent, blast radius, inputs,
 * guardrail context with the matched text, remediation payload; approval notes and reasons; deletion, kill-switch
 * and erasure reasons). Not committed: ids, types, outcomes, amounts, times, policy names, and who acted (`actor`,
 * `approver_email`: the accountable person stays in the record). Source: docs/audit.md (Salted commitments).
 */
export const AUDIT_COMMITTED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [InterventionEvents.Recorded]: ['/data/description', '/data/reason', '/data/agent_intent', '/data/blast_radius', '/data/original_inputs', '/data/modified_inputs', '/data/context', '/data/remediation_payload'],
  [InterventionEvents.OutcomeChanged]: ['/data/notes', '/data/reason'],
  [InterventionEvents.ApprovalGiven]: ['/data/notes'],
  [InterventionEvents.Deleted]: ['/data/reason'],
  [KillSwitchEvents.Engaged]: ['/data/reason'],
  [KillSwitchEvents.Released]: ['/data/reason'],
  [AuditTrailEvents.RecordsErased]: ['/data/reason'],
};

/** Data of AuditRecordsErased: what was erased, why, and how much. */
export interface AuditRecordsErasedData {
  /** The erasure's id. */
  id: string;
  /**
   * `agent`, `run`, `intervention` (a request, or for `intervention` also the deletion of the intervention) or
   * `retention` (the organisation's retention setting).
   */
  scope: 'agent' | 'run' | 'intervention' | 'retention';
  agent_id: string | null;
  run_id: string | null;
  /** For retention: records stored before this time (ISO 8601 UTC) were erased. */
  before: string | null;
  /** Why (the request's reason; for retention, none). */
  reason?: string;
  /** Records whose committed fields were erased, and how many fields. */
  records: number;
  fields: number;
  /** The interventions whose records it covered: the interventions service erases them in its read models. */
  intervention_ids: string[];
  at: string;
}

/** The selectors of `POST /api/v1/audit/erasures`: exactly one is given. */
const AUDIT_ERASURE_SELECTORS = ['agent_id', 'run_id', 'intervention_id'] as const;

/** Body of `POST /api/v1/audit/erasures`: erase the personal data of one agent's, one run's or one intervention's records. */
export const CreateAuditErasureSchema = z
  .strictObject({
    agent_id: OpaqueIdSchema.optional().describe('Erase the records of this agent (its interventions, their approvals, outcome changes and deletions, and the kill switches engaged on it)'),
    run_id: OpaqueIdSchema.optional().describe('Erase the records of this run (its interventions, their approvals, outcome changes and deletions)'),
    intervention_id: OpaqueIdSchema.optional().describe('Erase the records of this intervention (its record, approvals, outcome changes and deletion)'),
    reason: z.string().min(1, 'must not be empty').max(1000, 'at most 1000 characters').describe('Why (e.g. a data subject’s request); committed in the erasure’s own record'),
  })
  .superRefine((b, ctx) => {
    if (AUDIT_ERASURE_SELECTORS.filter((k) => b[k] !== undefined).length !== 1) {
      for (const path of AUDIT_ERASURE_SELECTORS) ctx.addIssue({ code: 'custom', path: [path], message: 'give exactly one of agent_id, run_id or intervention_id' });
    }
  });
export type CreateAuditErasure = z.infer<typeof CreateAuditErasureSchema>;

/** The answer to an erasure: what it erased. The erasure is bounded by the records of one agent, run or intervention and runs in the request. */
export const AuditErasureSchema = z.object({
  id: z.string().describe('The erasure’s id; its record (AuditRecordsErased) is a leaf of the log'),
  scope: z.enum(['agent', 'run', 'intervention', 'retention']),
  agent_id: z.string().nullable(),
  run_id: z.string().nullable(),
  intervention_id: z.string().nullable().describe('Scope intervention: the intervention erased'),
  before: z.string().nullable().describe('Retention: records stored before this time were erased'),
  records: z.number().int().describe('Records whose committed fields were erased'),
  fields: z.number().int().describe('Committed fields erased (value and salt)'),
  events_changed: z.number().int().describe('Stored events whose erased fields were removed (0 on KurrentDB, whose events cannot change)'),
  at: z.string(),
});
export type AuditErasure = z.infer<typeof AuditErasureSchema>;

/** Longest retention, in days (100 years). */
export const AUDIT_RETENTION_DAYS_MAX = 36_500;

/** The organisation's audit retention: `PUT /api/v1/audit/retention` body and the GET answer. */
export const AuditRetentionSchema = z.strictObject({
  audit_retention_days: z
    .number({ message: 'expected a whole number of days or null' })
    .int('expected a whole number of days')
    .min(1, 'at least 1 day')
    .max(AUDIT_RETENTION_DAYS_MAX, `at most ${AUDIT_RETENTION_DAYS_MAX} days`)
    .nullable()
    .describe('Records older than this many days lose their committed fields (value and salt); null keeps everything (the default). The EU AI Act asks for at least 6 months (183 days)'),
});
export type AuditRetention = z.infer<typeof AuditRetentionSchema>;

/** Largest page of `GET /api/v1/audit/checkpoints`. */
export const AUDIT_CHECKPOINT_PAGE_MAX = 200;

const Base64Hash = z.string().describe('A SHA-256 hash, base64 (standard alphabet, padded: 44 characters)');
const TreeSize = (what: string) =>
  z.coerce
    .number({ message: 'expected a whole number' })
    .int('expected a whole number')
    .min(0, 'must be 0 or more')
    .max(Number.MAX_SAFE_INTEGER, 'too large')
    .describe(what);

/** One signed tree head of an organisation's log. */
export const AuditCheckpointSchema = z.object({
  origin: z.string().describe('The log’s name, first line of the note: `<AGP_AUDIT_LOG_NAME>/<organization id>`'),
  tree_size: z.number().int().describe('Leaves the checkpoint covers'),
  root_hash: Base64Hash.describe('RFC 9162 root hash of those leaves, base64'),
  at: z.string().describe('When it was signed (ISO 8601 UTC); also the note’s `time` extension line'),
  key_id: z.string().describe('The signing key’s id: 8 hex digits (the signed-note key id)'),
  key_name: z.string().describe('The signing key’s name'),
  note: z.string().describe('The checkpoint as a C2SP signed note (text, newline-terminated): what a verifier checks'),
});
export type AuditCheckpoint = z.infer<typeof AuditCheckpointSchema>;

/** Query of `GET /api/v1/audit/checkpoints`: newest first, offset pages. */
export const ListAuditCheckpointsQuerySchema = z.strictObject({ ...paginationShape(50, AUDIT_CHECKPOINT_PAGE_MAX) });
export type ListAuditCheckpointsQuery = z.infer<typeof ListAuditCheckpointsQuerySchema>;

/** A page of checkpoints with the latest one and the log's current size. */
export const AuditCheckpointPageSchema = z.object({
  checkpoints: z.array(AuditCheckpointSchema).describe('Newest (largest) first'),
  latest: AuditCheckpointSchema.nullable().describe('The newest checkpoint; null before the first'),
  tree_size: z.number().int().describe('Leaves in the log now (may be ahead of the latest checkpoint)'),
  total: z.number().int(),
  skip: z.number().int(),
  limit: z.number().int(),
});
export type AuditCheckpointPage = z.infer<typeof AuditCheckpointPageSchema>;

/** Query of `GET /api/v1/audit/proofs/inclusion`. */
export const AuditInclusionQuerySchema = z.strictObject({
  record: OpaqueIdSchema.describe('The record’s id: the leaf’s `id` (the id of the event it records; an audit-log entry’s `id`)'),
  tree_size: TreeSize('The tree the proof is for (a checkpoint’s tree_size); absent: the log’s current size').optional(),
});
export type AuditInclusionQuery = z.infer<typeof AuditInclusionQuerySchema>;

/** An inclusion proof: the record's leaf, its index and the audit path to the root of the tree of `tree_size` leaves. */
export const AuditInclusionProofSchema = z.object({
  record: z.string().describe('The record’s id'),
  leaf_index: z.number().int().describe('Its index in the log (0-based)'),
  tree_size: z.number().int(),
  leaf: z.string().describe('The leaf: the record’s canonical serialisation (RFC 8785 JSON, UTF-8); its leaf hash is SHA-256(0x00 || leaf)'),
  leaf_hash: Base64Hash,
  proof: z.array(Base64Hash).describe('The audit path (RFC 9162 §2.1.3), from the leaf up'),
  root_hash: Base64Hash.describe('The root the path leads to: compare with a checkpoint of this tree_size'),
});
export type AuditInclusionProof = z.infer<typeof AuditInclusionProofSchema>;

/** Query of `GET /api/v1/audit/proofs/consistency`. */
export const AuditConsistencyQuerySchema = z
  .strictObject({
    from: TreeSize('The older tree’s size (a checkpoint’s tree_size)'),
    to: TreeSize('The newer tree’s size, at least from'),
  })
  .superRefine((q, ctx) => {
    if (q.from > q.to) ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at least from (${q.from})` });
  });
export type AuditConsistencyQuery = z.infer<typeof AuditConsistencyQuerySchema>;

/** A consistency proof between two tree sizes. */
export const AuditConsistencyProofSchema = z.object({
  from: z.number().int(),
  to: z.number().int(),
  proof: z.array(Base64Hash).describe('The consistency proof (RFC 9162 §2.1.4); empty when from is 0 or equals to'),
  from_root: Base64Hash.describe('The root of the older tree'),
  to_root: Base64Hash.describe('The root of the newer tree'),
});
export type AuditConsistencyProof = z.infer<typeof AuditConsistencyProofSchema>;

const Instant = z.iso.datetime({ offset: true, message: 'expected an ISO 8601 date-time, e.g. 2026-11-29T10:00:00Z' });

/** Default and largest page of `GET /api/v1/audit/records`. */
export const AUDIT_RECORD_PAGE_DEFAULT = 500;
export const AUDIT_RECORD_PAGE_MAX = 2000;

/**
 * Query of `GET /api/v1/audit/records`: the leaves [start, end) in leaf order, `start` and `end` given or found from
 * `from` / `to` (the first leaf whose `at` is at or after each; leaves are in stored order), pages of `limit`.
 */
export const AuditRecordsQuerySchema = z
  .strictObject({
    from: Instant.optional().describe('ISO 8601 date-time: the records stored at or after it (inclusive); absent: from the first'),
    to: Instant.optional().describe('ISO 8601 date-time: the records stored before it (exclusive); absent: up to the log’s current size'),
    start: TreeSize('The first leaf index (inclusive); wins over from').optional(),
    end: TreeSize('The leaf index to stop before (exclusive); wins over to').optional(),
    cursor: z.string().regex(/^(0|[1-9]\d{0,15})$/, 'expected the next_cursor of the page before').optional().describe('Opaque: the `next_cursor` of the page before, with the same range'),
    limit: paginationShape(AUDIT_RECORD_PAGE_DEFAULT, AUDIT_RECORD_PAGE_MAX).limit,
  })
  .superRefine((q, ctx) => {
    if (q.start !== undefined && q.end !== undefined && q.start > q.end) ctx.addIssue({ code: 'custom', path: ['end'], message: `must be at least start (${q.start})` });
    if (q.from && q.to && Date.parse(q.from) > Date.parse(q.to)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
  });
export type AuditRecordsQuery = z.infer<typeof AuditRecordsQuerySchema>;

/** One record of the log: its leaf as logged and the record as the platform's store holds it now. */
export const AuditRecordSchema = z.object({
  leaf_index: z.number().int(),
  record_id: z.string().describe('The record’s id: the leaf’s `id`'),
  at: z.string().nullable().describe('When it was stored (the logged leaf’s `at`)'),
  position: z.string().nullable().describe('The event’s global position in the event store, decimal; null when it is no longer there'),
  leaf: z.string().nullable().describe('The record as the store holds it now, serialised as the log serialises a leaf (RFC 8785 JSON): equal to the logged leaf unless the store was changed; null when missing'),
  leaf_hash: Base64Hash.describe('The leaf hash the log holds (SHA-256 of 0x00 and the leaf as it was logged)'),
  missing: z.boolean().optional().describe('True when the record is no longer in the event store'),
  disclosures: z
    .record(z.string(), z.object({ salt: z.string().describe('The field’s salt, base64 (32 bytes)'), value: z.unknown().describe('The field’s value as the store holds it now') }))
    .optional()
    .describe('A version 2 leaf’s committed fields still held, by JSON Pointer into the leaf (`/data/reason`): each recomputes the leaf’s `{"$commitment"}` as base64 SHA-256(salt || RFC 8785 JSON of the value)'),
  redacted: z.array(z.string()).optional().describe('The committed fields erased (value and salt gone), by JSON Pointer: their commitments are the logged ones'),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/** A page of records, with the range and the log's origin and size. */
export const AuditRecordPageSchema = z.object({
  organization_id: z.string(),
  origin: z.string().describe('The log’s origin: the first line of its checkpoints'),
  start: z.number().int().describe('The range’s first leaf (inclusive)'),
  end: z.number().int().describe('The range’s end (exclusive)'),
  tree_size: z.number().int().describe('Leaves in the log now'),
  records: z.array(AuditRecordSchema).describe('In leaf order'),
  next_cursor: NextCursorSchema,
});
export type AuditRecordPage = z.infer<typeof AuditRecordPageSchema>;

/** Query of `GET /api/v1/audit/proofs/range`. */
export const AuditRangeQuerySchema = z
  .strictObject({
    start: TreeSize('The range’s first leaf (inclusive)'),
    end: TreeSize('The range’s end (exclusive), at least start'),
    tree_size: TreeSize('The tree the proof is for (a checkpoint’s tree_size), at least end; absent: the log’s current size').optional(),
  })
  .superRefine((q, ctx) => {
    if (q.start > q.end) ctx.addIssue({ code: 'custom', path: ['end'], message: `must be at least start (${q.start})` });
    if (q.tree_size !== undefined && q.end > q.tree_size) ctx.addIssue({ code: 'custom', path: ['tree_size'], message: `must be at least end (${q.end})` });
  });
export type AuditRangeQuery = z.infer<typeof AuditRangeQuerySchema>;

/** A range proof (docs/audit.md, Range proofs): the roots of the ranges outside [start, end) the RFC 9162 recursion visits. */
export const AuditRangeProofSchema = z.object({
  tree_size: z.number().int(),
  start: z.number().int(),
  end: z.number().int(),
  proof: z.array(Base64Hash).describe('Left to right; with the leaf hashes of [start, end) they give the root'),
  root_hash: Base64Hash.describe('The root they lead to: compare with a checkpoint of this tree_size'),
});
export type AuditRangeProof = z.infer<typeof AuditRangeProofSchema>;

/** One public key that signs (or signed) checkpoints. */
export const AuditPublicKeySchema = z.object({
  key_id: z.string().describe('8 hex digits: the signed-note key id'),
  name: z.string().describe('The key name in the notes’ signature lines'),
  algorithm: z.literal('ed25519'),
  verifier_key: z.string().describe('The signed-note verifier key: `<name>+<key id>+<base64(0x01 || Ed25519 public key)>`'),
  public_key: z.string().describe('The raw 32-byte Ed25519 public key, base64'),
  created_at: z.string(),
  retired_at: z.string().nullable().describe('When another key took over signing; its checkpoints still verify with it'),
});
export type AuditPublicKey = z.infer<typeof AuditPublicKeySchema>;

/** The document at `/.well-known/agp-audit-keys`. */
export const AuditKeysSchema = z.object({ keys: z.array(AuditPublicKeySchema).describe('Every key that ever signed, the current one first') });
export type AuditKeys = z.infer<typeof AuditKeysSchema>;
