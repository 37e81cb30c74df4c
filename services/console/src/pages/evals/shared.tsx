/**
 * Pieces the Evals and Benchmarks pages share: the tabs between history, comparison and benchmarks, a grade badge, a
 * short commit SHA, and percentage-point formatting of the API's deltas.
 */
import { NavLink } from 'react-router';

/** The address of the comparison of two eval runs (the API's compare endpoint, shown by the Evals page). */
export const compareHref = (baseline: string, current: string) => `/evals/compare?${new URLSearchParams({ baseline, current }).toString()}`;

/** A delta in percentage points as the API gives it (already in pp): `+1.25 pp`, `−13.33 pp`, `±0 pp`; '—' for null. */
export function pp(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (v === 0) return '±0 pp';
  return `${v > 0 ? '+' : '−'}${Math.abs(v).toFixed(2)} pp`;
}

/** A letter grade (A–F) as a badge: A and B green, C and D amber, F red. */
export function Grade({ grade }: { grade: string }) {
  const tone = grade === 'A' || grade === 'B' ? 'completed' : grade === 'F' ? 'failed' : 'pending';
  return (
    <span className={`tag tag-${tone}`}>
      {grade}
    </span>
  );
}

/** Links between the eval views: history, comparison, benchmarks. */
export function EvalsTabs() {
  return (
    <nav className="tabs" aria-label="Eval views">
      <NavLink to="/evals" end>
        History
      </NavLink>
      <NavLink to="/evals/compare">Compare</NavLink>
      <NavLink to="/evals/benchmarks">Benchmarks</NavLink>
    </nav>
  );
}

/** A commit SHA shortened to 10 characters (the whole one in its title). */
export function Commit({ sha }: { sha: string | null }) {
  return sha ? (
    <code title={sha} className="nowrap">
      {sha.slice(0, 10)}
    </code>
  ) : (
    <span className="muted">—</span>
  );
}
