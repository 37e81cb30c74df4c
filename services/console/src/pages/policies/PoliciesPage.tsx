/**
 * Policies and kill switches (`/policies`): the kill switches (`GET /api/v1/kill-switches`; engaging or releasing
 * the organisation's or an agent's switch, `PUT /api/v1/kill-switches/organization|agents/{agent_id}`, always behind a
 * confirmation dialog with a reason) and the policy list (`GET /api/v1/policies`: enabled, name and agent filters in
 * the URL, paged; its budgets, period budgets in words). Each policy links to its version history. Source: docs/console.md (Policies).
 */
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiMutation, useApiQuery } from '../../api/hooks.js';
import type { Agent, KillSwitchOverview, KillSwitchState, Page, Policy } from '../../api/types.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { DataTable } from '../../components/DataTable.js';
import type { FilterField } from '../../components/FilterBar.js';
import { FilteredList } from '../../components/FilteredList.js';
import { usd, when } from '../../components/format.js';
import { Time } from '../../components/Cells.js';
import { LongText } from '../../components/LongText.js';
import { QueryState } from '../../components/States.js';
import { WriteButton } from '../../components/WriteButton.js';
import { PolicyForm } from './PolicyForm.js';
import { periodBudgetText } from './policy-text.js';
import { Actor } from '../../components/Actor.js';

const FIELDS: FilterField[] = [
  { name: 'enabled', label: 'Enabled', kind: 'select', options: ['true', 'false'] },
  { name: 'name', label: 'Name', kind: 'text', placeholder: 'exact name' },
  { name: 'agent_id', label: 'Applies to agent', kind: 'text' },
];

/** A kill-switch change waiting for confirmation: which switch (null agent = the organisation's) and the new state. */
type PendingSwitch = { agentId: string | null; engage: boolean };

function KillSwitches() {
  const q = useApiQuery<KillSwitchOverview>('/api/v1/kill-switches');
  const agents = useApiQuery<Page<'agents', Agent>>('/api/v1/agents', { limit: 1000 });
  const [pending, setPending] = useState<PendingSwitch | null>(null);
  const [reason, setReason] = useState('');
  const [agentPick, setAgentPick] = useState('');
  const change = useApiMutation(
    (api, p: PendingSwitch & { reason: string }) =>
      api.put<KillSwitchState>(p.agentId === null ? '/api/v1/kill-switches/organization' : `/api/v1/kill-switches/agents/${encodeURIComponent(p.agentId)}`, { engaged: p.engage, ...(p.reason.trim() ? { reason: p.reason.trim() } : {}) }),
    ['/api/v1/kill-switches', '/api/v1/agents'],
  );
  const ask = (p: PendingSwitch) => {
    change.reset();
    setReason('');
    setPending(p);
  };
  const target = pending ? (pending.agentId === null ? 'the organisation' : `agent ${pending.agentId}`) : '';
  return (
    <section className="panel" aria-labelledby="ks-heading">
      <h2 id="ks-heading">Kill switches</h2>
      <QueryState query={q} what="kill switches">
        {(ks) => (
          <>
            <p>
              Organisation: <span className={`tag tag-${ks.organization.engaged ? 'engaged' : 'released'}`}>{ks.organization.engaged ? 'engaged: every action is blocked' : 'released'}</span>
              {ks.organization.changed_at ? (
                <span className="muted">
                  {' '}
                  · changed {when(ks.organization.changed_at)} by <Actor id={ks.organization.changed_by} name={ks.organization.actor_name} />
                  {ks.organization.reason ? ` (“${ks.organization.reason}”)` : ''}
                </span>
              ) : null}
            </p>
            <div className="actions-row">
              <WriteButton className={ks.organization.engaged ? undefined : 'danger'} onClick={() => ask({ agentId: null, engage: !ks.organization.engaged })}>
                {ks.organization.engaged ? 'Release the organisation kill switch' : 'Engage the organisation kill switch'}
              </WriteButton>
            </div>
            <h3>Agents with an engaged kill switch</h3>
            {ks.agents.length === 0 ? (
              <p className="muted">None.</p>
            ) : (
              <DataTable
                caption="Agents with an engaged kill switch"
                rows={ks.agents}
                rowKey={(s) => s.agent_id ?? ''}
                columns={[
                  { key: 'agent', header: 'Agent', cell: (s) => s.agent_id },
                  { key: 'reason', header: 'Reason', cell: (s) => <LongText text={s.reason} foldAt={200} /> },
                  {
                    key: 'changed',
                    header: 'Engaged',
                    cell: (s) => (
                      <>
                        {when(s.changed_at)} by <Actor id={s.changed_by} name={s.actor_name} />
                      </>
                    ),
                  },
                  { key: 'release', header: 'Action', cell: (s) => <WriteButton onClick={() => ask({ agentId: s.agent_id, engage: false })}>Release</WriteButton> },
                ]}
              />
            )}
            <div className="actions-row">
              <label htmlFor="ks-agent">Engage an agent's kill switch:</label>
              <select id="ks-agent" value={agentPick} onChange={(e) => setAgentPick(e.target.value)}>
                <option value="">choose an agent</option>
                {(agents.data?.agents ?? [])
                  .filter((a) => !a.kill_switch.engaged)
                  .map((a) => (
                    <option key={a.agent_id} value={a.agent_id}>
                      {a.name ? `${a.agent_id} (${a.name})` : a.agent_id}
                    </option>
                  ))}
              </select>
              <WriteButton className="danger" disabled={!agentPick} onClick={() => ask({ agentId: agentPick, engage: true })}>
                Engage
              </WriteButton>
            </div>
          </>
        )}
      </QueryState>
      <ConfirmDialog
        open={pending !== null}
        title={pending?.engage ? `Engage the kill switch of ${target}?` : `Release the kill switch of ${target}?`}
        confirmLabel={pending?.engage ? 'Engage kill switch' : 'Release kill switch'}
        danger={pending?.engage}
        busy={change.isPending}
        error={change.error}
        onCancel={() => setPending(null)}
        onConfirm={() =>
          pending &&
          change.mutate(
            { ...pending, reason },
            {
              onSuccess: () => {
                setPending(null);
                setAgentPick('');
              },
            },
          )
        }
      >
        <p>
          {pending?.engage
            ? `While it is engaged, the policy engine blocks every action of ${target}. The change is recorded with your key as its actor.`
            : `Actions of ${target} are decided by the policies again. The change is recorded with your key as its actor.`}
        </p>
        <div className="form-row">
          <label htmlFor="ks-reason">Reason (recorded on the change)</label>
          <textarea id="ks-reason" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={10_000} />
        </div>
      </ConfirmDialog>
    </section>
  );
}

/** "New policy": a button that opens the policy form; a created policy opens its detail page. */
function NewPolicy() {
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  return open ? (
    <section className="panel" aria-labelledby="new-policy-heading">
      <h3 id="new-policy-heading">New policy</h3>
      <PolicyForm onSaved={(p) => void navigate(`/policies/${encodeURIComponent(p.id)}`)} onCancel={() => setOpen(false)} />
    </section>
  ) : (
    <div className="actions-row">
      <WriteButton onClick={() => setOpen(true)}>New policy</WriteButton>
    </div>
  );
}

/** The policies and kill switches page. */
export function PoliciesPage() {
  return (
    <>
      <PageHeader title="Policies and kill switches">The rules the policy engine applies, their version history, and the emergency stops.</PageHeader>
      <KillSwitches />
      <section aria-labelledby="policies-heading">
        <h2 id="policies-heading">Policies</h2>
        <NewPolicy />
        <FilteredList<Policy>
          path="/api/v1/policies"
          rowsKey="policies"
          fields={FIELDS}
          what="policies"
          empty="No policies match."
          rowKey={(p) => p.id}
          rowHref={(p) => `/policies/${encodeURIComponent(p.id)}`}
          columns={[
            { key: 'name', header: 'Name', cell: (p) => p.name, list: true },
            { key: 'enabled', header: 'State', cell: (p) => <span className={`tag tag-${p.enabled ? 'enabled' : 'disabled'}`}>{p.enabled ? 'enabled' : 'disabled'}</span> },
            { key: 'version', header: 'Version', cell: (p) => p.version, numeric: true },
            { key: 'run', header: 'Run budget', cell: (p) => usd(p.run_budget), numeric: true },
            { key: 'session', header: 'Session budget', cell: (p) => usd(p.session_budget), numeric: true },
            { key: 'action', header: 'Action budget', cell: (p) => usd(p.action_budget), numeric: true },
            { key: 'period', header: 'Period budgets', cell: (p) => (p.period_budgets?.length ? p.period_budgets.map(periodBudgetText).join('; ') : '—'), list: true },
            { key: 'denied', header: 'Denied actions', cell: (p) => (p.denied_actions.length ? p.denied_actions.join(', ') : '—'), list: true },
            { key: 'approval', header: 'Needs approval', cell: (p) => (p.approval_required_actions.length ? p.approval_required_actions.join(', ') : '—'), list: true },
            { key: 'agents', header: 'Agents', cell: (p) => (p.agent_ids.length ? p.agent_ids.join(', ') : 'all'), list: true },
            { key: 'updated', header: 'Updated', cell: (p) => <Time iso={p.updated_at} /> },
          ]}
        />
      </section>
    </>
  );
}
