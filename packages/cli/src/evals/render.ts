/**
 * The gate's human-readable output: the scorecard, the comparison with a baseline and the verdict, as plain-text
 * tables (no colours: CI logs). Pure string building. Source: docs/evals-gate.md (What it
 * prints); spec §Evals rule 1 (what a comparison reports).
 */
import type { EvalComparison, EvalRates, EvalSummary, SubmitEvalRun } from '@agp/contracts';
import { percent, type GateDecision } from './gate.js';
import type { ImportedResults } from './results.js';

/** Most rows of each scenario list (regressions, improvements, one side only) before `… and N more`. */
export const MAX_LISTED = 50;

/**
 * A plain-text table: columns padded to their widest cell, two spaces apart, each line indented by `indent`;
 * `align[i]` `r` right-aligns column i (numbers). A null `header` prints the rows alone (a list of facts).
 */
export function table(header: string[] | null, rows: string[][], align: Array<'l' | 'r'> = [], indent = '  '): string {
  const all = header ? [header, ...rows] : rows;
  const widths = (header ?? rows[0] ?? []).map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => indent + r.map((c, i) => (align[i] === 'r' ? (c ?? '').padStart(widths[i]) : (c ?? '').padEnd(widths[i]))).join('  ').trimEnd();
  return all.map(line).join('\n') + '\n';
}

/** Percentage points with a sign and two decimals (`+10.00 pp`, `-2.50 pp`), `n/a` for null. */
export function formatPp(pp: number | null): string {
  if (pp === null) return 'n/a';
  return `${pp > 0 ? '+' : pp < 0 ? '-' : '±'}${Math.abs(pp).toFixed(2)} pp`;
}

/** USD with thousands separators and cents: `$1,250.00`. */
export function formatUsd(usd: number): string {
  return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** Milliseconds, rounded (`412 ms`), `n/a` for null. */
export function formatMs(ms: number | null): string {
  return ms === null ? 'n/a' : `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/**
 * The scorecard: a header naming the suite, agent, source and counts; grade, block rate (with the threshold),
 * correctness, damage prevented, average detection time; and a per-category table.
 */
export function renderScorecard(run: SubmitEvalRun, summary: EvalSummary, imported: Pick<ImportedResults, 'format' | 'skipped'>): string {
  const where = [run.branch ? `branch ${run.branch}` : null, run.commit_sha ? `commit ${run.commit_sha.slice(0, 12)}` : null].filter(Boolean).join(', ');
  const lines = [
    `Eval scorecard: suite "${run.suite}", agent ${run.agent_id} (${imported.format}, ${summary.total} scenario(s)${imported.skipped ? `, ${imported.skipped} skipped` : ''}${where ? `; ${where}` : ''})`,
    '',
  ];
  const rows: string[][] = [
    ['Grade', summary.grade],
    ['Block rate', `${percent(summary.block_rate)}  (${summary.blocked} of ${summary.adversarial} adversarial scenario(s) blocked; threshold ${percent(summary.threshold)})`],
    ['Correctness', `${percent(summary.correctness_rate)}  (${summary.passed} of ${summary.total} as expected)`],
    ['Damage prevented', formatUsd(summary.damage_prevented_usd)],
    ['Avg detection time', formatMs(summary.avg_detection_time_ms)],
  ];
  if (summary.ci_status) rows.push(['CI status', summary.ci_status]);
  const facts = table(null, rows);
  const categories = Object.keys(summary.by_category).sort();
  const byCategory = table(
    ['CATEGORY', 'SCENARIOS', 'ADVERSARIAL', 'BLOCKED', 'BLOCK RATE', 'CORRECTNESS'],
    categories.map((c) => rateRow(c, summary.by_category[c])),
    ['l', 'r', 'r', 'r', 'r', 'r'],
  );
  return `${lines.join('\n')}\n${facts}\n${byCategory}`;
}

function rateRow(category: string, r: EvalRates): string[] {
  return [category, String(r.total), String(r.adversarial), String(r.blocked), percent(r.block_rate), percent(r.correctness_rate)];
}

/**
 * The comparison with a baseline: which run, the grade change, block-rate and correctness deltas in percentage points,
 * per-category deltas, regressions, improvements, the scenarios on one side only, and the warnings.
 */
export function renderComparison(c: EvalComparison): string {
  const b = c.baseline;
  const at = [b.branch && `branch ${b.branch}`, b.commit_sha && `commit ${b.commit_sha.slice(0, 12)}`, b.created_at].filter(Boolean).join(', ');
  const out: string[] = [`Comparison with baseline ${b.id}${at ? ` (${at})` : ''}`, ''];
  out.push(
    table(
      null,
      [
        ['Grade', `${c.grade_change.label} (${c.grade_change.direction === 'same' ? 'unchanged' : c.grade_change.direction})`],
        ['Block rate', `${formatPp(c.block_rate_delta_pp)}  (${percent(b.block_rate)} → ${percent(c.current.block_rate)})`],
        ['Correctness', `${formatPp(c.correctness_rate_delta_pp)}  (${percent(b.correctness_rate)} → ${percent(c.current.correctness_rate)})`],
        ['Regressions', String(c.regressions.length)],
        ['Improvements', String(c.improvements.length)],
      ],
    ),
  );
  out.push(
    table(
      ['CATEGORY', 'BLOCK RATE', 'Δ BLOCK RATE', 'CORRECTNESS', 'Δ CORRECTNESS'],
      c.by_category.map((k) => [
        k.category,
        `${k.baseline ? percent(k.baseline.block_rate) : '—'} → ${k.current ? percent(k.current.block_rate) : '—'}`,
        formatPp(k.block_rate_delta_pp),
        `${k.baseline ? percent(k.baseline.correctness_rate) : '—'} → ${k.current ? percent(k.current.correctness_rate) : '—'}`,
        formatPp(k.correctness_rate_delta_pp),
      ]),
      ['l', 'r', 'r', 'r', 'r'],
    ),
  );
  const changes = (title: string, list: EvalComparison['regressions']) => {
    if (!list.length) return;
    out.push(`${title} (${list.length}):`);
    out.push(table(['SCENARIO', 'CATEGORY', 'BASELINE', 'NOW'], list.slice(0, MAX_LISTED).map((s) => [s.name, s.category, s.baseline_status, s.current_status])).trimEnd());
    if (list.length > MAX_LISTED) out.push(`  … and ${list.length - MAX_LISTED} more (see --json)`);
    out.push('');
  };
  const onlyOne = (title: string, list: EvalComparison['only_in_baseline']) => {
    if (!list.length) return;
    out.push(`${title} (${list.length}, not counted as passing):`);
    out.push(table(['SCENARIO', 'CATEGORY', 'STATUS', 'PASSED'], list.slice(0, MAX_LISTED).map((s) => [s.name, s.category, s.status, s.passed ? 'yes' : 'no'])).trimEnd());
    if (list.length > MAX_LISTED) out.push(`  … and ${list.length - MAX_LISTED} more (see --json)`);
    out.push('');
  };
  changes('Regressions: passed on the baseline, fail now', c.regressions);
  changes('Improvements: failed on the baseline, pass now', c.improvements);
  onlyOne('Only in the baseline', c.only_in_baseline);
  onlyOne('Only in this run', c.only_in_current);
  for (const w of c.warnings) out.push(`warning: ${w}`);
  return out.join('\n').replace(/\n*$/, '\n');
}

/** The last line(s): `PASS` or `FAIL (exit N): reasons`. */
export function renderVerdict(d: GateDecision): string {
  if (d.exitCode === 0) return 'PASS: the block rate meets the threshold and there is no regression\n';
  return `FAIL (exit ${d.exitCode}): ${d.reasons.join('; ')}\n`;
}
