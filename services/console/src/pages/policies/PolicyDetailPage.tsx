/**
 * One policy (`/policies/:id`): every field of its current settings in words (`GET /api/v1/policies/{id}`), the form
 * that edits them, a field-by-field diff of any two versions (`?version=N` for each, chosen in the URL as `from` and
 * `to`; default the previous and the current one), and the version history (`GET /api/v1/policies/{id}/history`), each
 * change as before → after, in words; and the fleet counters of its limits (`GET /api/v1/quotas?policy_id=…`), read only.
 * Source: docs/console.md (Policies).
 */
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import type { Policy, PolicyHistory, PolicyHistoryEntry, QuotaCounterPage } from '../../api/types.js';
import { DataTable } from '../../components/DataTable.js';
import { Time } from '../../components/Cells.js';
import { plural, when } from '../../components/format.js';
import { QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { useUrlFilters } from '../../components/url.js';
import { WriteButton } from '../../components/WriteButton.js';
import { PolicyForm } from './PolicyForm.js';
import { POLICY_FIELDS } from './policy-text.js';
import { PolicyDiffTable, PolicySummary } from './rules.js';
import { amountText, limitText, remainingText, scopeKeyText, windowText } from './quota-text.js';
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

/** How many counters the panel shows (the newest changed first, as the API orders them). */
const COUNTERS_SHOWN = 100;

/**
 * The fleet counters of a policy's limits (session, run and period budgets; agent and organisation rate limits), read
 * only: for each limit, scope key and window, what is left of the limit, what was spent and past the grants
 * (overshoot), and how many holders share it. "No counters yet" until a process or the decision API draws on one.
 */
function QuotaCounters({ p }: { p: Policy }) {
  const q = useApiQuery<QuotaCounterPage>('/api/v1/quotas', { policy_id: p.id, limit: COUNTERS_SHOWN });
  return (
    <section className="panel" aria-labelledby="counters-heading" data-testid="quota-counters">
      <h2 id="counters-heading">Fleet counters</h2>
      <p className="muted">What the fleet has drawn from this policy's shared limits, as the platform counts it.</p>
      <QueryState query={q} what="the counters" isEmpty={(page) => page.counters.length === 0} empty="No counters yet: they appear once a process or the decision API draws on one of this policy's limits.">
        {(page) => (
          <>
            <DataTable
              caption={`Fleet counters of policy ${p.name}`}
              rows={page.counters}
              rowKey={(c) => `${c.limit}|${c.scope_key}|${c.window_start ?? ''}`}
              columns={[
                { key: 'limit', header: 'Limit', cell: (c) => limitText(c.limit), list: true },
                { key: 'scope', header: 'Counted for', cell: (c) => scopeKeyText(c, p), list: true },
                { key: 'window', header: 'Window', cell: (c) => windowText(c), list: true },
                { key: 'remaining', header: 'Remaining of limit', cell: (c) => remainingText(c), numeric: true },
                { key: 'spent', header: 'Spent', cell: (c) => amountText(c.spent, c.unit), numeric: true },
                { key: 'overshoot', header: 'Overshoot', cell: (c) => amountText(c.overshoot, c.unit), numeric: true },
                { key: 'holders', header: 'Holders', cell: (c) => c.holders, numeric: true },
                { key: 'updated', header: 'Updated', cell: (c) => <Time iso={c.updated_at} /> },
              ]}
            />
            {page.total > page.counters.length ? <p className="muted">The {plural(page.counters.length, 'counter')} changed last of {page.total}.</p> : null}
          </>
        )}
      </QueryState>
    </section>
  );
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
            <QuotaCounters p={p} />
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
