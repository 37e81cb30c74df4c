/**
 * A table of rows with typed columns, scrolling sideways inside its own box (never the page) on a narrow screen, and
 * one line high per row: cells do not wrap (render long ids and names with `Truncate`, times with `Time`, from
 * Cells.tsx) unless their column is marked `wrap` (free text) or `list`. What does not fit a line (a record's inputs,
 * its whole reason) goes in the row's `detail`, opened on demand under the row, so a page of rows stays a screen high
 * at any width. {@link Pagination} pages server-side lists (`skip` / `limit` as the spec's lists take them).
 */
import { Fragment, useId, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { count } from './format.js';

/** One column: its header and how a row's cell renders (as text: React escapes it). */
export interface Column<T> {
  /** Stable key of the column. */
  key: string;
  header: ReactNode;
  /** The cell of `row`. */
  cell: (row: T) => ReactNode;
  /** Right-align numbers. */
  numeric?: boolean;
  /** Free text that may wrap over several lines (a description); other cells stay on one line. */
  wrap?: boolean;
  /** A short list of names (actions, agents) or a name that may wrap between words, in a narrower column than `wrap`'s. */
  list?: boolean;
  /** Takes the width the other columns leave (at least 6rem; shared with other `fill` columns); its cells render `<Truncate width="fill">`. */
  fill?: boolean;
}

/** Props of {@link DataTable}. */
export interface DataTableProps<T> {
  /** What the table lists, for its caption (read by screen readers; visually hidden). */
  caption: string;
  columns: Column<T>[];
  rows: T[];
  /** A row's unique key. */
  rowKey: (row: T) => string;
  /** When given, the first column's cell links to this address (the row's detail view). */
  rowHref?: (row: T) => string;
  /**
   * When given, the first column's cell is a button (`aria-expanded`) that opens this under the row, in a row spanning
   * every column; several may be open at once. Takes the place of `rowHref`.
   */
  detail?: (row: T) => ReactNode;
  /** A value for each row's `data-row-id` (the record's id), for pages and tests to find a row by. */
  rowId?: (row: T) => string;
}

/** A table of `rows`; `rowHref` makes the first cell a link to the row's detail. */
export function DataTable<T>({ caption, columns, rows, rowKey, rowHref, detail, rowId }: DataTableProps<T>) {
  // `fill` columns share the room left over equally (percentages over 100% in all would starve the last ones).
  const fills = columns.filter((c) => c.fill).length;
  const fillWidth = fills ? { width: `${100 / fills}%` } : undefined;
  const ids = useId();
  const [open, setOpen] = useState<ReadonlySet<string>>(() => new Set());
  const toggle = (key: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  const first = (row: T, key: string, i: number, cell: ReactNode) => {
    if (detail) {
      const expanded = open.has(key);
      return (
        <button type="button" className="link-button row-toggle" aria-expanded={expanded} aria-controls={`${ids}-${i}`} onClick={() => toggle(key)}>
          <span aria-hidden="true">{expanded ? '▾' : '▸'}</span> {cell}
        </button>
      );
    }
    return rowHref ? <Link to={rowHref(row)}>{cell}</Link> : cell;
  };
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label={caption}>
      <table className="data-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" className={c.numeric ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, r) => {
            const key = rowKey(row);
            return (
              <Fragment key={key}>
                <tr data-row-id={rowId?.(row)}>
                  {columns.map((c, i) => (
                    <td key={c.key} className={c.numeric ? 'num' : c.wrap ? 'wrap' : c.list ? 'list' : c.fill ? 'fill' : undefined} style={c.fill ? fillWidth : undefined}>
                      {i === 0 ? first(row, key, r, c.cell(row)) : c.cell(row)}
                    </td>
                  ))}
                </tr>
                {detail && open.has(key) ? (
                  <tr id={`${ids}-${r}`} className="row-detail" data-detail-of={rowId?.(row)}>
                    <td colSpan={columns.length}>{detail(row)}</td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Previous / next for a server-side page, with "51–100 of 1,234". */
export function Pagination({ total, skip, limit, onSkip }: { total: number; skip: number; limit: number; onSkip: (skip: number) => void }) {
  if (total === 0) return null;
  const last = Math.min(skip + limit, total);
  return (
    <nav className="pagination" aria-label="Pages">
      <button type="button" onClick={() => onSkip(Math.max(0, skip - limit))} disabled={skip === 0}>
        Previous
      </button>
      <span aria-live="polite">
        {count(Math.min(skip + 1, total))}–{count(last)} of {count(total)}
      </span>
      <button type="button" onClick={() => onSkip(skip + limit)} disabled={last >= total}>
        Next
      </button>
    </nav>
  );
}
