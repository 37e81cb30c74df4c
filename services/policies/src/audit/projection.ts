/**
 * The audit log projection (`audit-log-read-model`): every administrative event of the global log (policies, kill
 * switches, agents, registered MCP servers and their tools accepted, API keys, members; `AUDIT_EVENT_TYPES` of
 * @agp/contracts) becomes one
 * entry with its actor, time, organisation, object, and the object before and after. Before and after are folded with
 * the same `evolve` functions the deciders use, from the object's last recorded state (`agp_audit_objects`), so the
 * log is a projection of the events, never a second write. Secrets never reach an entry: MCP server headers are
 * recorded by name only (the sealed value is dropped), keys as listed (no plaintext, no hash), and {@link scrub}
 * removes any secret-named field that might still be there. Source: docs/auth.md (Audit log).
 */
import {
  AUDIT_EVENT_TYPES,
  AuthEvents,
  type ApiKeyChangedData,
  type AuditActor,
  type AuditEntry,
  type AuditObjectType,
  type KillSwitchChangedData,
  type KillSwitchState,
  type McpServer,
  type McpServerToolAcceptedData,
  type MemberChangedData,
  type Policy,
  type ProjectionName,
} from '@agp/contracts';
import type { SqlExecutor, StoredEvent } from '@agp/eventstore';
import { evolveAgent, type RegistryAgent } from '../agent/agent.js';
import { evolveKillSwitch, initialKillSwitch } from '../killswitch/killswitch.js';
import { evolveMcpServer } from '../mcpservers/mcpserver.js';
import { evolvePolicy } from '../policy/policy.js';

/** Name (and checkpoint key) of the projection. */
export const AUDIT_LOG_READ_MODEL = 'audit-log-read-model' satisfies ProjectionName;

/** The event types it applies. */
export const AUDIT_LOG_EVENT_TYPES = Object.keys(AUDIT_EVENT_TYPES);

/** Field names whose values are secrets, removed wherever they appear in before and after. */
const SECRET_FIELDS = new Set(['sealed_headers', 'headers', 'key', 'key_hash', 'token', 'token_hash', 'secret', 'session_id', 'code_verifier']);

/**
 * `doc` without any member named in `fields` (default {@link SECRET_FIELDS}), at any depth. Copy on write: every
 * object and array that holds none of them is shared with `doc`, not copied (only the objects on the way to a removed
 * member are new), so `doc` is returned itself when it holds none; change the result only through copies. Pure.
 */
export function scrub(doc: unknown, fields: ReadonlySet<string> = SECRET_FIELDS): unknown {
  if (doc === null || typeof doc !== 'object') return doc;
  if (Array.isArray(doc)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < doc.length; i++) {
      const v = scrub(doc[i], fields);
      if (v !== doc[i]) (out ??= doc.slice())[i] = v;
    }
    return out ?? doc;
  }
  let out: Record<string, unknown> | undefined;
  for (const k in doc) {
    if (!Object.hasOwn(doc, k)) continue;
    const v = (doc as Record<string, unknown>)[k];
    if (fields.has(k)) {
      out ??= { ...(doc as Record<string, unknown>) };
      delete out[k];
      continue;
    }
    const w = scrub(v, fields);
    if (w !== v) (out ??= { ...(doc as Record<string, unknown>) })[k] = w;
  }
  return out ?? doc;
}

/** The actor of an event's metadata: `key:<id>`, `user:<id>`, anything else the platform (`system`). Pure. */
export function actorOf(metadata: StoredEvent['metadata']): AuditActor {
  const m = /^(key|user):(.+)$/.exec(metadata.actor);
  const name = metadata.actor_name ?? null;
  if (m) return { type: m[1] as 'key' | 'user', id: m[2], name };
  return { type: 'system', id: null, name: metadata.actor === 'system' ? name : (name ?? metadata.actor) };
}

/** The object an event changes: its type and id (a kill switch: `organization` or `agents/<agent_id>`). */
function objectOf(e: StoredEvent): { type: AuditObjectType; id: string } {
  const type = AUDIT_EVENT_TYPES[e.type as keyof typeof AUDIT_EVENT_TYPES].object;
  const d = e.data as Record<string, unknown>;
  switch (type) {
    case 'policy':
      return { type, id: String(d.id) };
    case 'kill_switch': {
      const k = d as unknown as KillSwitchChangedData;
      return { type, id: k.scope === 'organization' ? 'organization' : `agents/${k.agent_id}` };
    }
    case 'agent':
      return { type, id: String(d.agent_id) };
    case 'mcp_server':
      return { type, id: String(d.name) };
    case 'mcp_tool':
      return { type, id: `${String(d.name)}/${String(d.tool)}` };
    case 'key':
      return { type, id: (d as unknown as ApiKeyChangedData).key.id };
    case 'member':
      return { type, id: (d as unknown as MemberChangedData).member.id };
  }
}

type Doc = Record<string, unknown>;

/** The object after `e`, from its state before (null: none). Deleted or removed: null. */
function after(type: AuditObjectType, before: Doc | null, e: StoredEvent): Doc | null {
  switch (type) {
    case 'policy':
      return evolvePolicy(before as Policy | null, e) as Doc | null;
    case 'kill_switch': {
      const d = e.data as unknown as KillSwitchChangedData;
      return evolveKillSwitch((before as KillSwitchState | null) ?? initialKillSwitch(d.scope, d.agent_id), e) as unknown as Doc;
    }
    case 'agent':
      return evolveAgent(before as RegistryAgent | null, e) as Doc | null;
    case 'mcp_server': {
      const server = before as McpServer | null;
      const state = server ? { version: server.version, record: { organization_id: e.metadata.organization_id, server, sealed_headers: null } } : { version: 0, record: null };
      return (evolveMcpServer(state, e).record?.server ?? null) as Doc | null;
    }
    case 'mcp_tool': {
      // The tool's pin as accepted: its hash (SHA-256 of name, description and input schema) and when.
      const d = e.data as unknown as McpServerToolAcceptedData;
      return { server: d.name, tool: d.tool, pinned_hash: d.hash, accepted_at: d.at };
    }
    case 'key':
      return (e.data as unknown as ApiKeyChangedData).key as unknown as Doc;
    case 'member':
      return e.type === AuthEvents.MemberRemoved ? null : ((e.data as unknown as MemberChangedData).member as unknown as Doc);
  }
}

const objectKey = (org: string, type: string, id: string) => JSON.stringify([org, type, id]);
const parse = <T>(doc: unknown): T => (typeof doc === 'string' ? JSON.parse(doc) : doc) as T;

/** One entry of the log from an event and its object's state before it. Pure. */
export function auditEntry(e: StoredEvent, before: Doc | null): { entry: AuditEntry; after: Doc | null } {
  const object = objectOf(e);
  const next = after(object.type, before, e);
  // A kill switch never set reads as released: its first change shows that as before.
  const shownBefore = before ?? (object.type === 'kill_switch' ? initialKillSwitch((e.data as unknown as KillSwitchChangedData).scope, (e.data as unknown as KillSwitchChangedData).agent_id) : null);
  const entry: AuditEntry = {
    id: e.event_id,
    organization_id: e.metadata.organization_id,
    at: e.recorded_at,
    actor: actorOf(e.metadata),
    object,
    type: AUDIT_EVENT_TYPES[e.type as keyof typeof AUDIT_EVENT_TYPES].type,
    before: shownBefore === null ? null : (scrub(shownBefore) as Doc),
    after: next === null ? null : (scrub(next) as Doc),
  };
  return { entry, after: next === null ? null : (scrub(next) as Doc) };
}

/**
 * Apply a batch of administrative events inside the subscription's transaction (its checkpoint commits with these
 * writes): the states of the objects the batch touches are read with one query, each event folded in order into an
 * entry, then the entries inserted (an entry already there is kept: a replay writes nothing twice) and the states
 * written back (a deleted object's removed). Source: architecture §3 (Projections).
 */
export async function applyAuditEvents(events: StoredEvent[], tx: SqlExecutor): Promise<void> {
  const keys = new Map<string, { o: string; t: string; i: string }>();
  const objects = events.map((e) => objectOf(e));
  events.forEach((e, n) => keys.set(objectKey(e.metadata.organization_id, objects[n].type, objects[n].id), { o: e.metadata.organization_id, t: objects[n].type, i: objects[n].id }));
  const states = new Map<string, Doc | null>();
  const { rows } = await tx.query<{ organization_id: string; object_type: string; object_id: string; doc: unknown }>(
    `SELECT a.organization_id, a.object_type, a.object_id, a.doc FROM agp_audit_objects a
     JOIN jsonb_to_recordset($1::jsonb) AS k(o text, t text, i text) ON a.organization_id = k.o AND a.object_type = k.t AND a.object_id = k.i FOR UPDATE OF a`,
    [JSON.stringify([...keys.values()])],
  );
  for (const r of rows) states.set(objectKey(r.organization_id, r.object_type, r.object_id), parse<Doc>(r.doc));
  const entries: Array<{ entry: AuditEntry; position: string }> = [];
  events.forEach((e, n) => {
    const k = objectKey(e.metadata.organization_id, objects[n].type, objects[n].id);
    const { entry, after: next } = auditEntry(e, states.get(k) ?? null);
    states.set(k, next);
    entries.push({ entry, position: String(e.global_position) });
  });
  await tx.query(
    `INSERT INTO agp_audit_log (id, organization_id, position, at, actor_type, actor_id, object_type, object_id, type, entry)
     SELECT x.e->>'id', x.e->>'organization_id', x.p::bigint, (x.e->>'at')::timestamptz, x.e->'actor'->>'type', x.e->'actor'->>'id', x.e->'object'->>'type', x.e->'object'->>'id', x.e->>'type', x.e
       FROM jsonb_to_recordset($1::jsonb) AS x(e jsonb, p text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(entries.map(({ entry, position }) => ({ e: entry, p: position })))],
  );
  const live = [...states.entries()].filter(([, d]) => d !== null).map(([k, d]) => ({ k: JSON.parse(k) as string[], d }));
  const gone = [...states.entries()].filter(([, d]) => d === null).map(([k]) => JSON.parse(k) as string[]);
  if (live.length) {
    await tx.query(
      `INSERT INTO agp_audit_objects (organization_id, object_type, object_id, doc)
       SELECT x.o, x.t, x.i, x.d FROM jsonb_to_recordset($1::jsonb) AS x(o text, t text, i text, d jsonb)
       ON CONFLICT (organization_id, object_type, object_id) DO UPDATE SET doc = excluded.doc`,
      [JSON.stringify(live.map(({ k, d }) => ({ o: k[0], t: k[1], i: k[2], d })))],
    );
  }
  if (gone.length) {
    await tx.query(
      `DELETE FROM agp_audit_objects a USING jsonb_to_recordset($1::jsonb) AS k(o text, t text, i text) WHERE a.organization_id = k.o AND a.object_type = k.t AND a.object_id = k.i`,
      [JSON.stringify(gone.map(([o, t, i]) => ({ o, t, i })))],
    );
  }
}
