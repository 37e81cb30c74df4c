/**
 * TanStack Query hooks over the session's API client: {@link useApiQuery} for reads (keyed by path and query) and
 * {@link useApiMutation} for writes. Errors are {@link ProblemError}s; a 401 has already signed the session out.
 */
import { useMutation, useQuery, useQueryClient, type UseMutationResult, type UseQueryOptions, type UseQueryResult } from '@tanstack/react-query';
import { ProblemError, type ApiClient, type QueryParams } from './client.js';
import { useSession } from '../auth/session.js';

/**
 * GET `path` with `query`, cached under `[path, query]`. Pass `path: null` to wait (the query does not run).
 * @example const q = useApiQuery<RunDetail>(`/api/v1/runs/${encodeURIComponent(id)}`);
 */
export function useApiQuery<T>(path: string | null, query?: QueryParams, options: Omit<UseQueryOptions<T, ProblemError>, 'queryKey' | 'queryFn'> = {}): UseQueryResult<T, ProblemError> {
  const { api } = useSession();
  return useQuery<T, ProblemError>({
    queryKey: [path, query ?? {}],
    queryFn: () => api.get<T>(path!, query),
    enabled: path !== null && (options.enabled ?? true),
    ...options,
  });
}

/**
 * A write: `run(api, variables)` with the session's client; on success the queries whose key starts with any of
 * `invalidates` (paths such as `/api/v1/approvals`) are refetched.
 */
export function useApiMutation<V, R>(run: (api: ApiClient, variables: V) => Promise<R>, invalidates: string[] = []): UseMutationResult<R, ProblemError, V> {
  const { api } = useSession();
  const client = useQueryClient();
  return useMutation<R, ProblemError, V>({
    mutationFn: (v) => run(api, v),
    onSuccess: () => {
      for (const prefix of invalidates) void client.invalidateQueries({ predicate: (q) => typeof q.queryKey[0] === 'string' && (q.queryKey[0] as string).startsWith(prefix) });
    },
  });
}
