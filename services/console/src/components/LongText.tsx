/**
 * Long values without breaking the layout: {@link LongText} for free text (description, reason, blast radius) and
 * {@link JsonView} for objects (original / modified inputs, guardrail context). Both wrap anywhere, cap their height
 * with a scroll box and fold values over `foldAt` characters behind "Show all". Everything renders as text.
 */
import { useState } from 'react';

/** Characters shown before a value is folded. */
const FOLD_AT = 600;

/**
 * The first `foldAt` characters of `text`, cut at the last space or line break when there is one in the last 40% of
 * them (so a folded text does not end mid-word), trailing punctuation and spaces dropped.
 */
export function foldText(text: string, foldAt: number): string {
  const head = text.slice(0, foldAt);
  const space = Math.max(head.lastIndexOf(' '), head.lastIndexOf('\n'));
  return (space >= foldAt * 0.6 ? head.slice(0, space) : head).replace(/[\s,;:]+$/, '');
}

/** Props of {@link LongText}. */
export interface LongTextProps {
  /** The text; null or '' shows '—'. */
  text: string | null | undefined;
  /** Fold text longer than this many characters. @default 600 */
  foldAt?: number;
  /** Monospace (for JSON). */
  mono?: boolean;
}

/** Free text that wraps anywhere and folds when long. */
export function LongText({ text, foldAt = FOLD_AT, mono = false }: LongTextProps) {
  const [open, setOpen] = useState(false);
  if (text === null || text === undefined || text === '') return <span className="muted">—</span>;
  const long = text.length > foldAt;
  const shown = long && !open ? `${foldText(text, foldAt)}…` : text;
  const Tag = mono ? 'pre' : 'div';
  // A body that may scroll (its height is capped) must be reachable by keyboard to scroll it.
  const mayScroll = shown.length > 300 || shown.split('\n').length > 12;
  return (
    <div className="long-text">
      <Tag className={mono ? 'long-text-body mono' : 'long-text-body'} tabIndex={mayScroll ? 0 : undefined}>
        {shown}
      </Tag>
      {long ? (
        <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Show less' : `Show all (${text.length.toLocaleString('en-US')} characters)`}
        </button>
      ) : null}
    </div>
  );
}

/** A JSON value pretty-printed as text (null shows '—'). */
export function JsonView({ value, foldAt }: { value: unknown; foldAt?: number }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  let text: string;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return <LongText text={text} foldAt={foldAt ?? FOLD_AT * 4} mono />;
}
