/**
 * Overview (`/`): the dashboard numbers of `platform://stats/dashboard` (read through
 * `GET /api/v1/mcp/resources/{uri}`), the 30-day cost and runs chart (`GET /api/v1/stats/daily`), and interventions
 * per day by type as stacked bars (`GET /api/v1/interventions/stats`: its `time_series` of the last 30 days, each day
 * with its count per type). Source: spec §Stats, §Interventions (statistics).
 */
import { useMemo } from 'react';
import { Link } from 'react-router';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import { INTERVENTION_TYPES, type DashboardStats, type InterventionStats, type McpResourceContent, type StatsDaily } from '../../api/types.js';
import { Chart, type ChartSeries } from '../../components/Chart.js';
import { DataTable } from '../../components/DataTable.js';
import { count, label, pct, plural, usd, usdCents } from '../../components/format.js';
import { Loading, ProblemMessage, QueryState } from '../../components/States.js';
import { StatCard, StatCards } from '../../components/StatCard.js';
import { Money } from '../../components/Cells.js';

/** Path of the dashboard resource (the URI percent-encoded as one path segment). */
const DASHBOARD = `/api/v1/mcp/resources/${encodeURIComponent('platform://stats/dashboard')}`;

/** One colour per intervention type (distinct, dark enough on white). */
const TYPE_COLORS: Record<string, string> = {
  hard_block: '#b91c1c',
  approval_required: '#1d4ed8',
  rate_limited: '#7c3aed',
  budget_exceeded: '#c2410c',
  pii_blocked: '#be185d',
  content_blocked: '#0f766e',
  loop_detected: '#4d7c0f',
  idempotent_replay: '#475569',
  downgrade: '#a16207',
  warning: '#0369a1',
};

/** Unix seconds of a `YYYY-MM-DD` (UTC midnight). */
const daySeconds = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

function DashboardCards() {
  const q = useApiQuery<McpResourceContent & { data: DashboardStats }>(DASHBOARD);
  return (
    <QueryState query={q} what="dashboard numbers">
      {({ data: d }) => (
        <section aria-labelledby="numbers-heading">
          <h2 id="numbers-heading" className="visually-hidden">
            Dashboard numbers
          </h2>
          <StatCards>
            <StatCard label="Runs" value={count(d.total_runs)} />
            <StatCard label="Actions" value={count(d.total_actions)} />
            <StatCard label="Cost" value={<Money usd={d.total_cost_usd} />} />
            <StatCard label="Success rate" value={pct(d.success_rate)} />
            <StatCard label="Pending approvals" value={<Link to="/approvals">{count(d.pending_approvals)}</Link>} />
            <StatCard label="Interventions (24 h)" value={<Link to="/interventions">{count(d.interventions_24h)}</Link>} />
          </StatCards>
        </section>
      )}
    </QueryState>
  );
}

function DailyChart() {
  const q = useApiQuery<StatsDaily>('/api/v1/stats/daily');
  const chart = useMemo(() => {
    if (!q.data) return null;
    const days = q.data.days;
    const series: ChartSeries[] = [
      { label: 'Cost (USD)', values: days.map((d) => d.cost_usd), color: '#1d4ed8', bars: true, format: usd },
      { label: 'Runs', values: days.map((d) => d.runs), color: '#c2410c', right: true, format: count },
    ];
    return { x: days.map((d) => daySeconds(d.date)), series };
  }, [q.data]);
  return (
    <section className="panel" aria-labelledby="daily-heading">
      <h2 id="daily-heading">Cost and runs, last 30 days</h2>
      <QueryState query={q} what="daily stats" isEmpty={(d) => d.days.length === 0}>
        {(d) => {
          const cost = d.days.reduce((s, x) => s + x.cost_usd, 0);
          const runs = d.days.reduce((s, x) => s + x.runs, 0);
          return (
            <>
              <Chart summary={`Cost and runs per day from ${d.days[0]?.date} to ${d.days.at(-1)?.date}: ${usdCents(cost)} and ${plural(runs, 'run')} in total.`} x={chart!.x} series={chart!.series} yLabel="USD" y2Label="runs" />
              <p className="chart-legend-note">
                30 days: {usdCents(cost)} over {plural(runs, 'run')} (bars: cost per UTC day; line: runs started that day).
              </p>
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function InterventionsByType() {
  // Without dates the statistics cover the last 30 days, each day with its count per type.
  const q = useApiQuery<InterventionStats>('/api/v1/interventions/stats');
  const failed = q.error;
  const data = useMemo(() => {
    if (!q.data) return null;
    const days = q.data.time_series;
    // The most frequent type first: the bottom of each day's stack and the first row of the table.
    const totals = INTERVENTION_TYPES.map((t) => ({ type: t, total: days.reduce((s, d) => s + (d.by_type[t] ?? 0), 0) })).sort((a, b) => b.total - a.total);
    const shown = totals.filter((t) => t.total > 0);
    const series: ChartSeries[] = shown.map(({ type }) => ({ label: label(type), values: days.map((d) => d.by_type[type] ?? 0), color: TYPE_COLORS[type] ?? '#111827', format: count }));
    return { x: days.map((d) => daySeconds(d.date)), series, totals };
  }, [q.data]);
  return (
    <section className="panel" aria-labelledby="by-type-heading">
      <h2 id="by-type-heading">Interventions by type, last 30 days</h2>
      {failed ? <ProblemMessage error={failed} /> : !data ? <Loading what="interventions per day" /> : data.series.length === 0 ? (
        <p className="state state-empty">No interventions in the last 30 days.</p>
      ) : (
        <>
          <Chart
            summary={`Interventions per day by type over the last 30 days, stacked; most frequent: ${data.totals.filter((t) => t.total > 0).slice(0, 3).map((t) => `${label(t.type)} ${t.total}`).join(', ')}.`}
            x={data.x}
            series={data.series}
            yLabel="interventions"
            stacked
          />
          <DataTable
            caption="Interventions by type, last 30 days"
            columns={[
              { key: 'type', header: 'Type', cell: (r) => <Link to={`/interventions?type=${r.type}`}>{label(r.type)}</Link> },
              { key: 'total', header: 'Interventions', cell: (r) => count(r.total), numeric: true },
            ]}
            rows={data.totals.filter((t) => t.total > 0)}
            rowKey={(r) => r.type}
          />
        </>
      )}
    </section>
  );
}

/** The overview page. */
export function OverviewPage() {
  return (
    <>
      <PageHeader title="Overview">The fleet at a glance: runs, actions, cost, approvals and what the guardrails did.</PageHeader>
      <DashboardCards />
      <DailyChart />
      <InterventionsByType />
    </>
  );
}
