/** Headline numbers as a row of cards (dashboard numbers, a run's totals, aggregate skews). */
import { Children, useLayoutEffect, useRef, useState, type ReactNode } from 'react';

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

/** Narrowest a card may be, and the gap between cards, in rem (the gap matches `.cards` in styles.css). */
const CARD_MIN_REM = 9;
const CARD_GAP_REM = 0.75;

/**
 * Columns for `n` cards in `width` px: all in one row when they fit (each at least `min` px, `gap` px apart); else the
 * fewest rows that fit, with the cards spread evenly over them (6 cards where 5 fit → 2 rows of 3, not 5 and 1).
 */
export function cardColumns(n: number, width: number, min: number, gap: number): number {
  if (n <= 1) return 1;
  const fit = Math.max(1, Math.floor((width + gap) / (min + gap)));
  if (fit >= n) return n;
  return Math.ceil(n / Math.ceil(n / fit));
}

/**
 * A grid of {@link StatCard}s whose column count follows the number of cards and the width it has
 * ({@link cardColumns}), so no card is left alone on a last row when an even split exists; `label` names it as a
 * group, `testId` is its `data-testid` (tests).
 */
export function StatCards({ children, label, testId }: { children: ReactNode; label?: string; testId?: string }) {
  const n = Children.toArray(children).length;
  const box = useRef<HTMLDivElement>(null);
  const [columns, setColumns] = useState(n);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const fit = () => {
      const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
      setColumns(cardColumns(n, el.clientWidth, CARD_MIN_REM * rem, CARD_GAP_REM * rem));
    };
    fit();
    const ro = new ResizeObserver(fit);
    ro.observe(el);
    return () => ro.disconnect();
  }, [n]);
  return (
    <div
      ref={box}
      className="cards"
      style={{ gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))` }}
      data-columns={columns}
      role={label ? 'group' : undefined}
      aria-label={label}
      data-testid={testId}
    >
      {children}
    </div>
  );
}
