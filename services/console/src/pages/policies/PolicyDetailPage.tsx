/**
 * One policy (`/policies/:id`): its current settings (`GET /api/v1/policies/{id}`), a field-by-field diff of any two
 * versions (`?version=N` for each, chosen in the URL as `from` and `to`; default the previous and the current one), and
 * the version history (`GET /api/v1/policies/{id}/history`), each change as from → to. Source: docs/console.md (Policies).
 */
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import type { Policy, PolicyHistory } from '../../api/types.js';
import type { PolicyField } from '@agp/contracts';
import { ChangeTable, valueText } from '../../components/ChangeTable.js';
import { label, when } from '../../components/format.js';
import { LongText } from '../../components/LongText.js';
import { QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { useUrlFilters } from '../../components/url.js';
import { WriteButton } from '../../components/WriteButton.js';
import { PolicyForm } from './PolicyForm.js';
import { PolicyRules } from './rules.js';
import { Actor } from '../../components/Actor.js';

/** The policy fields, in the contract's display order (POLICY_FIELDS). */
const POLICY_FIELDS = ['name', 'description', 'enabled', 'session_budget', 'run_budget', 'denied_actions', 'allowed_actions', 'approval_required_actions', 'rate_limits', 'agent_ids', 'action_budget', 'downgrades', 'guardrails'] as const;

// Compile-time: the list holds exactly the contract's POLICY_FIELDS.
const sameFields: [PolicyField] extends [(typeof POLICY_FIELDS)[number]] ? ([(typeof POLICY_FIELDS)[number]] extends [PolicyField] ? true : false) : false = true;
void sameFields;

/** Field-by-field diff of two versions of a policy: changed fields marked, unchanged ones shown once. */
function VersionDiff({ id, from, to }: { id: string; from: number; to: number }) {
  const a = useApiQuery<Policy>(`/api/v1/policies/${encodeURIComponent(id)}`, { version: from });
  const b = useApiQuery<Policy>(`/api/v1/policies/${encodeURIComponent(id)}`, { version: to });
  return (
    <QueryState query={a} what={`version ${from}`}>
      {(pa) => (
        <QueryState query={b} what={`version ${to}`}>
          {(pb) => (
            <div className="table-scroll">
              <table className="change-table">
                <caption className="visually-hidden">
                  Version {from} compared with version {to}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Field</th>
                    <th scope="col">Version {from}</th>
                    <th scope="col">Version {to}</th>
                  </tr>
                </thead>
                <tbody>
                  {POLICY_FIELDS.map((f) => {
                    const x = valueText(pa[f]);
                    const y = valueText(pb[f]);
                    const changed = x !== y;
                    return (
                      <tr key={f} data-changed={changed ? 'yes' : 'no'}>
                        <th scope="row">
                          {label(f)}
                          {changed ? <span className="visually-hidden"> (changed)</span> : null}
                        </th>
                        <td className={changed ? 'diff-from' : undefined}>
                          <LongText text={x} foldAt={300} />
                        </td>
                        <td className={changed ? 'diff-to' : undefined}>
                          <LongText text={y} foldAt={300} />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </QueryState>
      )}
    </QueryState>
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
              <h2 id="rules-heading">{editing ? 'Edit policy' : 'Action budget, downgrades and guardrails'}</h2>
              {editing ? (
                <PolicyForm key={p.version} policy={p} onSaved={() => setEditing(false)} onCancel={() => setEditing(false)} />
              ) : (
                <>
                  <PolicyRules p={p} />
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
                        {Object.keys(e.changes).length ? <ChangeTable caption={`Changes of version ${e.version}`} changes={e.changes} headers={['Before', 'After']} /> : null}
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
