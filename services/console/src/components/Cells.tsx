/**
 * One-line values for table cells, so that a row stays one line high and nothing breaks mid-word:
 * {@link Truncate} shortens an id, a name or a sentence with an ellipsis (the whole value in its title, and in the
 * text that screen readers and copy-paste get), and {@link Time} prints a time relative to now with the absolute time
 * on hover; {@link Money} rounds a headline amount to cents with the exact amount on hover.
 */
import { relative, usd, usdCents, when } from './format.js';

/**
 * Widest a truncated value may be, by what it is: ids and action names, names (agents, policies), free text; or
 * `fill`: as wide as its table cell, in a column marked `fill` (the width the other columns leave).
 */
export type TruncateWidth = 'id' | 'name' | 'text' | 'fill';

/** Props of {@link Truncate}. */
export interface TruncateProps {
  /** The value; null, undefined or '' shows '—'. */
  text: string | null | undefined;
  /** How wide it may get before the ellipsis. @default 'id' */
  width?: TruncateWidth;
  /** Monospace (commit SHAs, keys). */
  mono?: boolean;
}

/**
 * A value on one line, cut with an ellipsis past its width (CSS `text-overflow`, so the DOM keeps the whole text); its
 * `title` holds the whole value. The class `truncate` marks it as meant to be cut (the browser tests allow overflow
 * there and nowhere else in a table cell).
 */
export function Truncate({ text, width = 'id', mono = false }: TruncateProps) {
  if (text === null || text === undefined || text === '') return <span className="muted">—</span>;
  return (
    <span className={`truncate truncate-${width}${mono ? ' mono' : ''}`} title={text}>
      {text}
    </span>
  );
}

/**
 * A time on one line, relative to now (`12 min ago`), with the absolute local time and the ISO value in its title and
 * the ISO value as `dateTime`. '—' for null.
 */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={`${when(iso)} (${iso})`} className="nowrap">
      {relative(iso)}
    </time>
  );
}

/** A headline amount in USD rounded to cents (`$383.03`), the exact amount (`$383.0298`) in its title. */
export function Money({ usd: v }: { usd: number | null | undefined }) {
  const exact = usd(v);
  const shown = usdCents(v);
  return <span title={exact !== shown ? `${exact} exactly` : undefined}>{shown}</span>;
}
