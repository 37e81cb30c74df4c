/** Formatting helpers: money (USD), percentages, times and counts, as the pages print them. */

const usdFmt = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
const intFmt = new Intl.NumberFormat('en-US');

/** `$1,234.50`; '—' for null or undefined. */
export function usd(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : usdFmt.format(v);
}

/** An integer with thousands separators; '—' for null. */
export function count(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : intFmt.format(v);
}

/** A fraction as a percentage: 0.953 → `95.3%`; '—' for null. */
export function pct(v: number | null | undefined, digits = 1): string {
  return v === null || v === undefined ? '—' : `${(v * 100).toFixed(digits)}%`;
}

/** An ISO time in the reader's locale, to the second (UTC shown in the title by callers); '—' for null. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Milliseconds as `850 ms`, `12.3 s` or `4.1 min`; '—' for null. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** `snake_case` → `snake case`, for enum values shown as labels. */
export function label(v: string | null | undefined): string {
  return v ? v.replace(/_/g, ' ') : '—';
}
