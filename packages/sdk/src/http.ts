/**
 * The typed HTTP client of the AGP API (`AgpClient`: ingest with retry, interventions, policies, kill switches,
 * approvals) and its errors. The SDK's `Governor` and reporter are built on it; the `agp` CLI and the fleet simulator
 * import it as `@agp/sdk/http`, a workspace-only entry (tsconfig `paths`, the vitest alias), not part of the published
 * package's exports. HTTP only: no database driver (test/package-boundaries.test.ts). Source: architecture §4.
 */
import {
  INGEST_MAX_BYTES,
  INGEST_MAX_EVENTS,
  IngestResponseSchema,
  LeaseAnswerSchema,
  type CreateIntervention,
  type CreatePolicy,
  type IngestEvent,
  type IngestResponse,
  type InterventionDetail,
  type InterventionOutcome,
  type InterventionPage,
  type InterventionRecord,
  type InterventionStats,
  type InterventionType,
  type KillSwitchOverview,
  type LeaseAnswer,
  type LeaseRequest,
  type Agent,
  type AgentRegister,
  type ApprovalDecision,
  type ApprovalDecisionKind,
  type ApprovalRecord,
  type Policy,
  type Problem,
  type RiskLevel,
} from '@agp/contracts';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Retry policy of {@link AgpClient.ingest}. Only 429, 503 and network errors (including timeouts) are retried;
 * the same event ids are resent, which is safe because ids are the idempotency key (architecture §4, Ingest).
 */
export interface RetryOptions {
  /** Retries after the first attempt. @default 3 */
  retries?: number;
  /** Back-off before retry n (0-based) is `baseDelayMs * 2^n`, jittered to 50–100 %. @default 250 */
  baseDelayMs?: number;
  /** Upper bound of any single wait in ms, `Retry-After` included. @default 30000 */
  maxDelayMs?: number;
}

/** Options of {@link AgpClient}. */
export interface AgpClientOptions {
  /** Base URL of the AGP gateway, e.g. `http://127.0.0.1:8080` (a trailing slash is ignored). */
  url: string;
  /** API key (`agp_...`), sent as `Authorization: Bearer <key>`. */
  key: string;
  /** fetch implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Per-attempt timeout in ms. @default 30000 */
  timeoutMs?: number;
  /** Retry policy of `ingest`. */
  retry?: RetryOptions;
}

/**
 * Query of {@link AgpClient.listInterventions}. Enum filters take one value or several (matched with OR);
 * dates are `YYYY-MM-DD`, ISO 8601 date-times or `Date`s. Source: spec §List query parameters.
 */
export interface ListInterventionsParams {
  type?: InterventionType | InterventionType[];
  outcome?: InterventionOutcome | InterventionOutcome[];
  action_name?: string;
  agent_id?: string;
  run_id?: string;
  policy_id?: string;
  risk_level?: RiskLevel | RiskLevel[];
  start_date?: string | Date;
  end_date?: string | Date;
  /** Offset. @default 0 */
  skip?: number;
  /** Page size, 1–1000. @default 50 */
  limit?: number;
}

/** Query of {@link AgpClient.interventionStats}: the period, `YYYY-MM-DD`, ISO 8601 date-times or `Date`s. */
export interface InterventionStatsParams {
  start_date?: string | Date;
  end_date?: string | Date;
}

/**
 * Body of {@link AgpClient.createPolicy}: `POST /api/v1/policies`'s fields (`name` required; `enabled` defaults to
 * true; budgets in USD). Source: spec §create_policy tool; docs/api.md (Policies).
 */
export type CreatePolicyParams = Omit<CreatePolicy, 'enabled'> & { enabled?: boolean };

/** Query of {@link AgpClient.listPolicies}: filters compose with AND (`name` is an exact match). */
export interface ListPoliciesParams {
  enabled?: boolean;
  /** Policies that apply to this agent (scoped to it, or to every agent). */
  agent_id?: string;
  /** Exact policy name. */
  name?: string;
  /** Offset. @default 0 */
  skip?: number;
  /** Page size, 1–1000. @default 50 */
  limit?: number;
}

/** A page of {@link AgpClient.listPolicies}, newest first. */
export interface PolicyPage {
  policies: Policy[];
  total: number;
  skip: number;
  limit: number;
}

/**
 * A non-2xx answer. `problem` is the RFC 9457 body (architecture §4, Errors); when the server sent
 * something else (a proxy's HTML page), it is synthesised from the status and the first 500 characters.
 */
export class AgpHttpError extends Error {
  override readonly name = 'AgpHttpError';
  /** HTTP status, e.g. 401, 422, 503. */
  readonly status: number;
  /** Problem details: `{type, title, status, detail, errors?: [{path, message, allowed?}]}`. */
  readonly problem: Problem;
  constructor(problem: Problem, options?: { cause?: unknown }) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`, options);
    this.status = problem.status;
    this.problem = problem;
  }
}

/** The gateway could not be reached (connection refused, DNS, reset, timeout), after any retries. `cause` is the last fetch error. */
export class AgpNetworkError extends Error {
  override readonly name = 'AgpNetworkError';
  constructor(
    /** The URL that could not be reached. */
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach ${url}: ${describeCause(options.cause)}`, options);
  }
}

const RETRYABLE_STATUS = new Set([429, 503]);

/**
 * A small typed HTTP client for the AGP API: ingest, the interventions endpoints and policies.
 * Every request sends `Authorization: Bearer <key>`; every non-2xx answer throws {@link AgpHttpError}.
 *
 * @example
 * const agp = new AgpClient({ url: 'http://127.0.0.1:8080', key: process.env.AGP_KEY! });
 * const page = await agp.listInterventions({ type: ['hard_block', 'pii_blocked'], limit: 20 });
 */
export class AgpClient {
  private readonly base: string;
  private readonly key: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retry: Required<RetryOptions>;

  constructor(options: AgpClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.key = options.key;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retry = { retries: 3, baseDelayMs: 250, maxDelayMs: 30_000, ...options.retry };
  }

  /**
   * `POST /api/v1/ingest/`: submit up to 1000 events (5 MiB). Resolves with the 207 answer, listing each event
   * as accepted (`successes`: `{id, status: 201, result: "created"}` the first time, `{id, status: 200, result:
   * "duplicate"}` when the id was already stored or the identical message was already in the log) or rejected with
   * a status and message (`errors`). Retries 429, 503 and network errors (see {@link RetryOptions}), honouring
   * `Retry-After`; a retried request's events come back `duplicate` when the first attempt got through.
   * Source: architecture §4 (Ingest).
   * @param headers extra request headers sent with every attempt, e.g. the trace context (`traceparent`) of the
   *   caller's span (docs/sdk.md, Tracing); they cannot replace `authorization`, `accept` or `content-type`.
   * @throws RangeError when the batch is over 1000 events or 5 MiB (nothing is sent).
   * @throws AgpHttpError for any other non-2xx answer, or the last 429/503 once retries are spent.
   * @throws AgpNetworkError when the gateway stays unreachable.
   */
  async ingest(events: IngestEvent[], headers?: Readonly<Record<string, string>>): Promise<IngestResponse> {
    if (events.length > INGEST_MAX_EVENTS) throw new RangeError(`at most ${INGEST_MAX_EVENTS} events per ingest request, got ${events.length}`);
    const body = JSON.stringify({ batch: events });
    const bytes = Buffer.byteLength(body);
    if (bytes > INGEST_MAX_BYTES) throw new RangeError(`ingest request is ${bytes} bytes, over the ${INGEST_MAX_BYTES}-byte limit`);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.retry.retries;
      let res: Response;
      try {
        res = await this.send('POST', '/api/v1/ingest/', body, headers);
      } catch (err) {
        if (last || !(err instanceof AgpNetworkError)) throw err;
        await sleep(this.backoff(attempt, undefined));
        continue;
      }
      if (res.ok) return IngestResponseSchema.parse(await res.json());
      if (last || !RETRYABLE_STATUS.has(res.status)) throw await httpError(res);
      await res.body?.cancel();
      await sleep(this.backoff(attempt, res.headers.get('retry-after')));
    }
  }

  /**
   * `POST /api/v1/interventions`: the synchronous path; resolves with the stored record (201).
   * Source: spec §Interventions.
   * @throws AgpHttpError e.g. 422 listing every invalid field, 403 for a read key.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async createIntervention(body: CreateIntervention): Promise<InterventionRecord> {
    return this.json<InterventionRecord>('POST', '/api/v1/interventions', JSON.stringify(body));
  }

  /**
   * `GET /api/v1/interventions`: one page, newest first: `{interventions, total, skip, limit}`.
   * @throws AgpHttpError 422 for an invalid filter.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async listInterventions(query: ListInterventionsParams = {}): Promise<InterventionPage> {
    return this.json<InterventionPage>('GET', `/api/v1/interventions${queryString(query)}`);
  }

  /**
   * `GET /api/v1/interventions/{id}`: the record with its audit trail.
   * @throws AgpHttpError 404 for an unknown id (or another organisation's).
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async getIntervention(id: string): Promise<InterventionDetail> {
    return this.json<InterventionDetail>('GET', `/api/v1/interventions/${encodeURIComponent(id)}`);
  }

  /**
   * `GET /api/v1/interventions/stats`: totals, by type / outcome, cost prevented (USD), time series and top lists.
   * Source: spec §Intervention statistics object.
   * @throws AgpHttpError 422 for an invalid date.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async interventionStats(query: InterventionStatsParams = {}): Promise<InterventionStats> {
    return this.json<InterventionStats>('GET', `/api/v1/interventions/stats${queryString(query)}`);
  }

  /**
   * `DELETE /api/v1/interventions/{id}`: removes the record from every read model (204); its history stays.
   * @throws AgpHttpError 404 for an unknown or already deleted id, 403 for a read key.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async deleteIntervention(id: string): Promise<void> {
    const res = await this.send('DELETE', `/api/v1/interventions/${encodeURIComponent(id)}`);
    if (!res.ok) throw await httpError(res);
    await res.body?.cancel();
  }

  /**
   * `POST /api/v1/policies`: create a policy; resolves with it (201, `version` 1, a server-assigned UUIDv7 `id`).
   * Source: docs/api.md (Policies); used by `agp simulate` (docs/ingest.md, Simulated data).
   * @throws AgpHttpError 422 naming every invalid field, 403 for a read key.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async createPolicy(body: CreatePolicyParams): Promise<Policy> {
    return this.json<Policy>('POST', '/api/v1/policies', JSON.stringify(body));
  }

  /**
   * `GET /api/v1/policies`: one page `{policies, total, skip, limit}`, newest first.
   * @throws AgpHttpError 422 for an invalid filter.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async listPolicies(query: ListPoliciesParams = {}): Promise<PolicyPage> {
    return this.json<PolicyPage>('GET', `/api/v1/policies${queryString(query)}`);
  }

  /**
   * `GET /api/v1/policies/{id}`: the policy as it is now.
   * @throws AgpHttpError 404 for an unknown id (or another organisation's).
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async getPolicy(id: string): Promise<Policy> {
    return this.json<Policy>('GET', `/api/v1/policies/${encodeURIComponent(id)}`);
  }

  /**
   * `POST /api/v1/agents`: register an agent and its actions, or re-register it (its whole definition is replaced,
   * actions included; an identical one changes nothing). Resolves with the agent once the registry shows it (201
   * registered, 200 re-registered). Source: docs/api.md (Agents).
   * @throws AgpHttpError 422 naming every invalid field, 403 for a read key.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async registerAgent(body: AgentRegister): Promise<Agent> {
    return this.json<Agent>('POST', '/api/v1/agents', JSON.stringify(body));
  }

  /**
   * `GET /api/v1/agents/{id}`: one registered agent with its actions and kill switch. Unvalidated.
   * @throws AgpHttpError 404 for an agent never registered (or another organisation's).
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async getAgent(id: string): Promise<Agent> {
    return this.json<Agent>('GET', `/api/v1/agents/${encodeURIComponent(id)}`);
  }

  /**
   * `GET /api/v1/kill-switches`: the organisation's switch and every engaged agent switch. Unvalidated: the caller
   * checks the shape (`KillSwitchOverviewSchema`).
   * @throws AgpHttpError for a non-2xx answer. @throws AgpNetworkError when the gateway is unreachable.
   */
  async getKillSwitches(): Promise<KillSwitchOverview> {
    return this.json<KillSwitchOverview>('GET', '/api/v1/kill-switches');
  }

  /**
   * `GET /api/v1/approvals/{id}`: one approval (`pending`, `approved`, `rejected` or `expired`). Unvalidated.
   * @throws AgpHttpError 404 for an unknown id (also while a just-recorded escalation is not projected yet).
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async getApproval(id: string): Promise<ApprovalRecord> {
    return this.json<ApprovalRecord>('GET', `/api/v1/approvals/${encodeURIComponent(id)}`);
  }

  /**
   * `POST /api/v1/approvals/{id}/approve` or `/reject` (write key): decide a pending approval, `approver_email`
   * required, `notes` optional. Resolves with the decided approval. Source: spec §Approvals.
   * @throws AgpHttpError 404 for an unknown id, 409 when it is no longer pending, 422 for a bad body, 403 for a read key.
   * @throws AgpNetworkError when the gateway is unreachable.
   */
  async decideApproval(id: string, verdict: ApprovalDecisionKind, body: ApprovalDecision): Promise<ApprovalRecord> {
    return this.json<ApprovalRecord>('POST', `/api/v1/approvals/${encodeURIComponent(id)}/${verdict}`, JSON.stringify(body));
  }

  /**
   * `POST /api/v1/quotas/leases`: acquire, renew, report on and release the holder's leases of fleet-wide limits, all
   * in one call (reports applied first, then acquisitions). Resolves with the answer, checked against
   * `LeaseAnswerSchema`: `leases` (one per acquire item in order, then one per report item that did not release) and
   * `released` (lease ids). Not retried: the caller decides whether to ask again. Source: docs/api.md (Quotas);
   * docs/sdk.md (Fleet-wide limits).
   * @throws AgpHttpError 404 (a policy, limit or lease the organisation does not have), 409 (a report on a lease of
   *   another holder, or one released or expired: nothing of it applied), 422 naming each bad field, 403 for a read key.
   * @throws AgpNetworkError when the gateway is unreachable. @throws ZodError for an answer of another shape.
   */
  async leaseQuotas(body: LeaseRequest): Promise<LeaseAnswer> {
    return LeaseAnswerSchema.parse(await this.json<unknown>('POST', '/api/v1/quotas/leases', JSON.stringify(body)));
  }

  private async json<T>(method: string, path: string, body?: string): Promise<T> {
    const res = await this.send(method, path, body);
    if (!res.ok) throw await httpError(res);
    return (await res.json()) as T;
  }

  private async send(method: string, path: string, body?: string, extra?: Readonly<Record<string, string>>): Promise<Response> {
    const url = this.base + path;
    const headers: Record<string, string> = { ...extra, authorization: `Bearer ${this.key}`, accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.fetchImpl(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new AgpNetworkError(url, { cause: err });
    }
  }

  /** Wait before retry `attempt` (0-based): jittered exponential back-off, at least `Retry-After`, at most `maxDelayMs`. */
  private backoff(attempt: number, retryAfter: string | null | undefined): number {
    const exp = this.retry.baseDelayMs * 2 ** attempt;
    const jittered = exp * (0.5 + Math.random() * 0.5);
    return Math.min(this.retry.maxDelayMs, Math.max(jittered, parseRetryAfter(retryAfter)));
  }
}

/**
 * `Retry-After` in ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); 0 when absent or unparseable.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number {
  if (!value) return 0;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - now);
}

async function httpError(res: Response): Promise<AgpHttpError> {
  const text = await res.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const p = parsed as Partial<Problem> | undefined;
  if (p && typeof p === 'object' && typeof p.title === 'string') {
    return new AgpHttpError({ type: p.type ?? 'about:blank', title: p.title, status: res.status, detail: p.detail ?? '', ...(p.errors ? { errors: p.errors } : {}) });
  }
  return new AgpHttpError({ type: 'about:blank', title: res.statusText || `HTTP ${res.status}`, status: res.status, detail: text.slice(0, 500) });
}

function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    params.set(k, v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.join(',') : String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = (cause as { cause?: unknown }).cause;
  const code = inner && typeof inner === 'object' && 'code' in inner ? String((inner as { code: unknown }).code) : '';
  return code ? `${cause.message} (${code})` : cause.message;
}

