import { endExclusive, type AuditEntry, type AuditLogPage, type AuditLogQuery } from '@agp/contracts';
import { WhereClause, pageStart, pageWithTotal, type SqlExecutor } from '@agp/eventstore';
import { AUDIT_LOG_READ_MODEL } from './projection.js';

const parse = <T>(doc: unknown): T => (typeof doc === 'string' ? JSON.parse(doc) : doc) as T;

/**
 * One page of the organisation's audit log, newest first (`at`, then `id`), with the filters of `q` (AND): actor,
 * object types, object id, entry types, `from` (inclusive) and `to` (inclusive; a date-only `to` includes that day).
 * Keyset pages (`cursor`) or `skip`. Read-only.
 * @throws BadRequestError (400, `query.cursor`) for a cursor this list did not issue or both cursor and skip.
 * Source: docs/auth.md (Audit log).
 */
export async function listAuditLog(db: SqlExecutor, organizationId: string, q: AuditLogQuery): Promise<AuditLogPage> {
  const w = new WhereClause();
  w.and(`organization_id = ${w.param(organizationId)}`);
  if (q.actor === 'system') w.and(`actor_type = 'system'`);
  else if (q.actor) {
    const i = q.actor.indexOf(':');
    w.and(`actor_type = ${w.param(q.actor.slice(0, i))}`).and(`actor_id = ${w.param(q.actor.slice(i + 1))}`);
  }
  if (q.object_type) w.and(`object_type = ANY(${w.param(q.object_type)}::text[])`);
  if (q.object_id) w.and(`object_id = ${w.param(q.object_id)}`);
  if (q.type) w.and(`type = ANY(${w.param(q.type)}::text[])`);
  if (q.from) w.and(`at >= ${w.param(q.from.date.toISOString())}::timestamptz`);
  if (q.to) w.and(`at < ${w.param(endExclusive(q.to).toISOString())}::timestamptz`);
  const start = pageStart(q);
  const page = await pageWithTotal<{ entry: unknown }>(db, {
    select: 'entry',
    from: 'agp_audit_log',
    where: w.toString(),
    params: w.params,
    orderBy: 'at DESC, id DESC',
    limit: q.limit,
    skip: start.skip,
    checkpoint: AUDIT_LOG_READ_MODEL,
    keyset: { sort: 'at', key: 'id', after: start.after },
  });
  return { entries: page.rows.map((r) => parse<AuditEntry>(r.entry)), total: page.total, skip: start.skip, limit: q.limit, next_cursor: page.nextCursor ?? null };
}
