/**
 * The audit trail's projection (`audit-trail`): every governance event (`AUDIT_LEAF_EVENT_TYPES` of @agp/contracts)
 * becomes one leaf of its organisation's RFC 9162 tree, in the order the events were stored, appended in the
 * subscription's transaction (its checkpoint commits with the leaves, and the projection never skips an event: a
 * batch that fails is retried or dead-lettered, never passed over). The leaf is the record's canonical serialisation
 * (RFC 8785 JSON: `canonicalJson` of @agp/contracts, checked against the RFC's examples), versioned by `v`: a record
 * with fields that can hold personal data (`AUDIT_COMMITTED_FIELDS`) is a version 2 leaf holding a salted commitment
 * in place of each such value, its salts kept in `agp_tlog_record_salts` (one row per record); a record without them is version 1.
 * Source: docs/audit.md (Leaves, Salted commitments).
 */
import { randomBytes } from 'node:crypto';
import { AUDIT_COMMITTED_FIELDS, AUDIT_LEAF_VERSION, AUDIT_LEAF_VERSION_COMMITTED, InterventionEvents, canonicalJson, type InterventionDeletedData, type ProjectionName } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { newId } from '@agp/runtime';
import { appendLeaves, commitmentOf, frontier, leafHash, type Hash } from '@agp/tlog';

export { commitmentOf };
import { scrub } from '../audit/projection.js';

/** Name (and checkpoint key) of the projection. */
export const AUDIT_TRAIL_PROJECTION = 'audit-trail' satisfies ProjectionName;

/**
 * Fields never put in a leaf, at any depth: sealed or hashed secrets (an MCP server's sealed headers; a key's or a
 * token's hash). An API key event's `key` (the key as listed, no secret) stays.
 */
const LEAF_SECRET_FIELDS: ReadonlySet<string> = new Set(['sealed_headers', 'key_hash', 'token', 'token_hash', 'secret', 'session_id', 'code_verifier']);

/** A leaf's record (version 1): the event, as stored, that it commits to. */
export interface AuditLeafRecord {
  /** The serialisation's version: 1. */
  v: number;
  /** The record's id: the event id. */
  id: string;
  organization_id: string;
  /** When it was stored, ISO 8601 UTC. */
  at: string;
  /** The event type, e.g. `PolicyUpdated`, `InterventionOutcomeChanged`. */
  type: string;
  /** The stream it belongs to and its version there (a policy's version is its stream version). */
  stream: string;
  stream_version: number;
  /** Who caused it (`key:<id>`, `user:<id>`, `approver:<email>`, `system`, …) and their name at the time, or null. */
  actor: string;
  actor_name: string | null;
  /** The event's data, without {@link LEAF_SECRET_FIELDS}. */
  data: unknown;
}

/** The record of event `e`. Pure: its `data` may share objects with `e.data` ({@link scrub}); change a copy. */
export function leafRecord(e: StoredEvent): AuditLeafRecord {
  return {
    v: AUDIT_LEAF_VERSION,
    id: e.event_id,
    organization_id: e.metadata.organization_id,
    at: typeof e.recorded_at === 'string' ? e.recorded_at : new Date(e.recorded_at).toISOString(),
    type: e.type,
    stream: e.stream_id,
    stream_version: e.stream_version,
    actor: e.metadata.actor,
    actor_name: e.metadata.actor_name ?? null,
    data: scrub(e.data, LEAF_SECRET_FIELDS),
  };
}

/**
 * Give `record` (of event `e`) a `data` object of its own (a shallow copy when it is `e.data` itself), so that a
 * committed field (a member of `data`: every pointer of `AUDIT_COMMITTED_FIELDS` is `/data/<member>`) can be replaced
 * without changing the event.
 */
function ownData(record: AuditLeafRecord, e: StoredEvent): void {
  if (record.data === e.data && typeof e.data === 'object' && e.data !== null && !Array.isArray(e.data)) record.data = { ...(e.data as Record<string, unknown>) };
}

/**
 * The version 1 leaf of event `e` (every field in clear): its canonical text and leaf hash. Pure. The projection logs
 * a record with committed fields as version 2 instead ({@link committedLeafOf}).
 */
export function leafOf(e: StoredEvent): { text: string; hash: Hash } {
  return leafOfRecord(leafRecord(e));
}

function leafOfRecord(record: AuditLeafRecord): { text: string; hash: Hash } {
  const text = canonicalJson(record);
  return { text, hash: leafHash(text) };
}

/** A committed field's place in the leaf: `{"$commitment": "<base64 SHA-256(salt || canonical JSON of the value)>"}`. */
export interface AuditCommitment {
  $commitment: string;
}

const isCommitment = (v: unknown): v is AuditCommitment => typeof v === 'object' && v !== null && typeof (v as AuditCommitment).$commitment === 'string';

/** The reference tokens of each JSON Pointer seen (the committed fields' few pointers, parsed once each). */
const TOKENS = new Map<string, readonly string[]>();

/** The reference tokens of an RFC 6901 JSON Pointer (`/data/reason` → `data`, `reason`; `~1` is `/`, `~0` is `~`). */
function tokensOf(pointer: string): readonly string[] {
  let tokens = TOKENS.get(pointer);
  if (!tokens) {
    tokens = pointer.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (TOKENS.size < 1024) TOKENS.set(pointer, tokens);
  }
  return tokens;
}

/** The value at an RFC 6901 JSON Pointer in `doc`, or undefined when absent. Pure. */
export function pointerGet(doc: unknown, pointer: string): unknown {
  let at: unknown = doc;
  for (const t of tokensOf(pointer)) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, t)) return undefined;
    at = (at as Record<string, unknown>)[t];
  }
  return at;
}

/** Set the value at `pointer` in `doc` (its parent must exist); `undefined` removes the member. Mutates `doc`. */
export function pointerSet(doc: unknown, pointer: string, value: unknown): void {
  const tokens = tokensOf(pointer);
  let parent: unknown = doc;
  for (let i = 0; i < tokens.length - 1; i++) parent = typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)[tokens[i]] : undefined;
  if (typeof parent !== 'object' || parent === null || tokens.length === 0) return;
  const last = tokens.at(-1)!;
  if (value === undefined) delete (parent as Record<string, unknown>)[last];
  else (parent as Record<string, unknown>)[last] = value;
}

/** The committed fields (JSON Pointers into the leaf record) of an event type; none for most types. */
export const committedFieldsOf = (type: string): readonly string[] => AUDIT_COMMITTED_FIELDS[type] ?? [];

/** The salts of one record's committed fields, by JSON Pointer. */
export type RecordSalts = ReadonlyMap<string, Uint8Array>;

/** Salts drawn per call of `randomBytes` ({@link freshSalt}): one call of the CSPRNG serves this many fields. */
const SALTS_PER_DRAW = 256;
let saltPool = new Uint8Array(0);
let saltAt = 0;

/**
 * A fresh salt: 32 bytes of `randomBytes` (the CSPRNG), taken from a pool drawn {@link SALTS_PER_DRAW} salts at a
 * time (a new pool each draw: no byte is handed out twice), as one call of `randomBytes` per field cost more than
 * the rest of a leaf.
 */
function freshSalt(): Uint8Array {
  if (saltAt + 32 > saltPool.length) {
    saltPool = new Uint8Array(randomBytes(32 * SALTS_PER_DRAW));
    saltAt = 0;
  }
  saltAt += 32;
  return saltPool.subarray(saltAt - 32, saltAt);
}

/**
 * The leaf the projection logs for event `e`: version 2, each committed field present in the event replaced by its
 * salted commitment, when the event has any; else the version 1 leaf ({@link leafOf}). Fresh 32-byte salts come from
 * the CSPRNG ({@link freshSalt}) unless `salts` gives them (a test's fixed salt).
 * @returns the leaf's text and hash, and the salts used (by JSON Pointer; empty for version 1).
 */
export function committedLeafOf(e: StoredEvent, salts?: RecordSalts): { text: string; hash: Hash; salts: Map<string, Uint8Array> } {
  const record = leafRecord(e);
  const used = new Map<string, Uint8Array>();
  for (const pointer of committedFieldsOf(e.type)) {
    const value = pointerGet(record, pointer);
    if (value === undefined) continue;
    ownData(record, e);
    const salt = salts?.get(pointer) ?? freshSalt();
    used.set(pointer, salt);
    pointerSet(record, pointer, { $commitment: commitmentOf(salt, value) } satisfies AuditCommitment);
  }
  if (used.size) record.v = AUDIT_LEAF_VERSION_COMMITTED;
  return { ...leafOfRecord(record), salts: used };
}

/** One committed field disclosed: its salt (base64) and its value, which recompute the leaf's commitment. */
export interface AuditDisclosure {
  salt: string;
  value: unknown;
}

/** A record's leaf rebuilt from the platform's store now ({@link leafFromStore}). */
export interface LeafFromStore {
  /** The leaf text (RFC 8785) and its leaf hash: equal to the logged leaf unless the store changed since. */
  text: string;
  hash: Hash;
  /** Per committed field still held (JSON Pointer into the leaf record): its salt and current value. */
  disclosures: Record<string, AuditDisclosure>;
  /** The committed fields erased (value and salt gone): their commitments are taken from the logged leaf. */
  redacted: string[];
}

/**
 * Rebuild a record's leaf from the event as the store holds it NOW, with its stored salts and the logged leaf, the
 * way the projection serialised it, so that a field edited in the store changes the leaf (and its hash no longer
 * matches the log). For each committed field of the event's type:
 * - with a salt: the commitment is recomputed from the event's current value (`null` when the value is gone but the
 *   salt is not: the leaf then differs), and the field is disclosed (`{salt, value}`);
 * - without a salt, where the logged leaf holds a commitment: the field was erased; the logged commitment is used and
 *   the field listed in `redacted`;
 * - otherwise the field stays as the event holds it.
 * A version 1 logged leaf is rebuilt as version 1 ({@link leafOf}: no commitments, nothing disclosed).
 * @param e the stored event (the record's `id` is its event id).
 * @param salts the record's salts by JSON Pointer (`saltsOf`); empty when none (version 1, or all erased).
 * @param storedLeaf the leaf text the log holds for the record (`agp_tlog_leaves.leaf`), or null when not logged.
 * @throws SyntaxError when `storedLeaf` is not JSON. Source: docs/audit.md (Salted commitments); the evidence pack.
 */
export function leafFromStore(e: StoredEvent, salts: RecordSalts, storedLeaf: string | null): LeafFromStore {
  const logged = storedLeaf === null ? null : (JSON.parse(storedLeaf) as Partial<AuditLeafRecord>);
  if (logged?.v === AUDIT_LEAF_VERSION) return { ...leafOf(e), disclosures: {}, redacted: [] };
  const record = leafRecord(e);
  const disclosures: Record<string, AuditDisclosure> = {};
  const redacted: string[] = [];
  for (const pointer of committedFieldsOf(e.type)) {
    const salt = salts.get(pointer);
    const loggedValue = logged ? pointerGet(logged, pointer) : undefined;
    if (salt) {
      const value = pointerGet(record, pointer) ?? null;
      ownData(record, e);
      pointerSet(record, pointer, { $commitment: commitmentOf(salt, value) } satisfies AuditCommitment);
      disclosures[pointer] = { salt: Buffer.from(salt).toString('base64'), value };
    } else if (isCommitment(loggedValue)) {
      ownData(record, e);
      pointerSet(record, pointer, { $commitment: loggedValue.$commitment } satisfies AuditCommitment);
      redacted.push(pointer);
    }
  }
  record.v = logged?.v ?? (Object.keys(disclosures).length || redacted.length ? AUDIT_LEAF_VERSION_COMMITTED : AUDIT_LEAF_VERSION);
  return { ...leafOfRecord(record), disclosures, redacted };
}

/**
 * The stored salts of `recordIds` (of organisation `org`), by record id and JSON Pointer; a record with none (version
 * 1, or every committed field erased) is absent. One query.
 */
export async function saltsOf(db: SqlExecutor, org: string, recordIds: readonly string[]): Promise<Map<string, Map<string, Uint8Array>>> {
  const out = new Map<string, Map<string, Uint8Array>>();
  if (!recordIds.length) return out;
  const { rows } = await db.query<{ record_id: string; salts: Record<string, string> | string }>(
    `SELECT record_id, salts FROM agp_tlog_record_salts WHERE organization_id = $1 AND record_id = ANY($2::text[])`,
    [org, [...recordIds]],
  );
  for (const r of rows) {
    const m = new Map<string, Uint8Array>();
    for (const [pointer, salt] of Object.entries(typeof r.salts === 'string' ? (JSON.parse(r.salts) as Record<string, string>) : r.salts)) m.set(pointer, new Uint8Array(Buffer.from(salt, 'base64')));
    if (m.size) out.set(r.record_id, m);
  }
  return out;
}

const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');
const unhex = (s: string): Hash => new Uint8Array(Buffer.from(s, 'hex'));

/**
 * Append a batch of governance events to their organisations' trees inside the subscription's transaction: an event
 * whose record is already a leaf is left out (a replay appends nothing twice); each organisation's size is read and
 * locked, the frontier nodes read with one query, the new leaves and completed nodes inserted, the sizes written back.
 * Each `InterventionDeleted` appended also queues the erasure of its intervention's records
 * (`agp_tlog_pending_erasures`, same transaction; the `AuditErasures` worker erases it). Source: docs/audit.md (Erasure).
 * @returns how many erasures it queued (the caller wakes the worker once the transaction commits).
 */
export async function applyAuditTrailEvents(events: StoredEvent[], tx: SqlExecutor): Promise<number> {
  if (events.length === 0) return 0;
  const { rows: present } = await tx.query<{ record_id: string }>(`SELECT record_id FROM agp_tlog_leaves WHERE record_id = ANY($1::text[])`, [events.map((e) => e.event_id)]);
  const skip = new Set(present.map((r) => r.record_id));
  const byOrg = new Map<string, StoredEvent[]>();
  for (const e of events) {
    if (skip.has(e.event_id)) continue;
    skip.add(e.event_id);
    const list = byOrg.get(e.metadata.organization_id) ?? [];
    list.push(e);
    byOrg.set(e.metadata.organization_id, list);
  }
  if (byOrg.size === 0) return 0;
  const orgs = [...byOrg.keys()];
  const { rows: trees } = await tx.query<{ organization_id: string; size: string }>(
    `SELECT organization_id, size::text AS size FROM agp_tlog_trees WHERE organization_id = ANY($1::text[]) FOR UPDATE`,
    [orgs],
  );
  const sizes = new Map(trees.map((t) => [t.organization_id, Number(t.size)]));
  const wanted = orgs.flatMap((o) => frontier(sizes.get(o) ?? 0).map((n) => ({ o, l: n.level, i: n.index })));
  const known = new Map<string, Hash>();
  if (wanted.length) {
    const { rows } = await tx.query<{ organization_id: string; level: number; node_index: string; hash: string }>(
      `SELECT n.organization_id, n.level, n.node_index::text AS node_index, n.hash FROM agp_tlog_nodes n
       JOIN jsonb_to_recordset($1::jsonb) AS k(o text, l int, i bigint) ON n.organization_id = k.o AND n.level = k.l AND n.node_index = k.i`,
      [JSON.stringify(wanted)],
    );
    for (const r of rows) known.set(`${r.organization_id}/${r.level}/${r.node_index}`, unhex(r.hash));
  }
  const leaves: Array<{ o: string; i: number; r: string; h: string; t: string }> = [];
  const salts: Array<{ o: string; r: string; s: Record<string, string>; a: string }> = [];
  const nodes: Array<{ o: string; l: number; i: number; h: string }> = [];
  const newSizes: Array<{ o: string; s: number }> = [];
  for (const [org, list] of byOrg) {
    const size = sizes.get(org) ?? 0;
    const made = list.map((e) => committedLeafOf(e));
    made.forEach((leaf, n) => {
      const e = list[n];
      leaves.push({ o: org, i: size + n, r: e.event_id, h: hex(leaf.hash), t: leaf.text });
      if (!leaf.salts.size) return;
      const bySalt: Record<string, string> = {};
      for (const [p, salt] of leaf.salts) bySalt[p] = Buffer.from(salt.buffer, salt.byteOffset, salt.byteLength).toString('base64');
      salts.push({ o: org, r: e.event_id, s: bySalt, a: typeof e.recorded_at === 'string' ? e.recorded_at : new Date(e.recorded_at).toISOString() });
    });
    const completed = appendLeaves(
      size,
      made.map((m) => m.hash),
      (level, index) => {
        const h = known.get(`${org}/${level}/${index}`);
        if (!h) throw new Error(`the audit trail of ${org} lacks its stored node ${level}/${index} at size ${size}`);
        return h;
      },
    );
    for (const c of completed) nodes.push({ o: org, l: c.level, i: c.index, h: hex(c.hash) });
    newSizes.push({ o: org, s: size + list.length });
  }
  await tx.query(
    `INSERT INTO agp_tlog_leaves (organization_id, leaf_index, record_id, leaf_hash, leaf)
     SELECT x.o, x.i, x.r, x.h, x.t FROM jsonb_to_recordset($1::jsonb) AS x(o text, i bigint, r text, h text, t text)`,
    [JSON.stringify(leaves)],
  );
  if (salts.length) {
    await tx.query(
      `INSERT INTO agp_tlog_record_salts (organization_id, record_id, salts, at)
       SELECT x.o, x.r, x.s, x.a::timestamptz FROM jsonb_to_recordset($1::jsonb) AS x(o text, r text, s jsonb, a text)`,
      [JSON.stringify(salts)],
    );
  }
  await tx.query(
    `INSERT INTO agp_tlog_nodes (organization_id, level, node_index, hash)
     SELECT x.o, x.l, x.i, x.h FROM jsonb_to_recordset($1::jsonb) AS x(o text, l int, i bigint, h text)`,
    [JSON.stringify(nodes)],
  );
  const deleted = [...byOrg.values()].flat().filter((e) => e.type === InterventionEvents.Deleted);
  if (deleted.length) {
    const queued = deleted.map((e) => ({
      r: e.event_id,
      o: e.metadata.organization_id,
      i: (e.data as unknown as InterventionDeletedData).id,
      e: newId(),
      a: e.metadata.actor || 'system',
      n: e.metadata.actor_name ?? null,
      c: e.metadata.correlation_id ?? null,
    }));
    await tx.query(
      `INSERT INTO agp_tlog_pending_erasures (record_id, organization_id, intervention_id, erasure_id, actor, actor_name, correlation_id)
       SELECT x.r, x.o, x.i, x.e, x.a, x.n, x.c FROM jsonb_to_recordset($1::jsonb) AS x(r text, o text, i text, e text, a text, n text, c text)
       ON CONFLICT (record_id) DO NOTHING`,
      [JSON.stringify(queued)],
    );
  }
  await tx.query(
    `INSERT INTO agp_tlog_trees (organization_id, size) SELECT x.o, x.s FROM jsonb_to_recordset($1::jsonb) AS x(o text, s bigint)
     ON CONFLICT (organization_id) DO UPDATE SET size = excluded.size`,
    [JSON.stringify(newSizes)],
  );
  return deleted.length;
}
