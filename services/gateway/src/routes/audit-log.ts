/**
 * `GET /api/v1/audit-log`: the log of administrative changes, a projection the policies service keeps
 * (`audit-log.list`). A JSON page is forwarded as it is; an export (`format=csv|jsonl`, or `Accept: text/csv` /
 * `application/jsonl`) is streamed here page after page, with the same filters, over the whole range.
 * Source: docs/auth.md (Audit log).
 */
import { AUDIT_CSV_COLUMNS, Wire, type AuditEntry, type AuditLogPage } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import { csvField, parseOrThrow } from '@agp/runtime';
import type { RouteAnswer, RouteCall } from '../router.js';
import { write } from './stats.js';

/** Entries per bus message while exporting (each entry carries two object documents). */
export const AUDIT_EXPORT_PAGE = 200;

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/jsonl; charset=utf-8' } as const;

/** The export format an `Accept` header asks for (`text/csv`; `application/jsonl`, `application/x-ndjson`), else undefined. */
export function acceptedExport(accept: string | undefined): 'csv' | 'jsonl' | undefined {
  const a = (accept ?? '').toLowerCase();
  if (/\btext\/csv\b/.test(a)) return 'csv';
  if (/\bapplication\/(?:jsonl|x-ndjson|x-jsonlines)\b/.test(a)) return 'jsonl';
  return undefined;
}

/** One entry as a CSV line (columns AUDIT_CSV_COLUMNS, CRLF-terminated); before and after as JSON text. */
export function auditCsvLine(e: AuditEntry): string {
  const cols: Record<(typeof AUDIT_CSV_COLUMNS)[number], string | null> = {
    id: e.id,
    at: e.at,
    organization_id: e.organization_id,
    actor_type: e.actor.type,
    actor_id: e.actor.id,
    actor_name: e.actor.name,
    object_type: e.object.type,
    object_id: e.object.id,
    type: e.type,
    before: e.before === null ? null : JSON.stringify(e.before),
    after: e.after === null ? null : JSON.stringify(e.after),
  };
  return `${AUDIT_CSV_COLUMNS.map((c) => csvField(cols[c])).join(',')}\r\n`;
}

/**
 * GET /api/v1/audit-log: one page (JSON), or the export. The query is checked against the wire row first, so a bad
 * filter is a 422 naming it and never a truncated download; the first page is asked for before anything is written.
 * After the first byte a failure aborts the response.
 */
export async function listAuditLog({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer | void> {
  const { query } = parseOrThrow(Wire['audit-log.list'].request, { query: req.query });
  const format = query.format ?? acceptedExport(req.get('accept'));
  if (format === undefined || format === 'json') return { body: await callUnchecked(deps.bus, 'audit-log.list', ctx, { query: req.query }) };
  const { cursor: _c, skip: _s, limit: _l, format: _f, ...filters } = req.query as Record<string, unknown>;
  const page = (cursor: string | null): Promise<AuditLogPage> =>
    callUnchecked(deps.bus, 'audit-log.list', ctx, { query: { ...filters, limit: String(AUDIT_EXPORT_PAGE), ...(cursor ? { cursor } : {}) } }, 30_000);
  let current = await page(null);
  const stamp = new Date().toISOString().slice(0, 10);
  res.status(200).set({ 'content-type': CONTENT_TYPES[format], 'content-disposition': `attachment; filename="audit-log-${stamp}.${format}"`, 'cache-control': 'no-store' });
  try {
    if (format === 'csv') await write(res, `${AUDIT_CSV_COLUMNS.join(',')}\r\n`);
    for (;;) {
      const next = current.next_cursor ? page(current.next_cursor) : null;
      next?.catch(() => {}); // observed below; no unhandled rejection while this page is written
      const text = current.entries.map((e) => (format === 'csv' ? auditCsvLine(e) : `${JSON.stringify(e)}\n`)).join('');
      if (text) await write(res, text);
      if (!next) break;
      current = await next;
    }
    res.end();
  } catch {
    // Headers and part of the body are out: the only honest signal left is an aborted response.
    res.destroy();
  }
}
