/**
 * The moderation provider the SDK ships: any OpenAI-compatible `POST <baseURL>/moderations` endpoint (OpenAI's own,
 * `omni-moderation-latest` by default, or a compatible server). A plain `fetch` client of the documented protocol,
 * no dependency:
 * - request: `POST <baseURL>/moderations`, `Authorization: Bearer <apiKey>` (when given), body `{model, input: string[]}`;
 * - response: `{id, model, results: [{flagged, categories, category_scores}, …]}`, one result per input, in order;
 *   `category_scores` maps each category name to a score from 0 to 1.
 * Category names are mapped to the guardrail's (the contracts' `MODERATION_CATEGORIES`, which are OpenAI's names:
 * `harassment`, `harassment/threatening`, `hate`, `hate/threatening`, `illicit`, `illicit/violent`, `self-harm`,
 * `self-harm/intent`, `self-harm/instructions`, `sexual`, `sexual/minors`, `violence`, `violence/graphic`):
 * a name is matched ignoring case and whether it separates its words with `/`, `-`, `_` or a space, so the
 * spellings of other servers and SDKs (`self_harm_intent`, `harassment_threatening`, `Sexual/Minors`) land on the
 * same category. A name that matches none (e.g. a server's own extra category) is dropped.
 * Failures (timeout, network error, a non-2xx answer after the retries, an answer of another shape) reject with
 * {@link ModerationError}; the governor then fails closed (docs/sdk.md §Moderation provider).
 * Source: docs/sdk.md §Moderation provider; spec §Guardrail context payload.
 */
import { MODERATION_CATEGORIES } from '@agp/contracts';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Scores content for the moderation guardrail: for each text, a score in [0, 1] per category (e.g. `harassment`,
 * `violence`; the names of OpenAI's `/v1/moderations`). Called by `run.act` only while a policy that applies to the
 * agent has a moderation guardrail, with the non-blank strings of the action's arguments (each distinct text once).
 * Must resolve one record per text, in order, or reject (the governor then fails closed, see docs/sdk.md).
 */
export interface ModerationProvider {
  moderate(texts: string[]): Promise<Array<Record<string, number>>>;
}

/** Options of {@link openAIModeration}. Durations in ms. */
export interface OpenAIModerationOptions {
  /** Base URL of the API, the `/moderations` path is appended: e.g. `https://api.openai.com/v1` (the default) or `http://127.0.0.1:8000/v1`. */
  baseURL?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; none when absent (a local server may need none). */
  apiKey?: string;
  /** The moderation model. @default 'omni-moderation-latest' */
  model?: string;
  /** How long one `moderate` call may take in all, retries included; past it the call rejects. @default 10000 */
  timeoutMs?: number;
  /** Retries after a network error, a timeout of one attempt, 408, 409, 429 or 5xx (honouring `Retry-After`). @default 2 */
  maxRetries?: number;
  /** At most this many texts per request; more are sent in several requests at once. @default 32 */
  maxInputsPerRequest?: number;
  /** Extra request headers (e.g. an organisation or project header). */
  headers?: Record<string, string>;
  /** fetch implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** Why a moderation call failed: the endpoint's HTTP status when it answered (null for network errors and timeouts). */
export class ModerationError extends Error {
  constructor(
    message: string,
    /** The HTTP status of the last answer, null when there was none (network error, timeout) or it was a 2xx of another shape. */
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'ModerationError';
  }
}

/** A category name reduced to its words: lower case, `/`, `-`, `_` and spaces as `_`. */
const wordsOf = (name: string) => name.toLowerCase().replace(/[/\-_ ]+/g, '_');
const CANONICAL = new Map<string, string>(MODERATION_CATEGORIES.map((c) => [wordsOf(c), c]));

/**
 * The guardrail's category for a provider's category name (`self_harm_intent` → `self-harm/intent`), or null when it
 * is none of {@link MODERATION_CATEGORIES}.
 */
export function moderationCategory(name: string): string | null {
  return CANONICAL.get(wordsOf(name)) ?? null;
}

const RETRYABLE = new Set([408, 409, 429]);

/**
 * A {@link ModerationProvider} for an OpenAI-compatible `/v1/moderations` endpoint (see the module docs for the
 * protocol and the category mapping).
 * @example
 * const gov = await Governor.connect({ url, key, agentId: 'support-bot',
 *   moderation: openAIModeration({ baseURL: 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY }) });
 * @throws TypeError for a bad option (naming it). Its `moderate` rejects with {@link ModerationError}.
 */
export function openAIModeration(options: OpenAIModerationOptions = {}): ModerationProvider {
  const base = (options.baseURL ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(base)) throw new TypeError(`openAIModeration: baseURL must be an http(s) URL, got ${JSON.stringify(options.baseURL)}`);
  const model = options.model ?? 'omni-moderation-latest';
  if (typeof model !== 'string' || !model) throw new TypeError('openAIModeration: model must be a non-empty string');
  for (const k of ['timeoutMs', 'maxRetries', 'maxInputsPerRequest'] as const) {
    const v = options[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < (k === 'maxRetries' ? 0 : 1))) {
      throw new TypeError(`openAIModeration: ${k} must be an integer ≥ ${k === 'maxRetries' ? 0 : 1}, got ${JSON.stringify(v)}`);
    }
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxRetries = options.maxRetries ?? 2;
  const perRequest = options.maxInputsPerRequest ?? 32;
  const fetchFn = options.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => globalThis.fetch(input, init));
  const url = `${base}/moderations`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  /** One request for `input`, retried until `deadline` (ms since the epoch). */
  async function request(input: string[], deadline: number): Promise<Array<Record<string, number>>> {
    let last = '';
    let lastStatus: number | null = null;
    for (let attempt = 0; ; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) throw new ModerationError(`moderation request to ${url} timed out after ${timeoutMs} ms${last ? ` (${last})` : ''}`, lastStatus);
      let retryAfterMs: number | null = null;
      try {
        const res = await fetchFn(url, { method: 'POST', headers, body: JSON.stringify({ model, input }), signal: AbortSignal.timeout(left) });
        const text = await res.text();
        if (res.ok) return parse(text, input.length);
        lastStatus = res.status;
        last = `HTTP ${res.status}: ${text.slice(0, 300)}`;
        if (!(RETRYABLE.has(res.status) || res.status >= 500)) throw new ModerationError(`moderation request to ${url} failed: ${last}`, res.status);
        // No Retry-After (or a blank one) keeps the backoff: Number(null) and Number('') would be 0.
        const header = res.headers.get('retry-after')?.trim();
        const ra = header ? Number(header) : NaN;
        if (Number.isFinite(ra) && ra >= 0) retryAfterMs = ra * 1000;
      } catch (err) {
        if (err instanceof ModerationError) throw err;
        const e = err as Error;
        last = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : `${e.name}: ${e.message}${(e as { cause?: Error }).cause?.message ? ` (${(e as { cause?: Error }).cause!.message})` : ''}`;
        lastStatus = null;
      }
      if (attempt >= maxRetries) throw new ModerationError(`moderation request to ${url} failed after ${attempt + 1} attempt(s): ${last}`, lastStatus);
      const wait = Math.min(retryAfterMs ?? 250 * 2 ** attempt, Math.max(0, deadline - Date.now()));
      await sleep(wait);
    }
  }

  /** The scores of a 2xx answer, one record per input, mapped to the guardrail's categories. */
  function parse(text: string, n: number): Array<Record<string, number>> {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ModerationError(`moderation answer from ${url} is not JSON: ${text.slice(0, 200)}`, null);
    }
    const results = (body as { results?: unknown })?.results;
    if (!Array.isArray(results) || results.length !== n) {
      throw new ModerationError(`moderation answer from ${url} has ${Array.isArray(results) ? `${results.length} results` : 'no results array'} for ${n} input(s)`, null);
    }
    return results.map((r, i) => {
      const scores = (r as { category_scores?: unknown })?.category_scores;
      if (scores === null || typeof scores !== 'object' || Array.isArray(scores)) throw new ModerationError(`moderation answer from ${url}: results[${i}].category_scores is not an object`, null);
      const out: Record<string, number> = {};
      for (const [name, score] of Object.entries(scores)) {
        if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
          throw new ModerationError(`moderation answer from ${url}: results[${i}].category_scores.${name} is ${JSON.stringify(score)}, not a score from 0 to 1`, null);
        }
        const category = moderationCategory(name);
        if (category !== null) out[category] = Math.max(out[category] ?? 0, score);
      }
      return out;
    });
  }

  return {
    async moderate(texts: string[]): Promise<Array<Record<string, number>>> {
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) throw new TypeError('moderate: texts must be an array of strings');
      if (texts.length === 0) return [];
      const deadline = Date.now() + timeoutMs;
      const chunks: string[][] = [];
      for (let i = 0; i < texts.length; i += perRequest) chunks.push(texts.slice(i, i + perRequest));
      return (await Promise.all(chunks.map((c) => request(c, deadline)))).flat();
    },
  };
}
