/**
 * The evals endpoints the gate calls: submit a run, fetch a baseline (the latest run of a suite, agent and branch, or
 * one run by id). The key travels as `Authorization: Bearer` (spec §Authentication 1, as every other command sends
 * it) or, with `auth: 'x-api-key'`, in `X-API-Key` (architecture §4, Auth: also accepted, for the CI gate). Non-2xx answers throw `AgpHttpError` carrying the RFC 9457 problem;
 * an unreachable platform throws `AgpNetworkError`. Source: docs/evals-gate.md; spec §Evals, §Authentication 5.
 */
import { EvalRunDetailSchema, EvalRunPageSchema, ProblemSchema, type EvalRun, type EvalRunDetail } from '@agp/contracts';
import { AgpHttpError, AgpNetworkError } from '@agp/sdk/http';
import { setTimeout as sleep } from 'node:timers/promises';

/** Options of {@link EvalsApi}. */
export interface EvalsApiOptions {
  /** Base URL of the platform, e.g. `http://127.0.0.1:8080` (a trailing slash is ignored). */
  url: string;
  /** API key: a write key to upload, a read key is enough for baselines. */
  key: string;
  /** Header carrying the key. @default 'bearer' */
  auth?: 'x-api-key' | 'bearer';
  /** fetch implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Per-request timeout, ms. @default 30000 */
  timeoutMs?: number;
  /** Attempts of an upload on a network error, 429 or 503 (the same submission id: stored once). @default 3 */
  attempts?: number;
}

/** What an upload answered: the stored run, and whether this request stored it (201) or it was there already (200). */
export interface UploadResult {
  created: boolean;
  /** HTTP status: 201 created, 200 the same submission id was stored before. */
  status: number;
  /** The stored run as the platform scored it, or null when the answer was not a run detail. */
  run: EvalRunDetail | null;
  /** The stored run's id (from the answer, else the submission id). */
  id: string;
}

/** A thin client of `/api/v1/evals/*` for the gate. */
export class EvalsApi {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: EvalsApiOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  /**
   * `POST /api/v1/evals/` with the JSON `body` (a `SubmitEvalRun`); retried on network errors, 429 and 503.
   * @throws AgpHttpError e.g. 422 naming the invalid field, 403 for a read key, 413 for a body over the limit.
   * @throws AgpNetworkError when the platform stays unreachable.
   */
  async submit(body: string, submissionId: string): Promise<UploadResult> {
    const attempts = this.options.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await this.send('POST', '/api/v1/evals/', body);
      } catch (err) {
        if (attempt >= attempts) throw err;
        await sleep(500 * attempt);
        continue;
      }
      if (res.ok) {
        const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
        const candidate = json && typeof json === 'object' && 'eval_run' in json ? json.eval_run : json;
        const parsed = EvalRunDetailSchema.safeParse(candidate);
        const run = parsed.success ? parsed.data : null;
        const created = json && typeof json.created === 'boolean' ? json.created : res.status === 201;
        return { created, status: res.status, run, id: run?.id ?? submissionId };
      }
      if (attempt >= attempts || (res.status !== 429 && res.status !== 503)) throw await problemError(res);
      await res.body?.cancel();
      await sleep(500 * attempt);
    }
  }

  /**
   * `GET /api/v1/evals/latest?suite&agent_id&branch`: the latest run of that suite, agent and branch, or null when
   * there is none yet (404).
   */
  async latest(query: { suite: string; agent_id: string; branch: string }): Promise<EvalRunDetail | null> {
    const res = await this.send('GET', `/api/v1/evals/latest?${new URLSearchParams(query)}`);
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    return this.detail(res);
  }

  /** `GET /api/v1/evals/{id}`: one run with its scenarios. @throws AgpHttpError 404 for an unknown id. */
  async get(id: string): Promise<EvalRunDetail> {
    return this.detail(await this.send('GET', `/api/v1/evals/${encodeURIComponent(id)}`));
  }

  /** `GET /api/v1/evals/?suite&agent_id&branch&limit`: the history, newest first (runs without their scenarios). */
  async list(query: { suite: string; agent_id: string; branch: string; limit: number }): Promise<EvalRun[]> {
    const res = await this.send('GET', `/api/v1/evals/?${new URLSearchParams({ ...query, limit: String(query.limit) })}`);
    if (!res.ok) throw await problemError(res);
    const page = EvalRunPageSchema.safeParse(await res.json());
    if (!page.success) throw unexpected(res, page.error.issues[0]);
    return page.data.eval_runs;
  }

  private async detail(res: Response): Promise<EvalRunDetail> {
    if (!res.ok) throw await problemError(res);
    const parsed = EvalRunDetailSchema.safeParse(await res.json().catch(() => null));
    if (!parsed.success) throw unexpected(res, parsed.error.issues[0]);
    return parsed.data;
  }

  private async send(method: string, path: string, body?: string): Promise<Response> {
    const url = this.base + path;
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    if (this.options.auth === 'x-api-key') headers['x-api-key'] = this.options.key;
    else headers.authorization = `Bearer ${this.options.key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.fetchImpl(url, { method, headers, body, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
    } catch (err) {
      throw new AgpNetworkError(url, { cause: err });
    }
  }
}

/** An `AgpHttpError` from a non-2xx answer: its problem details, or one made from the status and the text. */
/** The problem details of a failed answer as an {@link AgpHttpError} (a non-JSON body becomes its detail, cut to 500 characters). */
export async function problemError(res: Response): Promise<AgpHttpError> {
  const text = await res.text().catch(() => '');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: a proxy's page
  }
  const p = ProblemSchema.safeParse(json);
  if (p.success) return new AgpHttpError({ ...p.data, status: res.status });
  return new AgpHttpError({ type: 'about:blank', title: res.statusText || `HTTP ${res.status}`, status: res.status, detail: text.slice(0, 500) });
}

/** A 2xx answer that is not what the contract says. */
function unexpected(res: Response, issue: { path: PropertyKey[]; message: string } | undefined): AgpHttpError {
  return new AgpHttpError({ type: 'about:blank', title: 'Unexpected answer', status: res.status, detail: `${res.url}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'not an eval run'}` });
}

