/**
 * Filters and pagination that live in the URL's search parameters, so a filtered, paged view can be shared by its
 * address (docs/console.md). Changing a filter resets `skip` to 0.
 */
import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';

/** The current values of `names` in the URL (missing ones are ''), and a setter that writes one or several. */
export function useUrlFilters<N extends string>(names: readonly N[]): { values: Record<N, string>; set: (changes: Partial<Record<N | 'skip', string>>) => void } {
  const [params, setParams] = useSearchParams();
  const key = names.map((n) => `${n}=${params.get(n) ?? ''}`).join('&');
  const values = useMemo(() => Object.fromEntries(names.map((n) => [n, params.get(n) ?? ''])) as Record<N, string>, [key]); // keyed by the values as text: the object stays the same while they do
  const set = useCallback(
    (changes: Partial<Record<N | 'skip', string>>) => {
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          for (const [k, v] of Object.entries(changes) as [string, string | undefined][]) {
            if (v === undefined || v === '') next.delete(k);
            else next.set(k, v);
          }
          if (!('skip' in changes)) next.delete('skip');
          return next;
        },
        { replace: false },
      );
    },
    [setParams],
  );
  return { values, set };
}

/**
 * `skip` and `limit` from the URL (defaults 0 and `defaultLimit`), and a setter for `skip`.
 * @param defaultLimit the page size when the URL has none.
 */
export function usePaging(defaultLimit = 50): { skip: number; limit: number; setSkip: (skip: number) => void } {
  const [params, setParams] = useSearchParams();
  const skip = Math.max(0, Number(params.get('skip')) || 0);
  const limit = Math.max(1, Number(params.get('limit')) || defaultLimit);
  const setSkip = useCallback(
    (s: number) =>
      setParams((prev) => {
        const next = new URLSearchParams(prev);
        if (s > 0) next.set('skip', String(s));
        else next.delete('skip');
        return next;
      }),
    [setParams],
  );
  return { skip, limit, setSkip };
}
