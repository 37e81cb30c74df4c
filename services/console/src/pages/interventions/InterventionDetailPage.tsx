/**
 * One intervention (`/interventions/:id`, `GET /api/v1/interventions/{id}`): its fields, the enriched fields beside
 * their originals (the `from` of the first InterventionEnriched change of each, from the audit trail), the guardrail
 * context, the original and modified inputs, and the audit trail as a timeline. Source: spec §Intervention record,
 * Enrichment; architecture §3 (the stream is the audit trail).
 */
import { Link, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import type { AuditTrailEntry, InterventionDetail } from '../../api/types.js';
import { ChangeTable, valueText } from '../../components/ChangeTable.js';
import { label, usd, when } from '../../components/format.js';
import { JsonView, LongText } from '../../components/LongText.js';
import { QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';

/** The fields enrichment rewrites, in display order. */
const ENRICHED_FIELDS = ['reason', 'agent_intent', 'risk_level', 'suggested_rewrite'] as const;

/** For each enriched field: the value before the first enrichment that changed it, or undefined if none did. */
function originals(trail: AuditTrailEntry[]): Partial<Record<(typeof ENRICHED_FIELDS)[number], unknown>> {
  const out: Partial<Record<(typeof ENRICHED_FIELDS)[number], unknown>> = {};
  for (const e of trail) {
    if (e.event !== 'InterventionEnriched') continue;
    for (const f of ENRICHED_FIELDS) if (e.changes[f] && !(f in out)) out[f] = e.changes[f].from;
  }
  return out;
}

/** The audit trail as a timeline: each event with its time, actor, changed fields (from → to) and details. */
export function AuditTimeline({ trail }: { trail: AuditTrailEntry[] }) {
  return (
    <ol className="timeline" aria-label="Audit trail">
      {trail.map((e) => (
        <li key={e.version}>
          <div className="timeline-head">
            v{e.version} · {e.event}
          </div>
          <div className="muted">
            <time dateTime={e.at}>{when(e.at)}</time> by <code>{e.actor}</code>
          </div>
          {Object.keys(e.changes).length ? <ChangeTable caption={`Fields changed by ${e.event}`} changes={e.changes} /> : null}
          {e.details && Object.keys(e.details).length ? (
            <div>
              <span className="muted">Details:</span> <JsonView value={e.details} />
            </div>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

/** The intervention detail view. */
export function InterventionDetailPage() {
  const { id = '' } = useParams();
  const q = useApiQuery<InterventionDetail>(`/api/v1/interventions/${encodeURIComponent(id)}`);
  return (
    <QueryState query={q} what="the intervention">
      {(r) => {
        const orig = originals(r.audit_trail);
        const current: Record<(typeof ENRICHED_FIELDS)[number], unknown> = { reason: r.reason, agent_intent: r.agent_intent, risk_level: r.risk_level, suggested_rewrite: r.remediation_payload.suggested_rewrite };
        return (
          <>
            <PageHeader title={`Intervention: ${r.action_name}`}>
              <Tag value={r.type} /> <Tag value={r.outcome} /> <Tag value={r.risk_level} /> · <Link to="/interventions">all interventions</Link>
            </PageHeader>
            <section className="panel" aria-labelledby="fields-heading">
              <h2 id="fields-heading">Record</h2>
              <dl className="fields">
                <dt>Id</dt>
                <dd>
                  <code>{r.id}</code>
                </dd>
                <dt>Agent</dt>
                <dd>{r.agent_id}</dd>
                <dt>Run</dt>
                <dd>{r.run_id ? <Link to={`/runs/${encodeURIComponent(r.run_id)}`}>{r.run_id}</Link> : '—'}</dd>
                <dt>Policy</dt>
                <dd>{r.policy_id ? <Link to={`/policies/${encodeURIComponent(r.policy_id)}`}>{r.policy_name ?? r.policy_id}</Link> : '—'}</dd>
                <dt>Time</dt>
                <dd>
                  <time dateTime={r.timestamp}>{when(r.timestamp)}</time> (recorded {when(r.created_at)})
                </dd>
                <dt>Estimated cost</dt>
                <dd>{usd(r.estimated_cost_usd)}</dd>
                <dt>Actual cost</dt>
                <dd>{usd(r.actual_cost_usd)}</dd>
                <dt>Cost prevented</dt>
                <dd>{usd(r.cost_prevented_usd)}</dd>
                <dt>Description</dt>
                <dd>
                  <LongText text={r.description} />
                </dd>
                <dt>Blast radius</dt>
                <dd>
                  <LongText text={r.blast_radius} />
                </dd>
                <dt>Enrichment</dt>
                <dd>
                  <Tag value={r.enrichment_status} />
                </dd>
              </dl>
            </section>
            <section className="panel" aria-labelledby="enriched-heading">
              <h2 id="enriched-heading">Explanation, enriched and original</h2>
              <div className="table-scroll">
                <table className="change-table">
                  <caption className="visually-hidden">Enriched fields next to their originals</caption>
                  <thead>
                    <tr>
                      <th scope="col">Field</th>
                      <th scope="col">Current{r.enrichment_status === 'enriched' ? ' (enriched)' : ''}</th>
                      <th scope="col">Original</th>
                    </tr>
                  </thead>
                  <tbody>
                    {ENRICHED_FIELDS.map((f) => (
                      <tr key={f}>
                        <th scope="row">{label(f)}</th>
                        <td>
                          <LongText text={valueText(current[f])} />
                        </td>
                        <td>{f in orig ? <LongText text={valueText(orig[f])} /> : <span className="muted">unchanged (not enriched)</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
            {r.context ? (
              <section className="panel" aria-labelledby="context-heading">
                <h2 id="context-heading">Guardrail context ({r.context.guardrail})</h2>
                {'matches' in r.context && Array.isArray(r.context.matches) && r.context.matches.length ? (
                  <div className="table-scroll">
                    <table className="change-table">
                      <caption className="visually-hidden">Guardrail matches</caption>
                      <thead>
                        <tr>
                          <th scope="col">Category</th>
                          <th scope="col">Field</th>
                          <th scope="col">Matched text</th>
                        </tr>
                      </thead>
                      <tbody>
                        {r.context.matches.map((m, i) => (
                          <tr key={i}>
                            <td>{m.category}</td>
                            <td>
                              <code>{m.field_path}</code>
                            </td>
                            <td>{m.matched_text}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                ) : null}
                <JsonView value={r.context} />
              </section>
            ) : null}
            <div className="two-col">
              <section className="panel" aria-labelledby="orig-heading">
                <h2 id="orig-heading">Original inputs</h2>
                <JsonView value={r.original_inputs} />
              </section>
              <section className="panel" aria-labelledby="mod-heading">
                <h2 id="mod-heading">Modified inputs</h2>
                {r.modified_inputs ? <JsonView value={r.modified_inputs} /> : <p className="muted">Not modified.</p>}
              </section>
            </div>
            <section className="panel" aria-labelledby="trail-heading">
              <h2 id="trail-heading">Audit trail</h2>
              <AuditTimeline trail={r.audit_trail} />
            </section>
          </>
        );
      }}
    </QueryState>
  );
}
