/**
 * The audit trail's projection (`audit-trail`): every governance event (`AUDIT_LEAF_EVENT_TYPES` of @agp/contracts)
 * becomes one leaf of its organisation's RFC 9162 tree, in the order the events were stored, appended in the
 * subscription's transaction (its checkpoint commits with the leaves, and the projection never skips an event: a
 * batch that fails is retried or dead-lettered, never passed over). The leaf is the record's canonical serialisation
 * (RFC 8785 JSON: `canonicalJson` of @agp/contracts, checked against the RFC's examples), versioned by `v`.
 * Source: docs/audit.md (Leaves).
 */
import { AUDIT_LEAF_VERSION, canonicalJson, type ProjectionName } from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { appendLeaves, frontier, leafHash, type Hash } from '@agp/tlog';
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

/** The record of event `e`. Pure. */
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

/** The leaf of event `e`: its canonical text and leaf hash. Pure. */
export function leafOf(e: StoredEvent): { text: string; hash: Hash } {
  const text = canonicalJson(leafRecord(e));
  return { text, hash: leafHash(new TextEncoder().encode(text)) };
}

const hex = (h: Uint8Array) => Buffer.from(h).toString('hex');
const unhex = (s: string): Hash => new Uint8Array(Buffer.from(s, 'hex'));

/**
 * Append a batch of governance events to their organisations' trees inside the subscription's transaction: an event
 * whose record is already a leaf is left out (a replay appends nothing twice); each organisation's size is read and
 * locked, the frontier nodes read with one query, the new leaves and completed nodes inserted, the sizes written back.
 */
export async function applyAuditTrailEvents(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
  if (events.length === 0) return;
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
  if (byOrg.size === 0) return;
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
  const nodes: Array<{ o: string; l: number; i: number; h: string }> = [];
  const newSizes: Array<{ o: string; s: number }> = [];
  for (const [org, list] of byOrg) {
    const size = sizes.get(org) ?? 0;
    const made = list.map(leafOf);
    made.forEach((leaf, n) => leaves.push({ o: org, i: size + n, r: list[n].event_id, h: hex(leaf.hash), t: leaf.text }));
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
  await tx.query(
    `INSERT INTO agp_tlog_nodes (organization_id, level, node_index, hash)
     SELECT x.o, x.l, x.i, x.h FROM jsonb_to_recordset($1::jsonb) AS x(o text, l int, i bigint, h text)`,
    [JSON.stringify(nodes)],
  );
  await tx.query(
    `INSERT INTO agp_tlog_trees (organization_id, size) SELECT x.o, x.s FROM jsonb_to_recordset($1::jsonb) AS x(o text, s bigint)
     ON CONFLICT (organization_id) DO UPDATE SET size = excluded.size`,
    [JSON.stringify(newSizes)],
  );
}
