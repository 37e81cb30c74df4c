/**
 * Benchmarks (`/evals/benchmarks`): `GET /api/v1/evals/benchmarks` — per suite and agent, the trend of the last N runs
 * (oldest first), the best and the latest run. Filters (suite, agent, N as `runs`) and the page of (suite, agent) pairs
 * live in the URL. Each pair has a uPlot chart of block rate and correctness (in %) over time, and the same points as a
 * table, since a canvas is not readable by everyone. Source: spec §Evals (benchmarks).
 */
import { useMemo } from 'react';
import { Link } from 'react-router';
import type { EvalBenchmarks } from '@agp/contracts';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import { Chart, type ChartSeries } from '../../components/Chart.js';
import { DataTable, Pagination } from '../../components/DataTable.js';
import { FilterBar, type FilterField } from '../../components/FilterBar.js';
import { count, pct, plural } from '../../components/format.js';
import { Time, Truncate } from '../../components/Cells.js';
import { QueryState } from '../../components/States.js';
import { usePaging, useUrlFilters } from '../../components/url.js';
import { Commit, compareHref, EvalsTabs, Grade } from './shared.js';
import './areas.css';

const FIELDS: FilterField[] = [
  { name: 'suite', label: 'Suite', kind: 'text' },
  { name: 'agent_id', label: 'Agent', kind: 'text' },
  { name: 'runs', label: 'Runs per trend (1–100)', kind: 'number' },
];
const NAMES = FIELDS.map((f) => f.name);

/** One (suite, agent) pair of the answer. */
type Benchmark = EvalBenchmarks['benchmarks'][number];

/** A rate 0..1 as a percentage number for the chart (null stays a gap). */
const asPct = (v: number | null) => (v === null ? null : Math.round(v * 10_000) / 100);

/** The chart and table of one pair's trend. */
function Trend({ b }: { b: Benchmark }) {
  const x = useMemo(() => b.trend.map((p) => Date.parse(p.created_at) / 1000), [b]);
  const series = useMemo<ChartSeries[]>(
    () => [
      { label: 'Block rate', values: b.trend.map((p) => asPct(p.block_rate)), color: '#b91c1c', format: (v) => `${v.toFixed(1)}%` },
      { label: 'Correctness', values: b.trend.map((p) => asPct(p.correctness_rate)), color: '#1d4ed8', format: (v) => `${v.toFixed(1)}%` },
    ],
    [b],
  );
  const first = b.trend[0];
  const last = b.trend[b.trend.length - 1];
  const headingId = `bench-${b.suite}-${b.agent_id}`.replace(/[^\w-]+/g, '-');
  return (
    <section className="panel" aria-labelledby={headingId} data-testid="benchmark">
      <h2 id={headingId}>
        {b.suite} · {b.agent_id}
      </h2>
      <p className="muted">
        {plural(b.total_runs, 'run')} in all{b.trend.length < b.total_runs ? `; the last ${count(b.trend.length)} shown` : ''}. Latest: <Link to={`/evals/${encodeURIComponent(b.latest.id)}`}>{b.latest.id}</Link> (grade{' '}
        {b.latest.grade}, block rate {pct(b.latest.block_rate)}). Best: <Link to={`/evals/${encodeURIComponent(b.best.id)}`}>{b.best.id}</Link> (grade {b.best.grade}, block
        rate {pct(b.best.block_rate)}).
        {first && last && first.id !== last.id ? (
          <>
            {' '}
            <Link to={compareHref(first.id, last.id)}>Compare the first and last run shown</Link>.
          </>
        ) : null}
      </p>
      <Chart
        summary={
          b.trend.length === 1
            ? `Block rate and correctness of suite ${b.suite} for agent ${b.agent_id}: one run, ${pct(first?.block_rate)} block rate.`
            : `Block rate and correctness of suite ${b.suite} for agent ${b.agent_id} over its last ${b.trend.length} runs, from ${pct(first?.block_rate)} to ${pct(last?.block_rate)} block rate.`
        }
        x={x}
        series={series}
        yLabel="%"
        height={200}
      />
      <DataTable
        caption={`Trend of ${b.suite} for ${b.agent_id}, oldest first`}
        rows={b.trend}
        rowKey={(p) => p.id}
        columns={[
          { key: 'date', header: 'Date', cell: (p) => <Time iso={p.created_at} /> },
          {
            key: 'id',
            header: 'Run',
            cell: (p) => (
              <Link to={`/evals/${encodeURIComponent(p.id)}`}>
                <Truncate text={p.id} />
              </Link>
            ),
          },
          { key: 'branch', header: 'Branch', cell: (p) => <Truncate text={p.branch} width="name" /> },
          { key: 'commit', header: 'Commit', cell: (p) => <Commit sha={p.commit_sha} /> },
          { key: 'grade', header: 'Grade', cell: (p) => <Grade grade={p.grade} /> },
          { key: 'block', header: 'Block rate', cell: (p) => pct(p.block_rate), numeric: true },
          { key: 'correct', header: 'Correctness', cell: (p) => pct(p.correctness_rate), numeric: true },
        ]}
      />
    </section>
  );
}

/** The Benchmarks page. */
export function BenchmarksPage() {
  const { values, set } = useUrlFilters(NAMES);
  const { skip, limit, setSkip } = usePaging(20);
  const q = useApiQuery<EvalBenchmarks>('/api/v1/evals/benchmarks', { ...values, skip, limit });
  return (
    <>
      <PageHeader title="Benchmarks">The trend of each suite and agent: block rate and correctness of its most recent eval runs.</PageHeader>
      <EvalsTabs />
      <FilterBar fields={FIELDS} values={values} onChange={(name, value) => set({ [name]: value })} onClear={() => set(Object.fromEntries(NAMES.map((n) => [n, ''])))} />
      <QueryState query={q} what="benchmarks" isEmpty={(d) => d.total === 0} empty="No eval runs match these filters yet, so there is no trend to show.">
        {(d) => (
          <>
            <p className="muted result-count" data-testid="result-count">
              {plural(d.total, 'suite and agent pair')}
            </p>
            <DataTable
              caption="Suites and agents"
              rows={d.benchmarks}
              rowKey={(b) => `${b.suite} ${b.agent_id}`}
              columns={[
                { key: 'suite', header: 'Suite', cell: (b) => <Truncate text={b.suite} width="name" /> },
                { key: 'agent', header: 'Agent', cell: (b) => <Truncate text={b.agent_id} width="name" /> },
                { key: 'runs', header: 'Runs', cell: (b) => count(b.total_runs), numeric: true },
                { key: 'latest', header: 'Latest grade', cell: (b) => <Grade grade={b.latest.grade} /> },
                { key: 'lblock', header: 'Latest block rate', cell: (b) => pct(b.latest.block_rate), numeric: true },
                { key: 'lcorrect', header: 'Latest correctness', cell: (b) => pct(b.latest.correctness_rate), numeric: true },
                { key: 'best', header: 'Best grade', cell: (b) => <Grade grade={b.best.grade} /> },
              ]}
            />
            {d.benchmarks.map((b) => (
              <Trend key={`${b.suite} ${b.agent_id}`} b={b} />
            ))}
            {/* A page holds fewer pairs than `limit` when more would not fit one answer: the next page starts after those shown. */}
            <Pagination total={d.total} skip={d.skip} limit={d.benchmarks.length || d.limit} onSkip={setSkip} />
          </>
        )}
      </QueryState>
    </>
  );
}
