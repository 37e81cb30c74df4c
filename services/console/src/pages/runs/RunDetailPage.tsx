/**
 * One run (`/runs/:id`, `GET /api/v1/runs/{id}`): its totals and its ledger — every recorded action, oldest first,
 * with estimated and actual cost (USD), duration, inputs and outputs — paged with `actions_skip` / `actions_limit`
 * (the URL's `skip`). Source: spec §Stats; docs/api.md (Runs and the action ledger).
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

/** The run detail view with its ledger. */
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
                  { key: 'time', header: 'Time', cell: (a) => <Time iso={a.timestamp} /> },
                  { key: 'action', header: 'Action', cell: (a) => <Truncate text={a.action_name} /> },
                  { key: 'status', header: 'Status', cell: (a) => <Tag value={a.status} /> },
                  { key: 'estimated', header: 'Estimated', cell: (a) => usd(a.cost_usd), numeric: true },
                  { key: 'actual', header: 'Actual', cell: (a) => usd(a.actual_cost_usd), numeric: true },
                  { key: 'duration', header: 'Duration', cell: (a) => duration(a.duration_ms), numeric: true },
                  { key: 'inputs', wrap: true, header: 'Inputs', cell: (a) => <JsonView value={a.inputs} foldAt={200} /> },
                  { key: 'outputs', wrap: true, header: 'Outputs', cell: (a) => <JsonView value={a.outputs} foldAt={200} /> },
                  { key: 'error', wrap: true, header: 'Error', cell: (a) => <LongText text={a.error} foldAt={200} /> },
                ]}
              />
              <Pagination total={r.actions_total} skip={r.actions_skip} limit={r.actions_limit} onSkip={setSkip} />
            </>
          )}
        </>
      )}
    </QueryState>
  );
}
