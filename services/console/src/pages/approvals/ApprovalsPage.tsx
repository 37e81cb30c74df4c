/**
 * Approvals (`/approvals`): the inbox (`GET /api/v1/approvals?status=pending`, newest first) and the decided ones
 * (status tabs in the URL; agent and run filters). A pending approval is approved or rejected with the approver's
 * email (required by the API, remembered in this browser) and notes (`POST /api/v1/approvals/{id}/approve|reject`).
 * A decision already taken (409) is shown as a message on the card, and the list refreshes. Write controls are
 * disabled for a read key. Source: docs/console.md (Approvals); architecture §4 (Approvals).
 */
import { useState } from 'react';
import { Link } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ProblemError } from '../../api/client.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import { APPROVAL_STATUSES, type ApprovalRecord, type Page } from '../../api/types.js';
import { Pagination } from '../../components/DataTable.js';
import { FilterBar, type FilterField } from '../../components/FilterBar.js';
import { plural, usd, when } from '../../components/format.js';
import { JsonView, LongText } from '../../components/LongText.js';
import { ProblemMessage, QueryState } from '../../components/States.js';
import { Tag } from '../../components/Tag.js';
import { usePaging, useUrlFilters } from '../../components/url.js';
import { WriteButton } from '../../components/WriteButton.js';
import { Actor } from '../../components/Actor.js';

const FIELDS: FilterField[] = [
  { name: 'agent_id', label: 'Agent', kind: 'text' },
  { name: 'run_id', label: 'Run', kind: 'text' },
];
const NAMES = ['status', 'agent_id', 'run_id'] as const;

/** localStorage item remembering the approver's email between decisions (not a secret). */
const APPROVER_ITEM = 'agp.console.approver_email';

function rememberedApprover(): string {
  try {
    return localStorage.getItem(APPROVER_ITEM) ?? '';
  } catch {
    return '';
  }
}

/** What happened to the last decision taken on this page: the decided approval, or the problem (e.g. a 409). */
type Outcome = { action: string; decided?: ApprovalRecord; error?: ProblemError };

/** Queries a decision changes: the approvals, the interventions (outcome) and the dashboard numbers. */
const CHANGED_BY_DECISION = ['/api/v1/approvals', '/api/v1/interventions', '/api/v1/mcp/resources'];

/** One approval: its request, and for a pending one the decision form; a decided one shows who decided and why. */
function ApprovalCard({ a, onOutcome }: { a: ApprovalRecord; onOutcome: (o: Outcome) => void }) {
  const [email, setEmail] = useState(rememberedApprover);
  const [notes, setNotes] = useState('');
  const client = useQueryClient();
  const decide = useApiMutation(
    (api, v: { kind: 'approve' | 'reject' }) => api.post<ApprovalRecord>(`/api/v1/approvals/${encodeURIComponent(a.id)}/${v.kind}`, { approver_email: email.trim(), ...(notes.trim() ? { notes } : {}) }),
    CHANGED_BY_DECISION,
  );
  const run = (kind: 'approve' | 'reject') => {
    try {
      localStorage.setItem(APPROVER_ITEM, email.trim());
    } catch {
      /* storage refused: nothing to remember */
    }
    decide.mutate(
      { kind },
      {
        onSuccess: (decided) => onOutcome({ action: a.action_name, decided }),
        onError: (error) => {
          if (error.status === 409) {
            onOutcome({ action: a.action_name, error });
            for (const prefix of CHANGED_BY_DECISION) void client.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith(prefix) });
          }
        },
      },
    );
  };
  const idBase = `apr-${a.id.replace(/[^\w-]/g, '_')}`;
  return (
    <article className="approval-card" aria-labelledby={`${idBase}-title`} data-approval-id={a.id}>
      <h2 id={`${idBase}-title`} className="approval-title">
        {a.action_name} <Tag value={a.status} /> <Tag value={a.risk_level} />
      </h2>
      <dl className="fields">
        <dt>Agent</dt>
        <dd>{a.agent_id}</dd>
        <dt>Run</dt>
        <dd>{a.run_id ? <Link to={`/runs/${encodeURIComponent(a.run_id)}`}>{a.run_id}</Link> : '—'}</dd>
        <dt>Policy</dt>
        <dd>{a.policy_name ?? a.policy_id ?? '—'}</dd>
        <dt>Reason</dt>
        <dd>
          <LongText text={a.reason} />
        </dd>
        <dt>Agent intent</dt>
        <dd>
          <LongText text={a.agent_intent} />
        </dd>
        <dt>Estimated cost</dt>
        <dd>{usd(a.estimated_cost_usd)}</dd>
        <dt>Requested</dt>
        <dd>
          {when(a.requested_at)} · expires {when(a.expires_at)}
        </dd>
        <dt>Inputs</dt>
        <dd>
          <JsonView value={a.original_inputs} foldAt={800} />
        </dd>
        <dt>Intervention</dt>
        <dd>
          <Link to={`/interventions/${encodeURIComponent(a.intervention_id)}`}>{a.intervention_id}</Link>
        </dd>
        {a.status !== 'pending' ? (
          <>
            <dt>Decided</dt>
            <dd>
              {when(a.decided_at)} {a.approver_email ? `by ${a.approver_email}` : ''} {a.decision_reason ? `(${a.decision_reason})` : ''}
            </dd>
            {a.actor ? (
              <>
                <dt>With key</dt>
                <dd>
                  <Actor id={a.actor} name={a.actor_name} />
                </dd>
              </>
            ) : null}
            <dt>Notes</dt>
            <dd>
              <LongText text={a.notes} />
            </dd>
          </>
        ) : null}
      </dl>
      {a.status === 'pending' ? (
        <form className="decision" onSubmit={(e) => e.preventDefault()} aria-label={`Decide ${a.action_name}`}>
          <div className="form-row">
            <label htmlFor={`${idBase}-email`}>Approver email</label>
            <input id={`${idBase}-email`} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} placeholder="you@example.com" />
          </div>
          <div className="form-row">
            <label htmlFor={`${idBase}-notes`}>Notes</label>
            <textarea id={`${idBase}-notes`} value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={10_000} />
          </div>
          <div className="actions-row">
            <WriteButton className="primary" onClick={() => run('approve')} disabled={decide.isPending || !email.trim()} title={!email.trim() ? 'Enter the approver email first' : undefined}>
              Approve
            </WriteButton>
            <WriteButton className="danger" onClick={() => run('reject')} disabled={decide.isPending || !email.trim()} title={!email.trim() ? 'Enter the approver email first' : undefined}>
              Reject
            </WriteButton>
          </div>
        </form>
      ) : null}
      {decide.error && decide.error.status !== 409 ? <ProblemMessage error={decide.error} /> : null}
    </article>
  );
}

/** The approvals inbox. */
export function ApprovalsPage() {
  const { values, set } = useUrlFilters(NAMES);
  const { skip, limit, setSkip } = usePaging(20);
  const status = values.status || 'pending';
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const q = useApiQuery<Page<'approvals', ApprovalRecord>>('/api/v1/approvals', { status: status === 'all' ? undefined : status, agent_id: values.agent_id, run_id: values.run_id, skip, limit });
  return (
    <>
      <PageHeader title="Approvals">Escalated actions waiting for a human decision, and the decisions taken.</PageHeader>
      <nav className="tabs" aria-label="Approval status">
        {[...APPROVAL_STATUSES, 'all'].map((s) => (
          <a
            key={s}
            href={`?status=${s}`}
            aria-current={s === status ? 'page' : undefined}
            onClick={(e) => {
              e.preventDefault();
              set({ status: s === 'pending' ? '' : s });
            }}
          >
            {s}
          </a>
        ))}
      </nav>
      <FilterBar fields={FIELDS} values={values} onChange={(name, value) => set({ [name]: value })} onClear={() => set({ agent_id: '', run_id: '' })} />
      <div aria-live="polite">
        {outcome?.decided ? (
          <p className="success" role="status">
            {outcome.action}: {outcome.decided.status === 'approved' ? 'approved' : 'rejected'} by {outcome.decided.approver_email} at {when(outcome.decided.decided_at)}.
          </p>
        ) : null}
        {outcome?.error ? (
          <ProblemMessage error={outcome.error} action={<p>{outcome.action}: this approval was already decided (or expired) before your decision arrived. The list has been refreshed.</p>} />
        ) : null}
      </div>
      <QueryState query={q} what="approvals" isEmpty={(d) => d.total === 0} empty={status === 'pending' ? 'No approvals are waiting. The inbox is empty.' : 'No approvals match.'}>
        {(d) => (
          <>
            <p className="muted result-count" data-testid="result-count">
              {plural(d.total, status === 'all' ? 'approval' : `${status} approval`)}
            </p>
            {d.approvals.map((a) => (
              <ApprovalCard key={`${a.id}:${a.status}`} a={a} onOutcome={setOutcome} />
            ))}
            <Pagination total={d.total} skip={d.skip} limit={d.limit} onSkip={setSkip} />
          </>
        )}
      </QueryState>
    </>
  );
}
