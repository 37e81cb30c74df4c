/**
 * Audit log (`/audit-log`): `GET /api/v1/audit-log`, the log of administrative changes, newest first, with its
 * filters (entry type, object type, object id, actor, from, to) in the URL, paged; each entry shows who made the
 * change, when, to what, and the object before and after (secrets are never in the log), and links to its check in
 * the verifiable audit trail (`/audit-trail?record=<id>`: an entry's id is its leaf's record id). Buttons download the
 * filtered range as CSV or JSON Lines. Needs an admin key: any other key sees the API's 403 problem.
 * Source: docs/auth.md (Audit log).
 */
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useSession } from '../../auth/session.js';
import { PageHeader } from '../../components/PageHeader.js';
import { AUDIT_ENTRY_TYPES, AUDIT_OBJECT_TYPES, type AuditEntry } from '../../api/types.js';
import type { FilterField } from '../../components/FilterBar.js';
import { FilteredList } from '../../components/FilteredList.js';
import { Actor } from '../../components/Actor.js';
import { Time, Truncate } from '../../components/Cells.js';
import { JsonView } from '../../components/LongText.js';

const FIELDS: FilterField[] = [
  { name: 'type', label: 'Change', kind: 'select', options: AUDIT_ENTRY_TYPES },
  { name: 'object_type', label: 'Object type', kind: 'select', options: AUDIT_OBJECT_TYPES },
  { name: 'object_id', label: 'Object id', kind: 'text' },
  { name: 'actor', label: 'Actor', kind: 'text', placeholder: 'key:<id>, user:<id> or system' },
  { name: 'from', label: 'From', kind: 'date' },
  { name: 'to', label: 'To', kind: 'date' },
];

/** The actor as `key:<id>` / `user:<id>` / `system`, with the name it had. */
function actorId(e: AuditEntry): string {
  return e.actor.type === 'system' ? 'system' : `${e.actor.type}:${e.actor.id}`;
}

/**
 * A button that downloads the filtered range in `format` (the API streams it; the key goes in the Authorization
 * header, so the download is fetched and handed to the browser as a file).
 */
function ExportButton({ format, filters }: { format: 'csv' | 'jsonl'; filters: URLSearchParams }) {
  const { key } = useSession();
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setError(null);
    const q = new URLSearchParams([...filters].filter(([k]) => k !== 'skip' && k !== 'limit'));
    q.set('format', format);
    const res = await fetch(`/api/v1/audit-log?${q}`, { headers: { authorization: `Bearer ${key ?? ''}` } }).catch(() => null);
    if (!res?.ok) return setError(res ? `${res.status} ${res.statusText}` : 'the platform did not answer');
    const url = URL.createObjectURL(await res.blob());
    const a = Object.assign(document.createElement('a'), { href: url, download: `audit-log.${format}` });
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <>
      <button type="button" onClick={() => void run()} data-testid={`audit-export-${format}`}>
        Download {format === 'csv' ? 'CSV' : 'JSON Lines'}
      </button>
      {error ? <span role="alert"> {error}</span> : null}
    </>
  );
}

/** The object before and after the change, each folded; '—' where there was none (created, deleted). */
function BeforeAfter({ entry }: { entry: AuditEntry }) {
  return (
    <div className="audit-change">
      <div>
        <span className="muted">before </span>
        {entry.before ? <JsonView value={entry.before} foldAt={60} /> : <span className="muted">—</span>}
      </div>
      <div>
        <span className="muted">after </span>
        {entry.after ? <JsonView value={entry.after} foldAt={60} /> : <span className="muted">—</span>}
      </div>
    </div>
  );
}

/** The log of administrative changes. */
export function AuditLogPage() {
  const [filters] = useSearchParams();
  return (
    <>
      <PageHeader title="Audit log" />
      <p className="muted">Every change to policies, kill switches, agents, API keys, members and roles, and MCP servers: who made it, when, and the object before and after. Secrets are never shown.</p>
      <p>
        <ExportButton format="csv" filters={filters} /> <ExportButton format="jsonl" filters={filters} />
      </p>
      <FilteredList<AuditEntry>
        path="/api/v1/audit-log"
        rowsKey="entries"
        fields={FIELDS}
        what="changes"
        one="change"
        empty="No administrative change matches these filters."
        rowKey={(e) => e.id}
        columns={[
          { key: 'at', header: 'When', cell: (e) => <Time iso={e.at} /> },
          { key: 'type', header: 'Change', cell: (e) => <code>{e.type}</code> },
          { key: 'object', header: 'Object', cell: (e) => <Truncate text={`${e.object.type} ${e.object.id}`} /> },
          { key: 'actor', header: 'Actor', cell: (e) => <Actor id={actorId(e)} name={e.actor.name} /> },
          { key: 'change', header: 'Before → after', cell: (e) => <BeforeAfter entry={e} /> },
          { key: 'verify', header: 'Audit trail', cell: (e) => <Link to={`/audit-trail?record=${encodeURIComponent(e.id)}`} aria-label={`Verify ${e.id} in the audit trail`}>Verify</Link> },
        ]}
      />
    </>
  );
}
