/** Formatting helpers: money (USD), percentages, times and counts, as the pages print them. */

const usdFmt = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
const usdCentsFmt = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const intFmt = new Intl.NumberFormat('en-US');

/** `$1,234.50`, up to four decimals (`$0.0012`, for per-action costs in tables); '—' for null or undefined. */
export function usd(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : usdFmt.format(v);
}

/**
 * USD rounded to cents for headline numbers: 383.0298 → `$383.03`; an amount that would round to zero but is not
 * (0.0042) → `<$0.01` (`-<$0.01` below zero); '—' for null. Show the exact value ({@link usd}) beside it, e.g. in a title.
 */
export function usdCents(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (v !== 0 && Math.abs(v) < 0.005) return `${v < 0 ? '-' : ''}<${usdCentsFmt.format(0.01)}`;
  return usdCentsFmt.format(v);
}

/** An integer with thousands separators; '—' for null. */
export function count(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : intFmt.format(v);
}

/**
 * A count with its noun in the right number: `plural(1, 'run')` → `1 run`, `plural(1234, 'run')` → `1,234 runs`,
 * `plural(2, 'policy', 'policies')` → `2 policies`. `many` defaults to `one` + "s". Null counts as 0.
 */
export function plural(n: number | null | undefined, one: string, many = `${one}s`): string {
  return `${count(n ?? 0)} ${n === 1 ? one : many}`;
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

/**
 * An ISO time relative to `now` (ms since the epoch), short enough for one line of a table: `just now`, `42 s ago`,
 * `12 min ago`, `3 h ago`, `6 d ago`, `in 2 h` (future times, e.g. an expiry); 30 days or more away, the date
 * (`25 Nov 2026`). '—' for null; an unparseable value is returned as is.
 */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  const abs = Math.abs(s);
  if (abs < 5) return 'just now';
  const [n, unit] = abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.floor(abs / 60), 'min'] : abs < 86_400 ? [Math.floor(abs / 3600), 'h'] : [Math.floor(abs / 86_400), 'd'];
  if (unit === 'd' && n >= 30) return new Date(t).toLocaleDateString('en-GB', { year: 'numeric', month: 'short', day: 'numeric' });
  return s >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
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
