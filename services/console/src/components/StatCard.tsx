/** Headline numbers as a row of cards (dashboard numbers, a run's totals, aggregate skews). */
import type { ReactNode } from 'react';

/** One number with its label; `value` may be a link. `data-card` carries the label for tests. */
export function StatCard({ label, value }: { label: string; value: ReactNode }) {
  return (
    <div className="card">
      <p className="card-label">{label}</p>
      <p className="card-value" data-card={label}>
        {value}
      </p>
    </div>
  );
}

/** A responsive grid of {@link StatCard}s; `label` names it as a group, `testId` is its `data-testid` (tests). */
export function StatCards({ children, label, testId }: { children: ReactNode; label?: string; testId?: string }) {
  return (
    <div className="cards" role={label ? 'group' : undefined} aria-label={label} data-testid={testId}>
      {children}
    </div>
  );
}
