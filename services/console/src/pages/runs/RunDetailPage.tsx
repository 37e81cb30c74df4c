/**
 * One run (`/runs/:id`, `GET /api/v1/runs/{id}`): its totals and its ledger — every recorded action, oldest first,
 * with estimated and actual cost (USD), duration, inputs and outputs — paged with `actions_skip` / `actions_limit`
 * (the URL's `skip`). A ledger row is one line at any width (inputs and outputs as one-line previews); the action's
 * button opens its inputs, outputs and error in full under it. Source: spec §Stats; docs/api.md (Runs and the action ledger).
 */
import { Link, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import type { RunDetail } from '../../api/types.js';
import { DataTable, Pagination } from '../../components/DataTable.js';
import { count, duration, usd, when } from '../../components/format.js';
import { Money, Time, Truncate } from '../../components/Cells.js';
import { JsonView, LongText } from '../../components/LongText.js';
import { QueryState } from '../../components/States.js';
import { StatCard, StatCards } from '../../components/StatCard.js';
import { Tag } from '../../components/Tag.js';
import { usePaging } from '../../components/url.js';

/** A JSON value on one line (a ledger cell's preview; the whole value is in the row's detail); null for none. */
function oneLine(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return JSON.stringify(v);
}

/** The run detail view with its ledger: one line an action, its inputs, outputs and error in full on demand. */
export function RunDetailPage() {
  const { id = '' } = useParams();
  const { skip, limit, setSkip } = usePaging(100);
  const q = useApiQuery<RunDetail>(`/api/v1/runs/${encodeURIComponent(id)}`, { actions_skip: skip, actions_limit: limit });
  return (
    <QueryState query={q} what="the run">
      {(r) => (
        <>
          <PageHeader title={`Run ${r.id}`}>
            <Tag value={r.status} /> · agent {r.agent_id} · <Link to={`/interventions?run_id=${encodeURIComponent(r.id)}`}>its interventions</Link> · <Link to="/runs">all runs</Link>
          </PageHeader>
          <StatCards>
            <StatCard label="Cost" value={<Money usd={r.cost_usd} />} />
            <StatCard label="Estimated" value={<Money usd={r.estimated_cost_usd} />} />
            <StatCard label="Actual (reported)" value={<Money usd={r.actual_cost_usd} />} />
            <StatCard label="Actions" value={count(r.action_count)} />
            <StatCard label="Duration" value={duration(r.duration_ms)} />
          </StatCards>
          <dl className="fields panel">
            <dt>Name</dt>
            <dd>{r.name ?? '—'}</dd>
            <dt>Started</dt>
            <dd>{when(r.started_at)}</dd>
            <dt>Ended</dt>
            <dd>{when(r.ended_at)}</dd>
            <dt>Error</dt>
            <dd>
              <LongText text={r.error} />
            </dd>
          </dl>
          <h2>Ledger</h2>
          {r.actions_total === 0 ? (
            <p className="state state-empty">No actions were recorded for this run.</p>
          ) : (
            <>
              <DataTable
                caption={`Actions of run ${r.id}`}
                rows={r.actions}
                rowKey={(a) => a.id}
                columns={[
                  { key: 'action', header: 'Action', cell: (a) => <Truncate text={a.action_name} /> },
                  { key: 'time', header: 'Time', cell: (a) => <Time iso={a.timestamp} /> },
                  { key: 'status', header: 'Status', cell: (a) => <Tag value={a.status} /> },
                  { key: 'estimated', header: 'Estimated', cell: (a) => usd(a.cost_usd), numeric: true },
                  { key: 'actual', header: 'Actual', cell: (a) => usd(a.actual_cost_usd), numeric: true },
                  { key: 'duration', header: 'Duration', cell: (a) => duration(a.duration_ms), numeric: true },
                  { key: 'inputs', fill: true, header: 'Inputs', cell: (a) => <Truncate text={oneLine(a.inputs)} width="fill" mono /> },
                  { key: 'outputs', fill: true, header: 'Outputs', cell: (a) => <Truncate text={oneLine(a.outputs)} width="fill" mono /> },
                  { key: 'error', header: 'Error', cell: (a) => <Truncate text={a.error} width="text" /> },
                ]}
                rowId={(a) => a.id}
                detail={(a) => (
                  <dl className="fields">
                    <dt>Inputs</dt>
                    <dd>
                      <JsonView value={a.inputs} />
                    </dd>
                    <dt>Outputs</dt>
                    <dd>
                      <JsonView value={a.outputs} />
                    </dd>
                    <dt>Error</dt>
                    <dd>
                      <LongText text={a.error} />
                    </dd>
                  </dl>
                )}
              />
              <Pagination total={r.actions_total} skip={r.actions_skip} limit={r.actions_limit} onSkip={setSkip} />
            </>
          )}
        </>
      )}
    </QueryState>
  );
}
