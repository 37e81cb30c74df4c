/**
 * The console's HTTP client: the public API only (`/api/v1/...` and the un-prefixed `/mcp/*` lists), the key sent as
 * `Authorization: Bearer <key>`. Every failure becomes a {@link ProblemError} carrying the RFC 9457 problem's `title`
 * and `detail` (or a problem made up from the status when the answer was not problem details), and a 401 also calls
 * `onUnauthorized` so the app returns to sign-in. Source: docs/console.md; architecture §4 (Errors).
 */
import type { AuthConfig, AuthMe, CallerKey } from './types.js';

/** One field error of a 422 problem: the field path (`query.limit`, `body.approver_email`) and what is wrong. */
export interface ProblemFieldError {
  path: string;
  message: string;
}

/** An RFC 9457 problem document as the gateway sends it (`application/problem+json`). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: ProblemFieldError[];
}

/**
 * An API call that failed: the problem's fields, for {@link ../components/ProblemMessage.tsx ProblemMessage}.
 * `status` is 0 when the request never got an answer (network error, the platform is down).
 */
export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly type: string;
  readonly errors: ProblemFieldError[];
  /** The parsed body of the failed answer (undefined when it had none, or was not JSON): e.g. a tool call's error envelope. */
  readonly body: unknown;

  constructor(p: Problem, options?: { cause?: unknown; body?: unknown }) {
    super(`${p.title}: ${p.detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProblemError';
    this.status = p.status;
    this.title = p.title;
    this.detail = p.detail;
    this.type = p.type;
    this.errors = p.errors ?? [];
    this.body = options?.body;
  }
}

/** Query parameters: undefined, null and '' are left out. */
export type QueryParams = Record<string, string | number | boolean | undefined | null>;

/** Options of {@link createApiClient}. */
export interface ApiClientOptions {
  /** The API key (`agp_…`); null for a person signed in through the provider (the session cookie authenticates). */
  key: string | null;
  /** Called once per 401 answer (the key was revoked, expired or is unknown): the app signs out. */
  onUnauthorized?: (problem: ProblemError) => void;
  /** Origin of the platform. @default '' (the page's own origin, where the gateway serves the console) */
  baseUrl?: string;
}

/** What {@link createApiClient} returns: one method per HTTP verb, each resolving to the parsed JSON body. */
export interface ApiClient {
  /** GET `path` with `query`; resolves to the JSON body. @throws ProblemError on any non-2xx answer or network failure. */
  get<T>(path: string, query?: QueryParams): Promise<T>;
  /** POST a JSON body. @throws ProblemError */
  post<T>(path: string, body?: unknown): Promise<T>;
  /** PUT a JSON body. @throws ProblemError */
  put<T>(path: string, body?: unknown): Promise<T>;
  /** PATCH a JSON body (with optional extra headers, e.g. If-Match). @throws ProblemError */
  patch<T>(path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
  /** The raw call: method, path, query, body, headers; resolves to the status and parsed body of a 2xx answer. @throws ProblemError */
  request<T>(method: string, path: string, init?: { query?: QueryParams; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: T; headers: Headers }>;
}

/** `path?query` with empty parameters left out. */
export function withQuery(path: string, query?: QueryParams): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

/** The problem of a failed answer: the body when it is problem details, else one made up from the status and text. */
export function problemOfAnswer(status: number, statusText: string, body: unknown, text: string): Problem {
  if (body && typeof body === 'object' && typeof (body as Problem).title === 'string') {
    const p = body as Partial<Problem>;
    return { type: p.type ?? 'about:blank', title: p.title!, status: p.status ?? status, detail: typeof p.detail === 'string' ? p.detail : '', errors: Array.isArray(p.errors) ? p.errors : undefined };
  }
  return { type: 'about:blank', title: statusText || `HTTP ${status}`, status, detail: text.slice(0, 500) || `the server answered ${status} without problem details` };
}

/** Build the client for one key, or for the session cookie (`key: null`; the browser sends the cookie, and `Origin` on writes). */
export function createApiClient(opts: ApiClientOptions): ApiClient {
  const base = opts.baseUrl ?? '';
  async function request<T>(method: string, path: string, init: { query?: QueryParams; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { accept: 'application/json', ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...init.headers };
    let body: string | undefined;
    if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    let res: Response;
    try {
      res = await fetch(base + withQuery(path, init.query), { method, headers, body });
    } catch (err) {
      throw new ProblemError({ type: 'about:blank', title: 'Network error', status: 0, detail: `the platform did not answer (${(err as Error).message}); is it running?` }, { cause: err });
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const problem = new ProblemError(problemOfAnswer(res.status, res.statusText, parsed, text), { body: parsed });
      if (res.status === 401) opts.onUnauthorized?.(problem);
      throw problem;
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
  return {
    request,
    get: async (path, query) => (await request<never>('GET', path, { query })).body,
    post: async (path, body) => (await request<never>('POST', path, { body: body ?? {} })).body,
    put: async (path, body) => (await request<never>('PUT', path, { body: body ?? {} })).body,
    patch: async (path, body, headers) => (await request<never>('PATCH', path, { body: body ?? {}, headers })).body,
  };
}

/**
 * The calling key as `GET /api/v1/auth/key` names it: id, organisation, name, scope (`read`, `write` or `admin`) and
 * expiry. Any valid key may ask; nothing changes.
 * @throws ProblemError when the key is refused (401: unknown, revoked or expired) or the platform is unreachable.
 */
export function fetchCallerKey(api: ApiClient): Promise<CallerKey> {
  return api.get<CallerKey>('/api/v1/auth/key');
}

/**
 * Who the session cookie signs in, as `GET /api/v1/auth/me` says (a person), or null when there is no live session
 * (401) or sign-in is off.
 * @throws ProblemError when the platform does not answer or answers an error other than 401.
 */
export async function fetchSignedInPerson(): Promise<AuthMe | null> {
  try {
    const me = await createApiClient({ key: null }).get<AuthMe>('/api/v1/auth/me');
    return me.kind === 'user' ? me : null;
  } catch (err) {
    if (err instanceof ProblemError && err.status === 401) return null;
    throw err;
  }
}

/** How people sign in here (`GET /auth/config`, public): keys, the provider, or both. @throws ProblemError */
export function fetchSignInConfig(): Promise<AuthConfig> {
  return createApiClient({ key: null }).get<AuthConfig>('/auth/config');
}
