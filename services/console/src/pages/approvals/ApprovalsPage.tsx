/**
 * Approvals (`/approvals`): the inbox (`GET /api/v1/approvals?status=pending`, newest first) and the decided ones
 * (status tabs in the URL; agent and run filters), as a dense table, one line an approval, so a full page of them fits
 * a screen; each row's details (reason, intent, inputs, the decision taken) open on demand below it. A pending one is
 * approved or rejected from its row: one click, then a confirmation asking the approver's email (required by the API,
 * remembered in this browser) and notes (`POST /api/v1/approvals/{id}/approve|reject`). A decision already taken
 * (409) is shown as a message above the list, and the list refreshes. Write controls are disabled for a read key.
 * Each approval names its approvers (person or key, e-mail, name, when, comment); one needing two approvals shows
 * "1 of 2 approvals" while it waits for the second (docs/auth.md, Named approvers).
 * Source: docs/console.md (Approvals); architecture §4 (Approvals).
 */
import { useState } from 'react';
import { Link } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ProblemError } from '../../api/client.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import { APPROVAL_STATUSES, type ApprovalRecord, type Page } from '../../api/types.js';
import { DataTable, Pagination, type Column } from '../../components/DataTable.js';
import { FilterBar, type FilterField } from '../../components/FilterBar.js';
import { plural, usd, when } from '../../components/format.js';
import { JsonView, LongText } from '../../components/LongText.js';
import { Time, Truncate } from '../../components/Cells.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
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

/** A decision waiting for its confirmation: which approval, approve or reject. */
type PendingDecision = { a: ApprovalRecord; kind: 'approve' | 'reject' };

/** Queries a decision changes: the approvals, the interventions (outcome) and the dashboard numbers. */
const CHANGED_BY_DECISION = ['/api/v1/approvals', '/api/v1/interventions', '/api/v1/mcp/resources'];

/** `1 of 2 approvals` for an approval that needs more than one; null for one that needs one. */
export function approvalsProgress(a: Pick<ApprovalRecord, 'approvals' | 'approvals_required'>): string | null {
  const required = a.approvals_required ?? 1;
  return required > 1 ? `${Math.min(a.approvals?.length ?? 0, required)} of ${required} approvals` : null;
}

/** Who an approver is, in one line: `April Approver <april@acme.test>` for a person, `key review desk (jane@…)` for a key. */
function approverText(by: NonNullable<ApprovalRecord['decided_by']>): string {
  if (by.type === 'user') return by.name && by.email ? `${by.name} <${by.email}>` : (by.email ?? by.name ?? by.id);
  return `key ${by.name ?? by.id}${by.email ? ` (${by.email})` : ''}`;
}

/** The approvals given so far, oldest first: who, when, and their comment. */
function ApprovalsGiven({ a }: { a: ApprovalRecord }) {
  const given = a.approvals ?? [];
  if (given.length === 0) return <span className="muted">none yet</span>;
  return (
    <ol className="approvers">
      {given.map((g) => (
        <li key={`${g.by.type}:${g.by.id}:${g.at}`}>
          {approverText(g.by)} · {when(g.at)}
          {g.comment ? <> · <q>{g.comment}</q></> : null}
        </li>
      ))}
    </ol>
  );
}

/** Approve and reject buttons of a pending approval (each opens the confirmation). */
function DecisionButtons({ a, onDecide }: { a: ApprovalRecord; onDecide: (p: PendingDecision) => void }) {
  return (
    <span className="row-actions">
      <WriteButton className="primary" onClick={() => onDecide({ a, kind: 'approve' })} aria-label={`Approve ${a.action_name}`}>
        Approve
      </WriteButton>
      <WriteButton className="danger" onClick={() => onDecide({ a, kind: 'reject' })} aria-label={`Reject ${a.action_name}`}>
        Reject
      </WriteButton>
    </span>
  );
}

/**
 * An approval's details, shown on demand under its row: the request in full and, once decided, who decided and why;
 * a pending one's decision buttons again (on a phone the row's own are off to the side).
 */
function ApprovalDetail({ a, onDecide }: { a: ApprovalRecord; onDecide: (p: PendingDecision) => void }) {
  return (
    <>
      <dl className="fields">
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
        <dt>Approvals</dt>
        <dd>
          {approvalsProgress(a) ? <p>{approvalsProgress(a)} from different people</p> : null}
          {a.separation_of_duties ? <p>Separation of duties: a signed-in person other than the agent&apos;s owner and last changer decides; keys cannot.</p> : null}
          <ApprovalsGiven a={a} />
        </dd>
        {a.status !== 'pending' ? (
          <>
            <dt>Decided</dt>
            <dd>
              {when(a.decided_at)} {a.approver_email ? `by ${a.approver_email}` : ''} {a.decision_reason ? `(${a.decision_reason})` : ''}
            </dd>
            {a.decided_by ? (
              <>
                <dt>Decided by</dt>
                <dd>{approverText(a.decided_by)}</dd>
              </>
            ) : null}
            {a.actor ? (
              <>
                <dt>{a.actor.startsWith('user:') ? 'As' : 'With key'}</dt>
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
        <div className="actions-row">
          <DecisionButtons a={a} onDecide={onDecide} />
        </div>
      ) : null}
    </>
  );
}

/** The confirmation of a decision: names the action and agent, asks the approver's email (required) and notes. */
function DecisionDialog({ pending, onDone, onConflict, onCancel }: { pending: PendingDecision | null; onDone: (decided: ApprovalRecord) => void; onConflict: (error: ProblemError) => void; onCancel: () => void }) {
  const [email, setEmail] = useState(rememberedApprover);
  const [notes, setNotes] = useState('');
  const [missing, setMissing] = useState(false);
  const client = useQueryClient();
  const decide = useApiMutation(
    (api, p: PendingDecision) => api.post<ApprovalRecord>(`/api/v1/approvals/${encodeURIComponent(p.a.id)}/${p.kind}`, { approver_email: email.trim(), ...(notes.trim() ? { notes } : {}) }),
    CHANGED_BY_DECISION,
  );
  const close = () => {
    decide.reset();
    setNotes('');
    setMissing(false);
  };
  const confirm = () => {
    if (!pending) return;
    if (!email.trim()) {
      setMissing(true);
      return;
    }
    try {
      localStorage.setItem(APPROVER_ITEM, email.trim());
    } catch {
      /* storage refused: nothing to remember */
    }
    decide.mutate(pending, {
      onSuccess: (decided) => {
        close();
        onDone(decided);
      },
      onError: (error) => {
        if (error.status !== 409) return; // shown in the dialog
        close();
        onConflict(error);
        for (const prefix of CHANGED_BY_DECISION) void client.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith(prefix) });
      },
    });
  };
  const verb = pending?.kind === 'reject' ? 'Reject' : 'Approve';
  return (
    <ConfirmDialog
      open={pending !== null}
      title={pending ? `${verb} ${pending.a.action_name} by ${pending.a.agent_id}?` : ''}
      confirmLabel={verb}
      danger={pending?.kind === 'reject'}
      busy={decide.isPending}
      error={decide.error && decide.error.status !== 409 ? decide.error : null}
      onConfirm={confirm}
      onCancel={() => {
        close();
        onCancel();
      }}
    >
      <p>
        {pending?.kind === 'reject' ? 'The action will not run.' : 'The agent may run the action.'} The decision is recorded with your email, your notes and who you signed in as (you, or your key) as its actor.
      </p>
      <div className="form-row">
        <label htmlFor="decision-email">Approver email</label>
        <input id="decision-email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} placeholder="you@example.com" aria-invalid={missing && !email.trim() ? true : undefined} aria-describedby={missing && !email.trim() ? 'decision-email-error' : undefined} />
        {missing && !email.trim() ? (
          <span id="decision-email-error" className="field-error">
            Enter the approver email: the platform records who decided.
          </span>
        ) : null}
      </div>
      <div className="form-row">
        <label htmlFor="decision-notes">Notes</label>
        <textarea id="decision-notes" value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={10_000} />
      </div>
    </ConfirmDialog>
  );
}

/** The approvals of one page as a table: one line each, details on demand, approve / reject on a pending one's row. */
function ApprovalsTable({ rows, onDecide }: { rows: ApprovalRecord[]; onDecide: (p: PendingDecision) => void }) {
  const columns: Column<ApprovalRecord>[] = [
    { key: 'action', header: 'Action', cell: (a) => <Truncate text={a.action_name} /> },
    { key: 'agent', header: 'Agent', cell: (a) => <Truncate text={a.agent_id} width="name" /> },
    { key: 'risk', header: 'Risk', cell: (a) => (a.risk_level ? <Tag value={a.risk_level} /> : '—') },
    { key: 'cost', header: 'Estimated cost', cell: (a) => usd(a.estimated_cost_usd), numeric: true },
    { key: 'requested', header: 'Requested', cell: (a) => <Time iso={a.requested_at} /> },
    { key: 'reason', header: 'Reason', cell: (a) => <Truncate text={a.reason} width="fill" />, fill: true },
    {
      key: 'status',
      header: 'Status',
      cell: (a) => (
        <>
          <Tag value={a.status} />
          {a.status === 'pending' && approvalsProgress(a) ? <span className="muted"> {approvalsProgress(a)}</span> : null}
        </>
      ),
    },
    {
      key: 'decision',
      header: 'Decision',
      cell: (a) =>
        a.status === 'pending' ? (
          <DecisionButtons a={a} onDecide={onDecide} />
        ) : (
          <Truncate text={a.approver_email ?? (a.actor === 'system' ? 'expired' : null)} width="name" />
        ),
    },
  ];
  return <DataTable caption="Approvals" columns={columns} rows={rows} rowKey={(a) => `${a.id}:${a.status}`} rowId={(a) => a.id} detail={(a) => <ApprovalDetail a={a} onDecide={onDecide} />} />;
}

/** The approvals inbox. */
export function ApprovalsPage() {
  const { values, set } = useUrlFilters(NAMES);
  const { skip, limit, setSkip } = usePaging(20);
  const status = values.status || 'pending';
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [pending, setPending] = useState<PendingDecision | null>(null);
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
              {outcome.decided.status === 'pending'
                ? `${outcome.action}: your approval is in (${approvalsProgress(outcome.decided) ?? 'more needed'}); it waits for another approver.`
                : `${outcome.action}: ${outcome.decided.status === 'approved' ? 'approved' : 'rejected'} by ${outcome.decided.approver_email} at ${when(outcome.decided.decided_at)}.`}
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
              <ApprovalsTable rows={d.approvals} onDecide={setPending} />
              <Pagination total={d.total} skip={d.skip} limit={d.limit} onSkip={setSkip} />
            </>
          )}
        </QueryState>
        <DecisionDialog
          pending={pending}
          onCancel={() => setPending(null)}
          onDone={(decided) => {
            if (pending) setOutcome({ action: pending.a.action_name, decided });
            setPending(null);
          }}
          onConflict={(error) => {
            if (pending) setOutcome({ action: pending.a.action_name, error });
            setPending(null);
          }}
        />
    </>
  );
}
