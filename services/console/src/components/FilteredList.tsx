/**
 * A list page's body: filters bound to the URL ({@link FilterBar}, {@link useUrlFilters}), the server-side page of
 * `GET path` with those filters plus `skip` / `limit` ({@link usePaging}), the loading / error / empty states, a count
 * line, the rows and {@link Pagination}. The answer is `{[rowsKey]: rows, total, skip, limit}`, as every list of the
 * API returns it.
 */
import type { ReactNode } from 'react';
import { useApiQuery } from '../api/hooks.js';
import type { QueryParams } from '../api/client.js';
import { DataTable, Pagination, type Column } from './DataTable.js';
import { FilterBar, type FilterField } from './FilterBar.js';
import { plural } from './format.js';
import { QueryState } from './States.js';
import { usePaging, useUrlFilters } from './url.js';

/** The singular of a plural noun phrase, by its ending: "policies" → "policy", "eval runs" → "eval run". */
function singular(what: string): string {
  return what.endsWith('ies') ? `${what.slice(0, -3)}y` : what.endsWith('s') ? what.slice(0, -1) : what;
}

/** Props of {@link FilteredList}. */
export interface FilteredListProps<T> {
  /** The list endpoint, e.g. `/api/v1/runs`. */
  path: string;
  /** The member of the answer holding the rows (`runs`, `interventions`, `policies`). */
  rowsKey: string;
  fields: FilterField[];
  /** What the rows are, plural ("runs"): the count line, the loading text and the table caption. */
  what: string;
  /** One row, for a count of 1 ("1 run"). @default `what` without its plural ending ("policies" → "policy", "runs" → "run") */
  one?: string;
  /** Shown when no row matches. */
  empty: ReactNode;
  /** Page size when the URL has none. @default 50 */
  defaultLimit?: number;
  /** Query parameters added to the filters (not in the URL). */
  extraQuery?: QueryParams;
  /** Table columns; or `render` for anything else than a table. */
  columns?: Column<T>[];
  rowKey?: (row: T) => string;
  rowHref?: (row: T) => string;
  /** Renders the rows instead of a table (e.g. cards). */
  render?: (rows: T[]) => ReactNode;
}

/** Filters, a server-side page of rows, and pagination. */
export function FilteredList<T>({ path, rowsKey, fields, what, one = singular(what), empty, defaultLimit = 50, extraQuery, columns, rowKey, rowHref, render }: FilteredListProps<T>) {
  const names = fields.map((f) => f.name);
  const { values, set } = useUrlFilters(names);
  const { skip, limit, setSkip } = usePaging(defaultLimit);
  const q = useApiQuery<Record<string, unknown> & { total: number; skip: number; limit: number }>(path, { ...values, ...extraQuery, skip, limit });
  const caption = what.charAt(0).toUpperCase() + what.slice(1);
  return (
    <>
      <FilterBar fields={fields} values={values} onChange={(name, value) => set({ [name]: value })} onClear={() => set(Object.fromEntries(names.map((n) => [n, ''])))} />
      <QueryState query={q} what={what} isEmpty={(d) => d.total === 0} empty={empty}>
        {(d) => {
          const rows = d[rowsKey] as T[];
          return (
            <>
              <p className="muted result-count" data-testid="result-count">
                {plural(d.total, one, what)}
              </p>
              {render ? render(rows) : <DataTable caption={caption} rows={rows} rowKey={rowKey!} rowHref={rowHref} columns={columns!} />}
              <Pagination total={d.total} skip={d.skip} limit={d.limit} onSkip={setSkip} />
            </>
          );
        }}
      </QueryState>
    </>
  );
}
