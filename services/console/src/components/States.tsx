/**
 * Loading, empty and error states, and {@link QueryState}, which picks one of them for a TanStack query or renders
 * its data. Every page shows its data through these, so each has the three states docs/console.md promises (loading, empty, error).
 */
import type { ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import { ProblemError } from '../api/client.js';

/** A "loading" line, announced politely to screen readers. */
export function Loading({ what = 'data' }: { what?: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** The empty state: what is missing, and optionally how to get some (e.g. "run `agp simulate`"). */
export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/**
 * An error as a message with the problem's `title` and `detail` (and its field errors), for any thrown value:
 * a {@link ProblemError} shows its fields; anything else its message.
 */
export function ProblemMessage({ error, action }: { error: unknown; action?: ReactNode }) {
  const p =
    error instanceof ProblemError
      ? error
      : { status: 0, title: 'Something went wrong', detail: error instanceof Error ? error.message : String(error), errors: [] as { path: string; message: string }[] };
  return (
    <div className="problem" role="alert">
      <p className="problem-title">
        <strong>{p.title}</strong>
        {p.status ? <span className="problem-status"> ({p.status})</span> : null}
      </p>
      {p.detail ? <p className="problem-detail">{p.detail}</p> : null}
      {p.errors.length ? (
        <ul className="problem-errors">
          {p.errors.map((e, i) => (
            <li key={i}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
      {action}
    </div>
  );
}

/**
 * Render a query's data through `children`, or its loading, error or empty state.
 * @param isEmpty when it returns true for the data, `empty` is shown instead of `children`.
 */
export function QueryState<T>({ query, what, isEmpty, empty, children }: { query: UseQueryResult<T, ProblemError>; what?: string; isEmpty?: (data: T) => boolean; empty?: ReactNode; children: (data: T) => ReactNode }) {
  if (query.isPending) return <Loading what={what} />;
  if (query.isError) return <ProblemMessage error={query.error} />;
  if (isEmpty?.(query.data)) return <Empty>{empty ?? `No ${what ?? 'data'} yet.`}</Empty>;
  return <>{children(query.data)}</>;
}
