/**
 * Evals (`/evals` and its sub-paths, read from `useParams()['*']`):
 * - `/evals`: the run history (`GET /api/v1/evals/` with suite, agent and branch filters in the URL, paged
 *   server-side): grade, block rate, correctness, damage prevented (USD), average detection time, CI status, branch,
 *   commit and date; tick two runs to compare them.
 * - `/evals/<id>`: one run's scorecard (`GET /api/v1/evals/{id}`): its summary, per-category rates and scenarios
 *   (category, severity, blocked or failed, reason, detection time).
 * - `/evals/compare?baseline=<id>&current=<id>`: the API's own comparison (`GET /api/v1/evals/compare/{baseline_id}/
 *   {current_id}`), shown as it answers it: deltas in percentage points, the grade change, regressions, improvements,
 *   scenarios on one side only, per-category deltas and warnings. Nothing is recomputed in the browser.
 * Source: spec §Evals; packages/contracts/src/evals.ts.
 */
import { useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import type { EvalComparison, EvalRun, EvalRunDetail } from '@agp/contracts';
import { PageHeader } from '../../components/PageHeader.js';
import { useApiQuery } from '../../api/hooks.js';
import type { Page } from '../../api/types.js';
import { DataTable, Pagination, type Column } from '../../components/DataTable.js';
import { FilterBar, type FilterField } from '../../components/FilterBar.js';
import { count, duration, label, pct, plural, usd, when } from '../../components/format.js';
import { Money, Time, Truncate } from '../../components/Cells.js';
import { LongText } from '../../components/LongText.js';
import { Empty, QueryState } from '../../components/States.js';
import { StatCard, StatCards } from '../../components/StatCard.js';
import { Tag } from '../../components/Tag.js';
import { usePaging, useUrlFilters } from '../../components/url.js';
import { Commit, compareHref, EvalsTabs, Grade, pp } from './shared.js';
import './areas.css';

const FIELDS: FilterField[] = [
  { name: 'suite', label: 'Suite', kind: 'text' },
  { name: 'agent_id', label: 'Agent', kind: 'text' },
  { name: 'branch', label: 'Branch', kind: 'text' },
];
const NAMES = FIELDS.map((f) => f.name);

/** The address of one run's scorecard. */
const runHref = (id: string) => `/evals/${encodeURIComponent(id)}`;

/** Runs sorted oldest first (the baseline of a comparison is the older run). */
const oldestFirst = (runs: EvalRun[]) => [...runs].sort((x, y) => x.created_at.localeCompare(y.created_at));

/** The history: filters, the page of runs, and the choice of two runs to compare. */
function History() {
  const { values, set } = useUrlFilters(NAMES);
  const { skip, limit, setSkip } = usePaging(50);
  const q = useApiQuery<Page<'eval_runs', EvalRun>>('/api/v1/evals/', { ...values, skip, limit });
  const [picked, setPicked] = useState<EvalRun[]>([]);
  const navigate = useNavigate();
  const toggle = (r: EvalRun) => setPicked((p) => (p.some((x) => x.id === r.id) ? p.filter((x) => x.id !== r.id) : [...p, r].slice(-2)));
  const compare = () => {
    const [a, b] = oldestFirst(picked);
    navigate(compareHref(a!.id, b!.id));
  };
  return (
    <>
      <FilterBar fields={FIELDS} values={values} onChange={(name, value) => set({ [name]: value })} onClear={() => set(Object.fromEntries(NAMES.map((n) => [n, ''])))} />
      <div className="actions-row" aria-live="polite">
        <button type="button" className="primary" disabled={picked.length !== 2} onClick={compare}>
          Compare selected runs
        </button>
        <span className="muted">
          {picked.length === 2 ? `The older run (${oldestFirst(picked)[0]!.id}) is the baseline.` : `Tick two runs to compare them (${picked.length} of 2 ticked).`}
        </span>
      </div>
      <QueryState query={q} what="eval runs" isEmpty={(d) => d.total === 0} empty="No eval runs match these filters. Submit one with `agp evals gate --upload` or POST /api/v1/evals/.">
        {(d) => (
          <>
            <p className="muted result-count" data-testid="result-count">
              {plural(d.total, 'eval run')}
            </p>
            <DataTable
              caption="Eval runs, newest first"
              rows={d.eval_runs}
              rowKey={(r) => r.id}
              columns={[
                {
                  key: 'pick',
                  header: <span className="visually-hidden">Compare</span>,
                  cell: (r) => (
                    <input type="checkbox" aria-label={`Compare run ${r.id}`} checked={picked.some((p) => p.id === r.id)} onChange={() => toggle(r)} />
                  ),
                },
                {
                  key: 'id',
                  header: 'Run (suite · agent)',
                  cell: (r) => (
                    <>
                      <Link to={runHref(r.id)}>
                        <Truncate text={r.id} />
                      </Link>
                      <span className="sub-line">
                        <Truncate text={`${r.suite} · ${r.agent_id}`} />
                      </span>
                    </>
                  ),
                },
                { key: 'grade', header: 'Grade', cell: (r) => <Grade grade={r.summary.grade} /> },
                { key: 'block', header: 'Block rate', cell: (r) => pct(r.summary.block_rate), numeric: true },
                { key: 'correct', header: 'Correctness', cell: (r) => pct(r.summary.correctness_rate), numeric: true },
                { key: 'damage', header: 'Damage prevented', cell: (r) => usd(r.summary.damage_prevented_usd), numeric: true },
                { key: 'detect', header: 'Avg detection', cell: (r) => duration(r.summary.avg_detection_time_ms), numeric: true },
                { key: 'ci', header: 'CI', cell: (r) => <Tag value={r.summary.ci_status} /> },
                { key: 'branch', header: 'Branch', cell: (r) => <Truncate text={r.branch} width="name" /> },
                { key: 'commit', header: 'Commit', cell: (r) => <Commit sha={r.commit_sha} /> },
                { key: 'date', header: 'Date', cell: (r) => <Time iso={r.created_at} /> },
              ]}
            />
            <Pagination total={d.total} skip={d.skip} limit={d.limit} onSkip={setSkip} />
          </>
        )}
      </QueryState>
    </>
  );
}

/** Rates of one category as a table row's cells. */
type Rates = EvalRun['summary']['by_category'][string];

/** One run's scorecard. */
function Scorecard({ id }: { id: string }) {
  const q = useApiQuery<EvalRunDetail>(`/api/v1/evals/${encodeURIComponent(id)}`);
  return (
    <QueryState query={q} what="scorecard">
      {(r) => {
        const s = r.summary;
        return (
          <>
            <StatCards testId="scorecard-summary">
              <StatCard label="Grade" value={<Grade grade={s.grade} />} />
              <StatCard label="Block rate" value={pct(s.block_rate)} />
              <StatCard label="Correctness" value={pct(s.correctness_rate)} />
              <StatCard label="Damage prevented" value={<Money usd={s.damage_prevented_usd} />} />
              <StatCard label="Avg detection time" value={duration(s.avg_detection_time_ms)} />
              <StatCard label="CI status" value={s.ci_status ? <Tag value={s.ci_status} /> : '—'} />
            </StatCards>
            <section className="panel" aria-labelledby="run-heading">
              <h2 id="run-heading">Run</h2>
              <dl className="fields">
                <dt>Suite</dt>
                <dd>{r.suite}</dd>
                <dt>Agent</dt>
                <dd>{r.agent_id}</dd>
                <dt>Branch</dt>
                <dd>
                  {r.branch ?? '—'} <span className="muted">(default branch {r.default_branch})</span>
                </dd>
                <dt>Commit</dt>
                <dd>{r.commit_sha ?? '—'}</dd>
                <dt>Source</dt>
                <dd>{r.source}</dd>
                <dt>Submitted</dt>
                <dd title={r.created_at}>{when(r.created_at)}</dd>
                <dt>Scenarios</dt>
                <dd>
                  {count(s.total)} ({count(s.adversarial)} adversarial, {count(s.blocked)} blocked, {count(s.passed)} passed)
                </dd>
                <dt>CI threshold</dt>
                <dd>{pct(s.threshold)} block rate</dd>
                <dt>CI baseline</dt>
                <dd>
                  {s.ci_baseline_id ? (
                    <>
                      <Link to={runHref(s.ci_baseline_id)}>{s.ci_baseline_id}</Link> — {plural(s.regressions, 'regression')} ·{' '}
                      <Link to={compareHref(s.ci_baseline_id, r.id)}>compare with it</Link>
                    </>
                  ) : (
                    'none'
                  )}
                </dd>
              </dl>
            </section>
            <h2>By category</h2>
            <DataTable
              caption="Rates per category"
              rows={Object.entries(s.by_category).sort(([a], [b]) => a.localeCompare(b))}
              rowKey={([c]) => c}
              columns={[
                { key: 'category', header: 'Category', cell: ([c]) => label(c) },
                { key: 'total', header: 'Scenarios', cell: ([, x]: [string, Rates]) => count(x.total), numeric: true },
                { key: 'blocked', header: 'Blocked', cell: ([, x]: [string, Rates]) => count(x.blocked), numeric: true },
                { key: 'block', header: 'Block rate', cell: ([, x]: [string, Rates]) => pct(x.block_rate), numeric: true },
                { key: 'correct', header: 'Correctness', cell: ([, x]: [string, Rates]) => pct(x.correctness_rate), numeric: true },
              ]}
            />
            <h2>Scenarios</h2>
            {r.scenarios.length === 0 ? (
              <Empty>This run has no scenarios.</Empty>
            ) : (
              <DataTable
                caption="Scenarios of this run"
                rows={r.scenarios}
                rowKey={(x) => x.name}
                columns={[
                  { key: 'name', header: 'Scenario', cell: (x) => <Truncate text={x.name} /> },
                  { key: 'category', header: 'Category', cell: (x) => label(x.category) },
                  { key: 'severity', header: 'Severity', cell: (x) => <Tag value={x.severity} /> },
                  { key: 'expected', header: 'Expected', cell: (x) => x.expected },
                  { key: 'status', header: 'Result', cell: (x) => <Tag value={x.status} /> },
                  { key: 'reason', header: 'Reason', wrap: true, cell: (x) => <LongText text={x.reason} foldAt={200} /> },
                  { key: 'detect', header: 'Detection time', cell: (x) => duration(x.detection_time_ms), numeric: true },
                  { key: 'damage', header: 'Damage', cell: (x) => usd(x.damage_usd), numeric: true },
                ]}
              />
            )}
          </>
        );
      }}
    </QueryState>
  );
}

/** A scenario row of a comparison list: its name and category, and whatever else the list shows. */
type ScenarioRow = { name: string; category: string };

/**
 * Scenarios of a comparison (regressions, improvements, or those in one run only) as the API lists them: name and
 * category, then `more` columns; "None." when the list is empty.
 */
function ScenarioList<T extends ScenarioRow>({ caption, rows, more, testid }: { caption: string; rows: T[]; more: Column<T>[]; testid?: string }) {
  if (rows.length === 0) return <Empty>None.</Empty>;
  return (
    <div data-testid={testid}>
      <DataTable
        caption={caption}
        rows={rows}
        rowKey={(x) => x.name}
        columns={[
          { key: 'name', header: 'Scenario', cell: (x) => <Truncate text={x.name} /> },
          { key: 'category', header: 'Category', cell: (x) => label(x.category) },
          ...more,
        ]}
      />
    </div>
  );
}

/** Columns of a scenario that changed status: before and after. */
const CHANGE_COLUMNS: Column<EvalComparison['regressions'][number]>[] = [
  { key: 'before', header: 'Baseline', cell: (x) => <Tag value={x.baseline_status} /> },
  { key: 'after', header: 'Current', cell: (x) => <Tag value={x.current_status} /> },
];

/** Columns of a scenario in one run only: its result and whether it passed. */
const ONLY_COLUMNS: Column<EvalComparison['only_in_current'][number]>[] = [
  { key: 'status', header: 'Result', cell: (x) => <Tag value={x.status} /> },
  { key: 'passed', header: 'Passed', cell: (x) => (x.passed ? 'yes' : 'no') },
];

/** The two run ids of a comparison, editable (baseline and current), kept in the URL. */
function ComparePicker({ baseline, current }: { baseline: string; current: string }) {
  const [, setParams] = useSearchParams();
  const [a, setA] = useState(baseline);
  const [b, setB] = useState(current);
  return (
    <form
      className="filter-bar"
      aria-label="Runs to compare"
      onSubmit={(e) => {
        e.preventDefault();
        setParams({ baseline: a.trim(), current: b.trim() });
      }}
    >
      <div className="filter">
        <label htmlFor="compare-baseline">Baseline run</label>
        <input id="compare-baseline" value={a} onChange={(e) => setA(e.target.value)} />
      </div>
      <div className="filter">
        <label htmlFor="compare-current">Current run</label>
        <input id="compare-current" value={b} onChange={(e) => setB(e.target.value)} />
      </div>
      <div className="filter filter-actions">
        <button type="submit" className="primary" disabled={!a.trim() || !b.trim()}>
          Compare
        </button>
      </div>
      <div className="filter filter-actions">
        <button type="button" onClick={() => setParams({ baseline: current, current: baseline })} disabled={!baseline || !current}>
          Swap
        </button>
      </div>
    </form>
  );
}

/** The comparison of two runs, exactly as `GET /api/v1/evals/compare/{baseline_id}/{current_id}` answers it. */
function Compare() {
  const [params] = useSearchParams();
  const baseline = params.get('baseline') ?? '';
  const current = params.get('current') ?? '';
  const q = useApiQuery<EvalComparison>(baseline && current ? `/api/v1/evals/compare/${encodeURIComponent(baseline)}/${encodeURIComponent(current)}` : null);
  return (
    <>
      <ComparePicker key={`${baseline}|${current}`} baseline={baseline} current={current} />
      {!baseline || !current ? (
        <Empty>
          Name a baseline and a current run, or tick two runs in the <Link to="/evals">history</Link>.
        </Empty>
      ) : (
        <QueryState query={q} what="comparison">
          {(c) => (
            <>
              {c.warnings.length ? (
                <div className="notice" data-testid="compare-warnings">
                  <ul className="area-list">
                    {c.warnings.map((w) => (
                      <li key={w}>{w}</li>
                    ))}
                  </ul>
                </div>
              ) : null}
              <StatCards testId="compare-summary">
                <StatCard label="Grade change" value={<>{c.grade_change.label} <span className="muted">({c.grade_change.direction === 'same' ? 'unchanged' : c.grade_change.direction})</span></>} />
                <StatCard label="Block rate" value={pp(c.block_rate_delta_pp)} />
                <StatCard label="Correctness" value={pp(c.correctness_rate_delta_pp)} />
                <StatCard label="Regressions" value={count(c.regressions.length)} />
                <StatCard label="Improvements" value={count(c.improvements.length)} />
              </StatCards>
              <DataTable
                caption="The two runs"
                rows={[
                  { side: 'Baseline', ...c.baseline },
                  { side: 'Current', ...c.current },
                ]}
                rowKey={(r) => r.side}
                columns={[
                  { key: 'side', header: 'Side', cell: (r) => <span className="nowrap">{r.side}</span> },
                  {
                    key: 'id',
                    header: 'Run',
                    cell: (r) => (
                      <Link to={runHref(r.id)}>
                        <Truncate text={r.id} />
                      </Link>
                    ),
                  },
                  { key: 'suite', header: 'Suite', cell: (r) => <Truncate text={r.suite} width="name" /> },
                  { key: 'agent', header: 'Agent', cell: (r) => <Truncate text={r.agent_id} width="name" /> },
                  { key: 'branch', header: 'Branch', cell: (r) => <Truncate text={r.branch} width="name" /> },
                  { key: 'commit', header: 'Commit', cell: (r) => <Commit sha={r.commit_sha} /> },
                  { key: 'grade', header: 'Grade', cell: (r) => <Grade grade={r.grade} /> },
                  { key: 'block', header: 'Block rate', cell: (r) => pct(r.block_rate), numeric: true },
                  { key: 'correct', header: 'Correctness', cell: (r) => pct(r.correctness_rate), numeric: true },
                  { key: 'date', header: 'Date', cell: (r) => <Time iso={r.created_at} /> },
                ]}
              />
              <h2>Regressions ({count(c.regressions.length)})</h2>
              <p className="muted">Passed on the baseline, fail now.</p>
              <ScenarioList caption="Regressions" rows={c.regressions} more={CHANGE_COLUMNS} testid="regressions" />
              <h2>Improvements ({count(c.improvements.length)})</h2>
              <p className="muted">Failed on the baseline, pass now.</p>
              <ScenarioList caption="Improvements" rows={c.improvements} more={CHANGE_COLUMNS} testid="improvements" />
              <h2>Only in one run</h2>
              <div className="two-col">
                <section aria-labelledby="only-baseline">
                  <h3 id="only-baseline">Only in the baseline ({count(c.only_in_baseline.length)})</h3>
                  <ScenarioList caption="Scenarios only in the baseline" rows={c.only_in_baseline} more={ONLY_COLUMNS} />
                </section>
                <section aria-labelledby="only-current">
                  <h3 id="only-current">Only in the current run ({count(c.only_in_current.length)})</h3>
                  <ScenarioList caption="Scenarios only in the current run" rows={c.only_in_current} more={ONLY_COLUMNS} />
                </section>
              </div>
              <h2>By category</h2>
              <DataTable
                caption="Deltas per category, in percentage points"
                rows={c.by_category}
                rowKey={(x) => x.category}
                columns={[
                  { key: 'category', header: 'Category', cell: (x) => label(x.category) },
                  { key: 'bb', header: 'Block (baseline)', cell: (x) => pct(x.baseline?.block_rate), numeric: true },
                  { key: 'cb', header: 'Block (current)', cell: (x) => pct(x.current?.block_rate), numeric: true },
                  { key: 'db', header: 'Δ block rate', cell: (x) => pp(x.block_rate_delta_pp), numeric: true },
                  { key: 'bc', header: 'Correct (baseline)', cell: (x) => pct(x.baseline?.correctness_rate), numeric: true },
                  { key: 'cc', header: 'Correct (current)', cell: (x) => pct(x.current?.correctness_rate), numeric: true },
                  { key: 'dc', header: 'Δ correct', cell: (x) => pp(x.correctness_rate_delta_pp), numeric: true },
                ]}
              />
            </>
          )}
        </QueryState>
      )}
    </>
  );
}

/** The Evals page: the history, one run's scorecard (`/evals/<id>`) or a comparison (`/evals/compare`). */
export function EvalsPage() {
  const sub = useParams()['*'] ?? '';
  if (sub === 'compare')
    return (
      <>
        <PageHeader title="Compare eval runs">The API's comparison of a baseline and a current run: deltas in percentage points, regressions and improvements.</PageHeader>
        <EvalsTabs />
        <Compare />
      </>
    );
  if (sub)
    return (
      <>
        <PageHeader title={`Eval run ${sub}`}>
          <Link to="/evals">← all eval runs</Link>
        </PageHeader>
        <Scorecard id={sub} />
      </>
    );
  return (
    <>
      <PageHeader title="Evals">Eval runs submitted by harnesses and CI jobs, newest first, with the scorecard the platform computed.</PageHeader>
      <EvalsTabs />
      <History />
    </>
  );
}
