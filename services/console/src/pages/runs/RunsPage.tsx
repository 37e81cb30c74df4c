/**
 * Runs (`/runs`): `GET /api/v1/runs` with the list_runs filters (status, agent_id, min_cost in USD) in the URL, paged;
 * each run links to its ledger. Below, the estimation accuracy of the clients' cost estimates
 * (`GET /api/v1/stats/estimation-accuracy`): mean, p50 and p95 skew, the worst offenders, and a histogram per action
 * over the six fixed skew buckets. Source: spec §Stats, list_runs; architecture §4 (Estimation accuracy).
 */
import { Link } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import { RUN_STATUSES, type EstimationAccuracy, type Run } from '../../api/types.js';
import { DataTable } from '../../components/DataTable.js';
import type { FilterField } from '../../components/FilterBar.js';
import { FilteredList } from '../../components/FilteredList.js';
import { count, duration, pct, usd } from '../../components/format.js';
import { Time, Truncate } from '../../components/Cells.js';
import { QueryState } from '../../components/States.js';
import { StatCard, StatCards } from '../../components/StatCard.js';
import { Tag } from '../../components/Tag.js';

const FIELDS: FilterField[] = [
  { name: 'status', label: 'Status', kind: 'select', options: RUN_STATUSES },
  { name: 'agent_id', label: 'Agent', kind: 'text' },
  { name: 'min_cost', label: 'Minimum cost (USD)', kind: 'number' },
];

/** A skew fraction as a signed percentage: 0.25 → `+25.0%`. */
const skew = (v: number | null) => (v === null ? '—' : `${v > 0 ? '+' : ''}${pct(v)}`);

function Accuracy() {
  const q = useApiQuery<EstimationAccuracy>('/api/v1/stats/estimation-accuracy');
  return (
    <section className="panel" aria-labelledby="accuracy-heading">
      <h2 id="accuracy-heading">Estimation accuracy</h2>
      <p className="muted">Skew = (actual − estimated) ÷ estimated, per action with both a client estimate and a provider-reported cost.</p>
      <QueryState query={q} what="estimation accuracy" isEmpty={(a) => a.actions_compared === 0} empty="No action has both an estimated and an actual cost yet.">
        {(a) => {
          const max = Math.max(1, ...a.histograms.flatMap((h) => h.buckets.map((b) => b.count)));
          return (
            <>
              <StatCards>
                <StatCard label="Actions compared" value={count(a.actions_compared)} />
                <StatCard label="Mean skew" value={skew(a.mean_skew)} />
                <StatCard label="Median (p50)" value={skew(a.p50_skew)} />
                <StatCard label="p95" value={skew(a.p95_skew)} />
              </StatCards>
              <h3>Worst offenders</h3>
              <DataTable
                caption="Actions whose estimates are furthest off"
                rows={a.worst_offenders}
                rowKey={(w) => w.action_name}
                columns={[
                  { key: 'action', header: 'Action', cell: (w) => <Truncate text={w.action_name} /> },
                  { key: 'abs', header: 'Mean |skew|', cell: (w) => pct(w.mean_abs_skew), numeric: true },
                  { key: 'mean', header: 'Mean skew', cell: (w) => skew(w.mean_skew), numeric: true },
                  { key: 'count', header: 'Actions', cell: (w) => count(w.count), numeric: true },
                ]}
              />
              <h3>Histograms per action</h3>
              <div className="histograms">
                {a.histograms.map((h) => (
                  <figure className="histogram" key={h.action_name} aria-label={`Skew histogram of ${h.action_name}`}>
                    <h4 className="histogram-title">{h.action_name}</h4>
                    {h.buckets.map((b) => (
                      <div className="bar-row" key={b.bucket}>
                        <span>{b.bucket}</span>
                        <span className="bar" style={{ width: `${(b.count / max) * 100}%` }} aria-hidden="true" />
                        <span className="num">{count(b.count)}</span>
                      </div>
                    ))}
                  </figure>
                ))}
              </div>
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/** The runs page. */
export function RunsPage() {
  return (
    <>
      <PageHeader title="Runs">Agent runs, newest first, with their cost (actual where the provider reported it, else the estimate).</PageHeader>
      <FilteredList<Run>
        path="/api/v1/runs"
        rowsKey="runs"
        fields={FIELDS}
        what="runs"
        empty="No runs match these filters."
        rowKey={(r) => r.id}
        rowHref={(r) => `/runs/${encodeURIComponent(r.id)}`}
        columns={[
          { key: 'id', header: 'Run', cell: (r) => <Truncate text={r.id} /> },
          { key: 'agent', header: 'Agent', cell: (r) => <Truncate text={r.agent_id} width="name" /> },
          { key: 'name', header: 'Name', cell: (r) => <Truncate text={r.name} width="name" /> },
          { key: 'status', header: 'Status', cell: (r) => <Tag value={r.status} /> },
          { key: 'started', header: 'Started', cell: (r) => <Time iso={r.started_at} /> },
          { key: 'duration', header: 'Duration', cell: (r) => duration(r.duration_ms), numeric: true },
          { key: 'actions', header: 'Actions', cell: (r) => count(r.action_count), numeric: true },
          { key: 'cost', header: 'Cost', cell: (r) => usd(r.cost_usd), numeric: true },
          { key: 'estimated', header: 'Estimated', cell: (r) => usd(r.estimated_cost_usd), numeric: true },
          { key: 'interventions', header: 'Interventions', cell: (r) => <Link to={`/interventions?run_id=${encodeURIComponent(r.id)}`}>view</Link> },
        ]}
      />
      <Accuracy />
    </>
  );
}
