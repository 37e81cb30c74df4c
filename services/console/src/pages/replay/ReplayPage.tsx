/**
 * Replay (`/replay` and `/replay/<run_id>`, the run read from `useParams()['*']`):
 * - `/replay`: the organisation's aggregates (submissions, actions replayed, divergences, cost saved in USD) and its
 *   history of replay submissions, newest first, paged server-side (`GET /api/v1/replay/history/`).
 * - `/replay/<run_id>`: that run's aggregates and submissions (`GET /api/v1/replay/history/{run_id}`) and the
 *   divergence analysis across them (`GET /api/v1/replay/{run_id}/analysis`: rate, statuses, the most divergent steps
 *   and actions, the trend).
 * - Both: the counterfactual evaluation ({@link Counterfactual}), preselecting the run on a run's view.
 * Source: spec §Replay history; packages/contracts/src/replay.ts.
 */
import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import type { ReplayAggregates, ReplayAnalysis, ReplayHistoryPage, ReplaySubmission } from '@agp/contracts';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import { Chart, type ChartSeries } from '../../components/Chart.js';
import { DataTable, Pagination, type Column } from '../../components/DataTable.js';
import { count, duration, pct, usd } from '../../components/format.js';
import { Money, Time, Truncate } from '../../components/Cells.js';
import { QueryState } from '../../components/States.js';
import { StatCard, StatCards } from '../../components/StatCard.js';
import { Tag } from '../../components/Tag.js';
import { usePaging } from '../../components/url.js';
import { Counterfactual } from './Counterfactual.js';
import '../evals/areas.css';

/** The four aggregates as cards. */
function Aggregates({ a }: { a: ReplayAggregates }) {
  return (
    <StatCards testId="replay-aggregates">
      <StatCard label="Submissions" value={count(a.submissions)} />
      <StatCard label="Actions replayed" value={count(a.actions_replayed)} />
      <StatCard label="Divergences" value={count(a.divergences)} />
      <StatCard label="Cost saved" value={<Money usd={a.cost_saved_usd} />} />
    </StatCards>
  );
}

/** A page of submissions (the organisation's, or one run's) with its aggregates. */
function History({ runId }: { runId?: string }) {
  const { skip, limit, setSkip } = usePaging(50);
  const q = useApiQuery<ReplayHistoryPage>(runId ? `/api/v1/replay/history/${encodeURIComponent(runId)}` : '/api/v1/replay/history/', { skip, limit });
  return (
    <QueryState query={q} what="replay history">
      {(d) => (
        <>
          <Aggregates a={d.aggregates} />
          <h2>{runId ? 'Submissions of this run' : 'History'}</h2>
          {d.total === 0 ? (
            <p className="state state-empty">
              {runId ? 'No replay of this run was submitted yet.' : 'No replay was submitted yet.'} Replay a run locally with <code>agp replay &lt;run_id&gt; --handlers &lt;module&gt;</code>; it submits its
              summary here.
            </p>
          ) : (
            <>
              <DataTable
                caption={runId ? `Replay submissions of run ${runId}, newest first` : 'Replay submissions, newest first'}
                rows={d.submissions}
                rowKey={(s) => s.id}
                columns={[
                  { key: 'when', header: 'Submitted', cell: (s) => <Time iso={s.submitted_at} /> },
                  ...(runId
                    ? []
                    : [
                        {
                          key: 'run',
                          header: 'Run',
                          cell: (s: ReplaySubmission) => (
                            <Link to={`/replay/${encodeURIComponent(s.run_id)}`}>
                              <Truncate text={s.run_id} />
                            </Link>
                          ),
                        },
                      ]),
                  { key: 'id', header: 'Submission', cell: (s) => <Truncate text={s.id} /> },
                  { key: 'status', header: 'Status', cell: (s) => <Tag value={s.status} /> },
                  { key: 'actions', header: 'Actions replayed', cell: (s) => count(s.actions_replayed), numeric: true },
                  { key: 'div', header: 'Divergences', cell: (s) => count(s.divergences), numeric: true },
                  { key: 'saved', header: 'Cost saved', cell: (s) => usd(s.cost_savings), numeric: true },
                  { key: 'duration', header: 'Duration', cell: (s) => duration(s.duration_ms), numeric: true },
                  { key: 'client', header: 'Client', cell: (s) => <Truncate text={s.client_version} width="name" /> },
                ]}
              />
              <Pagination total={d.total} skip={d.skip} limit={d.limit} onSkip={setSkip} />
            </>
          )}
        </>
      )}
    </QueryState>
  );
}

/** The divergence analysis of one run. */
function Analysis({ runId }: { runId: string }) {
  const q = useApiQuery<ReplayAnalysis>(`/api/v1/replay/${encodeURIComponent(runId)}/analysis`);
  return (
    <section className="panel" aria-labelledby="analysis-heading">
      <h2 id="analysis-heading">Divergence analysis</h2>
      <QueryState query={q} what="divergence analysis">
        {(a) => <AnalysisBody a={a} />}
      </QueryState>
    </section>
  );
}

/** One ranking of the analysis (steps or actions, the most divergent first), or a line saying there is none. */
function MostDivergent<T>({ title, rows, rowKey, columns }: { title: string; rows: T[]; rowKey: (row: T) => string; columns: Column<T>[] }) {
  return (
    <div>
      <h3>{title}</h3>
      {rows.length === 0 ? <p className="state state-empty">No divergence details were submitted.</p> : <DataTable caption={title} rows={rows} rowKey={rowKey} columns={columns} />}
    </div>
  );
}

/** What the analysis shows: rate and statuses, the trend, the most divergent steps and actions. */
function AnalysisBody({ a }: { a: ReplayAnalysis }) {
  const x = useMemo(() => a.trend.map((p) => Date.parse(p.submitted_at) / 1000), [a]);
  const series = useMemo<ChartSeries[]>(() => [{ label: 'Divergence rate', values: a.trend.map((p) => (p.rate === null ? null : Math.round(p.rate * 10_000) / 100)), color: '#b91c1c', format: (v) => `${v.toFixed(1)}%` }], [a]);
  return (
    <>
      <dl className="fields" data-testid="analysis-summary">
        <dt>Divergence rate</dt>
        <dd>
          {pct(a.divergence_rate)} <span className="muted">(divergences ÷ actions replayed, over every submission)</span>
        </dd>
        <dt>Submissions by status</dt>
        <dd>
          completed {count(a.by_status.completed)} · partial {count(a.by_status.partial)} · diverged {count(a.by_status.diverged)} · failed {count(a.by_status.failed)}
        </dd>
      </dl>
      {a.trend.length > 1 ? <Chart summary={`Divergence rate of run ${a.run_id} across its ${a.trend.length} replays, oldest first.`} x={x} series={series} yLabel="%" height={180} /> : null}
      <div className="two-col">
        <MostDivergent
          title="Most divergent steps"
          rows={a.by_step}
          rowKey={(s) => `${s.step}-${s.action_name}`}
          columns={[
            { key: 'step', header: 'Step', cell: (s) => s.step, numeric: true },
            { key: 'action', header: 'Action', cell: (s) => <Truncate text={s.action_name} /> },
            { key: 'div', header: 'Divergences', cell: (s) => count(s.divergences), numeric: true },
            { key: 'share', header: 'Share of replays', cell: (s) => pct(s.share), numeric: true },
          ]}
        />
        <MostDivergent
          title="Most divergent actions"
          rows={a.by_action}
          rowKey={(s) => s.action_name}
          columns={[
            { key: 'action', header: 'Action', cell: (s) => <Truncate text={s.action_name} /> },
            { key: 'div', header: 'Divergences', cell: (s) => count(s.divergences), numeric: true },
            { key: 'subs', header: 'Replays', cell: (s) => count(s.submissions), numeric: true },
            { key: 'share', header: 'Share of replays', cell: (s) => pct(s.share), numeric: true },
          ]}
        />
      </div>
    </>
  );
}

/** The Replay page: the organisation's history, or one run's (`/replay/<run_id>`); the counterfactual evaluation. */
export function ReplayPage() {
  const runId = useParams()['*'] ?? '';
  if (runId)
    return (
      <>
        <PageHeader title={`Replay of run ${runId}`}>
          <Link to="/replay">← all replays</Link> · <Link to={`/runs/${encodeURIComponent(runId)}`}>the run's ledger</Link>
        </PageHeader>
        <History key={runId} runId={runId} />
        <Analysis runId={runId} />
        <Counterfactual key={runId} runId={runId} />
      </>
    );
  return (
    <>
      <PageHeader title="Replay">Local replays of recorded runs (what diverged, what it saved), and what other policies would have done to them.</PageHeader>
      <History />
      <Counterfactual />
    </>
  );
}
