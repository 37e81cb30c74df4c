/**
 * One policy (`/policies/:id`): every field of its current settings in words (`GET /api/v1/policies/{id}`), the form
 * that edits them, a field-by-field diff of any two versions (`?version=N` for each, chosen in the URL as `from` and
 * `to`; default the previous and the current one), and the version history (`GET /api/v1/policies/{id}/history`), each
 * change as before → after, in words. Source: docs/console.md (Policies).
 */
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import type { Policy, PolicyHistory, PolicyHistoryEntry } from '../../api/types.js';
import { when } from '../../components/format.js';
import { QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { useUrlFilters } from '../../components/url.js';
import { WriteButton } from '../../components/WriteButton.js';
import { PolicyForm } from './PolicyForm.js';
import { POLICY_FIELDS } from './policy-text.js';
import { PolicyDiffTable, PolicySummary } from './rules.js';
import { Actor } from '../../components/Actor.js';

/** Field-by-field diff of two versions of a policy, in words: changed fields marked, unchanged ones shown once. */
function VersionDiff({ id, from, to }: { id: string; from: number; to: number }) {
  const a = useApiQuery<Policy>(`/api/v1/policies/${encodeURIComponent(id)}`, { version: from });
  const b = useApiQuery<Policy>(`/api/v1/policies/${encodeURIComponent(id)}`, { version: to });
  return (
    <QueryState query={a} what={`version ${from}`}>
      {(pa) => (
        <QueryState query={b} what={`version ${to}`}>
          {(pb) => <PolicyDiffTable caption={`Version ${from} compared with version ${to}`} headers={[`Version ${from}`, `Version ${to}`]} rows={POLICY_FIELDS.map((field) => ({ field, from: pa[field], to: pb[field] }))} />}
        </QueryState>
      )}
    </QueryState>
  );
}

/** One history entry's changes, in words: a creation as the settings it was created with, a change as before → after. */
function HistoryChanges({ e }: { e: PolicyHistoryEntry }) {
  const rows = POLICY_FIELDS.filter((f) => f in e.changes).map((field) => ({ field, from: e.changes[field]?.from, to: e.changes[field]?.to }));
  if (rows.length === 0) return null;
  return <PolicyDiffTable caption={`Changes of version ${e.version}`} headers={e.event === 'PolicyCreated' ? ['Created with'] : ['Before', 'After']} rows={rows} />;
}

/** The policy detail view. */
export function PolicyDetailPage() {
  const { id = '' } = useParams();
  const { values, set } = useUrlFilters(['from', 'to'] as const);
  const policy = useApiQuery<Policy>(`/api/v1/policies/${encodeURIComponent(id)}`);
  const history = useApiQuery<PolicyHistory>(`/api/v1/policies/${encodeURIComponent(id)}/history`);
  const [editing, setEditing] = useState(false);
  return (
    <QueryState query={policy} what="the policy">
      {(p) => {
        const to = Number(values.to) || p.version;
        const from = Number(values.from) || Math.max(1, to - 1);
        const versions = Array.from({ length: p.version }, (_, i) => i + 1);
        return (
          <>
            <PageHeader title={`Policy: ${p.name}`}>
              <span className={`tag tag-${p.enabled ? 'enabled' : 'disabled'}`}>{p.enabled ? 'enabled' : 'disabled'}</span> version {p.version} · updated {when(p.updated_at)} ·{' '}
              <Link to={`/interventions?policy_id=${encodeURIComponent(p.id)}`}>its interventions</Link> · <Link to="/policies">all policies</Link>
            </PageHeader>
            <section className="panel" aria-labelledby="rules-heading">
              <h2 id="rules-heading">{editing ? 'Edit policy' : 'Rules'}</h2>
              {editing ? (
                <PolicyForm key={p.version} policy={p} onSaved={() => setEditing(false)} onCancel={() => setEditing(false)} />
              ) : (
                <>
                  <PolicySummary p={p} />
                  <div className="actions-row">
                    <WriteButton onClick={() => setEditing(true)}>Edit policy</WriteButton>
                  </div>
                </>
              )}
            </section>
            <section className="panel" aria-labelledby="diff-heading">
              <h2 id="diff-heading">Compare versions</h2>
              <div className="actions-row">
                {(
                  [
                    ['from', 'From', from],
                    ['to', 'to', to],
                  ] as const
                ).map(([which, text, value]) => (
                  <span key={which} className="actions-row">
                    <label htmlFor={`${which}-version`}>{text}</label>
                    <select id={`${which}-version`} value={value} onChange={(e) => set({ from: String(from), to: String(to), [which]: e.target.value })}>
                      {versions.map((v) => (
                        <option key={v} value={v}>
                          version {v}
                        </option>
                      ))}
                    </select>
                  </span>
                ))}
              </div>
              <VersionDiff id={p.id} from={from} to={to} />
            </section>
            <section className="panel" aria-labelledby="history-heading">
              <h2 id="history-heading">Version history</h2>
              <QueryState query={history} what="the history" isEmpty={(h) => h.history.length === 0}>
                {(h) => (
                  <ol className="timeline" aria-label="Policy history">
                    {[...h.history].reverse().map((e) => (
                      <li key={e.version}>
                        <div className="timeline-head">
                          Version {e.version} · <Tag value={e.event.replace(/^Policy/, '').toLowerCase()} />
                        </div>
                        <div className="muted">
                          <time dateTime={e.at}>{when(e.at)}</time> by <Actor id={e.actor} name={e.actor_name} />
                        </div>
                        <HistoryChanges e={e} />
                      </li>
                    ))}
                  </ol>
                )}
              </QueryState>
            </section>
          </>
        );
      }}
    </QueryState>
  );
}
